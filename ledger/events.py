"""The audit trail and the single-occurrence compare-and-set every transition goes through.

:func:`transition` is the one place an occurrence's state changes after creation: it checks the
transition table, updates the row with ``WHERE occurrence_id = … AND state = <observed>`` (and the
claim generation when a fencing token is given), requires ``rowcount == 1`` and appends the event
row, all on the caller's connection, i.e. in the caller's one transaction.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from datetime import datetime
from typing import Any, cast

from sqlalchemy import Connection, Insert, Table, insert, select, update
from sqlalchemy.dialects import postgresql, sqlite

from ledger.errors import ClaimLost, IllegalTransition, OccurrenceNotFound
from ledger.models import (
    Attempt,
    LogicalSlot,
    Occurrence,
    OccurrenceEvent,
    OutboxMessage,
    ReconciliationCase,
    Revision,
    ScheduleGate,
)
from ledger.states import OccurrenceState, is_legal
from ledger.views import OccurrenceView

GATES = cast(Table, ScheduleGate.__table__)
REVISIONS = cast(Table, Revision.__table__)
OCCURRENCES = cast(Table, Occurrence.__table__)
SLOTS = cast(Table, LogicalSlot.__table__)
ATTEMPTS = cast(Table, Attempt.__table__)
OUTBOX = cast(Table, OutboxMessage.__table__)
EVENTS = cast(Table, OccurrenceEvent.__table__)
CASES = cast(Table, ReconciliationCase.__table__)


@dataclass(frozen=True, slots=True)
class Event:
    """An event row to append (see :class:`ledger.models.OccurrenceEvent`)."""

    occurrence_id: str
    from_state: OccurrenceState | None
    to_state: OccurrenceState
    at_utc: datetime
    by: str
    why: str


def append_events(connection: Connection, events: Iterable[Event]) -> None:
    """Append event rows (one executemany); nothing else ever writes ``occurrence_events``."""
    rows = [
        {
            "occurrence_id": e.occurrence_id,
            "from_state": None if e.from_state is None else e.from_state.value,
            "to_state": e.to_state.value,
            "at_utc": e.at_utc,
            "by": e.by,
            "why": e.why,
        }
        for e in events
    ]
    if rows:
        connection.execute(insert(EVENTS), rows)


def load_occurrence(connection: Connection, occurrence_id: str) -> OccurrenceView:
    """Read one occurrence.

    Raises:
        OccurrenceNotFound: no such occurrence.

    """
    row = connection.execute(
        select(OCCURRENCES).where(OCCURRENCES.c.occurrence_id == occurrence_id)
    ).one_or_none()
    if row is None:
        raise OccurrenceNotFound(occurrence_id)
    return OccurrenceView.from_row(row)


def transition(
    connection: Connection,
    occurrence_id: str,
    to_state: OccurrenceState,
    *,
    now_utc: datetime,
    by: str,
    why: str,
    claim_generation: int | None = None,
    values: Mapping[str, Any] | None = None,
) -> OccurrenceView:
    """Move one occurrence to ``to_state`` by compare-and-set, and append its event row.

    Args:
        connection: the caller's connection, inside its transaction.
        occurrence_id: the occurrence.
        to_state: the target state; must be legal from the current state (``ledger.states``).
        now_utc: when (aware UTC); stored as ``updated_at_utc`` and the event's ``at_utc``.
        by: who (worker identity, user, component).
        why: the reason, stored on the event and as the occurrence's ``state_reason``.
        claim_generation: a fencing token: when given, the row must still carry this claim
            generation (a stale worker cannot move a newer attempt).
        values: further columns to set in the same update.

    Returns:
        The occurrence as it was *before* the transition.

    Raises:
        OccurrenceNotFound: no such occurrence.
        IllegalTransition: the current state cannot move to ``to_state``.
        ClaimLost: the claim generation differs, or the row changed between read and update.

    """
    before = load_occurrence(connection, occurrence_id)
    if not is_legal(before.state, to_state):
        raise IllegalTransition(occurrence_id, before.state, to_state)
    if claim_generation is not None and before.claim_generation != claim_generation:
        raise ClaimLost(
            occurrence_id,
            f"claim generation is {before.claim_generation}, caller holds {claim_generation}",
        )
    statement = (
        update(OCCURRENCES)
        .where(OCCURRENCES.c.occurrence_id == occurrence_id)
        .where(OCCURRENCES.c.state == before.state.value)
        .where(OCCURRENCES.c.claim_generation == before.claim_generation)
        .values(state=to_state.value, state_reason=why, updated_at_utc=now_utc, **(values or {}))
    )
    if connection.execute(statement).rowcount != 1:
        raise ClaimLost(occurrence_id, f"state {before.state.value} changed concurrently")
    append_events(connection, [Event(occurrence_id, before.state, to_state, now_utc, by, why)])
    return before


def require_aware(name: str, value: datetime) -> datetime:
    """Check that ``value`` is aware; return it.

    Raises:
        ValueError: naming ``name``, for a naive datetime.

    """
    if value.tzinfo is None or value.utcoffset() is None:
        raise ValueError(f"{name} must be an aware UTC datetime, got {value.isoformat()}")
    return value


def insert_ignore(connection: Connection, table: Table) -> Insert:
    """``INSERT … ON CONFLICT DO NOTHING`` for the connection's dialect (PostgreSQL or SQLite).

    Concurrent inserters of the same key race on the unique index, not on a host lock: the loser
    waits for the winner's commit and then inserts nothing (``rowcount`` 0).
    """
    if connection.dialect.name == "postgresql":
        return postgresql.insert(table).on_conflict_do_nothing()
    return sqlite.insert(table).on_conflict_do_nothing()
