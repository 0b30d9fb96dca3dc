"""``almanac sink``: a small HTTP service that records downstream effects, once per key.

It stands in for a downstream system in the examples and tests (DESIGN §7). Endpoints (JSON):

- ``POST /effects`` with header ``Idempotency-Key``: the first delivery of a key records the effect
  and answers ``201 {"effectId", "idempotencyKey", "receivedCount": 1, "receivedAtUtc"}``; every
  later delivery of the same key answers ``200`` with that first result, records nothing new and
  only counts the delivery. No key (or an empty one) → ``400``; a body that is not a JSON object
  → ``400``.
- ``GET /effects/{key}``: the result query used by reconciliation — ``200`` with the first result
  plus ``deliveryCount`` and the first ``body``, or ``404``.
- ``GET /effects``: every effect in order of recording, with delivery counts.
- ``POST /faults`` / ``GET /faults`` / ``DELETE /faults``: fault injection for tests (see
  :class:`FaultRule`); faults apply to ``POST /effects`` only, so result queries stay truthful.
- ``GET /healthz``: ``200 {"ok": true}``.

Strict (``Sink(strict=True)``, ``almanac sink --strict``): the sink then behaves like a downstream
that follows the Idempotency-Key header draft (draft-ietf-httpapi-idempotency-key-header, "Error
Scenarios") or Stripe. It keeps the first delivery's payload fingerprint (SHA-256 of the body's
bytes) and answers a repeat of the key with another payload ``422``, and a repeat that arrives
while the first delivery of the key is still being answered ``409``; neither records anything nor
counts as a delivery (each is counted in ``refusedCount``). A repeat of the same bytes after the
first answer gets the first result, as always.

Given a Standard Webhooks signing key (``Sink(signing_secret=...)``, ``almanac sink`` reads
``ALMANAC_SINK_SIGNING_SECRET``), ``POST /effects`` verifies ``webhook-id``,
``webhook-timestamp`` and ``webhook-signature`` first and answers ``401`` to a delivery that is
unsigned, badly signed or outside the five-minute tolerance; nothing is recorded.

Effects live in SQLite: a file (``--db``, default ``<data dir>/sink.sqlite3``) or ``:memory:``.
:class:`Sink` runs the service on a background thread for tests (port 0 picks a free port).
"""

from __future__ import annotations

import hashlib
import json
import sqlite3
import sys
import threading
import uuid
from collections.abc import Callable
from dataclasses import dataclass, field
from datetime import UTC, datetime
from enum import StrEnum
from http import HTTPStatus
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any
from urllib.parse import unquote

from pydantic import BaseModel, ConfigDict, Field, ValidationError
from standardwebhooks.webhooks import Webhook

IDEMPOTENCY_HEADER = "Idempotency-Key"

_SCHEMA = """
create table if not exists effects (
    seq integer primary key autoincrement,
    idempotency_key text not null unique,
    effect_id text not null,
    body text not null,
    result text not null,
    received_at_utc text not null,
    delivery_count integer not null,
    fingerprint text not null default '',
    refused_count integer not null default 0
)
"""
_COLUMNS_ADDED = (
    "alter table effects add column fingerprint text not null default ''",
    "alter table effects add column refused_count integer not null default 0",
)
"""For a sink file written before strict mode: the columns it lacks (added once, in order)."""


def _utc_now() -> datetime:
    return datetime.now(UTC)


@dataclass(frozen=True, slots=True)
class EffectRecord:
    """One recorded effect: the first delivery of one idempotency key."""

    idempotency_key: str
    """The ``Idempotency-Key`` header of the deliveries (Almanac sends the occurrenceId)."""
    effect_id: str
    """A random ID the sink gave the effect when it first recorded it."""
    body: dict[str, Any]
    """The JSON body of the first delivery (later bodies are not kept)."""
    result: dict[str, Any]
    """The result the sink answered to the first delivery, and answers to every repeat."""
    received_at_utc: datetime
    """When the first delivery was recorded (aware UTC)."""
    delivery_count: int
    """How many ``POST /effects`` with this key were answered 200/201 (1 + repeats)."""
    refused_count: int = 0
    """How many repeats a strict sink refused (409 in flight, 422 another payload)."""

    def to_json(self) -> dict[str, Any]:
        """The record as ``GET /effects/{key}`` answers it: the result, the counts, the body."""
        return {
            **self.result,
            "deliveryCount": self.delivery_count,
            "refusedCount": self.refused_count,
            "body": self.body,
        }


