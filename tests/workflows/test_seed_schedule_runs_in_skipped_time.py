"""The seed's daily-ops-summary, run by the real workflows from 2026-10-25 to 2027-03-21.

Time-skipping test server: five months of timers pass in seconds. Expectations come from the
rule and from the US DST law (EDT ends the first Sunday of November, starts the second Sunday of
March, both at 02:00 local), worked out here with plain date arithmetic — not from timecontract.
"""

from __future__ import annotations

from datetime import UTC, date, datetime, timedelta
from pathlib import Path

import pytest
from stack import running_stack
from temporal_env import start_time_skipping

from ledger import OccurrenceState, list_occurrences

pytestmark = [pytest.mark.anyio, pytest.mark.temporal, pytest.mark.slow]

SEED = {
    "schema": "scheduleSpec.v1",
    "scheduleId": "daily-ops-summary",
    "revision": 7,
    "timeZone": "America/New_York",
    "tzdbVersion": "2026a",
    "rule": "FREQ=DAILY;BYHOUR=2;BYMINUTE=30",
    "gapPolicy": "SKIP",
    "foldPolicy": "FIRST_ONLY",
    "misfirePolicy": "CATCH_UP_BOUNDED",
    "maxCatchUp": 2,
    "cutoverAt": "2026-11-01T06:00:00Z",
}
SPRING_FORWARD = date(2027, 3, 14)  # second Sunday of March 2027
FALL_BACK = date(2026, 11, 1)  # first Sunday of November 2026


def expected_instants() -> dict[str, datetime]:
    """occurrenceId → instant for 02:30 local, 2026-11-01 … 2027-03-20, the gap day excluded."""
    expected = {}
    day = FALL_BACK
    while day <= date(2027, 3, 20):
        if day != SPRING_FORWARD:
            offset_hours = 5 if day < SPRING_FORWARD else 4  # EST after fall-back, EDT after
            instant = datetime(day.year, day.month, day.day, 2, 30, tzinfo=UTC)
            key = f"daily-ops-summary.r7.{day:%Y%m%d}T023000.f0"
            expected[key] = instant + timedelta(hours=offset_hours)
        day += timedelta(days=1)
    return expected


async def test_seed_schedule_runs_each_occurrence_once_and_records_the_gap(tmp_path: Path) -> None:
    env = await start_time_skipping()
    try:
        async with running_stack(env, tmp_path, "seed-run") as stack:
            stop = datetime(2027, 3, 21, tzinfo=UTC)
            handle = await stack.start_schedule(
                stack.spec(SEED),
                simulate_from=datetime(2026, 10, 25, tzinfo=UTC),
                stop_after=stop,
                refresh_seconds=timedelta(days=7).total_seconds(),
            )
            await handle.result()
            rows = list_occurrences(stack.ledger, "daily-ops-summary", to_utc=stop)
            # The 14-day horizon past the stop is materialized and still waits, untouched.
            later = list_occurrences(stack.ledger, "daily-ops-summary", from_utc=stop)
            assert later and all(r.state is OccurrenceState.PLANNED for r in later)
            expected = expected_instants()
            planned = {
                r.occurrence_id: r for r in rows if r.state is not OccurrenceState.SKIPPED_GAP
            }
            assert {k: r.instant_utc for k, r in planned.items()} == expected
            assert all(r.state is OccurrenceState.SUCCEEDED for r in planned.values())
            skipped = [r for r in rows if r.state is OccurrenceState.SKIPPED_GAP]
            assert [(r.occurrence_id, r.gap_at_utc) for r in skipped] == [
                ("daily-ops-summary.r7.20270314T023000.f0", datetime(2027, 3, 14, 7, tzinfo=UTC))
            ]
            effects = stack.sink.effects()
            assert sorted(e.idempotency_key for e in effects) == sorted(expected)
            assert all(e.delivery_count == 1 for e in effects)
            for occurrence_id in expected:
                described = await stack.client.get_workflow_handle(occurrence_id).describe()
                assert described.workflow_type == "AlmanacOccurrence"
            with pytest.raises(Exception):  # noqa: B017 - no child for the skipped gap
                await stack.client.get_workflow_handle(skipped[0].occurrence_id).describe()
    finally:
        await env.shutdown()
