"""An attempt activity heartbeats while it runs, so a lost one is retried in seconds (issue 14).

``activities.heartbeat.heartbeating`` is what ``claim_and_execute`` and ``execute_attempt`` run
inside; the workflows give both a ``heartbeat_timeout`` (``ATTEMPT_HEARTBEAT_TIMEOUT``). The
restart fault test (tests/faults/test_no_stall_after_worker_restart.py) shows the effect on the
real servers; these tests pin the mechanism: beats keep coming while the body runs, stop when it
ends, and nothing beats outside an activity.
"""

from __future__ import annotations

import asyncio
from datetime import timedelta

import pytest
from temporalio import activity
from temporalio.testing import ActivityEnvironment

from activities.heartbeat import HEARTBEAT_INTERVAL, HEARTBEAT_THROTTLE, heartbeating
from workflows.occurrence import ATTEMPT_HEARTBEAT_TIMEOUT

pytestmark = pytest.mark.anyio


async def test_beats_keep_coming_while_the_body_runs_and_stop_after() -> None:
    beats: list[float] = []
    env = ActivityEnvironment()
    env.on_heartbeat = lambda *_: beats.append(asyncio.get_running_loop().time())
    interval = timedelta(milliseconds=20)

    async def slow_attempt() -> int:
        async with heartbeating(interval):
            # Wait on the condition (a few beats), with a deadline, not a bare sleep.
            async with asyncio.timeout(10):
                while len(beats) < 5:
                    await asyncio.sleep(interval.total_seconds())
        return len(beats)

    seen = await env.run(activity.defn(name="slow_attempt")(slow_attempt))
    assert seen >= 5
    await asyncio.sleep(5 * interval.total_seconds())
    assert len(beats) == seen, "the ticker went on beating after the body ended"


async def test_outside_an_activity_nothing_beats() -> None:
    async with heartbeating(timedelta(milliseconds=1)):
        await asyncio.sleep(0.01)


def test_the_server_gets_a_beat_well_inside_the_timeout() -> None:
    # The slack the server has before it declares a live attempt lost: the throttle (the most
    # time between two sent beats) plus one tick must stay well under the timeout.
    assert HEARTBEAT_THROTTLE + HEARTBEAT_INTERVAL <= ATTEMPT_HEARTBEAT_TIMEOUT / 3
