"""Paged reads for views over many schedules and occurrences (the operator console, a report).

Every function reads a bounded page: a page of gates by schedule ID, the facts of those
schedules only (grouped queries restricted to the page's IDs, never a scan of every schedule),
and a page of one schedule's occurrences by a keyset cursor, so a page costs the same on the
first schedule or the ten-thousandth, and on the first month or the last.
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from datetime import datetime
from typing import Any

from sqlalchemy import Connection, Select, and_, func, or_, select

from ledger.db import Ledger
from ledger.events import CASES, EVENTS, GATES, OCCURRENCES, REVISIONS, require_aware
from ledger.reconcile import OPEN_CASE
from ledger.schedule_trail import SCHEDULE_EVENTS
from ledger.states import OccurrenceState, ScheduleEventKind
from ledger.views import GateView, OccurrenceView, ScheduleEventView, gate_from_row
from timecontract import ScheduleSpecV1, parse_spec

MAX_PAGE = 500
"""The most rows one page may ask for (a larger ``limit`` is refused, not truncated)."""
ERROR_KINDS = (ScheduleEventKind.REVISION_REJECTED, ScheduleEventKind.ACTIVITY_REJECTED)
"""Schedule events that are errors: a refused revision, an activity's deterministic refusal."""

_placed_utc = func.coalesce(OCCURRENCES.c.instant_utc, OCCURRENCES.c.gap_at_utc)


def _check_limit(limit: int) -> None:
    if not 1 <= limit <= MAX_PAGE:
        raise ValueError(f"limit={limit!r}: between 1 and {MAX_PAGE}")


def change_stamp(ledger: Ledger) -> str:
    """``"<occurrence event ID>.<schedule event ID>"``: the newest of each trail (0 when empty).

    Both trails only grow, so the stamp changes exactly when a fact was recorded: an occurrence
    moved, or a schedule was published, disabled, enabled or refused (a view that polls it learns
    of a gate change that moved no occurrence).
    """

    def work(connection: Connection) -> str:
        occurrence = select(func.coalesce(func.max(EVENTS.c.id), 0)).scalar_subquery()
        schedule = select(func.coalesce(func.max(SCHEDULE_EVENTS.c.id), 0)).scalar_subquery()
        newest = connection.execute(select(occurrence, schedule)).one()
        return f"{int(newest[0])}.{int(newest[1])}"

    return ledger.read(work)


def gates_page(ledger: Ledger, *, after: str | None = None, limit: int = 50) -> list[GateView]:
    """Schedule gates in schedule ID order, deleted ones included: at most ``limit`` of them.

    Args:
        ledger: the ledger.
        after: the last schedule ID of the previous page (exclusive); ``None``: from the start.
        limit: page size, 1 to :data:`MAX_PAGE`.

    Raises:
        ValueError: ``limit`` out of range.
    """
    _check_limit(limit)

    def work(connection: Connection) -> list[GateView]:
        statement = select(GATES).order_by(GATES.c.schedule_id).limit(limit)
        if after is not None:
            statement = statement.where(GATES.c.schedule_id > after)
        return [gate_from_row(r) for r in connection.execute(statement)]

    return ledger.read(work)


@dataclass(frozen=True, slots=True)
class RevisionCutover:
    """A published revision, the instant from which it owns occurrences (aware UTC), its zone."""

    revision: int
    cutover_at_utc: datetime
    time_zone: str
    """The IANA zone its nominal local times are read in (``timeZone``)."""
    tzdb_version: str
    """The tz database release it pins (``tzdbVersion``)."""


@dataclass(frozen=True, slots=True)
class ScheduleFacts:
    """What a schedule's row on an overview shows, read at one ``now_utc``.

    Attributes:
        counts: occurrences per state (only states present).
        next_planned_utc: the earliest ``PLANNED`` instant at or after ``now_utc``, if any.
        open_cases: UNKNOWN_EFFECT cases not yet closed (reconciling or in the human queue).
        last_error: the newest error event (:data:`ERROR_KINDS`), if any.
        revisions: every published revision with its cutover, oldest first.
        last_placed_utc: the latest placed instant (the instant, or ``gapAt`` for a skipped
            gap record) at or after ``now_utc``: where the materialized horizon ends, as
            :func:`ledger.last_placed_at` reads it; ``None`` when none is placed there.
        specs: every published revision's spec, oldest first, for a schedule whose next run a
            projection must find (not deleted, no ``PLANNED`` run at or after ``now_utc``);
            empty for any other schedule (its specs are not read).

    """

    counts: dict[OccurrenceState, int] = field(default_factory=dict)
    next_planned_utc: datetime | None = None
    open_cases: int = 0
    last_error: ScheduleEventView | None = None
    revisions: tuple[RevisionCutover, ...] = ()
    last_placed_utc: datetime | None = None
    specs: tuple[ScheduleSpecV1, ...] = ()


