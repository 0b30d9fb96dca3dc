"""How an attempt ends: the outcome transitions, each fenced by the attempt's claim generation.

``DISPATCHING|RUNNING`` → ``SUCCEEDED``, ``RETRY_WAIT``, ``FAILED`` or ``UNKNOWN_EFFECT``, each
one compare-and-set plus its event row and the attempt row's ending, in one transaction. The
``*_in`` forms run in the caller's transaction: :func:`ledger.record_outcome` decides which one
applies and runs it in its own. A worker that lost its claim cannot record an outcome for a newer
attempt (the generation is the fencing token).
"""

from __future__ import annotations

from datetime import datetime, timedelta

from sqlalchemy import Connection, insert, select, update

from ledger.db import Ledger
from ledger.errors import IllegalTransition
from ledger.events import ATTEMPTS, CASES, OCCURRENCES, Now, check_now, fact_time, require_aware
from ledger.states import AttemptOutcome, OccurrenceState
from ledger.transitions import transition
from ledger.views import OccurrenceView

RECONCILIATION_DEADLINE = timedelta(minutes=30)
"""An UNKNOWN_EFFECT is reconciled or in the human queue within this (DESIGN §4 invariant 5)."""
LOST_ACKNOWLEDGEMENT = "LostAcknowledgement"
"""The error class of a LOST attempt: its worker stopped before the outcome was recorded."""


def _finish_attempt(
    connection: Connection,
    occurrence_id: str,
    claim_generation: int,
    now_utc: datetime,
    outcome: AttemptOutcome,
    error_class: str | None = None,
    error_message: str | None = None,
) -> None:
    connection.execute(
        update(ATTEMPTS)
        .where(ATTEMPTS.c.occurrence_id == occurrence_id)
        .where(ATTEMPTS.c.claim_generation == claim_generation)
        .where(ATTEMPTS.c.finished_at_utc.is_(None))
        .values(
            finished_at_utc=now_utc,
            outcome=outcome.value,
            error_class=error_class,
            error_message=error_message,
        )
    )


def lose_attempt(
    connection: Connection,
    occurrence_id: str,
    claim_generation: int,
    detected_at_utc: datetime,
    detected_by: str,
    why: str,
) -> None:
    """Record attempt ``claim_generation`` as LOST: found unfinished at ``detected_at_utc``.

    Its worker stopped before recording an outcome, so no finish time is written: nobody saw the
    attempt end, and the time it was found lost is a fact about the finder, kept apart.
    """
    connection.execute(
        update(ATTEMPTS)
        .where(ATTEMPTS.c.occurrence_id == occurrence_id)
        .where(ATTEMPTS.c.claim_generation == claim_generation)
        .where(ATTEMPTS.c.finished_at_utc.is_(None))
        .where(ATTEMPTS.c.outcome.is_(None))
        .values(
            outcome=AttemptOutcome.LOST.value,
            error_class=LOST_ACKNOWLEDGEMENT,
            error_message=why,
            lost_detected_at_utc=detected_at_utc,
            lost_detected_by=detected_by,
        )
    )


def succeeded(
    ledger: Ledger, occurrence_id: str, claim_generation: int, now_utc: Now, *, by: str
) -> OccurrenceView:
    """``RUNNING → SUCCEEDED``: the effect of attempt ``claim_generation`` is confirmed.

    Returns:
        The occurrence before the transition.

    Raises:
        OccurrenceNotFound, IllegalTransition, ClaimLost.

    """
    check_now(now_utc)
    return ledger.write(lambda c: succeeded_in(c, occurrence_id, claim_generation, now_utc, by=by))


def succeeded_in(
    connection: Connection,
    occurrence_id: str,
    claim_generation: int,
    now_utc: Now,
    *,
    by: str,
) -> OccurrenceView:
    """:func:`succeeded` in the caller's transaction (same arguments, result and errors)."""
    now = fact_time(connection, now_utc, occurrence_id)
    before = transition(
        connection,
        occurrence_id,
        OccurrenceState.SUCCEEDED,
        now_utc=now,
        by=by,
        why=f"attempt {claim_generation} succeeded",
        claim_generation=claim_generation,
    )
    _finish_attempt(connection, occurrence_id, claim_generation, now, AttemptOutcome.SUCCEEDED)
    return before


def retry_wait(
    ledger: Ledger,
    occurrence_id: str,
    claim_generation: int,
    next_attempt_at_utc: datetime,
    now_utc: Now,
    *,
    by: str,
    error_class: str,
    error_message: str,
) -> OccurrenceView:
    """``DISPATCHING|RUNNING → RETRY_WAIT``: the attempt failed *without effect*; retry later.

    Use only when the downstream confirms nothing happened (a refused request, a connection that
    never sent); an unconfirmed outcome is :func:`unknown_effect`. The next attempt is a new
    claim (a new attempt row), never a new occurrence (DESIGN §4 invariant 4).

    Args:
        ledger: the ledger.
        occurrence_id: the occurrence.
        claim_generation: the failed attempt's generation (fencing token).
        next_attempt_at_utc: when to retry (aware UTC), stored on the occurrence.
        now_utc: when (aware UTC).
        by: who.
        error_class: the error's class name.
        error_message: the error's message.

    Returns:
        The occurrence before the transition.

    Raises:
        OccurrenceNotFound, IllegalTransition, ClaimLost.

    """
    check_now(now_utc)
    require_aware("next_attempt_at_utc", next_attempt_at_utc)
    return ledger.write(
        lambda c: retry_wait_in(
            c,
            occurrence_id,
            claim_generation,
            next_attempt_at_utc,
            now_utc,
            by=by,
            error_class=error_class,
            error_message=error_message,
        )
    )


