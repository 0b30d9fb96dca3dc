"""The deadline sweep activity (issue 30): a thin adapter over ``ledger.deadlines``.

The schedule workflow calls it at the earliest pending deadline (a durable timer), at a refresh and
at the start of every run; the ledger decides and records each miss once, so a retried, repeated
or late call (after the worker was down) records nothing twice. Registered on the worker with the
other activities (``almanac.worker``); a schedule without a ``deadline`` never calls it.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from datetime import datetime
from typing import Any

from temporalio import activity

from activities.clock import Clock
from ledger import Ledger

SWEEP_DEADLINES = "almanac.sweep_deadlines"
"""Activity type name (part of recorded histories: never rename)."""


@dataclass(frozen=True)
class SweepDeadlinesInput:
    """Sweep one schedule's passed deadlines."""

    schedule_id: str
    now_utc: datetime
    """The workflow's instant when it asked (aware UTC); the ledger decides on the worker's clock,
    read when the sweep runs (a retry after a restart decides later, never earlier)."""


@dataclass(frozen=True)
class SweepDeadlinesResult:
    """What the sweep recorded and when the next deadline falls."""

    recorded: int
    """Misses recorded by this call (0 when another call recorded them)."""
    next_deadline_utc: datetime | None
    """The earliest deadline still to decide (aware UTC); ``None``: none pending."""


class DeadlineActivities:
    """The deadline activities, built with the ledger, the worker's identity and its clock."""

    def __init__(self, ledger_: Ledger, *, identity: str, clock: Clock) -> None:
        """Build the activities.

        Args:
            ledger_: the ledger.
            identity: the worker's identity (stored with each miss as ``by``).
            clock: the clock of work: a miss's ``recorded_at_utc`` and the decision instant.

        """
        self._ledger = ledger_
        self._identity = identity
        self._clock = clock

    def all(self) -> list[Callable[..., Any]]:
        """The activity callables to register on a worker."""
        return [self.sweep_deadlines]

    @activity.defn(name=SWEEP_DEADLINES)
    def sweep_deadlines(self, params: SweepDeadlinesInput) -> SweepDeadlinesResult:
        """Record the schedule's deadlines passed by now (the clock's), once; the next one."""
        from ledger.deadlines import sweep_deadlines  # SQL: loaded on use, not with the workflows

        result = sweep_deadlines(
            self._ledger, params.schedule_id, self._clock.now, by=self._identity
        )
        for miss in result.recorded:
            activity.logger.warning(
                "deadline missed: %s (%s at %s)",
                miss.occurrence_id,
                miss.state_at_deadline.value,
                miss.deadline_utc.isoformat(),
            )
        return SweepDeadlinesResult(len(result.recorded), result.next_deadline_utc)
