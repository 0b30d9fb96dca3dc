"""Failure-streak facts (issue 30): a streak that reached ``notifyAfter``, and its recovery, once.

The policy is the ``failureStreak`` of the schedule's newest revision (``scheduleSpec.v1``). After
an occurrence ends, :func:`decide_failure_streak` reads the ledger's facts in one transaction:

- the current streak (``ledger.streaks``: occurrences ended ``FAILED``, ``UNKNOWN_EFFECT`` or
  ``MISFIRE_EXPIRED`` after the latest ``SUCCEEDED`` one, by resolved instant) has reached
  ``notifyAfter`` → a ``STREAK`` fact keyed by the schedule and the streak's first failing
  occurrence. ``ON CONFLICT DO NOTHING`` on that key makes it once-only across restarts and
  concurrent workers; with ``pause`` the same transaction disables the schedule through the gate
  (``ledger.gate.change_gate_in``, ``by: failure-streak``).
- the latest ``recoverAfter`` ended occurrences all ``SUCCEEDED`` → a ``RECOVERED`` fact for each
  notified streak not yet recovered (the same key, kind ``RECOVERED``).

Each fact carries its notification's outcome: ``PENDING`` until :func:`finish_notification`
records it ``DELIVERED``, or ``FAILED`` once :func:`start_notification` has counted the allowed
attempts (bounded across retries, restarts and reruns).
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from datetime import datetime
from enum import StrEnum
from typing import Any, cast

from sqlalchemy import Connection, Row, Table, and_, exists, func, select, update
from sqlalchemy.orm import aliased

from ledger.db import Ledger
from ledger.events import OCCURRENCES, REVISIONS, Now, check_now, fact_time, insert_ignore
from ledger.gate import change_gate_in
from ledger.models import FailureStreakFact
from ledger.states import OccurrenceState
from ledger.streaks import FAILURE_STATES, extends_streak
from timecontract import FailureStreakPolicy, parse_spec

FACTS = cast(Table, FailureStreakFact.__table__)
PAUSED_BY = "failure-streak"
"""``by`` of a gate change a streak makes (``pause: true``)."""
MAX_LISTED = 100
"""Occurrence IDs a fact lists at most (the oldest of a longer streak)."""
MAX_PENDING = 10
"""Pending notifications one decision returns at most (the rest are the next one's)."""
MAX_DETAIL = 500
_FAILED = [s.value for s in FAILURE_STATES]
_ENDED = [OccurrenceState.SUCCEEDED.value, *_FAILED]


class StreakKind(StrEnum):
    """What a fact records."""

    STREAK = "STREAK"
    """The streak reached ``notifyAfter``."""
    RECOVERED = "RECOVERED"
    """A notified streak was followed by ``recoverAfter`` successes."""


class NotifyState(StrEnum):
    """Where a fact's notification stands."""

    PENDING = "PENDING"
    DELIVERED = "DELIVERED"
    FAILED = "FAILED"
    """The action failed on every allowed attempt (``notify_attempts``)."""


@dataclass(frozen=True, slots=True)
class StreakFactView:
    """One row of ``failure_streak_facts``."""

    schedule_id: str
    streak_start_occurrence_id: str
    """The streak's first failing occurrence (with the kind: the fact's key)."""
    kind: StreakKind
    threshold: int
    """``notifyAfter`` (STREAK) or ``recoverAfter`` (RECOVERED) when recorded."""
    occurrence_ids: tuple[str, ...]
    """The occurrences that made the decision, oldest first (at most :data:`MAX_LISTED`)."""
    paused: bool
    """This fact disabled the schedule (``pause: true`` and the gate was enabled)."""
    recorded_at_utc: datetime
    by: str
    notify_state: NotifyState
    notify_attempts: int
    notify_detail: str | None
    notified_at_utc: datetime | None

    @property
    def idempotency_key(self) -> str:
        """The notification's idempotency key: the schedule, the streak's start and the kind."""
        kind = "streak" if self.kind is StreakKind.STREAK else "recovery"
        return f"failure-streak:{self.schedule_id}:{self.streak_start_occurrence_id}:{kind}"


@dataclass(frozen=True, slots=True)
class StreakDecision:
    """What one decision found and recorded."""

    policy: FailureStreakPolicy | None
    """The newest revision's policy (``None``: the schedule has none; nothing was decided)."""
    streak: int
    """The current failure streak."""
    recorded: list[StreakFactView]
    """Facts this decision inserted (none recorded before)."""
    pending: list[StreakFactView]
    """Facts whose notification is still ``PENDING`` (this decision's included), oldest first."""


def streak_policy(connection: Connection, schedule_id: str) -> FailureStreakPolicy | None:
    """The ``failureStreak`` of the schedule's newest revision (``None``: none, or no revision)."""
    text = connection.execute(
        select(REVISIONS.c.spec_json)
        .where(REVISIONS.c.schedule_id == schedule_id)
        .order_by(REVISIONS.c.revision.desc())
        .limit(1)
    ).scalar_one_or_none()
    if text is None or '"failureStreak"' not in text:  # an additive field: absent unless set
        return None
    return parse_spec(json.loads(text), source=schedule_id).failure_streak


def decide_failure_streak(
    ledger: Ledger, schedule_id: str, now_utc: Now, *, by: str
) -> StreakDecision:
    """Record the schedule's STREAK or RECOVERED fact its ended occurrences call for, once.

    One transaction (see the module docstring). A schedule without a policy records nothing.

    Args:
        ledger: the ledger.
        schedule_id: the schedule.
        now_utc: the decision instant, or the clock read inside the transaction (aware UTC).
        by: who decides (a worker identity), stored with each fact.

    Returns:
        The policy, the current streak, the facts recorded now and the pending notifications.

    Raises:
        ValueError: a naive ``now_utc``.
        ScheduleNotFound: a pause for a schedule without a gate.

    """
    check_now(now_utc)

    def work(connection: Connection) -> StreakDecision:
        policy = streak_policy(connection, schedule_id)
        if policy is None:
            return StreakDecision(None, 0, [], [])
        now = fact_time(connection, now_utc)
        streak, failing = _current_streak(connection, schedule_id)
        recorded: list[StreakFactView] = []
        if streak >= policy.notify_after:
            fact = _insert(
                connection, schedule_id, failing[0], StreakKind.STREAK, policy, failing, now, by
            )
            if fact is not None:
                recorded.append(fact)
        elif streak == 0 and (recovered := _recovery(connection, schedule_id, policy)):
            for start in _unrecovered(connection, schedule_id):
                fact = _insert(
                    connection, schedule_id, start, StreakKind.RECOVERED, policy, recovered, now, by
                )
                if fact is not None:
                    recorded.append(fact)
        return StreakDecision(policy, streak, recorded, _pending(connection, schedule_id))

    return ledger.write(work)


def _current_streak(connection: Connection, schedule_id: str) -> tuple[int, list[str]]:
    """The streak's length and its first :data:`MAX_LISTED` occurrence IDs, oldest first."""
    o = OCCURRENCES.c
    last_success = (
        select(func.max(o.instant_utc))
        .where(o.schedule_id == schedule_id, o.state == OccurrenceState.SUCCEEDED.value)
        .scalar_subquery()
    )
    where = and_(o.schedule_id == schedule_id, extends_streak(last_success))
    count = int(connection.execute(select(func.count()).where(where)).scalar_one())
    ids = connection.execute(
        select(o.occurrence_id)
        .where(where)
        .order_by(o.instant_utc, o.occurrence_id)
        .limit(MAX_LISTED)
    ).scalars()
    return count, list(ids)


def _recovery(connection: Connection, schedule_id: str, policy: FailureStreakPolicy) -> list[str]:
    """The latest ``recoverAfter`` ended occurrences, oldest first, if all SUCCEEDED (or ``[]``)."""
    o = OCCURRENCES.c
    rows = connection.execute(
        select(o.occurrence_id, o.state)
        .where(o.schedule_id == schedule_id, o.state.in_(_ENDED), o.instant_utc.is_not(None))
        .order_by(o.instant_utc.desc(), o.occurrence_id.desc())
        .limit(policy.recover_after)
    ).all()
    if len(rows) < policy.recover_after:
        return []
    if any(state != OccurrenceState.SUCCEEDED.value for _, state in rows):
        return []
    return [occurrence_id for occurrence_id, _ in reversed(rows)][:MAX_LISTED]


def _unrecovered(connection: Connection, schedule_id: str) -> list[str]:
    """The starts of the schedule's STREAK facts without a RECOVERED one (at most 10)."""
    later = aliased(FACTS)
    return list(
        connection.execute(
            select(FACTS.c.streak_start_occurrence_id)
            .where(
                FACTS.c.schedule_id == schedule_id,
                FACTS.c.kind == StreakKind.STREAK.value,
                ~exists().where(
                    later.c.schedule_id == schedule_id,
                    later.c.streak_start_occurrence_id == FACTS.c.streak_start_occurrence_id,
                    later.c.kind == StreakKind.RECOVERED.value,
                ),
            )
            .order_by(FACTS.c.recorded_at_utc)
            .limit(10)
        ).scalars()
    )


def _insert(
    connection: Connection,
    schedule_id: str,
    start: str,
    kind: StreakKind,
    policy: FailureStreakPolicy,
    occurrence_ids: list[str],
    now: datetime,
    by: str,
) -> StreakFactView | None:
    """Insert one fact (``None``: already recorded); a new STREAK pauses when the policy says."""
    streak = kind is StreakKind.STREAK
    inserted = connection.execute(
        insert_ignore(connection, FACTS)
        .values(
            schedule_id=schedule_id,
            streak_start_occurrence_id=start,
            kind=kind.value,
            threshold=policy.notify_after if streak else policy.recover_after,
            occurrence_ids=json.dumps(occurrence_ids[:MAX_LISTED]),
            paused=False,
            recorded_at_utc=now,
            by=by[:200],
            notify_state=NotifyState.PENDING.value,
            notify_attempts=0,
        )
        .returning(FACTS.c.schedule_id)
    ).first()
    if inserted is None:  # a conflict: recorded before, by this worker or another
        return None
    key = _key(schedule_id, start, kind)
    if streak and policy.pause:
        reason = (
            f"failure streak: {policy.notify_after} consecutive occurrences not SUCCEEDED "
            f"since {start}"
        )
        change = change_gate_in(
            connection, schedule_id, now, disabled=True, by=PAUSED_BY, reason=reason
        )
        if change.changed:
            connection.execute(update(FACTS).where(key).values(paused=True))
    return _view(connection.execute(select(FACTS).where(key)).one())


def _pending(connection: Connection, schedule_id: str) -> list[StreakFactView]:
    rows = connection.execute(
        select(FACTS)
        .where(
            FACTS.c.schedule_id == schedule_id, FACTS.c.notify_state == NotifyState.PENDING.value
        )
        .order_by(FACTS.c.recorded_at_utc, FACTS.c.kind.desc())
        .limit(MAX_PENDING)
    ).all()
    return [_view(row) for row in rows]


def _view(r: Row[Any]) -> StreakFactView:
    return StreakFactView(
        r.schedule_id,
        r.streak_start_occurrence_id,
        StreakKind(r.kind),
        r.threshold,
        tuple(json.loads(r.occurrence_ids)),
        bool(r.paused),
        r.recorded_at_utc,
        r.by,
        NotifyState(r.notify_state),
        r.notify_attempts,
        r.notify_detail,
        r.notified_at_utc,
    )


def _key(schedule_id: str, start: str, kind: StreakKind) -> Any:
    return and_(
        FACTS.c.schedule_id == schedule_id,
        FACTS.c.streak_start_occurrence_id == start,
        FACTS.c.kind == kind.value,
    )


def start_notification(
    ledger: Ledger,
    schedule_id: str,
    start: str,
    kind: StreakKind,
    now_utc: Now,
    *,
    max_attempts: int,
) -> StreakFactView | None:
    """Count one notification attempt of a PENDING fact; ``None``: nothing left to try.

    A fact already ``DELIVERED`` or ``FAILED`` is not tried again. One whose ``max_attempts``
    are counted already (an attempt lost to a timeout or a restart) is recorded ``FAILED`` here.
    """
    check_now(now_utc)

    def work(connection: Connection) -> StreakFactView | None:
        key = _key(schedule_id, start, kind)
        row = connection.execute(select(FACTS).where(key)).first()
        if row is None or row.notify_state != NotifyState.PENDING.value:
            return None
        now = fact_time(connection, now_utc)
        if row.notify_attempts >= max_attempts:
            connection.execute(
                update(FACTS)
                .where(key, FACTS.c.notify_state == NotifyState.PENDING.value)
                .values(notify_state=NotifyState.FAILED.value, notified_at_utc=now)
            )
            return None
        connection.execute(
            update(FACTS).where(key).values(notify_attempts=FACTS.c.notify_attempts + 1)
        )
        return _view(connection.execute(select(FACTS).where(key)).one())

    return ledger.write(work)


def finish_notification(
    ledger: Ledger,
    schedule_id: str,
    start: str,
    kind: StreakKind,
    now_utc: Now,
    *,
    delivered: bool,
    detail: str,
    final: bool,
) -> None:
    """Record one attempt's outcome: ``DELIVERED``; ``FAILED`` when it was the ``final`` one.

    A failed attempt that is not final leaves the fact ``PENDING`` with its ``detail``.
    """
    check_now(now_utc)

    def work(connection: Connection) -> None:
        now = fact_time(connection, now_utc)
        values: dict[str, Any] = {"notify_detail": detail[:MAX_DETAIL]}
        if delivered or final:
            state = NotifyState.DELIVERED if delivered else NotifyState.FAILED
            values |= {"notify_state": state.value, "notified_at_utc": now}
        connection.execute(
            update(FACTS)
            .where(
                _key(schedule_id, start, kind), FACTS.c.notify_state == NotifyState.PENDING.value
            )
            .values(**values)
        )

    ledger.write(work)


def streak_facts(ledger: Ledger, schedule_id: str, *, latest: int = 5) -> list[StreakFactView]:
    """The schedule's ``latest`` (at most 100) facts, newest first."""
    rows = ledger.read(
        lambda c: c.execute(
            select(FACTS)
            .where(FACTS.c.schedule_id == schedule_id)
            .order_by(FACTS.c.recorded_at_utc.desc(), FACTS.c.kind)
            .limit(max(0, min(latest, 100)))
        ).all()
    )
    return [_view(row) for row in rows]


def streak_thresholds(connection: Connection) -> dict[str, int]:
    """``notifyAfter`` of each schedule whose newest revision has a policy (the gauge's values)."""
    newest = (
        select(REVISIONS.c.schedule_id, func.max(REVISIONS.c.revision).label("revision"))
        .group_by(REVISIONS.c.schedule_id)
        .subquery()
    )
    rows = connection.execute(
        select(REVISIONS.c.schedule_id, REVISIONS.c.spec_json).join(
            newest,
            and_(
                newest.c.schedule_id == REVISIONS.c.schedule_id,
                newest.c.revision == REVISIONS.c.revision,
            ),
        )
    ).all()
    found: dict[str, int] = {}
    for schedule_id, text in rows:
        if '"failureStreak"' not in text:
            continue
        policy = parse_spec(json.loads(text), source=schedule_id).failure_streak
        if policy is not None:
            found[schedule_id] = policy.notify_after
    return found
