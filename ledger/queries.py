"""Read functions: occurrences of a window, one occurrence's trail, counts, next due, a horizon."""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta

from sqlalchemy import ColumnElement, Connection, func, select

from ledger.browse import last_placed_by_schedule, specs_by_schedule
from ledger.db import Ledger
from ledger.events import (
    ATTEMPTS,
    CASES,
    EVENTS,
    GATES,
    OCCURRENCES,
    load_occurrence,
    require_aware,
)
from ledger.gate import gate_in
from ledger.states import OccurrenceState
from ledger.views import AttemptView, CaseView, EventView, OccurrenceDetail, OccurrenceView
from lifecycle import GateView
from timecontract import ScheduleSpecV1

_placed_utc = func.coalesce(OCCURRENCES.c.instant_utc, OCCURRENCES.c.gap_at_utc)


def list_occurrences(
    ledger: Ledger,
    schedule_id: str,
    from_utc: datetime | None = None,
    to_utc: datetime | None = None,
    states: Iterable[OccurrenceState] | None = None,
    limit: int | None = None,
    *,
    holidays_only: bool = False,
) -> list[OccurrenceView]:
    """A schedule's occurrences placed in ``[from_utc, to_utc)``, optionally in given states.

    Args:
        ledger: the ledger.
        schedule_id: the schedule (all revisions).
        from_utc: inclusive lower bound on the instant (``gapAt`` for skipped), aware; ``None``:
            unbounded.
        to_utc: exclusive upper bound, aware; ``None``: unbounded.
        states: only these states (``None``: all).
        limit: at most this many (the earliest); ``None``: all.
        holidays_only: only calendar decisions (a ``holiday`` recorded: skipped or moved).

    Returns:
        Occurrences ordered by placed instant, then nominal local time, fold and revision.

    """
    return ledger.read(
        lambda connection: occurrences_in(
            connection, schedule_id, from_utc, to_utc, states, limit, holidays_only=holidays_only
        )
    )


def occurrences_in(
    connection: Connection,
    schedule_id: str,
    from_utc: datetime | None = None,
    to_utc: datetime | None = None,
    states: Iterable[OccurrenceState] | None = None,
    limit: int | None = None,
    *,
    holidays_only: bool = False,
) -> list[OccurrenceView]:
    """:func:`list_occurrences` in the caller's transaction (same arguments, same order)."""
    statement = select(OCCURRENCES).where(
        *_occurrence_filter(schedule_id, from_utc, to_utc, states, holidays_only)
    )
    statement = statement.order_by(
        _placed_utc,
        OCCURRENCES.c.nominal_local,
        OCCURRENCES.c.fold,
        OCCURRENCES.c.revision,
    )
    if limit is not None:
        statement = statement.limit(limit)
    return [OccurrenceView.from_row(r) for r in connection.execute(statement)]


def last_placed_at(ledger: Ledger, schedule_id: str, from_utc: datetime) -> datetime | None:
    """The latest placed instant among a schedule's occurrences at or after ``from_utc``.

    Placed: the instant, or ``gapAt`` for a skipped record (as :func:`list_occurrences` orders
    them). One aggregate, not the rows: where the materialized horizon ends, for a projection.

    Returns:
        Aware UTC, or ``None`` when the ledger holds none at or after ``from_utc``.

    """
    return ledger.read(
        lambda connection: last_placed_by_schedule(connection, [schedule_id], from_utc).get(
            schedule_id
        )
    )


def count_occurrences(
    ledger: Ledger,
    schedule_id: str,
    from_utc: datetime | None = None,
    to_utc: datetime | None = None,
    states: Iterable[OccurrenceState] | None = None,
) -> int:
    """How many occurrences :func:`list_occurrences` would return without a limit (same bounds)."""
    where = _occurrence_filter(schedule_id, from_utc, to_utc, states, holidays_only=False)
    return ledger.read(
        lambda connection: int(
            connection.execute(
                select(func.count()).select_from(OCCURRENCES).where(*where)
            ).scalar_one()
        )
    )


def _occurrence_filter(
    schedule_id: str,
    from_utc: datetime | None,
    to_utc: datetime | None,
    states: Iterable[OccurrenceState] | None,
    holidays_only: bool,
) -> list[ColumnElement[bool]]:
    """The where-clause of :func:`occurrences_in` and :func:`count_occurrences`."""
    where = [OCCURRENCES.c.schedule_id == schedule_id]
    if from_utc is not None:
        where.append(_placed_utc >= from_utc)
    if to_utc is not None:
        where.append(_placed_utc < to_utc)
    if states is not None:
        where.append(OCCURRENCES.c.state.in_([s.value for s in states]))
    if holidays_only:
        where.append(OCCURRENCES.c.holiday.is_not(None))
    return where


