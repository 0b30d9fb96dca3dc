"""Matrix 4 and 5: a leap day and month ends, through the workflows in skipped time.

RFC 5545 §3.3.10: a BYxxx combination that names an invalid date (February 29 outside a leap year,
the 31st of a 30-day month) yields no instance for that period — it is neither moved nor clamped.
BYMONTHDAY=-1 is the last day of each month. Gregorian calendar: 2028 is a leap year (divisible by
4, not by 100), 2027 and 2029 are not. America/New_York at 09:00 local: EST (UTC-5) before
2028-03-12, EDT (UTC-4) from then on (second Sunday of March) — so the instants below are worked
out by hand, not by ``timecontract``.

The real schedule workflow runs with the production worker over the whole window (three years for
the leap day); the ledger must hold exactly the expected occurrences, each SUCCEEDED, and the sink
exactly one effect for each.
"""

from __future__ import annotations

from collections import Counter
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import pytest
from faultkit import await_until
from stack import running_stack
from temporal_env import start_time_skipping

from ledger import OccurrenceState

pytestmark = [pytest.mark.anyio, pytest.mark.temporal, pytest.mark.fault, pytest.mark.slow]


def spec(schedule_id: str, rule: str) -> dict[str, Any]:
    return {
        "schema": "scheduleSpec.v1",
        "scheduleId": schedule_id,
        "revision": 1,
        "timeZone": "America/New_York",
        "tzdbVersion": "2026a",
        "rule": rule,
        "gapPolicy": "SKIP",
        "foldPolicy": "FIRST_ONLY",
        "misfirePolicy": "SKIP",
        "cutoverAt": "2026-12-01T00:00:00Z",
    }


async def run_calendar(
    tmp_path: Path,
    schedules: dict[str, str],
    start: datetime,
    stop: datetime,
    expected: dict[str, dict[str, datetime]],
) -> None:
    """Run ``schedules`` (id → rule) over ``[start, stop)``; check ledger and sink."""
    env = await start_time_skipping()
    try:
        async with running_stack(env, tmp_path, "calendar") as stack:
            handles = [
                await stack.start_schedule(
                    stack.spec(spec(sid, rule)),
                    simulate_from=start,
                    stop_after=stop,
                    horizon_seconds=timedelta(days=62).total_seconds(),
                    refresh_seconds=timedelta(days=31).total_seconds(),
                )
                for sid, rule in schedules.items()
            ]
            for handle in handles:
                await handle.result()
            wanted = {oid for by_id in expected.values() for oid in by_id}

            def rows() -> dict[str, list[Any]]:
                return {
                    sid: stack.occurrences(sid, from_utc=start, to_utc=stop) for sid in schedules
                }

            got = await await_until(
                rows,
                lambda g: all(
                    r.state is OccurrenceState.SUCCEEDED
                    for rs in g.values()
                    for r in rs
                    if r.occurrence_id in wanted
                ),
                timeout=60,
                what="every expected occurrence succeeds",
            )
            effects = stack.sink.effects()
    finally:
        await env.shutdown()
    for sid, by_id in expected.items():
        assert {r.occurrence_id: r.instant_utc for r in got[sid]} == by_id, sid
        assert all(r.state is OccurrenceState.SUCCEEDED for r in got[sid]), sid
    keys = Counter(e.idempotency_key for e in effects)
    assert set(keys) == wanted
    assert all(n == 1 for n in keys.values())


def utc(*args: int) -> datetime:
    return datetime(*args, tzinfo=UTC)


async def test_yearly_february_29th_runs_only_on_the_leap_day_across_three_years(
    tmp_path: Path,
) -> None:
    await run_calendar(
        tmp_path,
        {"leap-day": "FREQ=YEARLY;BYMONTH=2;BYMONTHDAY=29;BYHOUR=9;BYMINUTE=0"},
        utc(2027, 1, 1),
        utc(2030, 1, 1),
        {"leap-day": {"leap-day.r1.20280229T090000.f0": utc(2028, 2, 29, 14)}},
    )


async def test_month_end_rules_run_on_the_last_day_and_on_the_31st_only(tmp_path: Path) -> None:
    last = "month-last-day"
    the_31st = "month-day-31"
    await run_calendar(
        tmp_path,
        {
            last: "FREQ=MONTHLY;BYMONTHDAY=-1;BYHOUR=9;BYMINUTE=0",
            the_31st: "FREQ=MONTHLY;BYMONTHDAY=31;BYHOUR=9;BYMINUTE=0",
        },
        utc(2028, 1, 1),
        utc(2028, 6, 15),
        {
            last: {
                f"{last}.r1.20280131T090000.f0": utc(2028, 1, 31, 14),  # EST
                f"{last}.r1.20280229T090000.f0": utc(2028, 2, 29, 14),  # leap February
                f"{last}.r1.20280331T090000.f0": utc(2028, 3, 31, 13),  # EDT from 03-12
                f"{last}.r1.20280430T090000.f0": utc(2028, 4, 30, 13),
                f"{last}.r1.20280531T090000.f0": utc(2028, 5, 31, 13),
            },
            the_31st: {
                f"{the_31st}.r1.20280131T090000.f0": utc(2028, 1, 31, 14),
                f"{the_31st}.r1.20280331T090000.f0": utc(2028, 3, 31, 13),
                f"{the_31st}.r1.20280531T090000.f0": utc(2028, 5, 31, 13),
            },
        },
    )