class DeliveryKind(StrEnum):
    """What the store made of one ``POST /effects``."""

    CREATED = "CREATED"
    """The key's first delivery: the effect is recorded (201)."""
    REPEATED = "REPEATED"
    """A repeat answered with the first result (200)."""
    IN_FLIGHT = "IN_FLIGHT"
    """Strict: the key's first delivery is still being answered (409)."""
    PAYLOAD_CHANGED = "PAYLOAD_CHANGED"
    """Strict: the key was delivered before with another payload (422)."""


@dataclass(frozen=True, slots=True)
class Delivery:
    """The store's answer to one delivery: its kind and the key's first result."""

    kind: DeliveryKind
    result: dict[str, Any]


class EffectStore:
    """The sink's SQLite table of effects; thread-safe (one connection behind a lock)."""

    def __init__(
        self,
        db: str | Path = ":memory:",
        clock: Callable[[], datetime] = _utc_now,
        *,
        strict: bool = False,
    ):
        """Open (and create if needed) the store.

        Args:
            db: a SQLite file path, or ``":memory:"``.
            clock: returns the aware UTC instant recorded as ``receivedAtUtc``.
            strict: refuse repeats as the Idempotency-Key draft does (see the module docstring).
        """
        if str(db) != ":memory:":
            Path(db).parent.mkdir(parents=True, exist_ok=True)
        self._conn = sqlite3.connect(str(db), check_same_thread=False, isolation_level=None)
        self._conn.execute(_SCHEMA)
        columns = {row[1] for row in self._conn.execute("pragma table_info(effects)")}
        for statement in _COLUMNS_ADDED:
            if statement.split()[5] not in columns:
                self._conn.execute(statement)
        self._lock = threading.Lock()
        self._clock = clock
        self.strict = strict
        self._in_flight: set[str] = set()

    def deliver(self, key: str, body: dict[str, Any], raw: bytes = b"") -> Delivery:
        """Record a delivery of ``key`` whose body is ``body`` (``raw``: its bytes).

        A first delivery records the effect; a repeat only increments the delivery count, unless
        the store is strict and refuses it (:class:`DeliveryKind`). A created or repeated key stays
        in flight until :meth:`answered`.
        """
        fingerprint = hashlib.sha256(raw).hexdigest()
        with self._lock:
            self._conn.execute("begin immediate")
            try:
                row = self._conn.execute(
                    "select result, fingerprint from effects where idempotency_key = ?", (key,)
                ).fetchone()
                if row is not None:
                    kind = self._repeat_kind(key, fingerprint, row[1])
                    counter = "delivery_count" if kind is DeliveryKind.REPEATED else "refused_count"
                    self._conn.execute(
                        f"update effects set {counter} = {counter} + 1 where idempotency_key = ?",
                        (key,),
                    )
                    self._conn.execute("commit")
                    return Delivery(kind, dict(json.loads(row[0])))
                received_at_utc = self._clock().astimezone(UTC)
                result = {
                    "effectId": uuid.uuid4().hex,
                    "idempotencyKey": key,
                    "receivedCount": 1,
                    "receivedAtUtc": received_at_utc.isoformat().replace("+00:00", "Z"),
                }
                self._conn.execute(
                    "insert into effects (idempotency_key, effect_id, body, result, "
                    "received_at_utc, delivery_count, fingerprint) values (?, ?, ?, ?, ?, 1, ?)",
                    (
                        key,
                        result["effectId"],
                        json.dumps(body),
                        json.dumps(result),
                        received_at_utc.isoformat(),
                        fingerprint,
                    ),
                )
                self._conn.execute("commit")
                self._in_flight.add(key)
                return Delivery(DeliveryKind.CREATED, result)
            except BaseException:
                self._conn.execute("rollback")
                raise

    def _repeat_kind(self, key: str, fingerprint: str, first: str) -> DeliveryKind:
        if not self.strict:
            return DeliveryKind.REPEATED
        if key in self._in_flight:
            return DeliveryKind.IN_FLIGHT
        if first and fingerprint != first:
            return DeliveryKind.PAYLOAD_CHANGED
        return DeliveryKind.REPEATED

    def answered(self, key: str) -> None:
        """The first delivery of ``key`` has been answered (or its connection closed)."""
        with self._lock:
            self._in_flight.discard(key)

    def get(self, key: str) -> EffectRecord | None:
        """The effect recorded for ``key``, or ``None``."""
        rows = self._select("where idempotency_key = ?", (key,))
        return rows[0] if rows else None

    def all(self) -> list[EffectRecord]:
        """Every effect, in the order they were first recorded."""
        return self._select("order by seq", ())

    def _select(self, tail: str, args: tuple[Any, ...]) -> list[EffectRecord]:
        with self._lock:
            rows = self._conn.execute(
                "select idempotency_key, effect_id, body, result, received_at_utc, delivery_count,"
                f" refused_count from effects {tail}",
                args,
            ).fetchall()
        return [
            EffectRecord(
                idempotency_key=r[0],
                effect_id=r[1],
                body=json.loads(r[2]),
                result=json.loads(r[3]),
                received_at_utc=datetime.fromisoformat(r[4]),
                delivery_count=r[5],
                refused_count=r[6],
            )
            for r in rows
        ]

    def close(self) -> None:
        """Close the SQLite connection."""
        with self._lock:
            self._conn.close()


