"""An ``interval: PT2H`` schedule in America/New_York, run by the real workflows through DST.

Time-skipping test server, simulated clock (``almanac.gates.simulation``): a day on each side of New
York's transitions passes in seconds. A 2-hourly RRULE is expanded in wall-clock time, so on the
spring-forward night it leaves a 3-hour hole (or, shifted forward, a 1-hour pair) and on the
fall-back night a 3-hour one; an interval must not. The expected instants are plain UTC arithmetic
from the Unix epoch and the phase (Temporal's IntervalSpec: ``epoch + phase + k × interval``),
never timecontract. The wall-clock readings named below come from the US DST law (02:00 local on
the second Sunday of March and the first Sunday of November; EST = UTC-05:00, EDT = UTC-04:00),
worked out by hand.
"""

from __future__ import annotations

import itertools
from datetime import UTC, datetime, timedelta
from pathlib import Path

import pytest
from stack import running_stack
from temporal_env import eventually, start_time_skipping

from ledger import TERMINAL, OccurrenceState, OccurrenceView

pytestmark = [pytest.mark.anyio, pytest.mark.temporal, pytest.mark.slow]

EPOCH = datetime(1970, 1, 1, tzinfo=UTC)
EVERY = timedelta(hours=2)
EST, EDT = timedelta(hours=-5), timedelta(hours=-4)

SPRING_FORWARD_UTC = datetime(2027, 3, 14, 7, tzinfo=UTC)  # 02:00 EST → 03:00 EDT
FALL_BACK_UTC = datetime(2026, 11, 1, 6, tzinfo=UTC)  # 02:00 EDT → 01:00 EST


def grid(phase: timedelta, from_utc: datetime, to_utc: datetime) -> list[datetime]:
    """Every ``EPOCH + phase + k × EVERY`` in ``[from_utc, to_utc)``, by integer arithmetic."""
    k = -(-(from_utc - EPOCH - phase) // EVERY)  # ceiling division: the first k at or after
    instants = []
    instant = EPOCH + phase + k * EVERY
    while instant < to_utc:
        instants.append(instant)
        instant += EVERY
    return instants


def interval_id(schedule_id: str, instant: datetime) -> str:
    """``<scheduleId>.r1.<YYYYMMDDTHHMMSS>Z``: from the UTC instant (README, intervals)."""
    return f"{schedule_id}.r1.{instant:%Y%m%dT%H%M%S}Z"


def utc(text: str) -> datetime:
    return datetime.fromisoformat(text).replace(tzinfo=UTC)


CASES = [
    pytest.param(
        "pump-spring",
        "PT1H",
        timedelta(hours=1),
        SPRING_FORWARD_UTC,
        # (instant, wall-clock reading, offset, fold): 3 h of wall clock between 00:00 and 03:00,
        # and an occurrence at the transition instant itself.
        [
            (utc("2027-03-14T05:00"), "2027-03-14T00:00", EST, 0),
            (utc("2027-03-14T07:00"), "2027-03-14T03:00", EDT, 0),
            (utc("2027-03-14T09:00"), "2027-03-14T05:00", EDT, 0),
        ],
        id="spring-forward",
    ),
    pytest.param(
        "pump-fall",
        "PT0S",
        timedelta(0),
        FALL_BACK_UTC,
        # 1 h of wall clock between 00:00 EDT and the second 01:00 (EST, fold 1).
        [
            (utc("2026-11-01T04:00"), "2026-11-01T00:00", EDT, 0),
            (utc("2026-11-01T06:00"), "2026-11-01T01:00", EST, 1),
            (utc("2026-11-01T08:00"), "2026-11-01T03:00", EST, 0),
        ],
        id="fall-back",
    ),
]


@pytest.mark.parametrize(("schedule_id", "phase_text", "phase", "transition_utc", "wall"), CASES)
async def test_two_hourly_interval_runs_once_every_two_hours_utc_through_the_transition(
    tmp_path: Path,
    schedule_id: str,
    phase_text: str,
    phase: timedelta,
    transition_utc: datetime,
    wall: list[tuple[datetime, str, timedelta, int]],
) -> None:
    cutover = transition_utc - timedelta(days=1)
    stop = transition_utc + timedelta(days=1, minutes=30)
    expected = grid(phase, cutover, stop)
    assert len(expected) == 25  # 48 h 30 min of real time from an instant on the grid
    spec_data = {
        "schema": "scheduleSpec.v1",
        "scheduleId": schedule_id,
        "revision": 1,
        "timeZone": "America/New_York",
        "tzdbVersion": "2026a",
        "interval": "PT2H",
        "phase": phase_text,
        "cutoverAt": f"{cutover:%Y-%m-%dT%H:%M:%SZ}",
    }
    env = await start_time_skipping()
    try:
        async with running_stack(env, tmp_path, schedule_id) as stack:
            handle = await stack.start_schedule(
                stack.spec(spec_data),
                simulate_from=cutover - timedelta(hours=1),
                stop_after=stop,
                horizon_seconds=timedelta(hours=12).total_seconds(),
                refresh_seconds=timedelta(hours=6).total_seconds(),
            )
            await handle.result()  # the loop ends once the simulated clock reaches `stop`

            async def ledger_rows() -> list[OccurrenceView]:
                return stack.occurrences(schedule_id, to_utc=stop)

            def settled(rows: list[OccurrenceView]) -> bool:
                return bool(rows) and all(
                    r.state in TERMINAL or r.state is OccurrenceState.UNKNOWN_EFFECT for r in rows
                )

            # Occurrence workflows are abandoned, not awaited, by the schedule: the last one may
            # still be finishing when the schedule returns.
            rows = await eventually(ledger_rows, settled, timeout=60)
            assert {r.state for r in rows} == {OccurrenceState.SUCCEEDED}
            assert {r.claim_generation for r in rows} == {1}  # one claim each, no retry

            # The ledger holds exactly the grid, in order: consecutive occurrences 2 h apart in
            # UTC all the way through the transition (no 3-hour hole, no 1-hour pair).
            instants = [r.instant_utc for r in rows]
            assert instants == expected
            assert [b - a for a, b in itertools.pairwise(instants)] == [EVERY] * 24
            # IDs and slots come from the UTC instant; every record says why it is there.
            assert [r.occurrence_id for r in rows] == [
                interval_id(schedule_id, i) for i in expected
            ]
            assert [r.logical_slot_id for r in rows] == [
                f"{schedule_id}@{i:%Y%m%dT%H%M%S}Z" for i in expected
            ]
            assert {r.reason for r in rows} == {"ELAPSED_INTERVAL"}
            # The wall-clock evidence around the transition (hand-worked, see CASES).
            near = [r for r in rows if abs(r.instant_utc - transition_utc) <= EVERY]
            assert [
                (r.instant_utc, r.nominal_local.isoformat(timespec="minutes"), r.utc_offset, r.fold)
                for r in near
            ] == wall

            # Each ran once: one effect per occurrence at the sink, delivered once.
            effects = stack.sink.effects()
            assert sorted(e.idempotency_key for e in effects) == sorted(
                interval_id(schedule_id, i) for i in expected
            )
            assert all(e.delivery_count == 1 for e in effects)
    finally:
        await env.shutdown()
