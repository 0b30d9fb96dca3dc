"""A revision published by signal cuts over at its instant; no logical slot runs twice.

Revision 5 runs hourly (UTC, on the hour) from 00:30Z. At 01:30Z revision 6 arrives by signal:
every 30 minutes, ``cutoverAt`` 03:00Z. DESIGN §3: revision N owns ``[cutoverAt(N),
cutoverAt(N+1))``, so 01:00 and 02:00 belong to r5, and 03:00, 03:30, 04:00 and 04:30 to r6 —
03:00 and 04:00 are logical slots both revisions name, and each runs once. A revision that does
not increase (4) is rejected: the status query shows it and the workflow keeps running.
"""

from __future__ import annotations

from collections import defaultdict
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import pytest
from stack import record_history, running_stack, try_query, wait_until_sleeping
from temporal_env import eventually, start_time_skipping
from temporalio.client import WorkflowExecutionStatus

from ledger import OccurrenceState
from workflows import ScheduleWorkflow

pytestmark = [pytest.mark.anyio, pytest.mark.temporal, pytest.mark.slow]

SCHEDULE_ID = "cutover-by-signal"
DAY = datetime(2026, 12, 1, tzinfo=UTC)
STOP = DAY + timedelta(hours=4, minutes=45)


def spec(revision: int, rule: str, cutover: str) -> dict[str, Any]:
    return {
        "schema": "scheduleSpec.v1",
        "scheduleId": SCHEDULE_ID,
        "revision": revision,
        "timeZone": "Etc/UTC",
        "tzdbVersion": "2026a",
        "rule": rule,
        "misfirePolicy": "SKIP",
        "cutoverAt": cutover,
    }


def oid(revision: int, hours: float) -> str:
    return f"{SCHEDULE_ID}.r{revision}.{DAY + timedelta(hours=hours):%Y%m%dT%H%M%S}.f0"


async def test_revision_by_signal_cuts_over_at_its_instant(tmp_path: Path) -> None:
    env = await start_time_skipping()
    try:
        async with running_stack(env, tmp_path, "cutover-by-signal") as stack:
            handle = await stack.start_schedule(
                stack.spec(spec(5, "FREQ=HOURLY;BYMINUTE=0", "2026-11-30T00:00:00Z")),
                simulate_from=DAY + timedelta(minutes=30),
                stop_after=STOP,
                horizon_seconds=timedelta(hours=12).total_seconds(),
            )
            await env.sleep(timedelta(hours=1))  # → 01:30Z
            await eventually(
                lambda: _async(stack.occurrences(SCHEDULE_ID, to_utc=DAY + timedelta(hours=2))),
                lambda rows: [r.state for r in rows] == [OccurrenceState.SUCCEEDED],
            )
            await wait_until_sleeping(handle)
            now = await stack.simulated_now(handle)
            assert DAY + timedelta(hours=1) < now < DAY + timedelta(hours=3)
            r6 = stack.spec(spec(6, "FREQ=MINUTELY;INTERVAL=30", "2026-12-01T03:00:00Z"))
            await handle.signal("publish_revision", r6)
            stale = stack.spec(spec(4, "FREQ=HOURLY;BYMINUTE=15", "2026-12-01T04:00:00Z"))
            await handle.signal("publish_revision", stale)
            status = await eventually(
                lambda: try_query(handle, ScheduleWorkflow.status),
                # The rejection is recorded before the loop re-reads the gate: wait for both.
                lambda s: s is not None and s.rejected_signals == 1 and s.gate.active_revision == 6,
                timeout=30,  # two activities per signal, in real time (time skipping is locked)
            )
            assert "revision 4 does not increase" in status.last_rejected_signal
            rejected_at = status.last_rejected_at_utc  # the workflow's time when it refused
            assert rejected_at is not None
            assert now <= rejected_at <= await stack.simulated_now(handle)
            assert status.gate.active_revision == 6
            described = await handle.describe()
            assert described.status is WorkflowExecutionStatus.RUNNING

            await handle.result()
            rows = stack.occurrences(SCHEDULE_ID, to_utc=STOP)
            succeeded = {
                r.occurrence_id: r.instant_utc for r in rows if r.state is OccurrenceState.SUCCEEDED
            }
            assert succeeded == {
                oid(5, 1): DAY + timedelta(hours=1),
                oid(5, 2): DAY + timedelta(hours=2),
                oid(6, 3): DAY + timedelta(hours=3),
                oid(6, 3.5): DAY + timedelta(hours=3.5),
                oid(6, 4): DAY + timedelta(hours=4),
                oid(6, 4.5): DAY + timedelta(hours=4.5),
            }
            superseded = {
                r.occurrence_id: r
                for r in rows
                if r.revision == 5 and r.placed_at_utc >= DAY + timedelta(hours=3)
            }
            assert sorted(superseded) == [oid(5, 3), oid(5, 4)]
            for row in superseded.values():
                assert row.state is OccurrenceState.CANCELLED
                assert row.state_reason == "superseded by revision 6"
            # Each logical slot (instant, no revision) has exactly one success.
            by_slot: dict[str | None, list[OccurrenceState]] = defaultdict(list)
            for row in rows:
                by_slot[row.logical_slot_id].append(row.state)
            assert None not in by_slot
            assert {slot: s.count(OccurrenceState.SUCCEEDED) for slot, s in by_slot.items()} == {
                slot: 1 for slot in by_slot
            }
            effects = stack.sink.effects()
            assert sorted(e.idempotency_key for e in effects) == sorted(succeeded)
            assert all(e.delivery_count == 1 for e in effects)
            await record_history(stack.client, handle.id, "schedule-revision-cutover")
    finally:
        await env.shutdown()


async def _async(value: Any) -> Any:
    return value
