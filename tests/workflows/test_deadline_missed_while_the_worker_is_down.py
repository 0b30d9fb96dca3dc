"""A deadline missed while the worker is down is recorded after it returns, once (issue 30).

On a dev server in real time (a time-skipping server cannot skip past a timer while no worker
polls: its sleep waits for the workflow task), a simulated calendar: occurrences every 20 s from
09:00:10Z with ``deadline: PT10S``. A (09:00:10) runs. The worker stops before B (09:00:30) and
stays down until B's deadline (09:00:40) is past; a new worker on the same ledger and task queue
takes the run over. B's miss is recorded by the first sweep after the return, stamped after it,
with ``PLANNED`` as its state at the deadline (it was never released). The miss is one row, and a
sweep afterwards records nothing (a late success beside a miss: the ledger tests).
Expected instants: B's instant + 10 s, from the spec.
"""

from __future__ import annotations

from datetime import UTC, datetime, timedelta
from pathlib import Path

import pytest
from stack import Stack, record_history, running_stack
from temporal_env import eventually, start_dev_server

from ledger import OccurrenceNotFound, OccurrenceState, show_occurrence
from ledger.deadlines import count_deadline_misses, deadline_miss, sweep_deadlines

pytestmark = [pytest.mark.anyio, pytest.mark.temporal, pytest.mark.slow]

SCHEDULE_ID = "deadlined"
DAY = datetime(2026, 12, 1, 9, tzinfo=UTC)
SPEC = {
    "schema": "scheduleSpec.v1",
    "scheduleId": SCHEDULE_ID,
    "revision": 1,
    "timeZone": "Etc/UTC",
    "tzdbVersion": "2026a",
    "rule": "FREQ=SECONDLY;INTERVAL=20",
    "start": "2026-12-01T09:00:10",
    "end": "2026-12-01T09:00:50",
    "misfirePolicy": "SKIP",
    "deadline": "PT10S",
    "cutoverAt": "2026-11-30T00:00:00Z",
}
A, B = (f"{SCHEDULE_ID}.r1.20261201T0900{s}.f0" for s in ("10", "30"))
B_DEADLINE = DAY + timedelta(seconds=40)
WAIT = 60.0


async def test_deadline_missed_while_the_worker_is_down_is_recorded_once(
    tmp_path: Path, task_queue: str
) -> None:
    env = await start_dev_server()
    url = f"sqlite:///{tmp_path / 'ledger.sqlite3'}"
    try:
        async with running_stack(env, tmp_path, task_queue) as first:
            handle = await first.start_schedule(
                first.spec(SPEC),
                simulate_from=DAY + timedelta(seconds=8),
                stop_after=DAY + timedelta(seconds=65),
                horizon_seconds=timedelta(hours=1).total_seconds(),
            )
            await eventually(
                lambda: _state(first, A), lambda s: s is OccurrenceState.SUCCEEDED, timeout=WAIT
            )
        down = await first.simulated_now(handle)
        assert down < DAY + timedelta(seconds=30)  # the worker stopped before B's instant
        await eventually(
            lambda: first.simulated_now(handle), lambda now: now > B_DEADLINE, timeout=WAIT
        )
        assert deadline_miss(first.ledger, B) is None
        back = await first.simulated_now(handle)
        async with running_stack(env, tmp_path, task_queue, ledger_url=url) as second:
            miss = await eventually(lambda: _miss(second, B), lambda m: m is not None, timeout=WAIT)
            assert miss is not None
            assert (miss.deadline_utc, miss.state_at_deadline) == (
                B_DEADLINE,
                OccurrenceState.PLANNED,
            )
            assert miss.recorded_at_utc >= back
            again = sweep_deadlines(
                second.ledger, SCHEDULE_ID, DAY + timedelta(minutes=5), by="test"
            )
            assert B not in {m.occurrence_id for m in again.recorded}
            assert deadline_miss(second.ledger, B) == miss
            assert second.ledger.read(count_deadline_misses)[SCHEDULE_ID] >= 1
            await handle.result()  # the run ends at its simulation stop
            await record_history(env.client, handle.id, "schedule-deadlines")
    finally:
        await env.shutdown()


async def _state(stack: Stack, occurrence_id: str) -> OccurrenceState | None:
    try:
        return show_occurrence(stack.ledger, occurrence_id).occurrence.state
    except OccurrenceNotFound:
        return None


async def _miss(stack: Stack, occurrence_id: str) -> object:
    return deadline_miss(stack.ledger, occurrence_id)
