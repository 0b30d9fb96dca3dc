"""Failure streaks (issue 30): how many of a schedule's latest ended occurrences did not succeed.

An occurrence has *ended* in ``SUCCEEDED``, ``FAILED``, ``UNKNOWN_EFFECT`` (no confirmed effect,
awaiting reconciliation) or ``MISFIRE_EXPIRED``. The streak is the number of occurrences ended in
one of the last three whose resolved instant is later than the schedule's latest ``SUCCEEDED``
one (all of them when none succeeded). Computed from the ledger's facts alone, so it is the same
on every worker and survives restarts; the other states (not yet ended, or decided never to run)
neither extend nor break it.
"""

from __future__ import annotations

from typing import Any

from sqlalchemy import ColumnElement, Connection, and_, func, or_, select

from ledger.events import OCCURRENCES
from ledger.states import OccurrenceState

FAILURE_STATES = (
    OccurrenceState.FAILED,
    OccurrenceState.UNKNOWN_EFFECT,
    OccurrenceState.MISFIRE_EXPIRED,
)
"""The ended states that extend a streak."""


def extends_streak(last_success_at: ColumnElement[Any]) -> ColumnElement[bool]:
    """The condition that an ``occurrences`` row is in its schedule's streak.

    It ended in one of :data:`FAILURE_STATES` and its resolved instant is later than
    ``last_success_at``: the schedule's latest SUCCEEDED instant, NULL when none succeeded.
    """
    o = OCCURRENCES.c
    return and_(
        o.state.in_([s.value for s in FAILURE_STATES]),
        o.instant_utc.is_not(None),
        or_(last_success_at.is_(None), o.instant_utc > last_success_at),
    )


def failure_streaks(connection: Connection) -> dict[str, int]:
    """Each schedule's current failure streak (only schedules with one; absent means 0).

    Two grouped reads in the caller's transaction: the latest ``SUCCEEDED`` instant per schedule,
    and the failures after it.
    """
    o = OCCURRENCES.c
    last_success = (
        select(o.schedule_id.label("schedule_id"), func.max(o.instant_utc).label("at"))
        .where(o.state == OccurrenceState.SUCCEEDED.value)
        .group_by(o.schedule_id)
        .subquery()
    )
    rows = connection.execute(
        select(o.schedule_id, func.count())
        .select_from(
            OCCURRENCES.outerjoin(last_success, last_success.c.schedule_id == o.schedule_id)
        )
        .where(extends_streak(last_success.c.at))
        .group_by(o.schedule_id)
    ).all()
    return {schedule_id: int(n) for schedule_id, n in rows}
