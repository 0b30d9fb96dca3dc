"""Reconciliation of UNKNOWN_EFFECT occurrences, and the human queue (DESIGN §4 invariant 5)."""

from __future__ import annotations

from datetime import datetime

from sqlalchemy import Connection, func, or_, select, update

from ledger.db import Ledger
from ledger.errors import CaseNotFound, ClaimLost
from ledger.events import CASES, OCCURRENCES, require_aware
from ledger.states import OccurrenceState, ReconciliationResolution
from ledger.transitions import transition
from ledger.views import CaseView

OPEN_CASE = or_(
    CASES.c.resolution.is_(None), CASES.c.resolution == ReconciliationResolution.HUMAN.value
)
"""A case not yet closed: unresolved, or in the human queue."""


def resolve_reconciliation(
    ledger: Ledger,
    occurrence_id: str,
    resolution: ReconciliationResolution,
    now_utc: datetime,
    *,
    by: str,
    note: str | None = None,
) -> CaseView:
    """Resolve an open case: ``SUCCEEDED`` or ``NOT_APPLIED`` closes it, ``HUMAN`` queues it.

    ``SUCCEEDED`` moves the occurrence ``UNKNOWN_EFFECT → SUCCEEDED`` (the downstream confirms the
    effect); ``NOT_APPLIED`` moves it to ``FAILED`` (confirmed no effect; a new run is a human
    decision, never an automatic resend); ``HUMAN`` leaves it ``UNKNOWN_EFFECT`` and puts the case
    in the human queue, where a person later resolves it with ``SUCCEEDED`` or ``NOT_APPLIED``.
    The case update is a compare-and-set on "still open"; the occurrence's transition and event
    are in the same transaction.

    Args:
        ledger: the ledger.
        occurrence_id: the UNKNOWN_EFFECT occurrence.
        resolution: the decision.
        now_utc: when (aware UTC).
        by: who (a reconciler component or a person); never blank, it is the decision's record.
        note: evidence (e.g. the downstream's answer).

    Returns:
        The case afterwards.

    Raises:
        ValueError: ``by`` is empty or only whitespace (nothing is written).
        CaseNotFound: no open case for the occurrence.
        ClaimLost: a concurrent resolution won.
        IllegalTransition: the occurrence is not UNKNOWN_EFFECT.

    """
    require_aware("now_utc", now_utc)
    if not by.strip():
        raise ValueError(f"by={by!r}: name who resolves the case (it is stored as resolvedBy)")

    def work(connection: Connection) -> CaseView:
        case_row = connection.execute(
            select(CASES).where(CASES.c.occurrence_id == occurrence_id).where(OPEN_CASE)
        ).one_or_none()
        if case_row is None:
            raise CaseNotFound(occurrence_id)
        case = CaseView.from_row(case_row)
        changed = connection.execute(
            update(CASES)
            .where(CASES.c.id == case.id)
            .where(
                CASES.c.resolution.is_(None)
                if case.resolution is None
                else CASES.c.resolution == case.resolution.value
            )
            .values(
                resolution=resolution.value,
                resolved_by=by,
                resolved_at_utc=now_utc,
                note=note if note is not None else case.note,
            )
        ).rowcount
        if changed != 1:
            raise ClaimLost(f"case of {occurrence_id}", "resolved concurrently")
        if resolution is not ReconciliationResolution.HUMAN:
            target = (
                OccurrenceState.SUCCEEDED
                if resolution is ReconciliationResolution.SUCCEEDED
                else OccurrenceState.FAILED
            )
            transition(
                connection,
                occurrence_id,
                target,
                now_utc=now_utc,
                by=by,
                why=f"reconciled: {resolution.value}" + (f" ({note})" if note else ""),
            )
        row = connection.execute(select(CASES).where(CASES.c.id == case.id)).one()
        return CaseView.from_row(row)

    return ledger.write(work)


def open_cases(ledger: Ledger, schedule_id: str | None = None) -> list[CaseView]:
    """Cases not yet closed (unresolved or in the human queue), oldest first."""

    def work(connection: Connection) -> list[CaseView]:
        statement = select(CASES).where(OPEN_CASE).order_by(CASES.c.opened_at_utc, CASES.c.id)
        if schedule_id is not None:
            statement = statement.join(
                OCCURRENCES, OCCURRENCES.c.occurrence_id == CASES.c.occurrence_id
            ).where(OCCURRENCES.c.schedule_id == schedule_id)
        return [CaseView.from_row(r) for r in connection.execute(statement)]

    return ledger.read(work)


def open_cases_by_schedule(ledger: Ledger) -> dict[str, tuple[int, datetime]]:
    """Per schedule: ``(open cases, opened_at_utc of the oldest open one)`` (for metrics).

    One grouped query on the occurrence's ``schedule_id`` column, never a parse of the
    occurrence ID: every ID form (calendar, interval, manual) counts, and a row whose ID no parser
    knows cannot fail the read. Schedules without an open case are left out.
    """

    def work(connection: Connection) -> dict[str, tuple[int, datetime]]:
        rows = connection.execute(
            select(OCCURRENCES.c.schedule_id, func.count(), func.min(CASES.c.opened_at_utc))
            .join(OCCURRENCES, OCCURRENCES.c.occurrence_id == CASES.c.occurrence_id)
            .where(OPEN_CASE)
            .group_by(OCCURRENCES.c.schedule_id)
        )
        return {row[0]: (int(row[1]), row[2]) for row in rows}

    return ledger.read(work)


def human_queue(ledger: Ledger, now_utc: datetime) -> list[CaseView]:
    """Cases a person must decide at ``now_utc``: queued as ``HUMAN``, or past their deadline.

    An unresolved case past its 30-minute deadline counts as queued even if no reconciler put it
    there (DESIGN §4 invariant 5: reconciled *or* in the human queue within 30 minutes).
    """
    require_aware("now_utc", now_utc)
    return [
        case
        for case in open_cases(ledger)
        if case.resolution is ReconciliationResolution.HUMAN or case.overdue(now_utc)
    ]
