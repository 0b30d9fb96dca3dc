"""When the schedule loop wakes, as of which instant it releases, and when a run continues as new.

A timer starts when the workflow task that set it completes, so a timer for an instant fires
late by that task's time: the loop sets it ``io.RELEASE_LEAD`` early (:data:`EARLY_WAKE`) and the
release waits for the instant; a wake-up that comes at most ``io.RELEASE_GRACE`` late decides as
of the instant (:data:`ON_TIME`). Passed through the workflow sandbox (imported once, not per
instance); the functions call ``temporalio.workflow`` and run only inside a workflow.
"""

from __future__ import annotations

from datetime import datetime, timedelta

from temporalio import workflow

from activities import io

EARLY_WAKE = "almanac-early-wake"
"""Patch ID: a timer for an instant fires ``io.RELEASE_LEAD`` early; the release waits for it
(a timer starts when its task completes, so one for the instant itself fires late)."""
ON_TIME = "almanac-on-time"
"""Patch ID: a timer's wake-up whose task starts at most ``io.RELEASE_GRACE`` after the instant
decides as of the instant (``lateness`` counts from it, not from a busy worker's task); a wake-up
that was not the timer's sleeps exactly until a next instant nearer than ``MIN_DELAY``."""
SHORT_HISTORY = "almanac-short-history"
"""Patch ID: a run continues as new at ``ScheduleInput.max_history_events``, not only at the
server's suggestion (a restart's replay stays inside the workflow-task timeout)."""
MIN_DELAY = timedelta(seconds=1)
"""The shortest sleep of the loop, but for one until a next instant (``ON_TIME``): a wake-up that
finds nothing to do must not spin."""


def release_not_before(now: datetime, timer_for: datetime | None) -> datetime | None:
    """The instant a release decides as of and waits for (``ReleaseDueInput.not_before_utc``).

    Args:
        now: the schedule's clock at the wake-up.
        timer_for: the instant this wake-up's timer was set for; ``None`` when something else
            woke the loop (a change, a refresh, a child's end).

    Returns:
        ``timer_for`` while it is still ahead of ``now`` (``EARLY_WAKE``) or behind it by at
        most ``io.RELEASE_GRACE`` (``ON_TIME``); otherwise ``None`` (the release decides as of
        ``now``).
    """
    if timer_for is None:
        return None
    if timer_for > now:
        return timer_for
    if now - timer_for <= io.RELEASE_GRACE:
        workflow.deprecate_patch(ON_TIME)
        return timer_for
    return None


def sleep_for(
    wake: datetime, now: datetime, next_instant: datetime | None, enabled: bool
) -> tuple[timedelta, datetime | None]:
    """How long the loop sleeps for ``wake``, and the instant the timer is for (if any).

    Args:
        wake: the earliest of the next refresh, instant, deadline and end.
        now: the schedule's clock.
        next_instant: the schedule's next instant (the latest reading), or ``None``.
        enabled: whether the gate is enabled (a disabled schedule releases nothing).

    Returns:
        At least ``MIN_DELAY``, but when ``wake`` is the next instant: ``io.RELEASE_LEAD`` less
        (``EARLY_WAKE``), or exactly until it when it is nearer than that (``ON_TIME``); with the
        instant then, else ``None``.
    """
    until = wake - now
    delay = max(until, MIN_DELAY)
    if not (enabled and wake == next_instant):
        return delay, None
    if until - io.RELEASE_LEAD >= MIN_DELAY:
        workflow.deprecate_patch(EARLY_WAKE)
        return until - io.RELEASE_LEAD, wake
    if until > timedelta(0):
        workflow.deprecate_patch(ON_TIME)
        return until, wake
    return delay, None


def history_full(max_history_events: int) -> bool:
    """Whether this run should continue as new now (the server's hint, or ``SHORT_HISTORY``)."""
    info = workflow.info()
    if info.is_continue_as_new_suggested():
        return True
    if info.get_current_history_length() < max_history_events:
        return False
    workflow.deprecate_patch(SHORT_HISTORY)
    return True


__all__ = ["MIN_DELAY", "history_full", "release_not_before", "sleep_for"]