class FaultRule(BaseModel):
    """One injected fault for ``POST /effects`` deliveries whose key contains ``match``.

    Counts are per idempotency key: ``{"match": "daily", "failTimes": 2}`` fails the first two
    deliveries of *every* key containing ``daily``. A delivery under a failing rule is answered
    ``status`` before anything is recorded (the downstream refused it). A delivery that is
    recorded then waits ``delay`` seconds before answering (a lost ack: the effect happened, the
    caller times out), or with ``drop`` closes the connection without an answer. The first rule
    that matches a key decides.
    """

    model_config = ConfigDict(extra="forbid", populate_by_name=True)

    match: str | None = Field(default=None, description="Key substring; none matches every key.")
    fail_times: int = Field(default=0, ge=0, alias="failTimes", description="Deliveries to fail.")
    status: int = Field(default=500, ge=400, le=599, description="Status of a failed delivery.")
    delay: float = Field(default=0.0, ge=0, le=3600, description="Seconds to wait after recording.")
    delay_times: int | None = Field(
        default=None, ge=0, alias="delayTimes", description="Recorded deliveries to delay (all)."
    )
    drop: bool = Field(default=False, description="Close the connection after recording.")
    seen: dict[str, int] = Field(default_factory=dict, exclude=True)
    """Deliveries seen so far, per key (bookkeeping, not configuration)."""

    def matches(self, key: str) -> bool:
        """Whether this rule applies to ``key``."""
        return self.match is None or self.match in key


@dataclass(slots=True)
class _Decision:
    fail_status: int | None = None
    delay: float = 0.0
    drop: bool = False


@dataclass(slots=True)
class FaultPlan:
    """The sink's current fault rules (thread-safe)."""

    rules: list[FaultRule] = field(default_factory=list)
    lock: threading.Lock = field(default_factory=threading.Lock)

    def add(self, rule: FaultRule) -> None:
        """Append a rule (earlier rules take precedence)."""
        with self.lock:
            self.rules.append(rule)

    def clear(self) -> None:
        """Remove every rule."""
        with self.lock:
            self.rules.clear()

    def describe(self) -> list[dict[str, Any]]:
        """The rules as JSON data."""
        with self.lock:
            return [r.model_dump(by_alias=True) for r in self.rules]

    def decide(self, key: str) -> _Decision:
        """Count one delivery of ``key`` and say what to do with it."""
        with self.lock:
            for rule in self.rules:
                if not rule.matches(key):
                    continue
                n = rule.seen.get(key, 0)
                rule.seen[key] = n + 1
                if n < rule.fail_times:
                    return _Decision(fail_status=rule.status)
                recorded_n = n - rule.fail_times
                delayed = rule.delay_times is None or recorded_n < rule.delay_times
                return _Decision(delay=rule.delay if delayed else 0.0, drop=rule.drop and delayed)
        return _Decision()