def read_occurrence(ledger: Ledger, occurrence_id: str) -> OccurrenceView:
    """One occurrence's row: its state, claim generation and instant (one primary-key read).

    What a lifecycle step reads; the operator's :func:`show_occurrence` adds the trail.

    Raises:
        OccurrenceNotFound: no such occurrence.

    """
    return ledger.read(lambda connection: load_occurrence(connection, occurrence_id))


def show_occurrence(ledger: Ledger, occurrence_id: str) -> OccurrenceDetail:
    """One occurrence with its attempts, event trail and reconciliation case.

    Raises:
        OccurrenceNotFound: no such occurrence.

    """

    def work(connection: Connection) -> OccurrenceDetail:
        occurrence = load_occurrence(connection, occurrence_id)
        attempts = connection.execute(
            select(ATTEMPTS)
            .where(ATTEMPTS.c.occurrence_id == occurrence_id)
            .order_by(ATTEMPTS.c.claim_generation)
        )
        events = connection.execute(
            select(EVENTS)
            .where(EVENTS.c.occurrence_id == occurrence_id)
            .order_by(EVENTS.c.sequence)
        )
        case = connection.execute(
            select(CASES).where(CASES.c.occurrence_id == occurrence_id)
        ).one_or_none()
        return OccurrenceDetail(
            occurrence,
            tuple(AttemptView.from_row(r) for r in attempts),
            tuple(EventView.from_row(r) for r in events),
            None if case is None else CaseView.from_row(case),
        )

    return ledger.read(work)


def counts_by_state(ledger: Ledger, schedule_id: str) -> dict[OccurrenceState, int]:
    """How many of a schedule's occurrences are in each state (every state present, maybe 0)."""
    return ledger.read(lambda connection: counts_in(connection, schedule_id))


def counts_in(connection: Connection, schedule_id: str) -> dict[OccurrenceState, int]:
    """:func:`counts_by_state` in the caller's transaction."""
    counts = dict.fromkeys(OccurrenceState, 0)
    rows = connection.execute(
        select(OCCURRENCES.c.state, func.count())
        .where(OCCURRENCES.c.schedule_id == schedule_id)
        .group_by(OCCURRENCES.c.state)
    )
    for state, count in rows:
        counts[OccurrenceState(state)] = count
    return counts


UPCOMING = (OccurrenceState.PLANNED, OccurrenceState.DUE)
"""The states :func:`horizon_reading` lists as upcoming: not yet decided, or released to run."""


@dataclass(frozen=True, slots=True)
class HorizonReading:
    """A schedule's horizon as one read-only transaction saw it (:func:`horizon_reading`)."""

    upcoming: tuple[OccurrenceView, ...]
    """``PLANNED`` or ``DUE`` occurrences placed at or after the reading's instant, the earliest
    first (:func:`list_occurrences`' order), at most its limit."""
    next_planned: OccurrenceView | None
    """The earliest ``PLANNED`` occurrence placed at or after the instant (the next timer's)."""
    counts: dict[OccurrenceState, int]
    """The schedule's occurrences per state, every state present (:func:`counts_by_state`)."""
    gate: GateView
    """The schedule's gate (:func:`ledger.get_gate`)."""


def horizon_reading(
    ledger: Ledger, schedule_id: str, from_utc: datetime, upcoming_limit: int
) -> HorizonReading:
    """What a schedule's wake-up reads after it materialized, in one read-only transaction.

    The four reads of :class:`HorizonReading`, each the query of its own read function, in one
    transaction instead of four: on SQLite one snapshot; on PostgreSQL (READ COMMITTED) each
    query sees what was committed when it began, as four transactions would.

    Args:
        ledger: the ledger.
        schedule_id: the schedule (all revisions).
        from_utc: the instant (aware UTC), inclusive: what is placed before it is not upcoming.
        upcoming_limit: at most this many upcoming occurrences (the earliest).

    Raises:
        ScheduleNotFound: no such schedule (no gate).

    """

    def work(connection: Connection) -> HorizonReading:
        upcoming = occurrences_in(connection, schedule_id, from_utc, None, UPCOMING, upcoming_limit)
        planned = occurrences_in(
            connection, schedule_id, from_utc, None, [OccurrenceState.PLANNED], 1
        )
        return HorizonReading(
            upcoming=tuple(upcoming),
            next_planned=planned[0] if planned else None,
            counts=counts_in(connection, schedule_id),
            gate=gate_in(connection, schedule_id),
        )

    return ledger.read(work)


