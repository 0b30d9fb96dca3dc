"""The ``http`` action: POST the occurrence to a webhook with ``Idempotency-Key: <occurrenceId>``.

Parameters (camelCase, as written in the spec)::

    url:            where to POST (http or https)                               required
    timeoutSeconds: connect, write and read timeout, each (default 10)
    resultUrl:      result-query URL; the literal ``{idempotencyKey}`` in it is replaced by the
                    URL-quoted occurrenceId (no other placeholder, no format spec). For the sink:
                    ``http://127.0.0.1:8765/effects/{idempotencyKey}``. Without it the adapter
                    cannot be queried (``capabilities(...).can_query_result`` is false).
    headers:        extra request headers; a value is a string or a secret reference
                    ``{secretRef: {env: ALMANAC_SECRET_…}}`` / ``{secretRef: {file: …}}``. A
                    secret-bearing header (``Authorization``, ``Set-Cookie``, ``X-Api.Key``,
                    ``X-Session`` … after normalisation — see ``timecontract.credentials``), and
                    any header whose value is credential-shaped (``Bearer …``), must be a
                    reference; ``Idempotency-Key``, ``Almanac-Attempt`` and ``webhook-*`` are
                    set by Almanac.
    signingSecret:  a secret reference to a Standard Webhooks key (``whsec_<base64>``): each
                    POST is signed (``webhook-id`` = occurrenceId, ``webhook-timestamp``,
                    ``webhook-signature``), see https://www.standardwebhooks.com/
    data:           extra JSON sent as the body's ``data`` member

The body is ``{"occurrenceId", "idempotencyKey", "scheduleId", "revision", "nominalLocal",
"instantUtc", "data"}``, serialized once: the signature covers exactly those bytes. Every delivery
of one occurrence sends the same body, byte for byte — a retry, and a redelivery after a worker
died mid-call, alike — because a downstream that follows the Idempotency-Key header draft (or
behaves like Stripe) fingerprints the keyed payload and refuses a changed one. The attempt's
number travels outside it, in the ``Almanac-Attempt`` header.

Trust (DESIGN §10): secrets are resolved here, at call time, and scrubbed from everything the
adapter returns; every connection passes the worker's :class:`EgressPolicy` (redirects are never
followed); headers go to ``resultUrl`` only when it has the webhook's origin; a reply is read to at
most 64 KiB, and a failure's detail keeps only a short, redacted excerpt of it.

How errors are classified — by whether the request can have reached the server:

- 2xx → CONFIRMED (``result`` is the JSON object answered, else ``{"status", "text"}``).
- 408, 429, 5xx → RETRYABLE_FAILURE (the key makes the resend safe), with ``retry_after_seconds``
  from a ``Retry-After: <seconds>`` header.
- 409 or 422 on a re-send (attempt 2 or later: this key went out before) → UNCONFIRMED. These are
  the draft's "key already used" answers (409: the first request with this key is still being
  processed; 422: the key was used with another payload): evidence that the effect may exist,
  never a failure. The occurrence is reconciled by the result query or queued for a human.
- any other status (3xx, 4xx; 409 and 422 on the first send) → NON_RETRYABLE_FAILURE.
- ``ConnectError``, ``ConnectTimeout``, ``PoolTimeout`` → RETRYABLE_FAILURE: nothing was sent.
- an egress refusal, an unavailable secret, ``UnsupportedProtocol``, ``LocalProtocolError`` →
  NON_RETRYABLE_FAILURE: nothing was sent, and nothing will be.
- every other transport error — ``ReadTimeout``, ``WriteTimeout``, ``ReadError``, ``WriteError``,
  ``RemoteProtocolError`` (the server closed without an answer) … → UNCONFIRMED.

Every call uses a fresh connection, so a stale keep-alive connection can never turn a request that
was not sent into an UNCONFIRMED one.
"""

from __future__ import annotations

import json
import re
import ssl
from collections.abc import Callable, Mapping
from datetime import UTC, datetime
from typing import Any, ClassVar
from urllib.parse import quote, urlsplit

import httpx
from pydantic import BaseModel, JsonValue
from standardwebhooks.webhooks import Webhook

from activities.actions.base import (
    ActionAdapter,
    ActionCapabilities,
    ActionContext,
    InvalidActionParameters,
    Outcome,
    OutcomeKind,
    QueryOutcome,
    QueryOutcomeKind,
)
from activities.actions.egress import EgressPolicy, EgressTransport, refusal_of
from activities.actions.parameters import (
    ATTEMPT_HEADER,
    IDEMPOTENCY_HEADER,
    RESULT_URL_PLACEHOLDER,
    HttpParameters,
    SecretRef,
)
from activities.actions.secrets import (
    Scrubber,
    SecretResolver,
    SecretUnavailable,
)
from timecontract import SpecError

