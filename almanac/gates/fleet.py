"""Fleet recovery: N daily schedules, a 7-day outage, the production worker catching up.

The scenario behind ``almanac gates fleet-recovery`` and ``bench/scale.py``. **How time is
moved**: nothing is faked inside Temporal or the worker; the outage is put in the past through the
ledger's injected clock. At ``T0 = now − 7 days`` (the ``now_utc`` of every ledger call) N daily
schedules are published (first instant T0 + 12 h, ``CATCH_UP_BOUNDED``, ``maxCatchUp`` 2, cutover
T0) and each one's 14-day horizon is materialized — the ledger as its workers left it at T0. Then
the production worker (``python -m worker``, a child process) runs on the real clock and the N
schedule workflows are started (what ``almanac apply`` does). The worker first catches up in the
ledger (``almanac.catch_up``: every schedule materialized as far ahead as it was at T0, 13.5
days, and its 7 overdue days decided, 2 released and 5 expired), then polls; each schedule
workflow finds its window written and starts its 2 released occurrences (the ``http`` action to
the sink). A worker without the catch-up leaves all of it to each schedule workflow's first
wake-up.

Two milestones are timed. **Materialized** (the seed's gate: "completion of materialization
within five minutes after fault recovery"): every schedule's last materialized instant is at least
now + 13 days and no occurrence whose instant passed is still PLANNED (each is decided: released to
run within the catch-up bound, or MISFIRE_EXPIRED). **Recovered** (end to end, stricter): also none
is DUE, DISPATCHING, RUNNING or RETRY_WAIT — every caught-up occurrence has run (SUCCEEDED).
"""

from __future__ import annotations

import asyncio
import contextlib
import os
import signal
import socket
import subprocess
import sys
import time
import uuid
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any, NamedTuple

from sqlalchemy import func, select

import ledger
from ledger.events import OCCURRENCES
from timecontract import load_spec

OUTAGE = timedelta(days=7)
HORIZON = timedelta(days=14)
OPEN = ("PLANNED", "DUE", "DISPATCHING", "RUNNING", "RETRY_WAIT")
SEARCH_ATTRIBUTES = (
    "ScheduleId=Keyword",
    "Revision=Int",
    "NominalLocal=Keyword",
    "OccurrenceState=Keyword",
)
REPO = Path(__file__).resolve().parents[2]


def spec_data(schedule_id: str, sink_url: str, t0: datetime) -> dict[str, Any]:
    """Daily from T0 + 12 h, the 2 most recent missed days caught up, the http action.

    Seven instants fall in the outage, the next one 12 hours after it: none passes while a
    recovery is measured (a next instant minutes after T0 would add N executions to any
    recovery longer than that).
    """
    first = t0 + timedelta(hours=12)
    return {
        "schema": "scheduleSpec.v1",
        "scheduleId": schedule_id,
        "revision": 1,
        "timeZone": "UTC",
        "tzdbVersion": "2026a",
        "rule": "FREQ=DAILY",
        "start": first.replace(tzinfo=None, microsecond=0).isoformat(),
        "misfirePolicy": "CATCH_UP_BOUNDED",
        "maxCatchUp": 2,
        "cutoverAt": t0.isoformat().replace("+00:00", "Z"),
        "action": {
            "name": "http",
            "parameters": {
                "url": f"{sink_url}/effects",
                "resultUrl": f"{sink_url}/effects/{{idempotencyKey}}",
                "timeoutSeconds": 10,
            },
        },
    }


class Progress(NamedTuple):
    """One reading of the ledger during a recovery (counts over the fleet's schedules)."""

    planned_overdue: int
    """Occurrences whose instant passed still PLANNED: not yet decided (run or expire)."""
    open_overdue: int
    """Occurrences whose instant passed not yet final: PLANNED, DUE, DISPATCHING, RUNNING or
    RETRY_WAIT (``planned_overdue`` included)."""
    horizons: int
    """Schedules whose last materialized instant is at least now + 13 days."""
    succeeded: int = 0
    """Occurrences whose instant passed that have run (SUCCEEDED): the caught-up ones."""

    def materialized(self, schedules: int) -> bool:
        """The seed's milestone: every horizon re-materialized and every overdue one decided."""
        return self.planned_overdue == 0 and self.horizons == schedules

    def recovered(self, schedules: int) -> bool:
        """End to end: materialized, and every caught-up occurrence has run."""
        return self.open_overdue == 0 and self.horizons == schedules


