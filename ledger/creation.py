"""Writing materialized records: occurrence rows, their slot claims and creation events.

:func:`insert_created` is materialization's write, in the caller's transaction, idempotent: every
insert is ``ON CONFLICT DO NOTHING`` on the table's unique keys and ``RETURNING`` (on SQLite, the
inserted-row count where it suffices) says which rows went in, so what the call wrote is known
without reading it back.

- **PostgreSQL**: one statement, built from SQLAlchemy's PostgreSQL ``insert … on conflict do
  nothing`` constructs as data-modifying CTEs. Only the occurrence rows are sent (one array per
  varying column, ``unnest``-ed; :func:`ledger.bulk.pg_arrays`); the slot claims and the
  creation events are derived in SQL from the rows the occurrence insert returned, so a row that
  another materializer inserted first gets neither a claim nor an event from this call — exactly
  as three statements would. Constraints and triggers are checked as for any insert; the four
  references (occurrence → revision, slot → gate and owner, event → occurrence) by triggers once
  per statement (migration 0011), at its end, when the CTE's occurrence rows exist. The conflict
  targets are the keys that make a row a repeat (the occurrence ID, the slot's key): a row this
  statement created cannot conflict on the other unique keys (no slot names it as owner yet, and
  it is undispatched), and would be an error, not skipped, if it did.
- **SQLite**: one set-based insert per table (:func:`ledger.bulk.sqlite_insert_stored`), the
  rows built once in the stored form.

Both then take released slots by compare-and-set and cancel the planned occurrences whose slot
another live occurrence holds, with their events (:func:`ledger.transitions.transition`).
``tests/ledger/test_ledger_creation_dialects.py`` checks that both dialects write the same rows.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from functools import cache
from typing import Any

from sqlalchemy import (
    ColumnElement,
    CompoundSelect,
    Connection,
    String,
    bindparam,
    cast,
    func,
    literal,
    null,
    select,
    union_all,
    update,
)
from sqlalchemy.dialects.postgresql import ARRAY
from sqlalchemy.dialects.postgresql import insert as pg_insert
from sqlalchemy.types import NullType, TypeDecorator, TypeEngine

from ledger.bulk import (
    StoredTimes,
    pg_arrays,
    sqlite_insert_stored,
    utc_instant,
)
from ledger.events import EVENTS, OCCURRENCES, SLOTS
from ledger.states import OccurrenceState
from ledger.transitions import transition
from ledger.views import OccurrenceView
from timecontract import Disposition, OccurrenceRecord
from timecontract.ids import ID_FORMAT_VERSION

OCCURRENCE_COLUMNS = (
    "occurrence_id",
    "schedule_id",
    "revision",
    "logical_slot_id",
    "nominal_local",
    "fold",
    "instant_utc",
    "gap_at_utc",
    "utc_offset_seconds",
    "tzdb_version",
    "reason",
    "state",
    "state_reason",
    "claim_generation",
    "next_attempt_at_utc",
    "created_at_utc",
    "updated_at_utc",
    "id_format",
    "jitter_ms",
    "event_sequence",
    "holiday",
    "calendar_release",
)
"""The ``occurrences`` columns a created row sets, in the order of :func:`occurrence_values`."""
_STATE = OCCURRENCE_COLUMNS.index("state")
_SLOT_COLUMNS = (
    "schedule_id",
    "logical_slot_id",
    "instant_utc",
    "owner_occurrence_id",
    "owner_revision",
    "claimed_at_utc",
)
_EVENT_COLUMNS = ("occurrence_id", "from_state", "to_state", "at_utc", "by", "why", "sequence")
_CREATION_SEQUENCE = 1
"""A created occurrence's ``event_sequence`` and the ``sequence`` of its creation event."""
_CREATION_WHY = "materialized: "
"""A creation event's ``why`` is this followed by the record's ``reason``."""
_PLANNED = OccurrenceState.PLANNED.value
_MS = timedelta(milliseconds=1)


@dataclass(frozen=True, slots=True)
class Written:
    """What :func:`insert_created` wrote, known without reading it back.

    The IDs it created, the planned ones it had to cancel (a live occurrence holds their slot),
    and (when asked for) the created rows as views, as they were committed.
    """

    created: tuple[str, ...]
    conflicts: tuple[str, ...]
    views: list[OccurrenceView]