def retry_wait_in(
    connection: Connection,
    occurrence_id: str,
    claim_generation: int,
    next_attempt_at_utc: datetime,
    now_utc: Now,
    *,
    by: str,
    error_class: str,
    error_message: str,
) -> OccurrenceView:
    """:func:`retry_wait` in the caller's transaction (same arguments, result and errors)."""
    now = fact_time(connection, now_utc, occurrence_id)
    before = transition(
        connection,
        occurrence_id,
        OccurrenceState.RETRY_WAIT,
        now_utc=now,
        by=by,
        why=f"attempt {claim_generation} failed ({error_class}); retry scheduled",
        claim_generation=claim_generation,
        values={"next_attempt_at_utc": next_attempt_at_utc},
    )
    _finish_attempt(
        connection,
        occurrence_id,
        claim_generation,
        now,
        AttemptOutcome.RETRYABLE_FAILURE,
        error_class,
        error_message,
    )
    return before


def failed(
    ledger: Ledger,
    occurrence_id: str,
    claim_generation: int | None,
    now_utc: Now,
    *,
    by: str,
    error_class: str,
    error_message: str,
) -> OccurrenceView:
    """``DISPATCHING|RUNNING|RETRY_WAIT → FAILED``: definitive failure without effect.

    Args:
        ledger: the ledger.
        occurrence_id: the occurrence.
        claim_generation: the failing attempt's generation; ``None`` from ``RETRY_WAIT`` when the
            retries are exhausted (no attempt is running).
        now_utc: when (aware UTC).
        by: who.
        error_class: the error's class name.
        error_message: the error's message.

    Returns:
        The occurrence before the transition.

    Raises:
        OccurrenceNotFound, IllegalTransition (also from UNKNOWN_EFFECT: use
        ``resolve_reconciliation``), ClaimLost.

    """
    check_now(now_utc)
    return ledger.write(
        lambda c: failed_in(
            c,
            occurrence_id,
            claim_generation,
            now_utc,
            by=by,
            error_class=error_class,
            error_message=error_message,
        )
    )


def failed_in(
    connection: Connection,
    occurrence_id: str,
    claim_generation: int | None,
    now_utc: Now,
    *,
    by: str,
    error_class: str,
    error_message: str,
) -> OccurrenceView:
    """:func:`failed` in the caller's transaction (same arguments, result and errors)."""
    now = fact_time(connection, now_utc, occurrence_id)
    current = connection.execute(
        select(OCCURRENCES.c.state).where(OCCURRENCES.c.occurrence_id == occurrence_id)
    ).scalar_one_or_none()
    if current == OccurrenceState.UNKNOWN_EFFECT.value:
        # Only reconciliation decides an unknown effect (resolve_reconciliation).
        raise IllegalTransition(
            occurrence_id, OccurrenceState.UNKNOWN_EFFECT, OccurrenceState.FAILED
        )
    before = transition(
        connection,
        occurrence_id,
        OccurrenceState.FAILED,
        now_utc=now,
        by=by,
        why=f"failed: {error_class}: {error_message}",
        claim_generation=claim_generation,
    )
    if claim_generation is not None:
        _finish_attempt(
            connection,
            occurrence_id,
            claim_generation,
            now,
            AttemptOutcome.FAILED,
            error_class,
            error_message,
        )
    return before


def unknown_effect(
    ledger: Ledger,
    occurrence_id: str,
    claim_generation: int,
    now_utc: Now,
    *,
    by: str,
    error_class: str,
    error_message: str,
    lost: bool = False,
) -> OccurrenceView:
    """``DISPATCHING|RUNNING → UNKNOWN_EFFECT`` and open a reconciliation case.

    The case's deadline is ``now_utc + 30 minutes``: by then it is reconciled or in the human
    queue (DESIGN §4 invariant 5). The occurrence is never cancelled or re-sent blindly. With
    ``lost``, the attempt's worker stopped during the call and ``by`` found it so at ``now_utc``:
    the attempt is recorded LOST (no finish time; see :func:`_lose_attempt`), not finished.

    Returns:
        The occurrence before the transition.

    Raises:
        OccurrenceNotFound, IllegalTransition, ClaimLost.

    """
    check_now(now_utc)
    return ledger.write(
        lambda c: unknown_effect_in(
            c,
            occurrence_id,
            claim_generation,
            now_utc,
            by=by,
            error_class=error_class,
            error_message=error_message,
            lost=lost,
        )
    )


def unknown_effect_in(
    connection: Connection,
    occurrence_id: str,
    claim_generation: int,
    now_utc: Now,
    *,
    by: str,
    error_class: str,
    error_message: str,
    lost: bool = False,
) -> OccurrenceView:
    """:func:`unknown_effect` in the caller's transaction (same arguments, result and errors)."""
    now = fact_time(connection, now_utc, occurrence_id)
    before = transition(
        connection,
        occurrence_id,
        OccurrenceState.UNKNOWN_EFFECT,
        now_utc=now,
        by=by,
        why=f"attempt {claim_generation} outcome unknown: {error_class}",
        claim_generation=claim_generation,
    )
    if lost:
        lose_attempt(connection, occurrence_id, claim_generation, now, by, error_message)
    else:
        _finish_attempt(
            connection,
            occurrence_id,
            claim_generation,
            now,
            AttemptOutcome.UNKNOWN,
            error_class,
            error_message,
        )
    connection.execute(
        insert(CASES).values(
            occurrence_id=occurrence_id,
            claim_generation=claim_generation,
            opened_at_utc=now,
            deadline_utc=now + RECONCILIATION_DEADLINE,
        )
    )
    return before
