"""SIGKILL the worker process at random points over a run of at least 500 occurrences.

Real processes: a Temporal dev server, ``python -m worker`` as a subprocess, the sink, and the
ledger on PostgreSQL when server binaries exist (else a SQLite file). Ten schedules fire every two
simulated seconds for 120 seconds of real time (the simulated calendar starts 2027-01-10 09:00Z;
the dev server's clock is mapped onto it with the schedules' clock offset). Once every schedule
has run an occurrence, a seeded random generator picks when to SIGKILL the worker — after 1–4
seconds of work, for 75 seconds and at least 6 kills (a loaded machine starts workers slowly);
with the restart, a kill about every 10 seconds — wherever it happens to be (a ledger
transaction, a downstream call, a workflow task), and a new worker process starts at once. The
schedules keep running, as in production, until the verdict.

After the run the test waits, with a deadline, until every occurrence whose instant passed is
settled: an action attempt killed mid-flight is retried by Temporal once its heartbeat is overdue
(``ATTEMPT_HEARTBEAT_TIMEOUT``, 10 s), a ledger activity after its 30 s start-to-close timeout.

Expected: at least 500 occurrences passed; 0 lost (each one SUCCEEDED, or MISFIRE_EXPIRED by the
misfire policy, none left PLANNED/DUE/DISPATCHING/RUNNING/RETRY_WAIT); 0 duplicate effects (the
sink holds one effect per SUCCEEDED occurrence and none for any other).
"""

from __future__ import annotations

import random
import time
from datetime import timedelta
from pathlib import Path

import anyio
import pytest
from chaoskit import chaos_ledger_url, start_fleet, unsettled, verdict
from faultkit import (
    WorkerProcess,
    await_until,
    day,
    running_sink,
    server_address,
    spawn_worker,
    worker_env,
)
from temporal_env import start_dev_server

import ledger
from ledger import Ledger, OccurrenceState

pytestmark = [
    pytest.mark.anyio,
    pytest.mark.temporal,
    pytest.mark.fault,
    pytest.mark.slow,
    pytest.mark.timeout(480),
]

SEED = 20270110
SCHEDULES = 10
RULE = "FREQ=SECONDLY;INTERVAL=2"
RUN = timedelta(seconds=120)
"""Simulated (= real) time whose occurrences are counted: 10 × 60 instants at most."""
KILL_PHASE = 75.0
"""Seconds (real time) during which the worker is killed; the run then continues untouched."""
MIN_KILLS = 6
"""The kill phase lasts until at least this many kills, however slowly workers start."""


def running_schedules(store: Ledger, ids: list[str]) -> int:
    """How many of the schedules have a SUCCEEDED occurrence."""
    succeeded = [OccurrenceState.SUCCEEDED]
    return sum(1 for sid in ids if ledger.list_occurrences(store, sid, states=succeeded, limit=1))


async def hold(seconds: float, worker: WorkerProcess) -> None:
    """Let ``worker`` run ``seconds``; fail at once if it exits by itself."""
    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline:
        if worker.process.poll() is not None:
            raise AssertionError(f"worker exited {worker.process.returncode} on its own")
        await anyio.sleep(0.1)


async def test_sigkill_at_random_points_loses_no_occurrence_and_duplicates_no_effect(
    request: pytest.FixtureRequest, tmp_path: Path, task_queue: str
) -> None:
    url = chaos_ledger_url(request, tmp_path)
    store = Ledger.from_url(url)
    env = await start_dev_server(dev_server_extra_args=["--sqlite-pragma", "journal_mode=wal"])
    log = tmp_path / "workers.log"
    rng = random.Random(SEED)
    kills = 0
    ids = [f"fleet-{n:02d}" for n in range(SCHEDULES)]
    start = day(10, 9)
    until = start + RUN
    current: WorkerProcess | None = None
    try:
        with running_sink() as sink:
            wenv = worker_env(server_address(env.client), task_queue, url, tmp_path)
            current = await anyio.to_thread.run_sync(spawn_worker, wenv, log, "chaos-00")
            # The schedules run on (as in production) until the verdict: an occurrence whose
            # release was delayed by a kill is released late, never left behind by a stop.
            began = time.monotonic()
            handles = await start_fleet(
                env.client,
                task_queue,
                sink,
                count=SCHEDULES,
                rule=RULE,
                simulate_from=start,
                stop_after=start + RUN + timedelta(minutes=30),
            )
            # Kills start once every schedule runs: the first materialization starts at the
            # moment a schedule is applied, so a kill during it would shift the counted window.
            await await_until(
                lambda: running_schedules(store, ids),
                lambda n: n == SCHEDULES,
                timeout=60,
                what="every schedule has run an occurrence",
            )
            while kills < MIN_KILLS or time.monotonic() - began < KILL_PHASE:
                await hold(rng.uniform(1.0, 4.0), current)
                current.kill()
                kills += 1
                current = await anyio.to_thread.run_sync(
                    spawn_worker, wenv, log, f"chaos-{kills:02d}"
                )
            await hold(max(0.0, RUN.total_seconds() + 2 - (time.monotonic() - began)), current)
            await await_until(
                lambda: unsettled(store, sink, ids, until),
                lambda left: not left,
                timeout=200,
                what="every passed occurrence is settled",
            )
            result = verdict(store, sink, ids, until)
            for handle in handles:
                await handle.terminate("the run is over")
    finally:
        if current is not None:
            current.stop()
        await env.shutdown()
        store.dispose()

    summary = f"{kills} kills, {result.passed} passed, {dict(result.states)}"
    assert kills >= MIN_KILLS, summary
    assert result.passed >= 500, summary
    assert result.unsettled == [], summary
    assert set(result.states) <= {"SUCCEEDED", "MISFIRE_EXPIRED"}, summary
    # One effect per succeeded occurrence, none for anything else.
    assert set(result.effects) == result.succeeded, summary
    assert all(n == 1 for n in result.effects.values()), summary