def progress(store: ledger.Ledger, ids_prefix: str, now: datetime) -> Progress:
    """Read the recovery's progress for the schedules whose IDs start with ``ids_prefix``.

    ``now`` (UTC): the instant the recovery began; "overdue" means an instant before it.
    """
    o = OCCURRENCES.c
    with store.engine.connect() as c:
        by_state: dict[str, int] = dict(
            c.execute(
                select(o.state, func.count())
                .where(
                    o.schedule_id.startswith(ids_prefix),
                    o.instant_utc < now,
                    o.state.in_((*OPEN, "SUCCEEDED")),
                )
                .group_by(o.state)
            ).all()
        )
        succeeded = by_state.pop("SUCCEEDED", 0)
        tops = (
            select(func.max(o.instant_utc).label("top"))
            .where(o.schedule_id.startswith(ids_prefix))
            .group_by(o.schedule_id)
            .subquery()
        )
        reached = c.execute(
            select(func.count()).where(tops.c.top >= now + HORIZON - timedelta(days=1))
        ).scalar_one()
    return Progress(
        int(by_state.get("PLANNED", 0)), int(sum(by_state.values())), int(reached), int(succeeded)
    )


@dataclass(frozen=True)
class FleetResult:
    """What a recovery run measured."""

    schedules: int
    seconds: float
    """From the worker's launch (the scheduler coming back) until recovered, or the timeout."""
    materialized_seconds: float | None
    """From the worker's launch until materialized (module docstring), None if never."""
    first_run_seconds: float | None
    """From the worker's launch until the first caught-up occurrence SUCCEEDED, None if none."""
    recovered: bool
    open_overdue: int
    """Occurrences whose instant passed still undecided when the run stopped (0 if recovered)."""
    horizons_reached: int
    worker_cpu_seconds: float
    worker_rss_mib: float


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


