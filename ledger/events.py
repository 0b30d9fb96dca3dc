"""The ledger's table handles, the audit trail (event rows) and helpers every operation shares.

State changes themselves live in :mod:`ledger.transitions`, which appends their event rows here.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from dataclasses import dataclass
from datetime import datetime
from typing import cast

from sqlalchemy import Connection, Insert, Table, insert, select
from sqlalchemy.dialects import postgresql, sqlite

from ledger.errors import OccurrenceNotFound
from ledger.models import (
    Attempt,
    ImplementationAlias,
    ImplementationSwitch,
    LogicalSlot,
    Occurrence,
    OccurrenceEvent,
    ReconciliationCase,
    Revision,
    ScheduleGate,
    ShadowOccurrence,
    ShadowRun,
)
from ledger.states import OccurrenceState
from ledger.views import OccurrenceView

GATES = cast(Table, ScheduleGate.__table__)
REVISIONS = cast(Table, Revision.__table__)
OCCURRENCES = cast(Table, Occurrence.__table__)
SLOTS = cast(Table, LogicalSlot.__table__)
ATTEMPTS = cast(Table, Attempt.__table__)
EVENTS = cast(Table, OccurrenceEvent.__table__)
CASES = cast(Table, ReconciliationCase.__table__)
ALIASES = cast(Table, ImplementationAlias.__table__)
SWITCHES = cast(Table, ImplementationSwitch.__table__)
SHADOW_RUNS = cast(Table, ShadowRun.__table__)
SHADOW_OCCURRENCES = cast(Table, ShadowOccurrence.__table__)


@dataclass(frozen=True, slots=True)
class Event:
    """An event row to append (see :class:`ledger.models.OccurrenceEvent`)."""

    occurrence_id: str
    from_state: OccurrenceState | None
    to_state: OccurrenceState
    at_utc: datetime
    by: str
    why: str
    sequence: int
    """The number the transition's compare-and-set gave it (``occurrences.event_sequence``)."""


def append_events(connection: Connection, events: Iterable[Event]) -> None:
    """Append event rows (one executemany) in the caller's transaction.

    Called by :mod:`ledger.transitions` for every state change; materialization writes its
    creation events (``from_state`` NULL) in bulk itself. Nothing else writes ``occurrence_events``.
    """
    rows = [
        {
            "occurrence_id": e.occurrence_id,
            "from_state": None if e.from_state is None else e.from_state.value,
            "to_state": e.to_state.value,
            "at_utc": e.at_utc,
            "by": e.by,
            "why": e.why,
            "sequence": e.sequence,
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


Now = datetime | Callable[[], datetime]
"""When a fact happens: an instant, or the clock to read it from inside the fact's transaction.

Given a clock, the ledger reads it once the transaction holds the locks it waits for
(:func:`fact_time`), so a slow lock never stamps a fact earlier than it happened."""


def check_now(now_utc: Now) -> None:
    """Check an instant given up front (a clock is checked when it is read).

    Raises:
        ValueError: a naive instant.

    """
    if not callable(now_utc):
        require_aware("now_utc", now_utc)


def fact_time(connection: Connection, now_utc: Now, occurrence_id: str | None = None) -> datetime:
    """The instant of a fact, read inside its transaction after the locks it needs are held.

    An instant given up front is returned as it is. A clock is read here: on SQLite a write
    transaction holds the database's write lock from its ``BEGIN IMMEDIATE``, so any moment
    inside it is after the wait; on PostgreSQL, with ``occurrence_id``, the occurrence's row is
    locked first (``FOR UPDATE``, what its compare-and-set would wait for), and the caller holds
    its other locks (the gate's) already.

    Args:
        connection: the transaction's connection.
        now_utc: an instant (returned as is) or a clock (read now).
        occurrence_id: the occurrence the fact changes.

    Raises:
        ValueError: the instant or the clock's reading is naive.

    """
    if not callable(now_utc):
        return require_aware("now_utc", now_utc)
    if occurrence_id is not None and connection.dialect.name == "postgresql":
        connection.execute(
            select(OCCURRENCES.c.occurrence_id)
            .where(OCCURRENCES.c.occurrence_id == occurrence_id)
            .with_for_update()
        )
    return require_aware("now_utc", now_utc())


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
