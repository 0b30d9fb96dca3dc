"""Pieces of the real-time fault runs: a restartable dev server, a ledger, a fleet, the verdict.

- :class:`DevServer`: ``temporal server start-dev`` as a child process with a persistent SQLite
  file, so it can be stopped (or SIGKILLed) and started again on the same port with its state.
- :func:`chaos_ledger_url`: a PostgreSQL database when server binaries exist (a throwaway one
  from the session cluster; required with ``ALMANAC_REQUIRE_POSTGRES=1``), else a SQLite file.
- :func:`start_fleet`: several high-frequency schedules at once, on a fixed simulated calendar.
- :func:`verdict`: after a run, every occurrence whose instant passed is settled, each succeeded
  one has exactly one effect at the sink, and nothing else has one.

Every wait polls with a deadline; nothing sleeps for a fixed time.
"""

from __future__ import annotations

import os
import signal
import socket
import subprocess
from collections import Counter
from dataclasses import dataclass, field
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import pytest
from faultkit import spec_data, start_schedule, wait_until
from ledger_pg import find_pg_ctl
from temporal_env import binary
from temporalio.client import Client, WorkflowHandle

import ledger
from almanac.stack.sink import Sink
from ledger import Ledger, OccurrenceState
from ledger.migrate import upgrade
from workflows import search_attributes

SETTLED = frozenset(
    {
        OccurrenceState.SUCCEEDED,
        OccurrenceState.MISFIRE_EXPIRED,
        OccurrenceState.FAILED,
        OccurrenceState.CANCELLED,
    }
)
"""Terminal states; UNKNOWN_EFFECT counts as settled only once its case is resolved or queued."""


def free_port() -> int:
    """A TCP port nobody listens on right now (127.0.0.1)."""
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


@dataclass
class DevServer:
    """``temporal server start-dev`` on fixed ports with its state in ``db``; restartable."""

    db: Path
    log: Path
    port: int = field(default_factory=free_port)
    http_port: int = field(default_factory=free_port)
    metrics_port: int = field(default_factory=free_port)
    process: subprocess.Popen[bytes] | None = None

    @property
    def address(self) -> str:
        """``127.0.0.1:port`` of the frontend."""
        return f"127.0.0.1:{self.port}"

    def start(self) -> None:
        """Start the server and wait until its frontend accepts connections."""
        command = [
            binary("temporal"),
            "server",
            "start-dev",
            "--headless",
            "--ip", "127.0.0.1",
            "--port", str(self.port),
            "--http-port", str(self.http_port),
            "--metrics-port", str(self.metrics_port),
            "--db-filename", str(self.db),
            "--log-level", "error",
            "--sqlite-pragma", "journal_mode=wal",
            "--sqlite-pragma", "synchronous=off",
        ]  # fmt: skip
        for key in search_attributes.ALL:
            kind = "Int" if key.indexed_value_type.name == "INT" else "Keyword"
            command += ["--search-attribute", f"{key.name}={kind}"]
        with self.log.open("ab") as handle:
            self.process = subprocess.Popen(
                command, stdout=handle, stderr=subprocess.STDOUT, start_new_session=True
            )
        wait_until(
            lambda: (self.process.poll() if self.process else 0, _listening(self.port)),
            lambda v: v[0] is not None or v[1],
            timeout=60,
            what=f"temporal dev server listens on {self.port}",
        )
        if self.process.poll() is not None:
            raise AssertionError(f"dev server exited:\n{self.log.read_text(errors='replace')}")

    def stop(self) -> None:
        """SIGTERM this server process (by its pid) and wait; SIGKILL after 30 s."""
        if self.process is None or self.process.poll() is not None:
            return
        self.process.send_signal(signal.SIGTERM)
        try:
            self.process.wait(timeout=30)
        except subprocess.TimeoutExpired:
            self.process.send_signal(signal.SIGKILL)
            self.process.wait(timeout=30)
        self._wait_released()

    def kill(self) -> None:
        """SIGKILL this server process (by its pid) mid-work: a crash, no shutdown; then reap it."""
        if self.process is None or self.process.poll() is not None:
            return
        self.process.send_signal(signal.SIGKILL)
        self.process.wait(timeout=30)
        self._wait_released()

    def _wait_released(self) -> None:
        wait_until(
            lambda: _listening(self.port),
            lambda up: not up,
            timeout=30,
            what=f"port {self.port} is released",
        )


