"""The schedule loop's checks after a release: deadlines swept, failure streaks decided.

Both are decided and recorded once, in the ledger, by an activity; the loop only says when. A
schedule runs a check only once a published revision asked for it (``ScheduleState.deadlines``,
``ScheduleState.failure_streak``). Passed through the workflow sandbox (imported once, not per
instance); the methods call ``temporalio.workflow`` and run only inside a workflow.
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable
from datetime import datetime

from temporalio import workflow
from temporalio.exceptions import ActivityError

from activities.deadlines import DeadlineActivities, SweepDeadlinesInput
from activities.ledger_activities import AlmanacActivities
from activities.streak_activities import (
    DecideFailureStreakInput,
    NotifyFailureStreakInput,
    StreakNotice,
)
from workflows.contracts import (
    LEDGER_RETRY,
    LEDGER_TIMEOUT,
    NOTIFY_RETRY,
    NOTIFY_TIMEOUT,
    ScheduleState,
)

DEADLINES_PATCH = "almanac-deadlines"
"""Patch ID: a schedule whose revision has a ``deadline`` sweeps its deadlines (an activity) at
the start of a run, at each refresh and on a durable timer for the earliest pending deadline."""
FAILURE_STREAKS_PATCH = "almanac-failure-streaks"
"""Patch ID: a schedule whose revision has a ``failureStreak`` decides it (an activity) at each
refresh and when a child ends (which then wakes the loop), and notifies each pending fact in the
background (bounded attempts; a failure is recorded and never stops the loop)."""


class DeadlineSweeps:
    """One schedule run's deadline sweeps (``DEADLINES_PATCH``)."""

    def __init__(self, schedule_id: str, state: ScheduleState, now: Callable[[], datetime]) -> None:
        """Sweep for ``schedule_id`` once ``state`` says a revision has deadlines.

        Args:
            schedule_id: the schedule swept.
            state: the run's state (shared with the workflow).
            now: the schedule's clock (the workflow's seam).
        """
        self._schedule_id = schedule_id
        self._state = state
        self._now = now
        self.next_deadline: datetime | None = None
        """The earliest pending deadline the latest sweep returned."""

    def due(self, now: datetime, refreshing: bool) -> bool:
        """Whether to sweep deadlines now: a schedule with deadlines, at a refresh or a deadline."""
        if not self._state.deadlines:
            return False
        due = self.next_deadline is not None and now >= self.next_deadline
        return (refreshing or due) and workflow.patched(DEADLINES_PATCH)

    async def sweep(self) -> None:
        """Record the deadlines passed by now in the ledger (once, there); note the next one.

        A failed sweep leaves no pending deadline: the next refresh sweeps again (no spinning).

        Raises:
            ActivityError: the sweep failed (the loop records it and goes on).
        """
        self.next_deadline = None
        result = await workflow.execute_activity_method(
            DeadlineActivities.sweep_deadlines,
            SweepDeadlinesInput(self._schedule_id, self._now()),
            start_to_close_timeout=LEDGER_TIMEOUT,
            retry_policy=LEDGER_RETRY,
        )
        self.next_deadline = result.next_deadline_utc


class StreakDecisions:
    """One schedule run's failure-streak decisions and notifications (``FAILURE_STREAKS_PATCH``)."""

    def __init__(self, schedule_id: str, state: ScheduleState) -> None:
        """Decide for ``schedule_id`` once ``state`` says a revision has a streak policy."""
        self._schedule_id = schedule_id
        self._state = state
        self._ended_at_decision = 0
        self._notifying: set[StreakNotice] = set()
        """Notifications running in the background."""

    def on(self) -> bool:
        """Whether the schedule decides failure streaks (a revision has a policy; patched)."""
        return self._state.failure_streak and workflow.patched(FAILURE_STREAKS_PATCH)

    def due(self, refreshing: bool, ended: int) -> bool:
        """Whether to decide now: at a refresh, or after a child ended.

        Args:
            refreshing: this wake-up refreshes the horizon.
            ended: how many children this run started have ended so far.
        """
        return (refreshing or ended > self._ended_at_decision) and self.on()

    async def decide(self, ended: int) -> None:
        """Let the ledger record the streak facts (once, there); notify the pending ones.

        Args:
            ended: how many children this run started have ended so far (the decision covers
                them; one that ends while it runs makes the next one due).

        Raises:
            ActivityError: the decision failed (the loop records it and goes on).
        """
        self._ended_at_decision = ended
        result = await workflow.execute_activity_method(
            AlmanacActivities.decide_failure_streak,
            DecideFailureStreakInput(self._schedule_id),
            start_to_close_timeout=LEDGER_TIMEOUT,
            retry_policy=LEDGER_RETRY,
        )
        for notice in result.pending:
            if notice not in self._notifying:
                self._notifying.add(notice)
                asyncio.create_task(self._notify(notice))  # noqa: RUF006 (tracked in the set)

    async def _notify(self, notice: StreakNotice) -> None:
        """Notify one fact in the background; its outcome is the ledger's, a failure only logged."""
        try:
            await workflow.execute_activity_method(
                AlmanacActivities.notify_failure_streak,
                NotifyFailureStreakInput(self._schedule_id, notice, NOTIFY_RETRY.maximum_attempts),
                start_to_close_timeout=NOTIFY_TIMEOUT,
                retry_policy=NOTIFY_RETRY,
            )
        except ActivityError as exc:
            workflow.logger.warning("failure-streak notification failed: %s", exc.cause or exc)
        finally:
            self._notifying.discard(notice)


__all__ = ["DeadlineSweeps", "StreakDecisions"]
