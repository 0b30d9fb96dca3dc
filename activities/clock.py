"""Where every instant and identity written to the ledger comes from (the one place that says so).

Two kinds of instants reach the ledger, and they come from different clocks:

**Instants of work** — when something *happened*. They come from the :class:`Clock` injected into
``activities.ledger_activities.AlmanacActivities``, read by the process doing the work at the
moment it does it. In production that is :class:`SystemClock` (the host's clock), built at the
edge: the worker (``almanac.worker.build_worker``). Never from what Temporal hands an activity:
the ``now_utc`` an activity input carries is ``workflow.now()`` *when the call was scheduled*, and
Temporal hands that same value back unchanged when the activity is retried after a crash, minutes
later, on another worker.

===================================================  ===========================================
ledger field                                         source
===================================================  ===========================================
``attempts.started_at_utc`` (claim, redelivery)      clock, when the claim/redelivery commits
``attempts.finished_at_utc``, error class/message    clock, when the outcome is recorded
``occurrences.updated_at_utc``, ``state_reason``     clock, in the same transition
``occurrences.created_at_utc``, slot ``claimed_at``  clock, when materialization writes the rows
``occurrences.next_attempt_at_utc``                  clock at the failure + the backoff
``occurrence_events.at_utc``                         clock, in the transition that appends it
``occurrence_events.sequence``                       the ledger (``occurrences.event_sequence``
                                                     bumped by the transition's compare-and-set)
``revisions.published_at_utc``, gate ``updated_at``  clock, when the publish/disable/enable commits
``reconciliation_cases.opened_at_utc`` / deadline    clock at UNKNOWN_EFFECT; deadline = + 30 min
``reconciliation_cases.resolved_at_utc``             clock, when the downstream answer or the
                                                     escalation is recorded
``by`` / ``worker_identity`` / ``updated_by``        the identity of the worker process that ran
                                                     the activity (``almanac.worker.
                                                     default_identity``: host and pid), or the
                                                     signal's ``by`` for gate changes
``almanac_dispatch_lag_seconds``                     the same clock reading the ledger records as
                                                     the call's start (the RUNNING event) minus the
                                                     occurrence's resolved instant
===================================================  ===========================================

**When** the clock is read: the claim, the RUNNING transition and the recorded outcomes hand the
ledger the clock itself (``ledger.events.Now``), and the ledger reads it inside the transaction
once it holds the locks it waited for (``ledger.events.fact_time``): a slow lock never stamps a
fact earlier than it happened. How far this clock may be from the database's and Temporal's is
measured and bounded before each claim (:mod:`activities.clock_skew`).

**Decision instants** — the instant a schedule *decides as of*. They keep the workflow's instant
(``workflow.now()``, carried in the input's ``now_utc``) because the schedule workflow's timers and
its view of what is due run on workflow time, and a decision must not depend on when a worker got
round to it: the materialization window (``[from, now + horizon)``, the ``upcoming`` list) and the
release/misfire decision (what is overdue, what is later than ``lateness``). Their activities say
so in their docstrings; the events they write are still stamped with the clock.

The event trail's *order* is the ledger's sequence number, never a clock: two workers' clocks may
disagree, the sequence cannot.

Simulated time (tests, the gates harness) follows the same rule with another clock:
``almanac.gates.simulated_clock.SimulatedClock`` reads the simulated calendar at the moment of work;
the production classes here know nothing of it.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from typing import Protocol


class Clock(Protocol):
    """Where an activity reads "now": an aware UTC instant, at the moment of the call."""

    def now(self) -> datetime:
        """The current instant, aware, in UTC."""
        ...


class SystemClock:
    """The host's clock: production's clock of work (the worker builds it)."""

    def now(self) -> datetime:
        """``datetime.now(UTC)``."""
        return datetime.now(UTC)


@dataclass
class FixedClock:
    """A clock that reads what it was set to: for tests and tools that call activities directly."""

    instant_utc: datetime
    """What :meth:`now` returns (aware)."""

    def now(self) -> datetime:
        """The set instant, in UTC."""
        return self.instant_utc.astimezone(UTC)

    def advance(self, by: timedelta) -> None:
        """Move the clock forward by ``by``."""
        self.instant_utc += by


__all__ = ["Clock", "FixedClock", "SystemClock"]
