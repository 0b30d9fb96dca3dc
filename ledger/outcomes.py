"""An attempt's outcome → the occurrence's next state and backoff, decided and written at once.

The adapter reports what its call established (:class:`lifecycle.OutcomeKind`); the retry
policy says how many claims an occurrence gets and how long it waits between them. From those
the ledger decides, in the transaction that records it (DESIGN §2):

- ``CONFIRMED`` → ``SUCCEEDED``;
- ``UNCONFIRMED`` (or a lost acknowledgement) → ``UNKNOWN_EFFECT`` and a reconciliation case due
  in 30 minutes (DESIGN §4 invariant 5): never a blind resend;
- ``RETRYABLE_FAILURE`` while claims remain → ``RETRY_WAIT`` until ``now + backoff``, the backoff
  being :meth:`RetryPolicy.delay` or the downstream's own ``Retry-After`` if that is longer;
- otherwise → ``FAILED`` (``retries exhausted: …`` when the failure was retryable).
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime, timedelta

from sqlalchemy import Connection

from ledger import attempt_outcomes
from ledger.attempt_outcomes import (
    LOST_ACKNOWLEDGEMENT,
    failed_in,
    retry_wait_in,
    succeeded_in,
    unknown_effect_in,
)
from ledger.db import Ledger
from ledger.events import Now, check_now, fact_time
from lifecycle import OccurrenceState, OutcomeKind

FIRST_RETRY_DELAY = timedelta(seconds=10)
"""The backoff after an occurrence's first failed claim."""
MAX_RETRY_DELAY = timedelta(minutes=10)
"""The longest backoff: the doubling stops here."""


@dataclass(frozen=True, slots=True)
class RetryPolicy:
    """How many claims an occurrence gets, and the backoff between them.

    Attributes:
        max_attempts: claims an occurrence may win (a redelivery is not a new claim); ≥ 1.
        first_delay: the backoff after the first failed claim; it doubles per claim.
        max_delay: the longest backoff.

    """

    max_attempts: int
    first_delay: timedelta = FIRST_RETRY_DELAY
    max_delay: timedelta = MAX_RETRY_DELAY

    def delay(self, claim_number: int) -> timedelta:
        """Backoff after claim ``claim_number`` failed: ``first``, ``2·first``, … ≤ ``max``."""
        return min(self.first_delay * (1 << max(claim_number - 1, 0)), self.max_delay)


@dataclass(frozen=True, slots=True)
class AttemptReport:
    """What one attempt's downstream call established.

    Attributes:
        kind: the adapter's verdict.
        detail: its words (bounded by the caller), recorded as the error message.
        retry_after: the downstream's requested wait before another try (``None``: none).
        lost: the call's worker stopped before recording it (``UNCONFIRMED`` only): the attempt
            is recorded ``LOST`` rather than finished.

    """

    kind: OutcomeKind
    detail: str = ""
    retry_after: timedelta | None = None
    lost: bool = False


@dataclass(frozen=True, slots=True)
class RecordedOutcome:
    """The state the ledger moved the occurrence to, and what the workflow needs to go on.

    Attributes:
        state: ``SUCCEEDED``, ``RETRY_WAIT``, ``FAILED`` or ``UNKNOWN_EFFECT``.
        at_utc: when it was recorded (aware UTC, the ledger's fact time).
        retry_after: for ``RETRY_WAIT``: the backoff (the next claim is due at ``at + it``).
        reconcile_deadline_utc: for ``UNKNOWN_EFFECT``: the case's deadline.

    """

    state: OccurrenceState
    at_utc: datetime
    retry_after: timedelta = timedelta(0)
    reconcile_deadline_utc: datetime | None = None


def record_outcome(
    ledger: Ledger,
    occurrence_id: str,
    claim_generation: int,
    report: AttemptReport,
    *,
    claim_number: int,
    policy: RetryPolicy,
    now_utc: Now,
    by: str,
) -> RecordedOutcome:
    """Decide and record the outcome of attempt ``claim_generation`` (module docstring).

    Args:
        ledger: the ledger.
        occurrence_id: the occurrence.
        claim_generation: the attempt (fencing token: a lost claim cannot record).
        report: what the call established.
        claim_number: which won claim of the occurrence this attempt belongs to (1 for the first).
        policy: the occurrence's retry policy.
        now_utc: an instant, or the clock read once the occurrence is locked (:data:`Now`).
        by: who records it.

    Returns:
        The new state, its instant, and the backoff or the reconciliation deadline.

    Raises:
        OccurrenceNotFound, IllegalTransition, ClaimLost.

    """
    check_now(now_utc)

    def work(connection: Connection) -> RecordedOutcome:
        now = fact_time(connection, now_utc, occurrence_id)
        return _record(
            connection, occurrence_id, claim_generation, report, claim_number, policy, now, by
        )

    return ledger.write(work)


def _record(
    connection: Connection,
    occurrence_id: str,
    generation: int,
    report: AttemptReport,
    claim_number: int,
    policy: RetryPolicy,
    now: datetime,
    by: str,
) -> RecordedOutcome:
    if report.kind is OutcomeKind.UNCONFIRMED:
        unknown_effect_in(
            connection,
            occurrence_id,
            generation,
            now,
            by=by,
            error_class=LOST_ACKNOWLEDGEMENT if report.lost else "UNCONFIRMED",
            error_message=report.detail or "outcome not confirmed",
            lost=report.lost,
        )
        deadline = now + attempt_outcomes.RECONCILIATION_DEADLINE  # the case row's
        return RecordedOutcome(OccurrenceState.UNKNOWN_EFFECT, now, reconcile_deadline_utc=deadline)
    if report.kind is OutcomeKind.CONFIRMED:
        succeeded_in(connection, occurrence_id, generation, now, by=by)
        return RecordedOutcome(OccurrenceState.SUCCEEDED, now)
    retryable = report.kind is OutcomeKind.RETRYABLE_FAILURE
    if retryable and claim_number < policy.max_attempts:
        delay = policy.delay(claim_number)
        if report.retry_after is not None:
            delay = max(delay, report.retry_after)
        retry_wait_in(
            connection,
            occurrence_id,
            generation,
            now + delay,
            now,
            by=by,
            error_class=report.kind.value,
            error_message=report.detail,
        )
        return RecordedOutcome(OccurrenceState.RETRY_WAIT, now, retry_after=delay)
    why = f"retries exhausted: {report.detail}" if retryable else report.detail
    failed_in(
        connection,
        occurrence_id,
        generation,
        now,
        by=by,
        error_class=report.kind.value,
        error_message=why,
    )
    return RecordedOutcome(OccurrenceState.FAILED, now)
