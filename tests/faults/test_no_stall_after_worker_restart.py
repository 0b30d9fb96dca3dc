"""A worker restart under a backlog: every schedule makes progress soon after the new one polls.

Issue 14 saw, once, a schedule's workflow task wait ~116 s for a poller after a worker restart.
This test rebuilds that situation with real processes: a headless dev server from the pip
``temporal`` binary (its defaults, so 4 task-queue partitions), ``python -m worker`` (the
production worker, SQLite ledger) as a subprocess, and the sink. ``schedules`` minutely schedules
each have ``per_schedule`` overdue occurrences (published and materialized ``per_schedule``
minutes in the past, lateness 12 h, so every one is on time and runs); their schedule workflows
release them all and start one occurrence workflow each. Once every schedule has a SUCCEEDED
occurrence — a backlog on every schedule, the worker in the middle of it — the worker gets SIGTERM
(graceful: stops polling, lets running activities finish) or SIGKILL (nothing finishes), and a new
worker process starts.

Three shapes: SIGTERM and SIGKILL with 6 schedules × 40, and SIGKILL with 1 schedule × 300 (the
shape of the original observation: the schedule workflow is still starting its children in batches
of at most 100 when the worker dies). "Polls" is when the server's ``DescribeTaskQueue`` first
lists the new worker's identity among the workflow queue's pollers (the worker's start-up log line
comes seconds earlier under load: the sandbox validates the workflows after it).

Expected: from the moment the new worker polls, every schedule that still has work gets a new
SUCCEEDED occurrence, and the drain never pauses, longer than ``LOST`` seconds, until every
occurrence is decided. ``LOST`` is ``BOUND`` (10 s of start-up and dispatch) plus the attempts'
heartbeat timeout: an attempt lost with the old worker (killed mid-call, or — as CI saw once after
a graceful stop, three occurrences left DISPATCHING — a task that never finished on it) is retried
once its heartbeat is overdue (``ATTEMPT_HEARTBEAT_TIMEOUT``, ``activities.heartbeat``), not
after the action's 120 s start-to-close timeout, so a schedule whose remaining work was all in
such attempts waits that long at most. Times come from
``time.monotonic`` (no wall-clock date: the schedules are placed relative to the server's own
clock, which is the host's).
"""

from __future__ import annotations

import time
from datetime import UTC, datetime, timedelta
from functools import partial
from pathlib import Path
from typing import Any

import anyio
import pytest
from faultkit import (
    TZDB,
    WorkerProcess,
    await_until,
    first_poll,
    running_sink,
    server_address,
    spawn_worker,
    sqlite_ledger,
    worker_env,
)
from temporal_env import start_dev_server

import ledger
from ledger import Ledger, OccurrenceState
from timecontract import load_spec
from workflows import ScheduleInput, schedule_workflow_id
from workflows.occurrence import ATTEMPT_HEARTBEAT_TIMEOUT

pytestmark = [
    pytest.mark.anyio,
    pytest.mark.temporal,
    pytest.mark.fault,
    pytest.mark.slow,
    pytest.mark.timeout(300),
]

BOUND = 10.0
"""Seconds from the new worker's first poll until every schedule with work left has progressed."""
LOST = BOUND + ATTEMPT_HEARTBEAT_TIMEOUT.total_seconds()
"""The same, for work that waits out a lost attempt's heartbeat timeout first."""


def minutely_spec(schedule_id: str, sink_url: str, first: datetime, count: int) -> dict[str, Any]:
    """``count`` minutely occurrences from ``first`` (UTC), all on time for 12 hours."""
    last = first + timedelta(minutes=count - 1)
    return {
        "schema": "scheduleSpec.v1",
        "scheduleId": schedule_id,
        "revision": 1,
        "timeZone": "UTC",
        "tzdbVersion": TZDB,
        "rule": "FREQ=MINUTELY",
        "start": first.replace(tzinfo=None).isoformat(),
        "end": last.replace(tzinfo=None).isoformat(),
        "misfirePolicy": "SKIP",
        "lateness": "PT12H",
        "cutoverAt": first.isoformat().replace("+00:00", "Z"),
        "action": {
            "name": "http",
            "parameters": {
                "url": f"{sink_url}/effects",
                "resultUrl": f"{sink_url}/effects/{{idempotencyKey}}",
                "timeoutSeconds": 10,
            },
        },
    }


def all_states(store: Ledger, ids: list[str]) -> dict[str, int]:
    """state → how many occurrences of ``ids`` are in it (non-zero only)."""
    total: dict[str, int] = {}
    for schedule_id in ids:
        for state, n in ledger.counts_by_state(store, schedule_id).items():
            if n:
                total[state.value] = total.get(state.value, 0) + n
    return total


def decided(store: Ledger, ids: list[str]) -> int:
    """How many occurrences of ``ids`` are SUCCEEDED or MISFIRE_EXPIRED."""
    return sum(
        counts[OccurrenceState.SUCCEEDED] + counts[OccurrenceState.MISFIRE_EXPIRED]
        for counts in (ledger.counts_by_state(store, s) for s in ids)
    )


