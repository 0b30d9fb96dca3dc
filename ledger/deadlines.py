"""Deadlines (issue 30): an occurrence not SUCCEEDED by its deadline is a recorded fact, once.

A revision's ``deadline`` (``scheduleSpec.v1``) counts from each occurrence's resolved instant:
``deadline_utc = instant_utc + deadline``. :func:`sweep_deadlines` decides every deadline of a
schedule that has passed since the previous sweep, in one transaction: the state the occurrence's
event trail shows at ``deadline_utc`` (the last event at or before it) is the evidence; any state
but SUCCEEDED, or one of the never-run facts (:data:`NOT_APPLICABLE`), is a miss, inserted into
``deadline_misses`` whose primary key is the occurrence — so a repeated, restarted or concurrent
sweep records nothing twice, and a sweep run long after the deadline (the worker was down) records
the same fact as one run on time. The miss is a fact beside the state, never a state: a late
success shows SUCCEEDED and the miss. An occurrence created after its deadline (a backfill of the
past) has no state at its deadline and is not a miss.

``deadline_sweeps`` keeps, per schedule, the instant through which deadlines are decided, so each
sweep reads only the occurrences whose deadline passed since, at most :data:`SWEEP_LIMIT` of them.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from datetime import datetime, timedelta
from typing import Any, cast

from sqlalchemy import ColumnElement, Connection, Row, Table, exists, func, select, update

from ledger.db import Ledger
from ledger.events import EVENTS, OCCURRENCES, REVISIONS, Now, check_now, fact_time, insert_ignore
from ledger.models import DeadlineMiss, DeadlineSweep
from ledger.states import OccurrenceState
from timecontract import parse_spec

MISSES = cast(Table, DeadlineMiss.__table__)
SWEEPS = cast(Table, DeadlineSweep.__table__)
SWEEP_LIMIT = 500
"""Occurrences one sweep decides at most (bounded work); the rest are the next sweep's."""
NOT_APPLICABLE = frozenset(
    {
        OccurrenceState.SUCCEEDED,
        OccurrenceState.SKIPPED_GAP,
        OccurrenceState.SKIPPED_HOLIDAY,
        OccurrenceState.EXCLUDED,
        OccurrenceState.CANCELLED,
        OccurrenceState.SKIPPED_OVERLAP,
    }
)
"""States at the deadline that are not a miss: done, or a decision that it never runs."""
_NEVER_CHANGE = [
    s.value
    for s in (
        OccurrenceState.SKIPPED_GAP,
        OccurrenceState.SKIPPED_HOLIDAY,
        OccurrenceState.EXCLUDED,
    )
]
_SETTLED = [s.value for s in NOT_APPLICABLE]
_TICK = timedelta(microseconds=1)


@dataclass(frozen=True, slots=True)
class DeadlineMissView:
    """One recorded miss (a row of ``deadline_misses``)."""

    occurrence_id: str
    schedule_id: str
    revision: int
    instant_utc: datetime
    """The occurrence's resolved instant (aware UTC)."""
    deadline_utc: datetime
    """``instant_utc`` + the revision's ``deadline``."""
    state_at_deadline: OccurrenceState
    """The state the event trail shows at ``deadline_utc`` (never SUCCEEDED)."""
    recorded_at_utc: datetime
    by: str


@dataclass(frozen=True, slots=True)
class DeadlineSweepResult:
    """What one sweep decided."""

    recorded: list[DeadlineMissView]
    """Misses this sweep inserted (none already recorded), in deadline order."""
    next_deadline_utc: datetime | None
    """The earliest deadline still to decide (``None``: none pending); the sweep's own ``now``
    when it stopped at :data:`SWEEP_LIMIT` (more to decide at once)."""
    swept_through_utc: datetime
    """Every deadline at or before this instant is decided."""