@contextlib.contextmanager
def dev_server(folder: Path) -> Iterator[str]:
    """A headless dev server (the pip ``temporal`` binary), SQLite file with WAL; its address."""
    from almanac.stack.dev import temporal_binary

    port = _free_port()
    args = [str(temporal_binary()), "server", "start-dev", "--headless"]
    args += ["--db-filename", str(folder / "temporal.sqlite3"), "--port", str(port)]
    args += ["--http-port", str(_free_port()), "--metrics-port", str(_free_port())]
    args += ["--log-level", "error"]
    args += ["--sqlite-pragma", "journal_mode=wal", "--sqlite-pragma", "synchronous=off"]
    for attribute in SEARCH_ATTRIBUTES:
        args += ["--search-attribute", attribute]
    process = subprocess.Popen(args, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    try:
        deadline = time.monotonic() + 30
        while True:
            with contextlib.suppress(OSError), socket.create_connection(("127.0.0.1", port), 0.5):
                break
            if time.monotonic() > deadline:
                raise RuntimeError(f"the dev server did not listen on {port} within 30 s")
            time.sleep(0.1)
        time.sleep(0.5)  # the frontend accepts before the namespace is ready
        yield f"127.0.0.1:{port}"
    finally:
        process.send_signal(signal.SIGTERM)
        try:
            process.wait(15)
        except subprocess.TimeoutExpired:
            process.kill()
            process.wait()


def _cpu_seconds(pid: int) -> float:
    fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


def _rss_mib(pid: int) -> float:
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith("VmRSS:"):
            return int(line.split()[1]) / 1024
    return float("nan")


async def recover(
    schedules: int,
    folder: Path,
    *,
    timeout: float = 600.0,
    worker_module: str = "worker",
    say: Callable[[str], None] = lambda _: None,
) -> FleetResult:
    """Run the scenario (module docstring) on a SQLite ledger in ``folder``; measure recovery.

    Args:
        schedules: N, the daily schedules.
        folder: scratch space (ledger, Temporal state, worker log).
        timeout: stop waiting after this many seconds (the result is then not recovered).
        worker_module: ``python -m`` this as the worker (a test passes a mutant).
        say: progress lines.
    """
    from temporalio.client import Client

    from almanac.stack.sink import Sink
    from ledger.migrate import upgrade
    from workflows import ScheduleInput, schedule_workflow_id

    url = f"sqlite:///{folder / 'fleet.sqlite3'}"
    upgrade(url)
    store = ledger.Ledger.from_url(url)
    prefix = f"fleet-{uuid.uuid4().hex[:6]}-"
    ids = [f"{prefix}{i:05d}" for i in range(schedules)]
    try:
        with dev_server(folder) as address, Sink() as sink:
            t0 = datetime.now(UTC).replace(microsecond=0) - OUTAGE
            datas = [spec_data(s, sink.url, t0) for s in ids]
            for data in datas:
                spec = load_spec(data)
                ledger.publish_revision(store, spec, t0, by="fleet")
                ledger.materialize(store, spec, t0, t0 + HORIZON, t0, by="fleet")
            say(f"{schedules} schedules published and materialized at T0 = now - 7 days")
            queue = f"fleet-{uuid.uuid4().hex[:6]}"
            env = {**os.environ, "PYTHONPATH": str(REPO), "PYTHONUNBUFFERED": "1"}
            # As an installed worker runs: with bytecode (else the sandbox compiles every
            # workflow module from source for each new workflow instance).
            env.pop("PYTHONDONTWRITEBYTECODE", None)
            env.update(
                ALMANAC_TEMPORAL_ADDRESS=address,
                ALMANAC_TEMPORAL_TASK_QUEUE=queue,
                ALMANAC_LEDGER_URL=url,
                ALMANAC_DATA_DIR=str(folder / "worker"),
                ALMANAC_EGRESS_ALLOW="127.0.0.1",
            )
            client = await Client.connect(address)
            now = datetime.now(UTC)
            began = time.monotonic()
            with open(folder / "worker.log", "ab") as log:
                worker = subprocess.Popen(
                    [sys.executable, "-m", worker_module],
                    cwd=REPO,
                    env=env,
                    stdout=log,
                    stderr=subprocess.STDOUT,
                )
                try:
                    for first in range(0, schedules, 50):
                        await asyncio.gather(
                            *(
                                client.start_workflow(
                                    "AlmanacSchedule",
                                    ScheduleInput(schedule_id=s, initial_spec=d),
                                    id=schedule_workflow_id(s),
                                    task_queue=queue,
                                )
                                for s, d in zip(
                                    ids[first : first + 50], datas[first : first + 50], strict=True
                                )
                            )
                        )
                    last = 0.0
                    materialized: float | None = None
                    first_run: float | None = None
                    while True:
                        reading = progress(store, prefix, now)
                        elapsed = time.monotonic() - began
                        if materialized is None and reading.materialized(schedules):
                            materialized = elapsed
                            say(f"  {elapsed:.0f} s: materialized (every overdue one decided)")
                        if first_run is None and reading.succeeded:
                            first_run = elapsed
                            say(f"  {elapsed:.0f} s: the first caught-up occurrence SUCCEEDED")
                        done = reading.recovered(schedules)
                        if done or elapsed > timeout or worker.poll() is not None:
                            break
                        if elapsed - last >= 10:
                            say(
                                f"  {elapsed:.0f} s: {reading.planned_overdue} overdue undecided, "
                                f"{reading.open_overdue} not final, {reading.succeeded} succeeded, "
                                f"{reading.horizons} horizons"
                            )
                            last = elapsed
                        await asyncio.sleep(0.5)
                    cpu = _cpu_seconds(worker.pid) if worker.poll() is None else float("nan")
                    rss = _rss_mib(worker.pid) if worker.poll() is None else float("nan")
                finally:
                    if worker.poll() is None:
                        worker.send_signal(signal.SIGTERM)
                        try:
                            worker.wait(30)
                        except subprocess.TimeoutExpired:
                            worker.kill()
                            worker.wait()
    finally:
        store.dispose()
    return FleetResult(
        schedules,
        elapsed,
        materialized,
        first_run,
        done,
        reading.open_overdue,
        reading.horizons,
        cpu,
        rss,
    )


__all__ = ["FleetResult", "Progress", "dev_server", "progress", "recover", "spec_data"]
