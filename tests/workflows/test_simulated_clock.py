"""The harness's clock of work follows the simulated calendar (``almanac.gates.simulated_clock``).

- An attempt's instant is the simulated calendar when *that attempt* started: a retry that starts
  100 s after the call was scheduled is 100 s later, whatever instant the workflow stamped on it.
- In skipped time, a schedule whose first delivery is refused records its whole trail on the
  simulated calendar (a date far from the host's), numbered 1..n with times that never go back,
  and the retry's claim lands after the backoff the server skipped.
"""

from __future__ import annotations

import dataclasses
from datetime import UTC, datetime, timedelta
from pathlib import Path

import pytest
from stack import Stack, running_stack
from temporal_env import eventually, start_time_skipping
from temporalio.testing import ActivityEnvironment

from almanac.gates.simulated_clock import calendar_instant
from ledger import OccurrenceDetail, OccurrenceState, show_occurrence

SERVER_T0 = datetime(2026, 12, 1, 12, 0, tzinfo=UTC)
SIMULATED_T0 = datetime(2031, 3, 1, 9, 0, tzinfo=UTC)


def test_a_retried_attempt_is_placed_at_its_own_start_on_the_simulated_calendar() -> None:
    base = ActivityEnvironment().info
    retry = dataclasses.replace(
        base,
        attempt=2,
        scheduled_time=SERVER_T0,  # the first attempt's scheduling, when the workflow stamped it
        current_attempt_scheduled_time=SERVER_T0 + timedelta(seconds=8),
        started_time=SERVER_T0 + timedelta(seconds=100),  # a restarted worker got it
    )
    assert calendar_instant(retry, SIMULATED_T0) == SIMULATED_T0 + timedelta(seconds=100)
    # Without a stamped instant (no offset): the server's own clock.
    assert calendar_instant(retry, None) == SERVER_T0 + timedelta(seconds=100)


SCHEDULE_ID = "skipped-time-trail"
DAY = datetime(2031, 3, 1, tzinfo=UTC)
OCCURRENCE = f"{SCHEDULE_ID}.r1.20310301T090000.f0"


@pytest.mark.anyio
@pytest.mark.temporal
async def test_in_skipped_time_the_trail_is_on_the_simulated_calendar_and_in_order(
    tmp_path: Path,
) -> None:
    env = await start_time_skipping()
    try:
        async with running_stack(env, tmp_path, "skipped-time-trail") as stack:
            spec = stack.spec(
                {
                    "schema": "scheduleSpec.v1",
                    "scheduleId": SCHEDULE_ID,
                    "revision": 1,
                    "timeZone": "Etc/UTC",
                    "tzdbVersion": "2026a",
                    "rule": "FREQ=DAILY;BYHOUR=9;BYMINUTE=0",
                    "cutoverAt": "2031-02-01T00:00:00Z",
                }
            )
            stack.sink.add_fault(match=OCCURRENCE, failTimes=1, status=503)
            handle = await stack.start_schedule(
                spec,
                simulate_from=DAY + timedelta(hours=8, minutes=30),
                stop_after=DAY.replace(hour=10),
            )
            await handle.result()
            detail = await eventually(
                lambda: _detail(stack, OCCURRENCE),
                lambda d: d.occurrence.state is OccurrenceState.SUCCEEDED,
            )
    finally:
        await env.shutdown()

    events = detail.events
    assert [e.sequence for e in events] == list(range(1, len(events) + 1))
    times = [e.at_utc for e in events]
    assert times == sorted(times)
    window = (DAY + timedelta(hours=8, minutes=30), DAY.replace(hour=10))
    assert all(window[0] <= t <= window[1] for t in times), times
    first, second = detail.attempts
    instant = DAY.replace(hour=9)
    assert instant <= first.started_at_utc < instant + timedelta(minutes=1)
    assert first.finished_at_utc is not None
    # The backoff (10 s, skipped by the server) lies between the refusal and the retry's claim.
    assert second.started_at_utc >= first.finished_at_utc + timedelta(seconds=10)
    assert second.started_at_utc < instant + timedelta(minutes=2)


async def _detail(stack: Stack, occurrence_id: str) -> OccurrenceDetail:
    return show_occurrence(stack.ledger, occurrence_id)