def schedule_facts(
    ledger: Ledger, schedule_ids: Sequence[str], now_utc: datetime
) -> dict[str, ScheduleFacts]:
    """The facts of each of ``schedule_ids`` (at most :data:`MAX_PAGE`), in one transaction.

    Seven grouped queries at most, whatever the number of IDs: counts, next ``PLANNED`` run,
    open cases, last error, revisions, last placed instant, and the specs of the schedules
    without a ``PLANNED`` run ahead (skipped when there are none).

    Returns:
        One :class:`ScheduleFacts` per requested ID (empty facts for an unknown one).

    Raises:
        ValueError: more than :data:`MAX_PAGE` IDs, or a naive ``now_utc``.
    """
    require_aware("now_utc", now_utc)
    if len(schedule_ids) > MAX_PAGE:
        raise ValueError(f"schedule_ids: {len(schedule_ids)} given, at most {MAX_PAGE}")
    ids = sorted(set(schedule_ids))
    o = OCCURRENCES.c

    def work(connection: Connection) -> dict[str, ScheduleFacts]:
        counts: dict[str, dict[OccurrenceState, int]] = {i: {} for i in ids}
        for schedule_id, state, n in connection.execute(
            select(o.schedule_id, o.state, func.count())
            .where(o.schedule_id.in_(ids))
            .group_by(o.schedule_id, o.state)
        ):
            counts[schedule_id][OccurrenceState(state)] = int(n)
        next_planned: dict[str, datetime] = {
            row[0]: row[1]
            for row in connection.execute(
                select(o.schedule_id, func.min(o.instant_utc))
                .where(o.schedule_id.in_(ids), o.state == OccurrenceState.PLANNED.value)
                .where(o.instant_utc >= now_utc)
                .group_by(o.schedule_id)
            )
        }
        cases: dict[str, int] = {
            row[0]: int(row[1])
            for row in connection.execute(
                select(o.schedule_id, func.count())
                .join(CASES, CASES.c.occurrence_id == o.occurrence_id)
                .where(o.schedule_id.in_(ids), OPEN_CASE)
                .group_by(o.schedule_id)
            )
        }
        errors = _last_errors(connection, ids)
        revisions = _revisions(connection, ids)
        last_placed = last_placed_by_schedule(connection, ids, now_utc)
        unplanned = [i for i in ids if i not in next_planned]
        live = select(GATES.c.schedule_id).where(
            GATES.c.schedule_id.in_(unplanned), GATES.c.deleted_at_utc.is_(None)
        )
        specs = specs_by_schedule(connection, live) if unplanned else {}
        return {
            i: ScheduleFacts(
                counts=counts[i],
                next_planned_utc=next_planned.get(i),
                open_cases=cases.get(i, 0),
                last_error=errors.get(i),
                revisions=revisions.get(i, ()),
                last_placed_utc=last_placed.get(i),
                specs=tuple(specs.get(i, ())),
            )
            for i in ids
        }

    return ledger.read(work)


def last_placed_by_schedule(
    connection: Connection, ids: Sequence[str], from_utc: datetime
) -> dict[str, datetime]:
    """The latest placed instant at or after ``from_utc`` of each of ``ids``, in one query.

    Placed: the instant, or ``gapAt`` for a skipped record. An ID with nothing placed there is
    absent from the answer.
    """
    o = OCCURRENCES.c
    rows = connection.execute(
        select(o.schedule_id, func.max(_placed_utc))
        .where(o.schedule_id.in_(ids), _placed_utc >= from_utc)
        .group_by(o.schedule_id)
    )
    return {row[0]: row[1] for row in rows}


def specs_by_schedule(
    connection: Connection, ids: Sequence[str] | Select[tuple[str]]
) -> dict[str, list[ScheduleSpecV1]]:
    """Every published spec of each of ``ids`` (a list or a subquery), oldest revision first.

    One query; the stored canonical JSON is parsed again (immutable per revision). An ID
    without a published revision is absent from the answer.
    """
    r = REVISIONS.c
    found: dict[str, list[ScheduleSpecV1]] = {}
    for row in connection.execute(
        select(r.schedule_id, r.revision, r.spec_json)
        .where(r.schedule_id.in_(ids))
        .order_by(r.schedule_id, r.revision)
    ):
        source = f"{row.schedule_id} r{row.revision}"
        found.setdefault(row.schedule_id, []).append(
            parse_spec(json.loads(row.spec_json), source=source)
        )
    return found


