"""The ``status`` and ``upcoming`` queries answer from the ledger, in skipped time.

Revision 3 of an hourly UTC schedule (on the hour) applied at 00:30Z with a 6-hour horizon: the
ledger then holds 01:00 … 06:00 (DESIGN §3: no backfill before the moment it is applied; the
window is half-open). The queries show the gate, the active revision, the next instant and the
counts by state; ``upcoming(n)`` lists the next ``n`` occurrences in instant order.
"""

from __future__ import annotations

from datetime import UTC, datetime, timedelta
from pathlib import Path

import pytest
from stack import running_stack, try_query
from temporal_env import eventually, start_time_skipping

from workflows import ScheduleWorkflow

pytestmark = [pytest.mark.anyio, pytest.mark.temporal, pytest.mark.slow]

SCHEDULE_ID = "queried"
DAY = datetime(2026, 12, 1, tzinfo=UTC)
SPEC = {
    "schema": "scheduleSpec.v1",
    "scheduleId": SCHEDULE_ID,
    "revision": 3,
    "timeZone": "Etc/UTC",
    "tzdbVersion": "2026a",
    "rule": "FREQ=HOURLY;BYMINUTE=0",
    "misfirePolicy": "SKIP",
    "cutoverAt": "2026-11-30T00:00:00Z",
}


def nonzero(counts: dict[str, int]) -> dict[str, int]:
    return {state: n for state, n in counts.items() if n}


def oid(hour: int) -> str:
    return f"{SCHEDULE_ID}.r3.{DAY + timedelta(hours=hour):%Y%m%dT%H%M%S}.f0"


async def test_status_and_upcoming_show_gate_revision_next_instant_and_counts(
    tmp_path: Path,
) -> None:
    env = await start_time_skipping()
    try:
        async with running_stack(env, tmp_path, "queries") as stack:
            handle = await stack.start_schedule(
                stack.spec(SPEC),
                simulate_from=DAY + timedelta(minutes=30),
                stop_after=DAY + timedelta(hours=2, minutes=30),
                horizon_seconds=timedelta(hours=6).total_seconds(),
            )
            status = await eventually(
                lambda: try_query(handle, ScheduleWorkflow.status),
                lambda s: (
                    s is not None and s.gate is not None and s.materialized_through_utc is not None
                ),
            )
            assert status.schedule_id == SCHEDULE_ID
            assert status.gate.active_revision == 3
            assert not status.gate.disabled and status.gate.disabled_reason is None
            assert (status.gate.disable_generation, status.gate.execution_epoch) == (0, 0)
            assert status.next_instant_utc == DAY + timedelta(hours=1)
            assert nonzero(status.counts_by_state) == {"PLANNED": 6}  # 01:00 … 06:00
            assert status.rejected_signals == 0 and status.last_error == ""
            upcoming = await handle.query(ScheduleWorkflow.upcoming, 3)
            assert [(u.occurrence_id, u.instant_utc, u.state) for u in upcoming] == [
                (oid(h), DAY + timedelta(hours=h), "PLANNED") for h in (1, 2, 3)
            ]
            first = upcoming[0]
            assert (first.revision, first.nominal_local, first.fold) == (
                3,
                "2026-12-01T01:00:00",
                0,
            )
            assert await handle.query(ScheduleWorkflow.upcoming, 0) == []

            await env.sleep(timedelta(hours=1))  # → 01:30Z: 01:00 was released and ran
            status = await eventually(
                lambda: try_query(handle, ScheduleWorkflow.status),
                lambda s: s is not None and s.next_instant_utc == DAY + timedelta(hours=2),
            )
            assert sum(status.counts_by_state.values()) == 7  # the horizon moved to 07:30Z
            assert status.counts_by_state["PLANNED"] == 6  # 02:00 … 07:00
            upcoming = await handle.query(ScheduleWorkflow.upcoming, 1)
            assert [u.occurrence_id for u in upcoming] == [oid(2)]

            final = await handle.result()  # the run's last status
            # The 02:00 wake-up decides as of 02:00 exactly (its timer fired early and its
            # release waited for the instant): the half-open window ends at 08:00, so 03:00 …
            # 07:00. (A timer that fired late, 02:00 plus a task's processing, also had 08:00.)
            assert final.counts_by_state.get("PLANNED") == 5
            assert final.gate is not None and final.gate.active_revision == 3
    finally:
        await env.shutdown()