def next_due(ledger: Ledger, schedule_id: str) -> OccurrenceView | None:
    """The schedule's earliest ``PLANNED`` occurrence (what the next timer waits for), if any."""

    def work(connection: Connection) -> OccurrenceView | None:
        row = connection.execute(
            select(OCCURRENCES)
            .where(OCCURRENCES.c.schedule_id == schedule_id)
            .where(OCCURRENCES.c.state == OccurrenceState.PLANNED.value)
            .order_by(OCCURRENCES.c.instant_utc, OCCURRENCES.c.occurrence_id)
            .limit(1)
        ).one_or_none()
        return None if row is None else OccurrenceView.from_row(row)

    return ledger.read(work)


@dataclass(frozen=True, slots=True)
class MissedSchedule:
    """A schedule with missed occurrences (:func:`missed_schedules`); instants are UTC."""

    schedule_id: str
    earliest_missed_utc: datetime
    """The earliest ``PLANNED`` instant that is due."""
    lookahead: timedelta
    """How far ahead its materialization looked, as the ledger shows it: its furthest
    occurrence's instant minus that row's creation time (within one refresh or one rule period
    short of the schedule workflow's horizon, never beyond it)."""


def missed_schedules(ledger: Ledger, now_utc: datetime) -> list[MissedSchedule]:
    """Schedules with a missed occurrence: an enabled schedule's ``PLANNED`` one due by now.

    What a scheduler coming back after downtime has to decide first (seed: "after the platform
    recovers, first calculate the set of missed occurrences and then apply the misfire policy").
    A disabled schedule (a deleted one is disabled too) is left out: nothing of it is released.

    Args:
        ledger: the ledger.
        now_utc: the instant (aware UTC): an occurrence is missed if ``instant_utc <= now_utc``.

    Returns:
        One :class:`MissedSchedule` per schedule, by schedule ID.

    Raises:
        ValueError: a naive ``now_utc``.
    """
    require_aware("now_utc", now_utc)
    o = OCCURRENCES.c

    def work(connection: Connection) -> list[MissedSchedule]:
        missed = (
            select(o.schedule_id, func.min(o.instant_utc).label("earliest"))
            .join(GATES, GATES.c.schedule_id == o.schedule_id)
            .where(o.state == OccurrenceState.PLANNED.value, o.instant_utc <= now_utc)
            .where(GATES.c.disabled.is_(False))
            .group_by(o.schedule_id)
            .subquery()
        )
        tops = (
            select(o.schedule_id, func.max(o.instant_utc).label("top"))
            .where(o.schedule_id.in_(select(missed.c.schedule_id)))
            .group_by(o.schedule_id)
            .subquery()
        )
        rows = connection.execute(
            select(missed.c.schedule_id, missed.c.earliest, tops.c.top, func.max(o.created_at_utc))
            .join(tops, tops.c.schedule_id == missed.c.schedule_id)
            .join(
                OCCURRENCES, (o.schedule_id == tops.c.schedule_id) & (o.instant_utc == tops.c.top)
            )
            .group_by(missed.c.schedule_id, missed.c.earliest, tops.c.top)
            .order_by(missed.c.schedule_id)
        )
        return [
            MissedSchedule(schedule_id, earliest, top - created)
            for schedule_id, earliest, top, created in rows
        ]

    return ledger.read(work)


def published_specs(ledger: Ledger, schedule_id: str) -> list[ScheduleSpecV1]:
    """Every published revision's spec of a schedule, oldest revision first.

    The stored canonical JSON is parsed again (it is immutable per revision); an unknown schedule
    yields an empty list.
    """
    return ledger.read(
        lambda connection: specs_by_schedule(connection, [schedule_id]).get(schedule_id, [])
    )


def known_schedules(ledger: Ledger) -> list[str]:
    """Every schedule ID the ledger has a gate for (deleted ones included), in ID order.

    A schedule is known from its first published revision on, whether or not it has any
    occurrence yet (one whose next run lies beyond the horizon has none).
    """
    return ledger.read(
        lambda connection: list(
            connection.execute(select(GATES.c.schedule_id).order_by(GATES.c.schedule_id)).scalars()
        )
    )