def _last_errors(connection: Connection, ids: list[str]) -> dict[str, ScheduleEventView]:
    e = SCHEDULE_EVENTS.c
    newest = (
        select(func.max(e.id))
        .where(e.schedule_id.in_(ids), e.kind.in_([k.value for k in ERROR_KINDS]))
        .group_by(e.schedule_id)
    )
    rows = connection.execute(select(SCHEDULE_EVENTS).where(e.id.in_(newest)))
    return {
        r.schedule_id: ScheduleEventView(
            r.id, r.schedule_id, r.kind, r.revision, r.at_utc, r.by, r.detail
        )
        for r in rows
    }


def revision_cutovers(ledger: Ledger, schedule_id: str) -> tuple[RevisionCutover, ...]:
    """A schedule's published revisions with their cutovers and zones, oldest first."""
    return ledger.read(
        lambda connection: _revisions(connection, [schedule_id]).get(schedule_id, ())
    )


def _revisions(connection: Connection, ids: list[str]) -> dict[str, tuple[RevisionCutover, ...]]:
    r = REVISIONS.c
    found: dict[str, list[RevisionCutover]] = {}
    for row in connection.execute(
        select(r.schedule_id, r.revision, r.cutover_at_utc, r.spec_json)
        .where(r.schedule_id.in_(ids))
        .order_by(r.schedule_id, r.revision)
    ):
        found.setdefault(row.schedule_id, []).append(
            RevisionCutover(row.revision, row.cutover_at_utc, *_zone_of(json.loads(row.spec_json)))
        )
    return {k: tuple(v) for k, v in found.items()}


def _zone_of(spec: dict[str, Any]) -> tuple[str, str]:
    """A stored spec's ``timeZone`` and ``tzdbVersion`` (canonical JSON: both always present)."""
    return str(spec["timeZone"]), str(spec["tzdbVersion"])


@dataclass(frozen=True, slots=True)
class OccurrenceCursor:
    """Where a page of occurrences ended: its last row's placed instant and occurrence ID."""

    placed_at_utc: datetime
    occurrence_id: str


@dataclass(frozen=True, slots=True)
class OccurrencePage:
    """One page of occurrences and the cursor of the next page (``None``: this is the last)."""

    rows: tuple[OccurrenceView, ...]
    next: OccurrenceCursor | None


def occurrence_page(
    ledger: Ledger,
    schedule_id: str,
    *,
    from_utc: datetime | None = None,
    to_utc: datetime | None = None,
    states: Iterable[OccurrenceState] | None = None,
    revisions: Iterable[int] | None = None,
    after: OccurrenceCursor | None = None,
    limit: int = 100,
) -> OccurrencePage:
    """A page of a schedule's occurrences, run or not, ordered by placed instant then ID.

    The placed instant is the instant, or ``gapAt`` for a skipped gap record; the occurrence ID
    breaks ties, so the order is total and a cursor never repeats or skips a row.

    Args:
        ledger: the ledger.
        schedule_id: the schedule (all revisions unless ``revisions`` narrows them).
        from_utc: inclusive lower bound on the placed instant (aware); ``None``: unbounded.
        to_utc: exclusive upper bound (aware); ``None``: unbounded.
        states: only these states (``None``: all).
        revisions: only these revisions (``None``: all).
        after: continue after this cursor (the previous page's ``next``).
        limit: page size, 1 to :data:`MAX_PAGE`.

    Raises:
        ValueError: ``limit`` out of range, or a naive bound.
    """
    _check_limit(limit)
    for name, value in (("from_utc", from_utc), ("to_utc", to_utc)):
        if value is not None:
            require_aware(name, value)
    o = OCCURRENCES.c
    statement = select(OCCURRENCES).where(o.schedule_id == schedule_id)
    if from_utc is not None:
        statement = statement.where(_placed_utc >= from_utc)
    if to_utc is not None:
        statement = statement.where(_placed_utc < to_utc)
    if states is not None:
        statement = statement.where(o.state.in_([s.value for s in states]))
    if revisions is not None:
        statement = statement.where(o.revision.in_(list(revisions)))
    if after is not None:
        statement = statement.where(
            or_(
                _placed_utc > after.placed_at_utc,
                and_(_placed_utc == after.placed_at_utc, o.occurrence_id > after.occurrence_id),
            )
        )
    statement = statement.order_by(_placed_utc, o.occurrence_id).limit(limit + 1)

    def work(connection: Connection) -> OccurrencePage:
        rows = [OccurrenceView.from_row(r) for r in connection.execute(statement)]
        more = len(rows) > limit
        rows = rows[:limit]
        last = rows[-1] if more else None
        cursor = None if last is None else OccurrenceCursor(last.placed_at_utc, last.occurrence_id)
        return OccurrencePage(tuple(rows), cursor)

    return ledger.read(work)