RETRYABLE_STATUSES = frozenset({408, 429})
KEY_USED_STATUSES = frozenset({409, 422})
"""Answers that say the idempotency key was used before (draft-ietf-httpapi-idempotency-key-header,
"Error Scenarios": 409 while the first request is still being processed, 422 for a key reused with
another payload; several payment APIs answer 409 for both)."""
MAX_RESPONSE_BYTES = 64 * 1024
"""The most of a reply read: beyond it a result is recorded as truncated."""
EXCERPT_CHARS = 160
"""The most of a failure reply kept in an outcome's detail (and so in the ledger)."""
_CREDENTIAL_WORDS = re.compile(r"(?i)\b(bearer|basic|token)\s+[A-Za-z0-9._~+/=:-]{6,}")
_CREDENTIAL_FIELDS = re.compile(
    r"(?i)(\"?(?:password|passwd|secret|token|api[_-]?key|authorization|cookie)\"?\s*[:=]\s*)"
    r"(\"[^\"]*\"|[^\s,;&}]+)"
)


def occurrence_body(ctx: ActionContext, data: JsonValue) -> dict[str, Any]:
    """The JSON body describing ``ctx``'s occurrence: the same for every attempt (no attempt)."""
    return {
        "occurrenceId": ctx.occurrence_id,
        "idempotencyKey": ctx.idempotency_key,
        "scheduleId": ctx.schedule_id,
        "revision": ctx.revision,
        "nominalLocal": ctx.nominal_local,
        "instantUtc": ctx.instant_utc,
        "data": data,
    }


def excerpt(text: str, scrub: Callable[[str], str] = str) -> str:
    """A short, one-line, redacted excerpt of a reply body for a failure's detail.

    At most :data:`EXCERPT_CHARS` characters; control characters become spaces; the call's
    secrets (``scrub``) and anything shaped like a credential (``Bearer …``, ``"token": "…"``)
    become ``<redacted>``.
    """
    flat = " ".join(scrub(text).split())
    flat = _CREDENTIAL_WORDS.sub(r"\1 <redacted>", flat)
    flat = _CREDENTIAL_FIELDS.sub(r"\1<redacted>", flat)
    return flat if len(flat) <= EXCERPT_CHARS else flat[: EXCERPT_CHARS - 1] + "…"


def _origin(url: str) -> tuple[str, str, int | None]:
    parts = urlsplit(url)
    scheme = parts.scheme.lower()
    port = parts.port or {"http": 80, "https": 443}.get(scheme)
    return scheme, (parts.hostname or "").lower(), port


def _retry_after_seconds(response: httpx.Response) -> float | None:
    # Only the delta-seconds form: the HTTP-date form would need the clock.
    value = response.headers.get("Retry-After", "").strip()
    return float(value) if value.isdigit() else None


def _describe(exc: Exception) -> str:
    return f"{type(exc).__name__}: {exc}" if str(exc) else type(exc).__name__


def _wall_clock() -> datetime:
    return datetime.now(UTC)


class _Reply:
    """A response whose body was read to at most :data:`MAX_RESPONSE_BYTES`."""

    def __init__(self, response: httpx.Response, body: bytes, truncated: bool) -> None:
        self.response = response
        self.status_code = response.status_code
        self.body = body
        self.truncated = truncated

    @property
    def text(self) -> str:
        return self.body.decode(self.response.encoding or "utf-8", errors="replace")

    def json_object(self, scrub: Scrubber) -> dict[str, Any]:
        if self.truncated:
            return {"status": self.status_code, "truncated": True}
        try:
            payload = json.loads(self.body)
        except ValueError:
            return {"status": self.status_code, "text": scrub(self.text[:2000])}
        if isinstance(payload, dict):
            return dict(scrub.data(payload))
        return {"status": self.status_code, "json": scrub.data(payload)}


async def _send(client: httpx.AsyncClient, request: httpx.Request) -> _Reply:
    response = await client.send(request, stream=True)
    try:
        body = bytearray()
        async for chunk in response.aiter_bytes():  # decoded: a gzip bomb stops here too
            body += chunk
            if len(body) > MAX_RESPONSE_BYTES:
                return _Reply(response, bytes(body[:MAX_RESPONSE_BYTES]), True)
        return _Reply(response, bytes(body), False)
    finally:
        await response.aclose()