def sweep_deadlines(
    ledger: Ledger, schedule_id: str, now_utc: Now, *, by: str, limit: int = SWEEP_LIMIT
) -> DeadlineSweepResult:
    """Record every missed deadline of ``schedule_id`` that passed since the last sweep, once.

    One transaction: read the schedule's sweep mark, decide each occurrence whose deadline lies
    in ``(mark, now]`` (oldest first, at most ``limit``), insert the misses with ``ON CONFLICT DO
    NOTHING`` on the occurrence key, move the mark. Revisions without a ``deadline`` have none.

    Args:
        ledger: the ledger.
        schedule_id: the schedule.
        now_utc: the decision instant, or the clock read inside the transaction (aware UTC).
        by: who records (a worker identity), stored with each miss.
        limit: occurrences decided at most (>= 1).

    Returns:
        The misses recorded now, the next pending deadline and the new mark.

    Raises:
        ValueError: a naive ``now_utc`` or ``limit`` < 1.

    """
    check_now(now_utc)
    if limit < 1:
        raise ValueError(f"limit={limit}: must be at least 1")

    def work(connection: Connection) -> DeadlineSweepResult:
        mark_query = select(SWEEPS.c.swept_through_utc).where(SWEEPS.c.schedule_id == schedule_id)
        if connection.dialect.name == "postgresql":
            mark_query = mark_query.with_for_update()
        mark = connection.execute(mark_query).scalar_one_or_none()
        now = fact_time(connection, now_utc)
        deadlines = _deadlines(connection, schedule_id)
        due: list[tuple[datetime, str, int, datetime]] = []
        for revision, deadline in deadlines.items():
            due += [
                (instant + deadline, occurrence_id, revision, instant)
                for occurrence_id, instant in _passed(
                    connection, schedule_id, revision, deadline, mark, now, limit
                )
            ]
        due.sort()
        truncated = len(due) > limit or any(
            _count_passed(connection, schedule_id, r, d, mark, now) > limit
            for r, d in deadlines.items()
        )
        due = due[:limit]
        recorded = []
        for deadline_utc, occurrence_id, revision, instant in due:
            state = _state_at(connection, occurrence_id, deadline_utc)
            if state is None or state in NOT_APPLICABLE:
                continue
            miss = DeadlineMissView(
                occurrence_id, schedule_id, revision, instant, deadline_utc, state, now, by[:200]
            )
            inserted = connection.execute(
                insert_ignore(connection, MISSES)
                .values(
                    occurrence_id=occurrence_id,
                    schedule_id=schedule_id,
                    revision=revision,
                    instant_utc=instant,
                    deadline_utc=deadline_utc,
                    state_at_deadline=state.value,
                    recorded_at_utc=now,
                    by=by[:200],
                )
                .returning(MISSES.c.occurrence_id)
            ).first()
            if inserted is not None:  # not a conflict: this sweep recorded it
                recorded.append(miss)
        # Stopped at the bound: the last decided deadline's tick before, so equal ones are re-read.
        through = due[-1][0] - _TICK if truncated and due else now
        _move_mark(connection, schedule_id, mark, through, now)
        pending = now if truncated else _next_deadline(connection, schedule_id, deadlines, now)
        return DeadlineSweepResult(recorded, pending, through)

    return ledger.write(work)


def _deadlines(connection: Connection, schedule_id: str) -> dict[int, timedelta]:
    """Each revision's ``deadline``, for the revisions that have one."""
    rows = connection.execute(
        select(REVISIONS.c.revision, REVISIONS.c.spec_json).where(
            REVISIONS.c.schedule_id == schedule_id
        )
    ).all()
    found: dict[int, timedelta] = {}
    for revision, text in rows:
        if '"deadline"' not in text:  # an additive field: absent unless set
            continue
        deadline = parse_spec(json.loads(text), source=f"{schedule_id} r{revision}").deadline
        if deadline is not None:
            found[revision] = deadline
    return found


def _passed_where(
    schedule_id: str, revision: int, deadline: timedelta, mark: datetime | None, now: datetime
) -> list[ColumnElement[bool]]:
    o = OCCURRENCES.c
    where: list[ColumnElement[bool]] = [
        o.schedule_id == schedule_id,
        o.revision == revision,
        o.instant_utc.is_not(None),
        o.instant_utc <= now - deadline,
        o.state.not_in(_NEVER_CHANGE),
        ~exists().where(MISSES.c.occurrence_id == o.occurrence_id),
    ]
    if mark is not None:
        where.append(o.instant_utc > mark - deadline)
    return where