async def longest_pause(store: Ledger, ids: list[str], *, until: int, timeout: float) -> float:
    """The longest stretch (s) without a newly decided occurrence, until ``until`` are decided."""
    last_count, last_change, longest = decided(store, ids), time.monotonic(), 0.0
    deadline = last_change + timeout
    while last_count < until:
        if time.monotonic() > deadline:
            raise AssertionError(f"{last_count}/{until} decided after {timeout} s")
        await anyio.sleep(0.1)
        count, now = decided(store, ids), time.monotonic()
        if count != last_count:
            longest = max(longest, now - last_change)
            last_count, last_change = count, now
    return max(longest, 0.0)


def succeeded(store: Ledger, ids: list[str]) -> dict[str, int]:
    """schedule ID → how many of its occurrences SUCCEEDED."""
    return {s: ledger.counts_by_state(store, s)[OccurrenceState.SUCCEEDED] for s in ids}


@pytest.mark.parametrize(
    ("stop", "schedules", "per_schedule"),
    [("SIGTERM", 6, 40), ("SIGKILL", 6, 40), ("SIGKILL", 1, 300)],
    ids=["sigterm-6x40", "sigkill-6x40", "sigkill-1x300"],
)
async def test_every_schedule_progresses_soon_after_a_worker_restart(
    tmp_path: Path, task_queue: str, stop: str, schedules: int, per_schedule: int
) -> None:
    url, store = sqlite_ledger(tmp_path)
    env = await start_dev_server()
    log = tmp_path / "workers.log"
    ids = [f"restart-{n:02d}" for n in range(schedules)]
    current: WorkerProcess | None = None
    try:
        with running_sink() as sink:
            now = datetime.now(UTC).replace(second=0, microsecond=0)
            first = now - timedelta(minutes=per_schedule + 1)
            datas = []
            for schedule_id in ids:
                data = minutely_spec(schedule_id, sink.url, first, per_schedule)
                spec = load_spec(data)
                ledger.publish_revision(store, spec, first, by="test")
                ledger.materialize(store, spec, first, now, first, by="test")
                datas.append(data)
            wenv = worker_env(server_address(env.client), task_queue, url, tmp_path)
            current = await anyio.to_thread.run_sync(
                partial(spawn_worker, wenv, log, "old", module="worker")
            )
            for schedule_id, data in zip(ids, datas, strict=True):
                await env.client.start_workflow(
                    "AlmanacSchedule",
                    ScheduleInput(schedule_id=schedule_id, initial_spec=data, horizon_seconds=3600),
                    id=schedule_workflow_id(schedule_id),
                    task_queue=task_queue,
                )
            await await_until(
                lambda: succeeded(store, ids),
                lambda done: all(n >= 1 for n in done.values()),
                timeout=120,
                what="every schedule has a SUCCEEDED occurrence",
            )
            if stop == "SIGKILL":
                current.kill()
            else:
                current.stop()
            before = succeeded(store, ids)
            pending = [s for s in ids if before[s] < per_schedule]
            assert pending, f"the old worker finished everything before the restart: {before}"
            current = await anyio.to_thread.run_sync(
                partial(spawn_worker, wenv, log, "new", module="worker")
            )
            polling = await first_poll(env.client, task_queue, "new")
            print(f"{stop}: states at the restart {all_states(store, ids)}")
            progressed: dict[str, float] = {}

            def probe() -> dict[str, float]:
                now_done = succeeded(store, pending)
                for schedule_id in pending:
                    if (
                        schedule_id not in progressed
                        and now_done[schedule_id] > before[schedule_id]
                    ):
                        progressed[schedule_id] = time.monotonic() - polling
                return dict(progressed)

            try:
                await await_until(
                    probe,
                    lambda seen: len(seen) == len(pending),
                    timeout=LOST + 170,
                    what=f"after {stop}, every schedule with work left progresses",
                )
            finally:
                print(f"{stop}: before {before}; first progress after the new worker polled (s):")
                print({s: round(t, 2) for s, t in progressed.items()})
            slowest = max(progressed.values())
            assert slowest <= LOST, f"after {stop}, a schedule waited {slowest:.1f} s: {progressed}"
            # Then the drain, to the last occurrence: lost attempts included, nothing waits out
            # the action's start-to-close timeout.
            gaps = await longest_pause(store, ids, until=schedules * per_schedule, timeout=240)
            print(f"{stop}: longest pause in the drain {gaps:.2f} s")
            assert gaps <= LOST, f"after {stop}, the drain paused {gaps:.1f} s"
            for schedule_id in ids:
                await env.client.get_workflow_handle(schedule_workflow_id(schedule_id)).terminate()
            current.stop()  # before the sink closes under its last deliveries
    finally:
        if current is not None:
            current.stop()
        await env.shutdown()
        store.dispose()
