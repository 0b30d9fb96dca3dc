"""The schedule-level event trail (``schedule_events``, migration 0007).

Occurrence transitions have their own trail (``occurrence_events``, :mod:`ledger.events`). This one
records facts about a schedule as a whole: a revision published or rejected, the gate disabled,
enabled or deleted, and the deterministic errors an activity refused with while the schedule ran
on (issue 10: "recorded as a rejection on the schedule"). Rows are only ever appended.
"""

from __future__ import annotations

from datetime import datetime
from typing import cast

from sqlalchemy import Connection, Table, insert, select

from ledger.db import Ledger
from ledger.events import require_aware
from ledger.models import ScheduleEvent
from ledger.states import ScheduleEventKind
from ledger.views import ScheduleEventView

SCHEDULE_EVENTS = cast(Table, ScheduleEvent.__table__)
DETAIL_LIMIT = 2000
"""Characters of ``detail`` kept (an error message is bounded before it is stored)."""


def append_schedule_event(
    connection: Connection,
    schedule_id: str,
    kind: ScheduleEventKind,
    now_utc: datetime,
    *,
    by: str,
    detail: str,
    revision: int | None = None,
) -> None:
    """Append one schedule event in the caller's transaction (``detail`` cut to 2,000 chars)."""
    require_aware("now_utc", now_utc)
    connection.execute(
        insert(SCHEDULE_EVENTS).values(
            schedule_id=schedule_id,
            kind=kind.value,
            revision=revision,
            at_utc=now_utc,
            by=by[:200],
            detail=detail[:DETAIL_LIMIT],
        )
    )


def record_schedule_event(
    ledger: Ledger,
    schedule_id: str,
    kind: ScheduleEventKind,
    now_utc: datetime,
    *,
    by: str,
    detail: str,
    revision: int | None = None,
) -> None:
    """Append one schedule event in a transaction of its own (for refusals: nothing else commits).

    Args:
        ledger: the ledger.
        schedule_id: the schedule (it need not have a gate: a refused first revision has none).
        kind: what happened.
        now_utc: when (aware UTC).
        by: who (worker identity).
        detail: the fact in words: field, value and why, for a refusal.
        revision: the revision concerned, if any.

    """

    def work(connection: Connection) -> None:
        append_schedule_event(
            connection, schedule_id, kind, now_utc, by=by, detail=detail, revision=revision
        )

    ledger.write(work)


def schedule_events(
    ledger: Ledger,
    schedule_id: str,
    *,
    limit: int | None = None,
    kind: ScheduleEventKind | None = None,
) -> list[ScheduleEventView]:
    """A schedule's events, oldest first (the newest ``limit`` of them, when given).

    ``kind`` keeps only events of that kind (``limit=1``: the latest, e.g. the last disable).
    """

    def work(connection: Connection) -> list[ScheduleEventView]:
        statement = (
            select(SCHEDULE_EVENTS)
            .where(SCHEDULE_EVENTS.c.schedule_id == schedule_id)
            .order_by(SCHEDULE_EVENTS.c.id.desc())
        )
        if kind is not None:
            statement = statement.where(SCHEDULE_EVENTS.c.kind == kind.value)
        if limit is not None:
            statement = statement.limit(limit)
        rows = connection.execute(statement).all()
        return [
            ScheduleEventView(
                id=row.id,
                schedule_id=row.schedule_id,
                kind=row.kind,
                revision=row.revision,
                at_utc=row.at_utc,
                by=row.by,
                detail=row.detail,
            )
            for row in reversed(rows)
        ]

    return ledger.read(work)