class SinkServer(ThreadingHTTPServer):
    """The HTTP server: an :class:`EffectStore`, a :class:`FaultPlan` and a stop event."""

    daemon_threads = True
    allow_reuse_address = True
    # socketserver's default backlog of 5 resets bursts of connections (a reset after connecting
    # reads, to a client, like a lost answer).
    request_queue_size = 128

    def __init__(
        self, address: tuple[str, int], store: EffectStore, signing_secret: str | None = None
    ) -> None:
        """Bind ``address`` (port 0 picks a free port); serve with ``serve_forever``.

        With ``signing_secret`` (``whsec_…``), ``POST /effects`` must carry a valid signature.
        """
        super().__init__(address, _Handler)
        self.store = store
        self.verifier = Webhook(signing_secret) if signing_secret else None
        self.last_headers: dict[str, str] = {}
        """The headers of the last ``POST /effects`` (for tests: what reached the downstream)."""
        self.faults = FaultPlan()
        self.stopping = threading.Event()
        """Set on shutdown, so delayed answers stop waiting."""

    def handle_error(self, request: Any, client_address: Any) -> None:
        """Stay quiet when a client left before its answer (a timeout, a killed worker)."""
        if isinstance(sys.exc_info()[1], BrokenPipeError | ConnectionResetError):
            return
        super().handle_error(request, client_address)

    def stop(self) -> None:
        """Stop serving (from any thread but the one in ``serve_forever``) and close the socket."""
        self.stopping.set()
        self.shutdown()
        self.server_close()


class _Handler(BaseHTTPRequestHandler):
    server: SinkServer
    protocol_version = "HTTP/1.1"
    # Headers and body go out in two writes; with Nagle's algorithm the second waits for the
    # client's delayed ACK (~40 ms per request).
    disable_nagle_algorithm = True

    def log_message(self, format: str, *args: Any) -> None:
        pass  # quiet: tests and examples read the effects, not an access log

    def _send(self, status: int, payload: Any) -> None:
        data = json.dumps(payload).encode()
        self.send_response(status)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(data)))
        self.end_headers()
        self.wfile.write(data)

    def _error(self, status: int, message: str) -> None:
        self._send(status, {"error": message})

    def _read_json(self) -> Any:
        length = int(self.headers.get("Content-Length") or 0)
        self.raw_body = self.rfile.read(length) if length else b""
        return json.loads(self.raw_body) if self.raw_body.strip() else {}

    def _signature_ok(self) -> bool:
        verifier = self.server.verifier
        if verifier is None:
            return True
        try:
            verifier.verify(self.raw_body, dict(self.headers.items()), json_parse=False)
        except Exception:  # missing, malformed, stale or wrong: all the same answer
            return False
        return True

    def do_GET(self) -> None:
        path = self.path.split("?", 1)[0]
        if path == "/healthz":
            self._send(200, {"ok": True})
        elif path == "/effects":
            self._send(200, {"effects": [r.to_json() for r in self.server.store.all()]})
        elif path.startswith("/effects/"):
            record = self.server.store.get(unquote(path.removeprefix("/effects/")))
            if record is None:
                self._error(404, "no effect recorded for this idempotency key")
            else:
                self._send(200, record.to_json())
        elif path == "/faults":
            self._send(200, {"faults": self.server.faults.describe()})
        else:
            self._error(404, f"no such resource: {path}")

    def do_DELETE(self) -> None:
        if self.path == "/faults":
            self.server.faults.clear()
            self._send(200, {"faults": []})
        else:
            self._error(404, f"no such resource: {self.path}")

    def do_POST(self) -> None:
        try:
            body = self._read_json()
        except (ValueError, UnicodeDecodeError) as exc:
            self._error(400, f"body is not JSON: {exc}")
            return
        if self.path == "/effects":
            self.server.last_headers = dict(self.headers.items())
            if not self._signature_ok():
                self._error(401, "missing or invalid webhook signature")
                return
        if self.path == "/faults":
            self._post_fault(body)
        elif self.path == "/effects":
            self._post_effect(body)
        else:
            self._error(404, f"no such resource: {self.path}")

    def _post_fault(self, body: Any) -> None:
        try:
            rule = FaultRule.model_validate(body)
        except ValidationError as exc:
            self._error(400, str(exc))
            return
        self.server.faults.add(rule)
        self._send(201, rule.model_dump(by_alias=True))

    def _post_effect(self, body: Any) -> None:
        key = (self.headers.get(IDEMPOTENCY_HEADER) or "").strip()
        if not key:
            self._error(400, f"missing {IDEMPOTENCY_HEADER} header")
            return
        if not isinstance(body, dict):
            self._error(400, "body must be a JSON object")
            return
        decision = self.server.faults.decide(key)
        if decision.fail_status is not None:
            self._error(decision.fail_status, "injected fault")
            return
        store = self.server.store
        delivery = store.deliver(key, body, self.raw_body)
        if delivery.kind is DeliveryKind.IN_FLIGHT:
            self._error(409, "a request with this Idempotency-Key is still being processed")
            return
        if delivery.kind is DeliveryKind.PAYLOAD_CHANGED:
            self._error(422, "Idempotency-Key reused with a different request payload")
            return
        try:
            if decision.delay:
                self.server.stopping.wait(decision.delay)
            if decision.drop:
                self.close_connection = True
                return
            created = delivery.kind is DeliveryKind.CREATED
            self._send(HTTPStatus.CREATED if created else HTTPStatus.OK, delivery.result)
        finally:
            if delivery.kind is DeliveryKind.CREATED:
                store.answered(key)