def counts_by_schedule_and_state(ledger: Ledger) -> dict[tuple[str, OccurrenceState], int]:
    """Occurrence counts for every schedule and state present (one grouped query, for metrics)."""

    def work(connection: Connection) -> dict[tuple[str, OccurrenceState], int]:
        rows = connection.execute(
            select(OCCURRENCES.c.schedule_id, OCCURRENCES.c.state, func.count()).group_by(
                OCCURRENCES.c.schedule_id, OCCURRENCES.c.state
            )
        )
        return {(row[0], OccurrenceState(row[1])): int(row[2]) for row in rows}

    return ledger.read(work)


NEVER_RAN = (
    OccurrenceState.SKIPPED_GAP,
    OccurrenceState.SKIPPED_HOLIDAY,
    OccurrenceState.EXCLUDED,
    OccurrenceState.SKIPPED_OVERLAP,
    OccurrenceState.MISFIRE_EXPIRED,
    OccurrenceState.CANCELLED,
)
"""The terminal states of an occurrence that never ran: each a recorded decision, with a reason."""


def skips_by_schedule_state_and_reason(ledger: Ledger) -> dict[tuple[str, str, str], int]:
    """Occurrences that never ran, per ``(schedule_id, state, reason)`` (one grouped query).

    ``reason`` is the occurrence's recorded resolution reason (``GAP_SKIPPED``,
    ``HOLIDAY_SKIPPED``, ``EXDATE_EXCLUDED``, …): a bounded set, so it can label a metric.
    """
    o = OCCURRENCES.c

    def work(connection: Connection) -> dict[tuple[str, str, str], int]:
        rows = connection.execute(
            select(o.schedule_id, o.state, o.reason, func.count())
            .where(o.state.in_([s.value for s in NEVER_RAN]))
            .group_by(o.schedule_id, o.state, o.reason)
        )
        return {(row[0], row[1], row[2]): int(row[3]) for row in rows}

    return ledger.read(work)


def last_event_id(ledger: Ledger) -> int:
    """The newest event's ID (0 for an empty ledger): where a follower of the feed starts."""

    def work(connection: Connection) -> int:
        return int(connection.execute(select(func.coalesce(func.max(EVENTS.c.id), 0))).scalar_one())

    return ledger.read(work)


def events_after(
    ledger: Ledger, after_id: int, limit: int = 1000
) -> list[tuple[EventView, OccurrenceView]]:
    """Events with an ID above ``after_id``, oldest first, each with its occurrence as it is now.

    Event IDs grow with every transition (the append-only trail, DESIGN §4 invariant 6), so a
    follower that passes the last ID it saw gets every transition exactly once.

    Args:
        ledger: the ledger.
        after_id: the last event ID already seen (0: from the beginning).
        limit: at most this many events (the oldest); ask again from the last one for more.

    """

    def work(connection: Connection) -> list[tuple[EventView, OccurrenceView]]:
        events = [
            EventView.from_row(r)
            for r in connection.execute(
                select(EVENTS).where(EVENTS.c.id > after_id).order_by(EVENTS.c.id).limit(limit)
            )
        ]
        ids = sorted({e.occurrence_id for e in events})
        rows = {
            r.occurrence_id: OccurrenceView.from_row(r)
            for r in connection.execute(
                select(OCCURRENCES).where(OCCURRENCES.c.occurrence_id.in_(ids))
            )
        }
        return [(e, rows[e.occurrence_id]) for e in events]

    return ledger.read(work)


def database_now(ledger: Ledger) -> datetime:
    """The database server's clock, now (aware UTC): what a worker's clock is measured against.

    PostgreSQL: ``clock_timestamp()`` (the moment of the statement, not of the transaction).
    SQLite: ``strftime('%Y-%m-%d %H:%M:%f', 'now')``, the clock of the host that opened the
    file (milliseconds). One read-only transaction; the caller times the round trip.
    """

    def work(connection: Connection) -> datetime:
        if connection.dialect.name == "postgresql":
            value = connection.execute(select(func.clock_timestamp())).scalar_one()
            assert isinstance(value, datetime)
            return value.astimezone(UTC)
        text = connection.execute(select(func.strftime("%Y-%m-%d %H:%M:%f", "now"))).scalar_one()
        return datetime.fromisoformat(str(text)).replace(tzinfo=UTC)

    return ledger.read(work)
