"""A wake-up less than a second before an instant sleeps exactly until it (``almanac-on-time``).

The loop's shortest sleep is a second (a wake-up that finds nothing to do must not spin). Before
the patch, a signal or a change that woke it in the last second before an instant put that
instant's release off by up to a second; past it, the loop sleeps exactly until an instant nearer
than that, and the timer's wake-up releases it as of the instant. On a dev server in real time, an
``enable`` signal (a no-op change on an enabled schedule) is sent 0.6 s before each of three
instants. Checked from the history, whatever the machine's load: every timer set by a task that
started less than a second before an instant targets that instant, measured from the task's start
(``workflow.now()``); and from the ledger: each occurrence ran, and none became DUE before its
instant. The expectations come from the rule and the spec's arithmetic (every 2 s).
"""

from __future__ import annotations

import asyncio
from datetime import timedelta
from pathlib import Path

import every_two_seconds as e2s
import pytest
from stack import running_stack
from temporal_env import start_dev_server

import ledger
from almanac.gates.simulation import SimulatedScheduleWorkflow
from ledger import OccurrenceState
from workflows.schedule_timing import MIN_DELAY

pytestmark = [pytest.mark.anyio, pytest.mark.temporal]

SCHEDULE_ID = "change-before-an-instant"
INSTANTS = e2s.INSTANTS
BEFORE = timedelta(milliseconds=600)
"""When the signal is sent, before each of the last three instants."""


async def test_a_change_in_the_last_second_sleeps_exactly_until_the_instant(
    tmp_path: Path, task_queue: str
) -> None:
    env = await start_dev_server()
    try:
        async with running_stack(env, tmp_path, task_queue) as stack:
            handle = await e2s.start(stack, e2s.spec(SCHEDULE_ID))
            for instant in INSTANTS[1:]:
                # Pacing the stimulus on the simulated calendar (not waiting for a condition).
                ahead = instant - BEFORE - await stack.simulated_now(handle)
                await asyncio.sleep(max(ahead.total_seconds(), 0.0))
                await handle.signal(SimulatedScheduleWorkflow.enable)
            await handle.result()
            offset = stack.offset(handle)
            ran = {o.instant_utc: o for o in stack.occurrences(SCHEDULE_ID)}
            details = {
                i: ledger.show_occurrence(stack.ledger, o.occurrence_id) for i, o in ran.items()
            }
            history = await handle.fetch_history()
    finally:
        await env.shutdown()

    assert [(i, ran[i].state) for i in sorted(ran)] == [
        (i, OccurrenceState.SUCCEEDED) for i in INSTANTS
    ]
    for instant, detail in details.items():
        (due,) = [e for e in detail.events if e.to_state == OccurrenceState.DUE.value]
        assert due.at_utc >= instant, instant

    # Every timer asked for by a task that started less than MIN_DELAY before an instant (the
    # signals' wake-ups, whenever they landed) targets that instant exactly.
    near = [
        (instant, timer.target)
        for timer in e2s.timers(history, offset)
        for instant in INSTANTS
        if timedelta(0) < instant - timer.asked_at < MIN_DELAY
    ]
    assert near, "no timer was set in the last second before an instant: the case did not happen"
    for instant, target in near:
        assert abs(target - instant) <= e2s.TOLERANCE, (instant, target)