class Sink:
    """The sink on a background thread, for tests and examples.

    Example::

        with Sink() as sink:            # in-memory store, a free port on 127.0.0.1
            post(f"{sink.url}/effects", ...)
            assert len(sink.effects()) == 1
    """

    def __init__(
        self,
        db: str | Path = ":memory:",
        host: str = "127.0.0.1",
        port: int = 0,
        clock: Callable[[], datetime] = _utc_now,
        signing_secret: str | None = None,
        *,
        strict: bool = False,
    ) -> None:
        """Prepare a sink; :meth:`start` binds and serves (verifying with ``signing_secret``).

        ``strict``: refuse repeats as the Idempotency-Key draft does (the module docstring).
        """
        self._db = db
        self._address = (host, port)
        self._clock = clock
        self._signing_secret = signing_secret
        self._strict = strict
        self._server: SinkServer | None = None
        self._thread: threading.Thread | None = None

    def start(self) -> Sink:
        """Bind the port and serve on a daemon thread; returns ``self``."""
        store = EffectStore(self._db, self._clock, strict=self._strict)
        self._server = SinkServer(self._address, store, self._signing_secret)
        self._thread = threading.Thread(
            target=self._server.serve_forever,
            kwargs={"poll_interval": 0.05},
            name="almanac-sink",
            daemon=True,
        )
        self._thread.start()
        return self

    @property
    def server(self) -> SinkServer:
        """The running server (raises if not started)."""
        if self._server is None:
            raise RuntimeError("the sink is not started")
        return self._server

    @property
    def url(self) -> str:
        """Base URL, e.g. ``http://127.0.0.1:40123``; effects are under ``url + "/effects"``."""
        host, port = self.server.server_address[:2]
        return f"http://{host!s}:{port}"

    def effects(self) -> list[EffectRecord]:
        """Every recorded effect, in order of recording."""
        return self.server.store.all()

    def effect(self, key: str) -> EffectRecord | None:
        """The effect recorded for ``key``, or ``None``."""
        return self.server.store.get(key)

    def add_fault(self, **rule: Any) -> None:
        """Add a :class:`FaultRule` (keyword names as in JSON: ``failTimes=2``, ``delay=5``)."""
        self.server.faults.add(FaultRule.model_validate(rule))

    def clear_faults(self) -> None:
        """Remove every fault rule."""
        self.server.faults.clear()

    def stop(self) -> None:
        """Stop serving, wait for the thread, close the store. Idempotent."""
        if self._server is None:
            return
        self._server.stop()
        if self._thread is not None:
            self._thread.join(timeout=10)
        self._server.store.close()
        self._server = None
        self._thread = None

    def __enter__(self) -> Sink:
        return self.start()

    def __exit__(self, *exc: object) -> None:
        self.stop()
