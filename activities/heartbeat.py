"""Heartbeats for the activities that run an action: a lost attempt is found in seconds.

An attempt activity (``claim_and_execute``, ``execute_attempt``) may run as long as the action's
timeout (``action_timeout_seconds``, 120 s by default). Without heartbeats, an attempt whose worker
died (SIGKILL, OOM, a host lost) or whose task was lost on the way (a worker shutting down as the
task arrived) is noticed only when that start-to-close timeout expires: its occurrence, and a
schedule whose remaining work it was, stall for two minutes after the worker is back (issue 14,
"no stall after a restart"). With a heartbeat every :data:`HEARTBEAT_INTERVAL` and the workflows'
``heartbeat_timeout`` (``workflows.occurrence.ATTEMPT_HEARTBEAT_TIMEOUT``, 10 s), Temporal retries
such an attempt after at most that timeout; the retry finds the occurrence DISPATCHING or RUNNING
and redelivers with the same idempotency key or records UNKNOWN_EFFECT
(``activities.ledger_activities``), as after any lost worker.

The ticker is an asyncio task on the worker's event loop, so it stops when the loop cannot run
(then the worker is as good as lost). The SDK sends at most one heartbeat per throttle interval
(``almanac.worker``: ``max_heartbeat_throttle_interval``, :data:`HEARTBEAT_THROTTLE`), which leaves
the server most of the timeout as slack before it declares the attempt lost.
"""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import AsyncIterator
from datetime import timedelta

from temporalio import activity

HEARTBEAT_INTERVAL = timedelta(seconds=1)
"""How often the ticker records a heartbeat (the SDK batches them, see HEARTBEAT_THROTTLE)."""
HEARTBEAT_THROTTLE = timedelta(seconds=2)
"""The most time between two heartbeats the SDK sends: of a 10 s timeout, 8 s stay as slack."""


@contextlib.asynccontextmanager
async def heartbeating(interval: timedelta = HEARTBEAT_INTERVAL) -> AsyncIterator[None]:
    """Heartbeat every ``interval`` while the body runs; a no-op outside an activity.

    Outside an activity (a unit test calling the method directly) there is nothing to beat for.
    """
    if not activity.in_activity():
        yield
        return
    ticker = asyncio.create_task(_tick(interval.total_seconds()))
    try:
        yield
    finally:
        ticker.cancel()
        with contextlib.suppress(asyncio.CancelledError):
            await ticker


async def _tick(seconds: float) -> None:
    while True:
        activity.heartbeat()
        await asyncio.sleep(seconds)


__all__ = ["HEARTBEAT_INTERVAL", "HEARTBEAT_THROTTLE", "heartbeating"]