def _same(value: Any) -> Any:
    return value


def occurrence_values(
    record: OccurrenceRecord,
    now_utc: datetime | str,
    instant: Callable[[datetime], Any] = utc_instant,
    local: Callable[[datetime], Any] = _same,
) -> tuple[Any, ...]:
    """The ``occurrences`` row of a record, in :data:`OCCURRENCE_COLUMNS` order.

    Args:
        record: the record.
        now_utc: the creation time, written as given (both ``created_at_utc`` and
            ``updated_at_utc``).
        instant: converts the record's instants (default: checked aware, in UTC; SQLite's write
            passes :meth:`ledger.bulk.StoredTimes.instant`, the stored form).
        local: converts ``nominal_local`` (default: as is; SQLite's write passes
            :meth:`ledger.bulk.StoredTimes.local`).

    Raises:
        ValueError: a naive instant, or a local time ``local`` refuses.

    """
    disposition = record.disposition
    offset = record.utc_offset
    instant_utc = record.instant_utc
    gap_at = record.gap_at_utc
    jitter = record.jitter_delay
    # ``_value_``: the member's value as an attribute (``.value`` is a property, per row).
    reason = record.reason._value_
    return (
        record.occurrence_id,
        record.schedule_id,
        record.revision,
        record.logical_slot_id,
        local(record.nominal_local),
        record.fold,
        None if instant_utc is None else instant(instant_utc),
        None if gap_at is None else instant(gap_at),
        None if offset is None else int(offset.total_seconds()),
        record.tzdb_version,
        reason,
        disposition._value_,  # a disposition is the state the record is created in
        reason,
        0,
        None,
        now_utc,
        now_utc,
        ID_FORMAT_VERSION,
        (jitter // _MS if jitter else 0) if disposition is Disposition.PLANNED else None,
        _CREATION_SEQUENCE,
        record.holiday,
        record.calendar_release,
    )


def occurrence_row(record: OccurrenceRecord, now_utc: datetime) -> dict[str, Any]:
    """The ``occurrences`` row of a record as a mapping (column name → value)."""
    return dict(zip(OCCURRENCE_COLUMNS, occurrence_values(record, now_utc), strict=True))


def _view(record: OccurrenceRecord, now_utc: datetime, cancelled_why: str | None) -> OccurrenceView:
    """The view of a row this transaction inserted (and maybe cancelled), without reading it.

    The values :func:`occurrence_values` wrote, as a read gives them back (instants in UTC, the
    offset in whole seconds, the jitter in whole milliseconds); the common cases (an instant
    already in UTC, a whole-second offset, a whole-millisecond jitter) without a conversion.
    """
    planned = record.disposition is Disposition.PLANNED
    offset = record.utc_offset
    if offset is not None and offset.microseconds:
        offset = timedelta(seconds=int(offset.total_seconds()))
    instant = record.instant_utc
    if instant is not None and instant.tzinfo is not UTC:
        instant = utc_instant(instant)
    gap_at = record.gap_at_utc
    if gap_at is not None and gap_at.tzinfo is not UTC:
        gap_at = utc_instant(gap_at)
    jitter = record.jitter_delay if planned else None
    if jitter is not None and jitter.microseconds % 1000:
        jitter = timedelta(milliseconds=jitter // _MS)
    reason = record.reason.value
    if cancelled_why is not None:
        state, state_reason = OccurrenceState.CANCELLED, cancelled_why
    else:
        state, state_reason = OccurrenceState(record.disposition.value), reason
    return OccurrenceView(
        occurrence_id=record.occurrence_id,
        schedule_id=record.schedule_id,
        revision=record.revision,
        logical_slot_id=record.logical_slot_id,
        nominal_local=record.nominal_local,
        fold=record.fold,
        instant_utc=instant,
        gap_at_utc=gap_at,
        utc_offset=offset,
        tzdb_version=record.tzdb_version,
        reason=reason,
        state=state,
        state_reason=state_reason,
        claim_generation=0,
        next_attempt_at_utc=None,
        created_at_utc=now_utc,
        updated_at_utc=now_utc,
        jitter=jitter,
        holiday=record.holiday,
        calendar_release=record.calendar_release,
    )


def insert_created(
    connection: Connection,
    owned: Sequence[OccurrenceRecord],
    now_utc: datetime,
    by: str,
    *,
    views: bool = False,
) -> Written:
    """Write ``owned`` (records one revision owns) idempotently, in the caller's transaction.

    Inserts each record as an occurrence with its creation event and, for a planned one, its
    logical slot claim (or the slot by compare-and-set if a superseded owner released it); a
    planned occurrence whose slot another live occurrence holds is then cancelled, with the
    holder named. Records another materializer already inserted are left alone.

    Args:
        connection: the caller's connection, inside its transaction.
        owned: records of one schedule revision (``timecontract.occurrences``).
        now_utc: creation time of the rows (aware).
        by: who materializes (event rows).
        views: also return the created rows as views (built from the records, not read back;
            False: ``Written.views`` is empty).

    Returns:
        The created IDs, the cancelled ones and, with ``views``, the created rows as committed.

    Raises:
        ValueError: a value a column refuses; on PostgreSQL also records of more than one
            revision.

    """
    if not owned:
        return Written((), (), [])
    now = utc_instant(now_utc)
    if connection.dialect.name == "postgresql":
        new, unclaimed = _insert_postgresql(connection, owned, now, by)
    else:
        new, unclaimed = _insert_sqlite(connection, owned, now, by)
    taken = _take_released(connection, unclaimed, now)
    conflicts = [r.occurrence_id for r in unclaimed if r.occurrence_id not in taken]
    cancelled = dict(_cancel_conflicts(connection, conflicts, now, by))
    built = [_view(r, now, cancelled.get(r.occurrence_id)) for r in new] if views else []
    return Written(tuple(r.occurrence_id for r in new), tuple(conflicts), built)


_Inserted = tuple[list[OccurrenceRecord], list[OccurrenceRecord]]
"""The records inserted, and those of them planned whose slot claim found the slot taken."""


def _insert_sqlite(
    connection: Connection, owned: Sequence[OccurrenceRecord], now: datetime, by: str
) -> _Inserted:
    """One set-based insert per table, the rows built once in SQLite's stored form.

    The slot rows reuse their occurrence's converted instant, so each instant is formatted once.
    """
    times = StoredTimes()
    instant, local = times.instant, times.local
    stamp = instant(now)
    rows = [occurrence_values(r, stamp, instant, local) for r in owned]
    inserted = set(
        sqlite_insert_stored(
            connection,
            OCCURRENCES,
            OCCURRENCE_COLUMNS,
            rows,
            ignore_conflicts=True,
            returning="occurrence_id",
        )
    )
    if len(inserted) == len(rows):
        new = list(zip(owned, rows, strict=True))
    else:
        new = [(r, row) for r, row in zip(owned, rows, strict=True) if row[0] in inserted]
    slots = [
        (row[1], row[3], row[6], row[0], row[2], stamp) for _, row in new if row[_STATE] == _PLANNED
    ]
    claimed = set(
        sqlite_insert_stored(
            connection,
            SLOTS,
            _SLOT_COLUMNS,
            slots,
            ignore_conflicts=True,
            returning="owner_occurrence_id",
        )
    )
    events = [
        (row[0], None, row[_STATE], stamp, by, _CREATION_WHY + row[10], _CREATION_SEQUENCE)
        for _, row in new
    ]
    sqlite_insert_stored(connection, EVENTS, _EVENT_COLUMNS, events, ignore_conflicts=False)
    if len(claimed) == len(slots):
        unclaimed = []
    else:
        unclaimed = [r for r, row in new if row[_STATE] == _PLANNED and row[0] not in claimed]
    return [r for r, _ in new], unclaimed


_PG_SENT = (
    "occurrence_id",
    "logical_slot_id",
    "nominal_local",
    "fold",
    "instant_utc",
    "gap_at_utc",
    "utc_offset_seconds",
    "reason",
    "state",
    "jitter_ms",
    "holiday",
    "calendar_release",
)
"""The columns sent as arrays (in this order); ``schedule_id``, ``revision`` and ``tzdb_version``
are one revision's, sent once each, and the others are the same on every created row."""


def _array_type(name: str) -> ARRAY[Any]:
    """A PostgreSQL array of column ``name``'s stored type, without a length.

    Never a length-limited one: a cast to ``varchar(n)[]`` would truncate silently, whereas the
    column's own type rejects an overlong value.
    """
    stored: TypeEngine[Any] = OCCURRENCES.c[name].type
    while isinstance(stored, TypeDecorator):
        stored = stored.impl_instance
    if isinstance(stored, String) and stored.length is not None:
        stored = type(stored)()
    return ARRAY(stored)


def _typed(name: str, column: str) -> ColumnElement[Any]:
    """Parameter ``name`` cast to column ``column``'s stored type, sent as given.

    No bind processing: the caller passes values as the column stores them.
    """
    stored = _array_type(column).item_type
    return cast(bindparam(name, type_=NullType()), stored)


@cache
def _pg_statement() -> CompoundSelect[Any]:
    """Occurrences from arrays, their slot claims and creation events from ``RETURNING``.

    The main query returns only the exceptions: ``('skipped', id)`` for a sent occurrence that
    was not inserted (it exists) and ``('unclaimed', id)`` for an inserted planned one whose slot
    claim was not (the slot exists); usually no row at all. The reference checks (migration 0011)
    and the event sequence check (migration 0010), all per statement, run at its end, when
    the occurrence rows exist. The arrays are the parameters ``c0``, ``c1``, … in
    :data:`_PG_SENT` order (:func:`ledger.bulk.pg_arrays`).
    """
    arrays = [
        cast(bindparam(f"c{i}", type_=NullType()), _array_type(name))
        for i, name in enumerate(_PG_SENT)
    ]
    unnested = func.unnest(*arrays).table_valued(*_PG_SENT).render_derived(name="sent")
    sent = select(unnested).cte("sent")
    now = _typed("now", "created_at_utc")
    shared = {
        "schedule_id": _typed("schedule_id", "schedule_id"),
        "revision": _typed("revision", "revision"),
        "tzdb_version": _typed("tzdb_version", "tzdb_version"),
        "state_reason": sent.c.reason,
        "claim_generation": literal(0),
        "next_attempt_at_utc": null(),
        "created_at_utc": now,
        "updated_at_utc": now,
        "id_format": _typed("id_format", "id_format"),
        "event_sequence": literal(_CREATION_SEQUENCE),
    }
    rows = select(*[shared[c] if c in shared else sent.c[c] for c in OCCURRENCE_COLUMNS])
    occ = (
        pg_insert(OCCURRENCES)
        .from_select(list(OCCURRENCE_COLUMNS), rows)
        .on_conflict_do_nothing(index_elements=[OCCURRENCES.c.occurrence_id])
        .returning(
            *[
                OCCURRENCES.c[c]
                for c in (
                    "occurrence_id",
                    "schedule_id",
                    "revision",
                    "logical_slot_id",
                    "instant_utc",
                    "state",
                    "reason",
                )
            ]
        )
        .cte("occ")
    )
    claims = select(
        occ.c.schedule_id,
        occ.c.logical_slot_id,
        occ.c.instant_utc,
        occ.c.occurrence_id,
        occ.c.revision,
        now,
    ).where(occ.c.state == _PLANNED)
    slot = (
        pg_insert(SLOTS)
        .from_select(list(_SLOT_COLUMNS), claims)
        .on_conflict_do_nothing(index_elements=[SLOTS.c.schedule_id, SLOTS.c.logical_slot_id])
        .returning(SLOTS.c.owner_occurrence_id)
        .cte("slot")
    )
    creations = select(
        occ.c.occurrence_id,
        null(),
        occ.c.state,
        now,
        bindparam("by", type_=String()),
        literal(_CREATION_WHY) + occ.c.reason,
        literal(_CREATION_SEQUENCE),
    )
    event = pg_insert(EVENTS).from_select(list(_EVENT_COLUMNS), creations).cte("event")
    skipped = select(literal("skipped"), sent.c.occurrence_id).where(
        sent.c.occurrence_id.not_in(select(occ.c.occurrence_id))
    )
    unclaimed = select(literal("unclaimed"), occ.c.occurrence_id).where(
        occ.c.state == _PLANNED, occ.c.occurrence_id.not_in(select(slot.c.owner_occurrence_id))
    )
    return union_all(skipped, unclaimed).add_cte(event)


def _insert_postgresql(
    connection: Connection, owned: Sequence[OccurrenceRecord], now: datetime, by: str
) -> _Inserted:
    """One statement (:func:`_pg_statement`), its arrays built column by column."""
    shared = {(r.schedule_id, r.revision, r.tzdb_version) for r in owned}
    if len(shared) != 1:
        raise ValueError(f"records of more than one revision: {sorted(shared)}")
    planned = [r.disposition is Disposition.PLANNED for r in owned]
    sent: list[list[Any]] = [
        [r.occurrence_id for r in owned],
        [r.logical_slot_id for r in owned],
        [r.nominal_local for r in owned],
        [r.fold for r in owned],
        [r.instant_utc for r in owned],
        [r.gap_at_utc for r in owned],
        [None if r.utc_offset is None else int(r.utc_offset.total_seconds()) for r in owned],
        [r.reason.value for r in owned],
        [r.disposition.value for r in owned],
        [r.jitter_delay // _MS if p else None for r, p in zip(owned, planned, strict=True)],
        [r.holiday for r in owned],
        [r.calendar_release for r in owned],
    ]
    arrays = pg_arrays(OCCURRENCES, _PG_SENT, sent, connection.dialect)
    binary = _binary_arrays(connection)
    parameters: dict[str, Any] = {name: binary(values) for name, values in arrays.items()}
    ((parameters["schedule_id"], parameters["revision"], parameters["tzdb_version"]),) = shared
    parameters.update(now=now, by=by, id_format=ID_FORMAT_VERSION)
    result = connection.execute(_pg_statement(), parameters)
    skipped: set[str] = set()
    not_claimed: set[str] = set()
    for kind, occurrence_id in result:
        (skipped if kind == "skipped" else not_claimed).add(occurrence_id)
    new = [r for r in owned if r.occurrence_id not in skipped] if skipped else list(owned)
    unclaimed = [r for r in new if r.occurrence_id in not_claimed] if not_claimed else []
    return new, unclaimed


class _BinaryArray(list[Any]):
    """A list psycopg sends as a binary array (its ``ListBinaryDumper``; plain lists go as text).

    A timestamp array's text form is parsed value by value by the server; the binary form is
    not, and the statement's twelve arrays are its bulk.
    """


def _binary_arrays(connection: Connection) -> type[_BinaryArray]:
    """:class:`_BinaryArray`, its binary dumper registered on ``connection``'s driver connection."""
    from psycopg.adapt import PyFormat
    from psycopg.types.array import ListBinaryDumper

    adapters = connection.connection.driver_connection.adapters  # type: ignore[union-attr]
    if adapters.get_dumper(_BinaryArray, PyFormat.AUTO) is not ListBinaryDumper:
        adapters.register_dumper(_BinaryArray, ListBinaryDumper)
    return _BinaryArray


def _take_released(
    connection: Connection, planned: Sequence[OccurrenceRecord], now_utc: datetime
) -> set[str]:
    """Take each record's slot if a superseded owner released it (owner NULL), by CAS.

    ``planned`` are created planned records whose slot insert found the slot taken.
    """
    taken: set[str] = set()
    for record in planned:
        count = connection.execute(
            update(SLOTS)
            .where(SLOTS.c.schedule_id == record.schedule_id)
            .where(SLOTS.c.logical_slot_id == record.logical_slot_id)
            .where(SLOTS.c.owner_occurrence_id.is_(None))
            .values(
                owner_occurrence_id=record.occurrence_id,
                owner_revision=record.revision,
                claimed_at_utc=now_utc,
                released_at_utc=None,
                release_reason=None,
            )
        ).rowcount
        if count == 1:
            taken.add(record.occurrence_id)
    return taken


def _cancel_conflicts(
    connection: Connection, conflicts: Sequence[str], now_utc: datetime, by: str
) -> list[tuple[str, str]]:
    done: list[tuple[str, str]] = []
    for occurrence_id in conflicts:
        holder = connection.execute(
            select(SLOTS.c.owner_occurrence_id)
            .join(OCCURRENCES, OCCURRENCES.c.logical_slot_id == SLOTS.c.logical_slot_id)
            .where(OCCURRENCES.c.occurrence_id == occurrence_id)
            .where(SLOTS.c.schedule_id == OCCURRENCES.c.schedule_id)
        ).scalar_one_or_none()
        why = f"logical slot held by {holder}"
        transition(
            connection, occurrence_id, OccurrenceState.CANCELLED, now_utc=now_utc, by=by, why=why
        )
        done.append((occurrence_id, why))
    return done
