"""The worker's activities, assembled: one class built with the ledger, the actions and the clock.

Each group is a thin adapter for the workflow it serves (``activities.schedule_activities``,
``activities.control_activities``, ``activities.occurrence_activities``,
``activities.manual_activities``; shared parts in ``activities.common``). Workflows call the
methods by reference (``workflow.execute_activity_method(AlmanacActivities.claim, …)``); the
activity names (``activities.io``'s constants, fixed by recorded histories) and the payload
dataclasses are the contract. Tests build the class with their own ledger, clock and adapters.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from activities.common import DETERMINISTIC_ERRORS, NON_RETRYABLE_ERROR_TYPES
from activities.control_activities import ControlActivities
from activities.manual_activities import ManualActivities
from activities.occurrence_activities import OccurrenceActivities
from activities.schedule_activities import (
    DEFAULT_HORIZON,
    HORIZON_OCCURRENCES,
    MATERIALIZE_LIMIT,
    ScheduleActivities,
)
from activities.streak_activities import StreakActivities


class AlmanacActivities(
    ScheduleActivities, ControlActivities, OccurrenceActivities, ManualActivities, StreakActivities
):
    """Every Almanac activity, sharing one ledger, one action registry and one clock."""

    def all(self) -> list[Callable[..., Any]]:
        """The activity callables to register on a worker."""
        return [
            self.materialize,
            self.release_due,
            self.publish_revision,
            self.set_gate,
            self.claim,
            self.execute_attempt,
            self.claim_and_execute,
            self.query_effect,
            self.escalate,
            self.change_gate,
            self.delete_schedule,
            self.record_trigger,
            self.backfill,
            self.decide_failure_streak,
            self.notify_failure_streak,
        ]


__all__ = [
    "DEFAULT_HORIZON",
    "DETERMINISTIC_ERRORS",
    "HORIZON_OCCURRENCES",
    "MATERIALIZE_LIMIT",
    "NON_RETRYABLE_ERROR_TYPES",
    "AlmanacActivities",
]