def _listening(port: int) -> bool:
    with socket.socket() as s:
        s.settimeout(0.5)
        return s.connect_ex(("127.0.0.1", port)) == 0


def chaos_ledger_url(request: pytest.FixtureRequest, tmp_path: Path) -> str:
    """A migrated, empty ledger: PostgreSQL if the session cluster is available, else SQLite."""
    required = os.environ.get("ALMANAC_REQUIRE_POSTGRES") == "1"
    if find_pg_ctl() is not None or required:
        server = request.getfixturevalue("pg_server")  # fails when required and missing
        name = f"chaos_{os.getpid()}_{free_port()}"
        server.admin(f"CREATE DATABASE {name} TEMPLATE almanac_template")
        request.addfinalizer(lambda: server.admin(f"DROP DATABASE IF EXISTS {name} WITH (FORCE)"))
        return str(server.url(name))
    url = f"sqlite:///{tmp_path / 'ledger.sqlite3'}"
    upgrade(url)
    return url


async def start_fleet(
    client: Client,
    task_queue: str,
    sink: Sink,
    *,
    count: int,
    rule: str,
    simulate_from: datetime,
    stop_after: datetime,
) -> list[WorkflowHandle[Any, Any]]:
    """Start ``count`` schedules ``fleet-00`` … with ``rule`` on the simulated calendar.

    A dev server runs in real time, so its "now" is the wall clock: read only to map the
    simulated calendar onto it (the offset), never as a date the outcome depends on.
    """
    server_now = datetime.now(UTC)
    handles = []
    for n in range(count):
        data = spec_data(
            f"fleet-{n:02d}", sink, rule=rule, misfirePolicy="CATCH_UP_BOUNDED", maxCatchUp=5
        )
        handles.append(
            await start_schedule(
                client,
                task_queue,
                data,
                simulated_now_utc=simulate_from,
                server_now_utc=server_now,
                stop_after_utc=stop_after,
                refresh_seconds=timedelta(minutes=10).total_seconds(),
            )
        )
    return handles


@dataclass(frozen=True)
class Verdict:
    """What a run left behind."""

    passed: int
    """Occurrences whose instant is at or before the end of the run."""
    states: Counter[str]
    unsettled: list[str]
    effects: Counter[str]
    """Effects at the sink per key, for the occurrences up to ``until``."""
    succeeded: set[str]
    redelivered: int
    """Effects the sink received more than once (same key): lost acknowledgements."""


def verdict(store: Ledger, sink: Sink, schedule_ids: list[str], until: datetime) -> Verdict:
    """Read the ledger and the sink after a run whose simulated clock ended at ``until``."""
    rows = [r for sid in schedule_ids for r in ledger.list_occurrences(store, sid, to_utc=until)]
    unsettled = []
    for r in rows:
        if r.state in SETTLED or r.state is OccurrenceState.SKIPPED_GAP:
            continue
        if r.state is OccurrenceState.UNKNOWN_EFFECT:
            case = ledger.show_occurrence(store, r.occurrence_id).case
            if case is not None and case.resolved_at_utc is not None:
                continue
        unsettled.append(f"{r.occurrence_id}={r.state.value}")
    # The schedules may run on past ``until``: judge the effects of this window's occurrences.
    window = {r.occurrence_id for r in rows}
    effects = [e for e in sink.effects() if e.idempotency_key in window]
    return Verdict(
        passed=len(rows),
        states=Counter(r.state.value for r in rows),
        unsettled=unsettled,
        effects=Counter(e.idempotency_key for e in effects),
        succeeded={r.occurrence_id for r in rows if r.state is OccurrenceState.SUCCEEDED},
        redelivered=sum(1 for e in effects if e.delivery_count > 1),
    )


def unsettled(store: Ledger, sink: Sink, schedule_ids: list[str], until: datetime) -> str:
    """A summary of the occurrences up to ``until`` not settled yet ("" when there are none)."""
    left = verdict(store, sink, schedule_ids, until).unsettled
    if not left:
        return ""
    by_state = Counter(item.split("=")[1] for item in left)
    return f"{len(left)} unsettled {dict(by_state)}, e.g. {left[:5]}"
