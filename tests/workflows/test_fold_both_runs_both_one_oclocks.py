"""An hourly America/New_York schedule with foldPolicy BOTH runs across 2026-11-01 in skipped time.

The US DST law: EDT (UTC-4) ends on the first Sunday of November at 02:00 local, when clocks go
back to 01:00 EST (UTC-5). So on 2026-11-01 the local hour 01:00 happens twice, at 05:00Z and at
06:00Z; under BOTH each is its own occurrence (fold ordinals 0 and 1) and each runs once. The
expectations below are that arithmetic, not timecontract's output.
"""

from __future__ import annotations

from collections import Counter
from datetime import UTC, datetime, timedelta
from pathlib import Path

import pytest
from stack import record_history, running_stack
from temporal_env import start_time_skipping

from ledger import OccurrenceState

pytestmark = [pytest.mark.anyio, pytest.mark.temporal, pytest.mark.slow]

SCHEDULE_ID = "hourly-both-folds"
SPEC = {
    "schema": "scheduleSpec.v1",
    "scheduleId": SCHEDULE_ID,
    "revision": 1,
    "timeZone": "America/New_York",
    "tzdbVersion": "2026a",
    "rule": "FREQ=HOURLY",
    "gapPolicy": "SHIFT_FORWARD",
    "foldPolicy": "BOTH",
    "misfirePolicy": "SKIP",
    "cutoverAt": "2026-10-31T00:00:00Z",
}
SIMULATE_FROM = datetime(2026, 11, 1, 3, 30, tzinfo=UTC)  # 2026-10-31 23:30 EDT
STOP = datetime(2026, 11, 1, 8, 30, tzinfo=UTC)  # 03:30 EST


def occurrence_id(nominal: str, fold: int) -> str:
    return f"{SCHEDULE_ID}.r1.{nominal}.f{fold}"


# Local hours 00:00 (EDT), 01:00 (EDT, fold 0), 01:00 (EST, fold 1), 02:00 and 03:00 (EST).
EXPECTED = {
    occurrence_id("20261101T000000", 0): datetime(2026, 11, 1, 4, tzinfo=UTC),
    occurrence_id("20261101T010000", 0): datetime(2026, 11, 1, 5, tzinfo=UTC),
    occurrence_id("20261101T010000", 1): datetime(2026, 11, 1, 6, tzinfo=UTC),
    occurrence_id("20261101T020000", 0): datetime(2026, 11, 1, 7, tzinfo=UTC),
    occurrence_id("20261101T030000", 0): datetime(2026, 11, 1, 8, tzinfo=UTC),
}


async def test_fold_both_runs_each_one_oclock_once_at_the_sink(tmp_path: Path) -> None:
    env = await start_time_skipping()
    try:
        async with running_stack(env, tmp_path, "fold-both") as stack:
            handle = await stack.start_schedule(
                stack.spec(SPEC),
                simulate_from=SIMULATE_FROM,
                stop_after=STOP,
                horizon_seconds=timedelta(hours=12).total_seconds(),
            )
            await handle.result()
            ran = stack.occurrences(SCHEDULE_ID, to_utc=STOP)
            assert {r.occurrence_id: r.instant_utc for r in ran} == EXPECTED
            assert all(r.state is OccurrenceState.SUCCEEDED for r in ran)
            folds = {
                (r.nominal_local, r.fold, r.utc_offset) for r in ran if r.nominal_local.hour == 1
            }
            assert folds == {
                (datetime(2026, 11, 1, 1), 0, timedelta(hours=-4)),
                (datetime(2026, 11, 1, 1), 1, timedelta(hours=-5)),
            }
            # One logical slot per instant, each with one success.
            assert Counter(r.logical_slot_id for r in ran).most_common(1)[0][1] == 1
            effects = stack.sink.effects()
            assert sorted(e.idempotency_key for e in effects) == sorted(EXPECTED)
            assert all(e.delivery_count == 1 for e in effects)
            for oid in (occurrence_id("20261101T010000", 0), occurrence_id("20261101T010000", 1)):
                await record_history(stack.client, oid, f"occurrence-fold-{oid[-2:]}")
            await record_history(stack.client, handle.id, "schedule-fold-both")
    finally:
        await env.shutdown()
