"""A holiday schedule run by the real workflows across the March 2027 DST change, end to end.

Every Friday at 09:00 New York on NYSE business days, ``holidayPolicy: PRECEDING``. Expectations
from the rule, the NYSE holiday list (Good Friday 2027 is 26 March) and the US DST law (EDT
from the second Sunday of March, 2027-03-14): Fridays 12 March 09:00 EST = 14:00Z, 19 March 09:00
EDT = 13:00Z, Good Friday moved to Thursday 25 March 09:00 EDT = 13:00Z (keeping its own
occurrence ID), 2 April 13:00Z. Time-skipping test server: weeks of timers pass in seconds.
"""

from __future__ import annotations

from datetime import UTC, datetime
from pathlib import Path

import pytest
from stack import running_stack
from temporal_env import start_time_skipping

from ledger import OccurrenceState, list_occurrences

pytestmark = [pytest.mark.anyio, pytest.mark.temporal, pytest.mark.slow]

SPEC = {
    "schema": "scheduleSpec.v1",
    "scheduleId": "friday-report",
    "revision": 1,
    "timeZone": "America/New_York",
    "tzdbVersion": "2026a",
    "rule": "FREQ=WEEKLY;BYDAY=FR;BYHOUR=9",
    "calendar": {"name": "NYSE", "release": "holidays-0.108"},
    "holidayPolicy": "PRECEDING",
    "cutoverAt": "2027-03-01T00:00:00Z",
}
EXPECTED = {
    "friday-report.r1.20270312T090000.f0": datetime(2027, 3, 12, 14, tzinfo=UTC),
    "friday-report.r1.20270319T090000.f0": datetime(2027, 3, 19, 13, tzinfo=UTC),
    "friday-report.r1.20270326T090000.f0": datetime(2027, 3, 25, 13, tzinfo=UTC),
    "friday-report.r1.20270402T090000.f0": datetime(2027, 4, 2, 13, tzinfo=UTC),
}


async def test_a_moved_holiday_runs_once_at_its_moved_instant_across_dst(tmp_path: Path) -> None:
    env = await start_time_skipping()
    try:
        async with running_stack(env, tmp_path, "holiday-run") as stack:
            stop = datetime(2027, 4, 3, tzinfo=UTC)
            handle = await stack.start_schedule(
                stack.spec(SPEC),
                simulate_from=datetime(2027, 3, 10, tzinfo=UTC),
                stop_after=stop,
                refresh_seconds=7 * 24 * 3600,
            )
            await handle.result()
            rows = {
                r.occurrence_id: r
                for r in list_occurrences(stack.ledger, "friday-report", to_utc=stop)
                if r.occurrence_id in EXPECTED
            }
            assert {k: r.instant_utc for k, r in rows.items()} == EXPECTED
            assert all(r.state is OccurrenceState.SUCCEEDED for r in rows.values())
            moved = rows["friday-report.r1.20270326T090000.f0"]
            assert (moved.reason, moved.holiday, moved.calendar_release) == (
                "HOLIDAY_PRECEDING",
                "Good Friday",
                "NYSE@holidays-0.108",
            )
            effects = stack.sink.effects()
            assert sorted(e.idempotency_key for e in effects) == sorted(EXPECTED)
            assert all(e.delivery_count == 1 for e in effects)
    finally:
        await env.shutdown()