class HttpAction(ActionAdapter[HttpParameters]):
    """POST to a webhook with the occurrenceId as ``Idempotency-Key``; optional result query."""

    name: ClassVar[str] = "http"
    parameters_model: ClassVar[type[BaseModel]] = HttpParameters
    accepts_idempotency_key: ClassVar[bool] = True
    can_query_result: ClassVar[bool] = True
    """True when ``resultUrl`` is given; see :meth:`capabilities`."""

    def __init__(
        self,
        transport: httpx.AsyncBaseTransport | None = None,
        *,
        egress: EgressPolicy | None = None,
        secrets: SecretResolver | None = None,
        clock: Callable[[], datetime] = _wall_clock,
        tls_context: ssl.SSLContext | None = None,
    ) -> None:
        """Build the adapter.

        Args:
            transport: replaces the network entirely (tests); then ``egress`` is not consulted.
            egress: where connections may go (default: globally routable addresses only).
            secrets: resolves secret references (default: ``ALMANAC_SECRET_*`` variables only).
            clock: the wall clock for ``webhook-timestamp``. It is the one time here that is not
                the workflow's: a receiver checks it against its own clock (±5 minutes).
            tls_context: verifies servers (default: httpx's, the certifi roots; tests pass one
                trusting their own CA). Certificates and host names are always checked.
        """
        self._transport = transport
        self._egress = egress or EgressPolicy()
        self._secrets = secrets or SecretResolver()
        self._clock = clock
        self._ssl_context: ssl.SSLContext | None = tls_context

    def _verify(self) -> ssl.SSLContext:
        # Loading the CA bundle takes a noticeable fraction of a second: do it once per adapter.
        if self._ssl_context is None:
            self._ssl_context = httpx.create_ssl_context()
        return self._ssl_context

    def capabilities(self, parameters: Mapping[str, Any]) -> ActionCapabilities:
        """Idempotent always; queryable only with a ``resultUrl``.

        Raises:
            InvalidActionParameters: besides the model's problems, a ``url`` or ``resultUrl``
                this adapter's egress policy refuses by its host alone (an IP literal or
                ``localhost``: :meth:`EgressPolicy.refusal_of_url`), so ``apply`` is refused
                instead of every occurrence failing. Not checked when ``transport`` replaces
                the network (the policy is then never consulted).
        """
        params = self.validate(parameters)
        refused: list[SpecError] = []
        for key in ("url", "resultUrl") if self._transport is None else ():
            value = parameters.get(key)
            refusal = self._egress.refusal_of_url(value) if isinstance(value, str) else None
            if refusal is not None:
                why = str(refusal).removeprefix("egress refused: ")
                refused.append(
                    SpecError(
                        f"action.parameters.{key}",
                        value,
                        f"the worker's egress policy refuses it: {why}",
                    )
                )
        if refused:
            raise InvalidActionParameters(self.name, refused)
        return ActionCapabilities(
            accepts_idempotency_key=True, can_query_result=params.result_url is not None
        )

    def _client(self, params: HttpParameters) -> httpx.AsyncClient:
        transport = self._transport or EgressTransport(self._egress, self._verify())
        return httpx.AsyncClient(
            timeout=httpx.Timeout(params.timeout_seconds),
            transport=transport,
            follow_redirects=False,
            trust_env=False,
        )

    def _headers(self, params: HttpParameters) -> dict[str, str]:
        """The spec's headers with every reference resolved (raises SecretUnavailable)."""
        return {
            name: self._secrets.resolve(value) if isinstance(value, SecretRef) else value
            for name, value in params.headers.items()
        }

    def _signature_headers(self, secret: str, ctx: ActionContext, body: str) -> dict[str, str]:
        try:
            webhook = Webhook(secret)
        except Exception:  # the library's errors may quote the key: never repeat them
            raise SecretUnavailable(
                "signingSecret: not a Standard Webhooks key (whsec_<base64>)"
            ) from None
        timestamp = self._clock().astimezone(UTC).replace(microsecond=0)
        return {
            "webhook-id": ctx.occurrence_id,
            "webhook-timestamp": str(int(timestamp.timestamp())),
            "webhook-signature": webhook.sign(ctx.occurrence_id, timestamp, body),
        }

    async def invoke(self, ctx: ActionContext) -> Outcome:
        """POST the occurrence once and classify the answer (see the module docstring)."""
        params = self.validate(ctx.parameters)
        body = json.dumps(occurrence_body(ctx, params.data), separators=(",", ":"))
        try:
            headers = self._headers(params)
            secrets = list(headers.values())
            if params.signing_secret is not None:
                key = self._secrets.resolve(params.signing_secret)
                secrets.append(key)
                headers.update(self._signature_headers(key, ctx, body))
        except SecretUnavailable as exc:
            return Outcome(OutcomeKind.NON_RETRYABLE_FAILURE, detail=f"not sent: {exc}")
        scrub = Scrubber(secrets)
        headers.update(
            {
                "Content-Type": "application/json",
                IDEMPOTENCY_HEADER: ctx.idempotency_key,
                ATTEMPT_HEADER: str(ctx.attempt),
            }
        )
        async with self._client(params) as client:
            request = client.build_request("POST", str(params.url), content=body, headers=headers)
            try:
                reply = await _send(client, request)
            except (httpx.ConnectError, httpx.ConnectTimeout, httpx.PoolTimeout) as exc:
                refusal = refusal_of(exc)
                if refusal is not None:
                    return Outcome(OutcomeKind.NON_RETRYABLE_FAILURE, detail=f"not sent: {refusal}")
                return Outcome(
                    OutcomeKind.RETRYABLE_FAILURE, detail=scrub(f"not sent: {_describe(exc)}")
                )
            except (httpx.UnsupportedProtocol, httpx.LocalProtocolError) as exc:
                return Outcome(OutcomeKind.NON_RETRYABLE_FAILURE, detail=scrub(_describe(exc)))
            except httpx.HTTPError as exc:
                return Outcome(
                    OutcomeKind.UNCONFIRMED, detail=scrub(f"sent, no answer: {_describe(exc)}")
                )
        code = reply.status_code
        if reply.response.is_success:
            return Outcome(
                OutcomeKind.CONFIRMED,
                result=reply.json_object(scrub),
                detail=f"HTTP {code}",
                status_code=code,
            )
        detail = f"HTTP {code}: {excerpt(reply.text, scrub)}".rstrip(": ")
        if code in KEY_USED_STATUSES and ctx.attempt > 1:
            return Outcome(
                OutcomeKind.UNCONFIRMED,
                detail=f"key already used, the effect may exist: {detail}",
                status_code=code,
            )
        if code in RETRYABLE_STATUSES or code >= 500:
            return Outcome(
                OutcomeKind.RETRYABLE_FAILURE,
                detail=detail,
                status_code=code,
                retry_after_seconds=_retry_after_seconds(reply.response),
            )
        return Outcome(OutcomeKind.NON_RETRYABLE_FAILURE, detail=detail, status_code=code)

    async def query_result(self, ctx: ActionContext) -> QueryOutcome:
        """GET the ``resultUrl``: 200 → FOUND, 404/410 → NOT_FOUND, anything else QUERY_FAILED.

        The spec's headers go along only when ``resultUrl`` has the webhook's origin (scheme,
        host and port): credentials meant for one service never reach another.
        """
        params = self.validate(ctx.parameters)
        if params.result_url is None:
            return QueryOutcome(QueryOutcomeKind.UNSUPPORTED, detail="no resultUrl parameter")
        url = params.result_url.replace(RESULT_URL_PLACEHOLDER, quote(ctx.idempotency_key, safe=""))
        headers: dict[str, str] = {}
        if _origin(url) == _origin(str(params.url)):
            try:
                headers = self._headers(params)
            except SecretUnavailable as exc:
                return QueryOutcome(QueryOutcomeKind.QUERY_FAILED, detail=f"not sent: {exc}")
        scrub = Scrubber(headers.values())
        async with self._client(params) as client:
            try:
                reply = await _send(client, client.build_request("GET", url, headers=headers))
            except httpx.HTTPError as exc:
                refusal = refusal_of(exc)
                why = str(refusal) if refusal is not None else scrub(_describe(exc))
                return QueryOutcome(QueryOutcomeKind.QUERY_FAILED, detail=why)
        code = reply.status_code
        if code == 200:
            return QueryOutcome(
                QueryOutcomeKind.FOUND, result=reply.json_object(scrub), detail="HTTP 200"
            )
        if code in (404, 410):
            return QueryOutcome(QueryOutcomeKind.NOT_FOUND, detail=f"HTTP {code}")
        return QueryOutcome(
            QueryOutcomeKind.QUERY_FAILED,
            detail=f"HTTP {code}: {excerpt(reply.text, scrub)}".rstrip(": "),
        )
