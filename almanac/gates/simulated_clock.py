"""The clock of work on a simulated calendar: what activities record in tests and the gates harness.

Production activities read the host's clock at the moment of work (``activities.clock``). A
simulation cannot: its calendar is the Temporal server's clock (which a time-skipping server jumps)
plus the workflow's offset (``almanac.gates.simulation``: ``clock_offset_seconds``), so the instant
an activity records must be read on *that* calendar, at the moment of the work — also when the
activity runs minutes after it was scheduled, on a worker restarted after a crash.

:class:`SimulatedClock` does this, and nothing in production knows of it.
:mod:`almanac.gates.simulated_worker` builds the worker with it as the activities' clock *and* as
a worker interceptor (``almanac.worker.build_worker(..., clock=c, interceptors=[c])``). For each
activity attempt the interceptor fixes an anchor, and :meth:`SimulatedClock.now` reads the
anchor advanced by the monotonic time since:

- the server's instant when this attempt started (``activity.info().started_time``: the
  time-skipping server does not skip time while an activity runs, and a retry's start is the
  moment the restarted worker got it),
- plus the workflow's offset, recovered as the calendar instant the workflow stamped on the call
  (the input's ``now_utc``: ``workflow.now() + offset``) minus the server's instant when the call
  was scheduled (``activity.info().scheduled_time``, the first attempt's; both are read in the
  same workflow task, so they differ by that task's processing time, milliseconds). One input
  stamps a later instant: the materialization of a wake-up whose timer fired early
  (``workflows.schedule_timing.EARLY_WAKE``) carries the instant it is for, at most
  ``activities.io.RELEASE_LEAD`` ahead, so its rows are stamped up to that much later. The
  release itself carries ``workflow.now() + offset`` and waits for the instant on this clock.

Outside an activity (a harness calling the clock itself) it reads the host's clock.
"""

from __future__ import annotations

import time
from contextvars import ContextVar
from datetime import UTC, datetime, timedelta
from typing import Any

from temporalio import activity
from temporalio.worker import (
    ActivityInboundInterceptor,
    ExecuteActivityInput,
    Interceptor,
)

_ANCHOR: ContextVar[tuple[datetime, float] | None] = ContextVar(
    "almanac_simulated_anchor", default=None
)


class SimulatedClock(Interceptor):
    """The simulated calendar at the moment of work (see the module docstring)."""

    def intercept_activity(self, next: ActivityInboundInterceptor) -> ActivityInboundInterceptor:
        """Anchor every activity attempt on the simulated calendar."""
        return _AnchorActivity(next)

    def now(self) -> datetime:
        """The attempt's anchor advanced by the monotonic time since; outside one, the host's."""
        anchor = _ANCHOR.get()
        if anchor is None:
            return datetime.now(UTC)
        instant, monotonic = anchor
        return instant + timedelta(seconds=time.monotonic() - monotonic)


def calendar_instant(info: activity.Info, requested_utc: datetime | None) -> datetime:
    """The simulated instant at which the attempt ``info`` started.

    ``requested_utc``: the calendar instant the workflow stamped on the call (its ``now_utc``), or
    ``None`` (no offset: the server's own clock).
    """
    offset = timedelta() if requested_utc is None else requested_utc - info.scheduled_time
    return (info.started_time + offset).astimezone(UTC)


class _AnchorActivity(ActivityInboundInterceptor):
    async def execute_activity(self, input: ExecuteActivityInput) -> Any:
        params = input.args[0] if input.args else None
        requested = getattr(params, "now_utc", None)
        instant = calendar_instant(activity.info(), requested)
        # The context is copied into the thread of a synchronous activity, so both kinds see it.
        token = _ANCHOR.set((instant, time.monotonic()))
        try:
            return await super().execute_activity(input)
        finally:
            _ANCHOR.reset(token)


__all__ = ["SimulatedClock", "calendar_instant"]