def _passed(
    connection: Connection,
    schedule_id: str,
    revision: int,
    deadline: timedelta,
    mark: datetime | None,
    now: datetime,
    limit: int,
) -> list[tuple[str, datetime]]:
    """Occurrences of one revision whose deadline is in ``(mark, now]``, oldest first."""
    o = OCCURRENCES.c
    rows = connection.execute(
        select(o.occurrence_id, o.instant_utc)
        .where(*_passed_where(schedule_id, revision, deadline, mark, now))
        .order_by(o.instant_utc, o.occurrence_id)
        .limit(limit + 1)
    ).all()
    return [(row[0], row[1]) for row in rows]


def _count_passed(
    connection: Connection,
    schedule_id: str,
    revision: int,
    deadline: timedelta,
    mark: datetime | None,
    now: datetime,
) -> int:
    return int(
        connection.execute(
            select(func.count()).where(*_passed_where(schedule_id, revision, deadline, mark, now))
        ).scalar_one()
    )


def _state_at(
    connection: Connection, occurrence_id: str, at_utc: datetime
) -> OccurrenceState | None:
    """The state the occurrence's trail shows at ``at_utc`` (its last event at or before it)."""
    state = connection.execute(
        select(EVENTS.c.to_state)
        .where(EVENTS.c.occurrence_id == occurrence_id, EVENTS.c.at_utc <= at_utc)
        .order_by(EVENTS.c.sequence.desc())
        .limit(1)
    ).scalar_one_or_none()
    return None if state is None else OccurrenceState(state)


def _move_mark(
    connection: Connection,
    schedule_id: str,
    mark: datetime | None,
    through: datetime,
    now: datetime,
) -> None:
    if mark is None:
        connection.execute(
            insert_ignore(connection, SWEEPS).values(
                schedule_id=schedule_id, swept_through_utc=through, updated_at_utc=now
            )
        )
        return
    if through > mark:
        connection.execute(
            update(SWEEPS)
            .where(SWEEPS.c.schedule_id == schedule_id)
            .values(swept_through_utc=through, updated_at_utc=now)
        )


def _next_deadline(
    connection: Connection, schedule_id: str, deadlines: dict[int, timedelta], now: datetime
) -> datetime | None:
    """The earliest deadline after ``now`` of an occurrence not settled (``None``: none)."""
    o = OCCURRENCES.c
    earliest: datetime | None = None
    for revision, deadline in deadlines.items():
        instant = connection.execute(
            select(func.min(o.instant_utc)).where(
                o.schedule_id == schedule_id,
                o.revision == revision,
                o.instant_utc > now - deadline,
                o.state.not_in(_SETTLED),
            )
        ).scalar_one_or_none()
        if instant is not None and (earliest is None or instant + deadline < earliest):
            earliest = instant + deadline
    return earliest


def _view(r: Row[Any]) -> DeadlineMissView:
    return DeadlineMissView(
        r.occurrence_id,
        r.schedule_id,
        r.revision,
        r.instant_utc,
        r.deadline_utc,
        OccurrenceState(r.state_at_deadline),
        r.recorded_at_utc,
        r.by,
    )


def deadline_miss(ledger: Ledger, occurrence_id: str) -> DeadlineMissView | None:
    """The occurrence's recorded miss, or ``None`` (met, pending, or no deadline)."""
    row = ledger.read(
        lambda c: c.execute(select(MISSES).where(MISSES.c.occurrence_id == occurrence_id)).first()
    )
    return None if row is None else _view(row)


def deadline_misses(ledger: Ledger, schedule_id: str, *, latest: int = 5) -> list[DeadlineMissView]:
    """The schedule's ``latest`` (at most 100) recorded misses, newest deadline first."""
    rows = ledger.read(
        lambda c: c.execute(
            select(MISSES)
            .where(MISSES.c.schedule_id == schedule_id)
            .order_by(MISSES.c.deadline_utc.desc())
            .limit(max(0, min(latest, 100)))
        ).all()
    )
    return [_view(row) for row in rows]


def count_deadline_misses(connection: Connection, schedule_id: str | None = None) -> dict[str, int]:
    """Recorded misses by schedule (the ``almanac_deadline_missed_total`` counter's values).

    ``schedule_id``: only that schedule's (absent from the result when it has none).
    """
    query = select(MISSES.c.schedule_id, func.count()).group_by(MISSES.c.schedule_id)
    if schedule_id is not None:
        query = query.where(MISSES.c.schedule_id == schedule_id)
    rows = connection.execute(query).all()
    return {schedule_id: int(n) for schedule_id, n in rows}
