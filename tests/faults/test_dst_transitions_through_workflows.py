"""Matrix 1 and 2: a spring-forward gap and both fall-back offsets, through the workflows.

America/New_York, 2027, every gap policy × every fold policy, for a daily schedule (02:30 across
the gap, 01:30 across the fold) and an hourly one (``HH:30``): the time-skipping server runs the
real schedule workflow with the production worker, a SQLite ledger and the sink over a few
simulated days (hours, for the hourly rule) around the transition. The ledger's records — IDs,
instants, offsets, reasons, ``SKIPPED_GAP`` facts with their ``gapAt``, collisions, logical slots —
must equal what the DST law and the policy definitions give (``dstlaw.py``, written without
``timecontract``), and the sink must hold exactly one effect per planned occurrence and none for
the skipped ones.

The six policy pairs of one scenario run as six schedules side by side on one fresh environment
(a fresh one per scenario: the time-skipping clock jumps after a workflow completes).
"""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import dstlaw
import pytest
from faultkit import await_until
from stack import running_stack
from temporal_env import start_time_skipping

from ledger import OccurrenceState

pytestmark = [pytest.mark.anyio, pytest.mark.temporal, pytest.mark.fault, pytest.mark.slow]

POLICIES = [
    (gap, fold)
    for gap in ("SKIP", "SHIFT_FORWARD")
    for fold in ("FIRST_ONLY", "SECOND_ONLY", "BOTH")
]


@dataclass(frozen=True)
class Scenario:
    """A rule, a simulated window [start, stop) around one transition, and its nominal times."""

    name: str
    rule: str
    start_utc: datetime
    stop_utc: datetime
    nominals: list[datetime]


SCENARIOS = [
    Scenario(
        "daily-spring",
        "FREQ=DAILY;BYHOUR=2;BYMINUTE=30",
        datetime(2027, 3, 12, 12, tzinfo=UTC),
        datetime(2027, 3, 16, 12, tzinfo=UTC),
        dstlaw.daily(2, 30, datetime(2027, 3, 13), 4),
    ),
    Scenario(
        "daily-fall",
        "FREQ=DAILY;BYHOUR=1;BYMINUTE=30",
        datetime(2027, 11, 5, 12, tzinfo=UTC),
        datetime(2027, 11, 9, 12, tzinfo=UTC),
        dstlaw.daily(1, 30, datetime(2027, 11, 6), 4),
    ),
    Scenario(
        "hourly-spring",
        "FREQ=HOURLY;BYMINUTE=30",
        datetime(2027, 3, 14, 3, tzinfo=UTC),  # 22:00 EST on the 13th
        datetime(2027, 3, 14, 11, tzinfo=UTC),  # 07:00 EDT
        dstlaw.hourly(30, datetime(2027, 3, 13, 22), 9),
    ),
    Scenario(
        "hourly-fall",
        "FREQ=HOURLY;BYMINUTE=30",
        datetime(2027, 11, 7, 2, tzinfo=UTC),  # 22:00 EDT on the 6th
        datetime(2027, 11, 7, 10, tzinfo=UTC),  # 05:00 EST
        dstlaw.hourly(30, datetime(2027, 11, 6, 22), 8),
    ),
]


def schedule_id(scenario: Scenario, gap: str, fold: str) -> str:
    return f"{scenario.name}-{gap.lower().replace('_', '-')}-{fold.lower().replace('_', '-')}"


def spec(sid: str, scenario: Scenario, gap: str, fold: str) -> dict[str, Any]:
    return {
        "schema": "scheduleSpec.v1",
        "scheduleId": sid,
        "revision": 1,
        "timeZone": "America/New_York",
        "tzdbVersion": "2026a",
        "rule": scenario.rule,
        "gapPolicy": gap,
        "foldPolicy": fold,
        "misfirePolicy": "SKIP",
        "cutoverAt": "2027-01-01T00:00:00Z",
    }


def in_window(scenario: Scenario, placed: datetime) -> bool:
    return scenario.start_utc <= placed < scenario.stop_utc


def observed(row: Any) -> tuple[Any, ...]:
    return (
        row.occurrence_id,
        row.instant_utc,
        row.gap_at_utc,
        row.utc_offset,
        row.reason,
        row.logical_slot_id,
    )


def wanted(record: dstlaw.Expected) -> tuple[Any, ...]:
    return (
        record.occurrence_id,
        record.instant_utc,
        record.gap_at_utc,
        record.utc_offset,
        record.reason,
        record.logical_slot_id,
    )


@pytest.mark.parametrize("scenario", SCENARIOS, ids=[s.name for s in SCENARIOS])
async def test_dst_transition_gives_the_law_s_occurrences_under_every_policy(
    tmp_path: Path, scenario: Scenario
) -> None:
    env = await start_time_skipping()
    try:
        async with running_stack(env, tmp_path, f"dst-{scenario.name}") as stack:
            handles = []
            for gap, fold in POLICIES:
                sid = schedule_id(scenario, gap, fold)
                handles.append(
                    await stack.start_schedule(
                        stack.spec(spec(sid, scenario, gap, fold)),
                        simulate_from=scenario.start_utc,
                        stop_after=scenario.stop_utc,
                        horizon_seconds=timedelta(days=2).total_seconds(),
                        refresh_seconds=timedelta(days=2).total_seconds(),
                    )
                )
            for handle in handles:
                await handle.result()
            expectations = {
                schedule_id(scenario, gap, fold): [
                    r
                    for r in dstlaw.records(
                        schedule_id(scenario, gap, fold), scenario.nominals, gap, fold
                    )
                    if in_window(scenario, r.placed_utc)
                ]
                for gap, fold in POLICIES
            }
            planned = {
                r.occurrence_id for rs in expectations.values() for r in rs if r.state == "PLANNED"
            }

            def window_rows() -> dict[str, list[Any]]:
                return {
                    sid: stack.occurrences(
                        sid, from_utc=scenario.start_utc, to_utc=scenario.stop_utc
                    )
                    for sid in expectations
                }

            # Children outlive the schedule runs (ABANDON): wait until every planned one ran.
            rows = await await_until(
                window_rows,
                lambda got: all(
                    r.state is OccurrenceState.SUCCEEDED
                    for rs in got.values()
                    for r in rs
                    if r.occurrence_id in planned
                ),
                timeout=60,
                what="every planned occurrence in the window succeeds",
            )
            effects = stack.sink.effects()
    finally:
        await env.shutdown()

    for sid, expected in expectations.items():
        got = rows[sid]
        assert [observed(r) for r in got] == [wanted(r) for r in expected], sid
        states = {r.occurrence_id: r.state for r in got}
        for record in expected:
            state = states[record.occurrence_id]
            want = (
                OccurrenceState.SUCCEEDED
                if record.state == "PLANNED"
                else OccurrenceState.SKIPPED_GAP
            )
            assert state is want, (sid, record.occurrence_id)
            assert all(r.tzdb_version == "2026a" for r in got)
        slots = Counter(r.logical_slot_id for r in got if r.logical_slot_id is not None)
        assert all(n == 1 for n in slots.values()), sid
    keys = Counter(e.idempotency_key for e in effects)
    assert set(keys) == planned
    assert all(n == 1 for n in keys.values())
    assert all(e.delivery_count == 1 for e in effects)
