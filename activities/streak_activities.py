"""Failure-streak activities (issue 30): decide from the ledger, notify through the action adapter.

``decide_failure_streak`` is a thin adapter over ``ledger.streak_facts``: the ledger decides and
records each STREAK or RECOVERED fact once, and answers the notifications still pending.
``notify_failure_streak`` runs the policy's registered action (so its egress policy, signing and
secret references apply) with a payload describing the fact and the fact's idempotency key. Each
attempt is counted in the ledger first; a failed attempt raises (Temporal retries it, bounded by
the caller's ``RetryPolicy``), and the last allowed one is recorded ``FAILED`` and returns — a
notification never fails the schedule's loop.
"""

from __future__ import annotations

import asyncio
from dataclasses import dataclass, field
from typing import Any

from temporalio import activity
from temporalio.exceptions import ApplicationError

from activities.actions.base import ActionContext, OutcomeKind
from activities.common import ActivitiesBase, bounded
from timecontract import format_instant

DECIDE_FAILURE_STREAK = "almanac.decide_failure_streak"
"""Activity type name (part of recorded histories: never rename)."""
NOTIFY_FAILURE_STREAK = "almanac.notify_failure_streak"
"""Activity type name (part of recorded histories: never rename)."""
PAYLOAD_PARAMETER = {"http": "data", "temporal": "input"}
"""Where each built-in adapter carries the notification's payload (others: their parameters)."""


@dataclass(frozen=True)
class StreakNotice:
    """One fact whose notification is pending (its ledger key)."""

    streak_start_occurrence_id: str
    kind: str
    """``STREAK`` or ``RECOVERED``."""


@dataclass(frozen=True)
class DecideFailureStreakInput:
    """Decide one schedule's streak facts."""

    schedule_id: str


@dataclass(frozen=True)
class DecideFailureStreakResult:
    """What the decision recorded, and what to notify."""

    recorded: int
    """Facts recorded by this call (0 when another call recorded them)."""
    streak: int
    """The current failure streak."""
    pending: list[StreakNotice] = field(default_factory=list)
    """Facts whose notification is pending, oldest first (at most ``MAX_PENDING``)."""


@dataclass(frozen=True)
class NotifyFailureStreakInput:
    """Notify one fact."""

    schedule_id: str
    notice: StreakNotice
    max_attempts: int
    """Attempts allowed in all (counted in the ledger): the caller's ``RetryPolicy`` bound."""


@dataclass(frozen=True)
class NotifyFailureStreakResult:
    """The notification's recorded outcome."""

    state: str
    """``DELIVERED``, ``FAILED`` or ``SKIPPED`` (delivered or failed before: nothing sent)."""
    attempts: int


class StreakActivities(ActivitiesBase):
    """``decide_failure_streak`` and ``notify_failure_streak``."""

    @activity.defn(name=DECIDE_FAILURE_STREAK)
    def decide_failure_streak(self, params: DecideFailureStreakInput) -> DecideFailureStreakResult:
        """Record the schedule's STREAK/RECOVERED fact its ended occurrences call for, once."""
        from ledger.streak_facts import decide_failure_streak

        sid = params.schedule_id
        with self._domain_errors(sid, DECIDE_FAILURE_STREAK):
            decision = decide_failure_streak(self._ledger, sid, self._clock.now, by=self._identity)
        for fact in decision.recorded:
            activity.logger.warning(
                "failure streak %s: %s since %s%s",
                fact.kind.value,
                sid,
                fact.streak_start_occurrence_id,
                " (schedule paused)" if fact.paused else "",
            )
        return DecideFailureStreakResult(
            len(decision.recorded),
            decision.streak,
            [StreakNotice(f.streak_start_occurrence_id, f.kind.value) for f in decision.pending],
        )

    @activity.defn(name=NOTIFY_FAILURE_STREAK)
    async def notify_failure_streak(
        self, params: NotifyFailureStreakInput
    ) -> NotifyFailureStreakResult:
        """Run the policy's action for one fact; record the outcome (see the module docstring).

        Raises:
            ApplicationError: an attempt failed and another is allowed (Temporal retries).
        """
        from ledger.streak_facts import (
            StreakKind,
            finish_notification,
            start_notification,
            streak_policy,
        )

        sid, notice = params.schedule_id, params.notice
        key = (sid, notice.streak_start_occurrence_id, StreakKind(notice.kind))
        fact = await asyncio.to_thread(
            start_notification,
            self._ledger,
            *key,
            self._clock.now,
            max_attempts=params.max_attempts,
        )
        if fact is None:
            return NotifyFailureStreakResult("SKIPPED", 0)
        policy = await asyncio.to_thread(self._ledger.read, lambda c: streak_policy(c, sid))
        final = fact.notify_attempts >= params.max_attempts
        if policy is None:
            detail, delivered = "the schedule's newest revision has no failureStreak policy", False
        else:
            payload = {
                "kind": "streak" if fact.kind is StreakKind.STREAK else "recovery",
                "scheduleId": sid,
                "threshold": fact.threshold,
                "streakStartOccurrenceId": fact.streak_start_occurrence_id,
                "occurrenceIds": list(fact.occurrence_ids),
                "paused": fact.paused,
                "recordedAtUtc": format_instant(fact.recorded_at_utc),
            }
            parameters: dict[str, Any] = dict(policy.action.parameters)
            slot = PAYLOAD_PARAMETER.get(policy.action.name)
            if slot is not None:
                parameters[slot] = {**payload, "data": parameters.get(slot)}
            # The context names the fact's latest occurrence; a notification belongs to the
            # schedule, not to one revision's slot: revision 0, no nominal time.
            last = fact.occurrence_ids[-1] if fact.occurrence_ids else sid
            ctx = ActionContext(
                occurrence_id=last,
                schedule_id=sid,
                revision=0,
                nominal_local="",
                instant_utc=format_instant(fact.recorded_at_utc),
                attempt=fact.notify_attempts,
                parameters=parameters,
                key=fact.idempotency_key,
            )
            try:
                outcome = await self._actions.invoke(policy.action.name, ctx)
                delivered = outcome.kind is OutcomeKind.CONFIRMED
                detail = outcome.detail or outcome.kind.value
            except Exception as exc:  # an adapter's error is this attempt's outcome
                delivered, detail = False, f"{type(exc).__name__}: {exc}"
        await asyncio.to_thread(
            finish_notification,
            self._ledger,
            *key,
            self._clock.now,
            delivered=delivered,
            detail=bounded(detail),
            final=final,
        )
        if delivered:
            return NotifyFailureStreakResult("DELIVERED", fact.notify_attempts)
        if final:
            activity.logger.error(
                "failure streak notification failed after %d attempts: %s",
                fact.notify_attempts,
                sid,
            )
            return NotifyFailureStreakResult("FAILED", fact.notify_attempts)
        raise ApplicationError(bounded(detail), type="NotificationFailed")
