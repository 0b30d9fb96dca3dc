"""Backfill (``almanac backfill``): an operator runs a past window on purpose, recorded.

A backfill is an explicit decision for a window ``[from, to)`` (UTC, half-open) that lies in the
past of the decision instant and that the revision in force owns (``timecontract.cutover``: the
revision owning the decision instant, whose ``[cutoverAt, next cutoverAt)`` must contain the whole
window). The plan is the revision's normal expansion and resolution of the window
(``timecontract.occurrences``: the same occurrence IDs, logical slots and evidence materialization
gives), each record matched against the ledger:

- ``CREATE`` — never materialized (before the revision was applied: materialization never goes
  back past ``publishedAt``, DESIGN §3). Recorded as materialization would record it, with its
  slot claim; a planned one is then released ``PLANNED → DUE`` in the same transaction (a gap
  under ``gapPolicy: SKIP`` is recorded ``SKIPPED_GAP`` and runs nothing).
- ``REQUEUE`` — ``MISFIRE_EXPIRED`` and ``include_expired``: ``MISFIRE_EXPIRED → DUE``, the one
  edge of :data:`ledger.states.BACKFILL_TRANSITIONS`, by compare-and-set while the occurrence still
  owns its slot. An expired occurrence was never dispatched, so this is never a second effect.
- ``SKIP`` — everything else, reported with its state and left alone: ``SUCCEEDED``,
  ``UNKNOWN_EFFECT``, ``FAILED``, ``CANCELLED``, ``SKIPPED_*``, in flight (``PLANNED`` …
  ``RETRY_WAIT``), ``MISFIRE_EXPIRED`` without ``include_expired``, or a record whose logical slot
  another occurrence holds.

Every released occurrence carries ``backfill_at_utc`` (the decision, migration 0009) and an event
naming who and why (``backfill by <who>: <reason> (window …)``). Lateness does not apply: a
backfilled occurrence goes straight to ``DUE``, and misfire planning (``release_due``) only ever
decides ``PLANNED`` rows, so it is never expired again by the lateness it already missed (as
Temporal's schedule backfill ignores the catch-up window). It then runs as any ``DUE`` occurrence:
the schedule workflow starts its child (ID = occurrenceId), the claim checks the gate, the action
gets idempotency key = occurrenceId. The overlap policy applies as to any ``DUE`` occurrence
(``BUFFER_*`` holds them behind one another; ``SKIP`` does not skip them: the operator asked).

The bound: a plan with more than ``max_occurrences`` creates and requeues is refused whole
(:class:`BackfillRefused`, naming the count), never truncated. A dry run computes the same plan
in a read-only transaction and writes nothing; so does any refusal. Running the same backfill
twice creates nothing the second time (every record is then present: ``SKIP``).
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime
from enum import StrEnum
from itertools import islice
from pathlib import Path
from typing import Any

from sqlalchemy import Connection, and_, exists, select

from ledger import overlap
from ledger.bulk import in_values, utc_instant
from ledger.creation import insert_created
from ledger.db import Ledger
from ledger.errors import LedgerError
from ledger.events import OCCURRENCES, SLOTS
from ledger.gate import lock_gate, schedule_cutovers
from ledger.states import OccurrenceState
from ledger.transitions import transition, transition_where
from ledger.views import OccurrenceView
from timecontract import (
    Disposition,
    OccurrenceRecord,
    format_instant,
    iter_occurrences,
    owned_interval,
    owning_revision,
)

DEFAULT_MAX_OCCURRENCES = 1000
"""The default bound on a backfill's creates and requeues (``--max``)."""
MAX_WINDOW_OCCURRENCES = 2000
"""The most occurrences one backfill's window may hold (any action): expansion stops past it and
the window is refused, so neither the work nor the plan (a Temporal payload, ≈ 0.3 KiB per entry,
well under the 2 MiB limit) grows with a careless window. The schedule workflow's validator caps
``--max`` at the same number (``workflows.schedule_validation.MAX_BACKFILL_BOUND``)."""
MAX_REASON_CHARS = 500
"""Size bound of a backfill's reason."""

S = OccurrenceState


class BackfillAction(StrEnum):
    """What a backfill does with one record of its window (module docstring)."""

    CREATE = "CREATE"
    REQUEUE = "REQUEUE"
    SKIP = "SKIP"


class BackfillRefused(LedgerError, ValueError):
    """The backfill is refused as asked; nothing was written.

    Attributes:
        field: the refused input (``from``, ``to``, ``max``, ``reason``, ``scheduleId``).
        value: the refused value, as text.

    """

    def __init__(self, field: str, value: object, problem: str) -> None:
        self.field = field
        shown = format_instant(value) if isinstance(value, datetime) else value
        self.value = shown if isinstance(shown, str | int | None) else str(shown)
        super().__init__(f"{field}={shown!r}: {problem}")


@dataclass(frozen=True, slots=True)
class BackfillEntry:
    """One record of the window and what the backfill does with it.

    Attributes:
        occurrence_id: the ID normal materialization gives it.
        logical_slot_id: its slot (``None`` for a gap skipped under ``gapPolicy: SKIP``).
        placed_at_utc: its instant (or the gap's instant when skipped), aware UTC.
        nominal_local: the naive local date-time the rule produced.
        fold: fold ordinal.
        action: ``CREATE``, ``REQUEUE`` or ``SKIP``.
        state: its state in the ledger before the backfill (``None``: never materialized).
        note: why, for a ``SKIP`` (or what a ``CREATE`` records).

    """

    occurrence_id: str
    logical_slot_id: str | None
    placed_at_utc: datetime
    nominal_local: datetime
    fold: int
    action: BackfillAction
    state: OccurrenceState | None
    note: str = ""


@dataclass(frozen=True, slots=True)
class BackfillPlan:
    """A backfill's plan and whether it was applied.

    Attributes:
        schedule_id: the schedule.
        revision: the revision that owns the window (the one in force at ``decided_at_utc``).
        from_utc: window start, inclusive (aware UTC).
        to_utc: window end, exclusive (aware UTC).
        decided_at_utc: the decision instant the window was checked against.
        entries: one per record of the window, in (instant, nominal local, fold) order.
        max_occurrences: the bound on creates and requeues.
        include_expired: whether ``MISFIRE_EXPIRED`` ones are requeued.
        applied: ``False`` for a dry run (nothing written).
        released: the IDs moved to ``DUE`` by this call (empty for a dry run).

    """

    schedule_id: str
    revision: int
    from_utc: datetime
    to_utc: datetime
    decided_at_utc: datetime
    entries: tuple[BackfillEntry, ...]
    max_occurrences: int
    include_expired: bool
    applied: bool
    released: tuple[str, ...] = ()

    def count(self, action: BackfillAction) -> int:
        """How many entries take ``action``."""
        return sum(1 for e in self.entries if e.action is action)

    @property
    def writes(self) -> int:
        """Creates plus requeues: what the bound counts."""
        return self.count(BackfillAction.CREATE) + self.count(BackfillAction.REQUEUE)


def backfill_window(
    ledger: Ledger,
    schedule_id: str,
    from_utc: datetime,
    to_utc: datetime,
    now_utc: datetime,
    *,
    by: str,
    reason: str,
    include_expired: bool = False,
    max_occurrences: int = DEFAULT_MAX_OCCURRENCES,
    dry_run: bool = False,
    recorded_at_utc: datetime | None = None,
    tzdb_store: Path | None = None,
) -> BackfillPlan:
    """Plan, and unless ``dry_run`` apply, a backfill of ``[from_utc, to_utc)`` (module docstring).

    Args:
        ledger: the ledger.
        schedule_id: the schedule.
        from_utc: window start, aware, inclusive.
        to_utc: window end, aware, exclusive; not after ``now_utc``.
        now_utc: the decision instant (the schedule workflow's): the window must lie before it,
            and the revision in force at it must own the whole window.
        by: who (events).
        reason: why (events and ``state_reason``); not empty, at most 500 characters.
        include_expired: requeue ``MISFIRE_EXPIRED`` occurrences (``MISFIRE_EXPIRED → DUE``).
        max_occurrences: refuse a plan with more creates and requeues than this (>= 1).
        dry_run: compute the plan in a read-only transaction; write nothing.
        recorded_at_utc: when the decision is recorded (events, ``backfill_at_utc``; default
            ``now_utc``).
        tzdb_store: the local tz release store.

    Returns:
        The plan, with ``applied`` and the released IDs.

    Raises:
        BackfillRefused: a naive or empty window, a window not before ``now_utc`` or not owned
            by the revision in force, a disabled or deleted schedule, a bad bound or reason, or
            a plan over the bound. Nothing was written.
        ScheduleNotFound: no such schedule.

    """
    for name, value in (("from", from_utc), ("to", to_utc)):
        if value.tzinfo is None or value.utcoffset() is None:
            raise BackfillRefused(name, value.isoformat(), "an instant needs a UTC offset")
    if now_utc.tzinfo is None:
        raise ValueError("now_utc must be aware (UTC)")
    if from_utc >= to_utc:
        raise BackfillRefused("to", to_utc, f"must be after from={format_instant(from_utc)}")
    if to_utc > now_utc:
        raise BackfillRefused(
            "to",
            to_utc,
            f"lies after the schedule's now {format_instant(now_utc)} (a backfill runs the past)",
        )
    if max_occurrences < 1:
        raise BackfillRefused("max", max_occurrences, "needs a positive bound")
    if not reason.strip() or len(reason) > MAX_REASON_CHARS:
        raise BackfillRefused("reason", reason[:40], f"needs 1-{MAX_REASON_CHARS} characters")
    at = now_utc if recorded_at_utc is None else recorded_at_utc

    # Pure expansion outside the transaction (as materialize does), over the revision read now;
    # the transaction checks that the same revision still owns the window before using it.
    revision, spec_records = ledger.read(
        lambda c: _expand(c, schedule_id, from_utc, to_utc, now_utc, tzdb_store)
    )

    def work(connection: Connection) -> BackfillPlan:
        gate = lock_gate(connection, schedule_id)
        if gate.deleted_at_utc is not None:
            raise BackfillRefused("scheduleId", schedule_id, "the schedule is deleted")
        if gate.disabled:
            raise BackfillRefused(
                "scheduleId", schedule_id, "the schedule is disabled: enable it first"
            )
        if _owner(connection, schedule_id, from_utc, to_utc, now_utc) != revision:
            raise BackfillRefused("from", from_utc, "a revision was published meanwhile; retry")
        entries = _plan(connection, schedule_id, spec_records, include_expired)
        plan = BackfillPlan(
            schedule_id,
            revision,
            from_utc,
            to_utc,
            now_utc,
            tuple(entries),
            max_occurrences,
            include_expired,
            applied=not dry_run,
        )
        if plan.writes > max_occurrences:
            raise BackfillRefused(
                "max",
                max_occurrences,
                f"the plan creates or requeues {plan.writes} occurrences, more than the bound "
                f"{max_occurrences}: narrow the window or raise --max (nothing was written)",
            )
        if dry_run:
            return plan
        window = f"[{format_instant(from_utc)}, {format_instant(to_utc)})"
        why = f"backfill by {by}: {reason.strip()} (window {window})"
        released = _apply(connection, plan, spec_records, at, by, why)
        return BackfillPlan(**{**_fields(plan), "released": released})

    return ledger.read(work) if dry_run else ledger.write(work)


def _fields(plan: BackfillPlan) -> dict[str, Any]:
    return {name: getattr(plan, name) for name in BackfillPlan.__dataclass_fields__}


def _owner(
    connection: Connection,
    schedule_id: str,
    from_utc: datetime,
    to_utc: datetime,
    now_utc: datetime,
) -> int:
    """The revision in force at ``now_utc``, if it owns all of ``[from, to)``; else refused."""
    cutovers = schedule_cutovers(connection, schedule_id)
    revision = owning_revision(now_utc, cutovers)
    if revision is None:
        raise BackfillRefused("scheduleId", schedule_id, "no revision is in force yet")
    owned_from, owned_to = owned_interval(revision, cutovers)
    if from_utc < owned_from:
        raise BackfillRefused(
            "from",
            from_utc,
            f"lies before revision {revision}'s cutoverAt {format_instant(owned_from)}: "
            f"only the window revision {revision} (in force) owns can be backfilled",
        )
    if owned_to is not None and to_utc > owned_to:  # pragma: no cover - to <= now < owned_to
        raise BackfillRefused("to", to_utc, f"lies after revision {revision}'s end")
    return revision


def _expand(
    connection: Connection,
    schedule_id: str,
    from_utc: datetime,
    to_utc: datetime,
    now_utc: datetime,
    tzdb_store: Path | None,
) -> tuple[int, list[OccurrenceRecord]]:
    lock_gate(connection, schedule_id)  # ScheduleNotFound first
    revision = _owner(connection, schedule_id, from_utc, to_utc, now_utc)
    spec = overlap.revision_spec(connection, schedule_id, revision)
    records = (
        r
        for r in iter_occurrences(spec, from_utc, to_utc, tzdb_store=tzdb_store)
        if from_utc <= r.placed_at_utc < to_utc
    )
    window = list(islice(records, MAX_WINDOW_OCCURRENCES + 1))
    if len(window) > MAX_WINDOW_OCCURRENCES:
        raise BackfillRefused(
            "to",
            to_utc,
            f"the window holds more than {MAX_WINDOW_OCCURRENCES} occurrences: backfill it in "
            "narrower windows (nothing was written)",
        )
    return revision, window


def _plan(
    connection: Connection,
    schedule_id: str,
    records: list[OccurrenceRecord],
    include_expired: bool,
) -> list[BackfillEntry]:
    ids = [r.occurrence_id for r in records]
    present = {
        row.occurrence_id: OccurrenceView.from_row(row)
        for row in connection.execute(
            select(OCCURRENCES).where(in_values(connection, OCCURRENCES.c.occurrence_id, ids))
        )
    }
    slots = [r.logical_slot_id for r in records if r.logical_slot_id is not None]
    holders: dict[str, str | None] = {
        row.logical_slot_id: row.owner_occurrence_id
        for row in connection.execute(
            select(SLOTS.c.logical_slot_id, SLOTS.c.owner_occurrence_id)
            .where(SLOTS.c.schedule_id == schedule_id)
            .where(in_values(connection, SLOTS.c.logical_slot_id, slots))
        )
    }
    entries = []
    for record in records:
        found = present.get(record.occurrence_id)
        state = None if found is None else found.state
        holder = holders.get(record.logical_slot_id) if record.logical_slot_id else None
        action, note = _decide(record, state, holder, include_expired)
        entries.append(
            BackfillEntry(
                record.occurrence_id,
                record.logical_slot_id,
                record.placed_at_utc,
                record.nominal_local,
                record.fold,
                action,
                state,
                note,
            )
        )
    return entries


def _decide(
    record: OccurrenceRecord,
    state: OccurrenceState | None,
    holder: str | None,
    include_expired: bool,
) -> tuple[BackfillAction, str]:
    held_by_other = holder is not None and holder != record.occurrence_id
    if state is None:
        if record.disposition is not Disposition.PLANNED:
            why = (
                record.reason.value
                if record.holiday is None
                else f"{record.reason.value} {record.holiday!r}"
            )
            return BackfillAction.CREATE, f"recorded {record.disposition.value} ({why}), not run"
        if held_by_other:
            return BackfillAction.SKIP, f"logical slot held by {holder}"
        return BackfillAction.CREATE, "never materialized: created and released"
    if state is S.MISFIRE_EXPIRED:
        if not include_expired:
            return BackfillAction.SKIP, "MISFIRE_EXPIRED: left alone (--include-expired requeues)"
        if holder != record.occurrence_id:
            return BackfillAction.SKIP, f"MISFIRE_EXPIRED, but its slot is held by {holder}"
        return BackfillAction.REQUEUE, "MISFIRE_EXPIRED → DUE"
    if state in (S.PLANNED, S.DUE, S.DISPATCHING, S.RUNNING, S.RETRY_WAIT):
        return BackfillAction.SKIP, f"{state.value}: in flight, left to the schedule"
    return BackfillAction.SKIP, f"{state.value}: terminal, left alone"


def _apply(
    connection: Connection,
    plan: BackfillPlan,
    records: list[OccurrenceRecord],
    at: datetime,
    by: str,
    why: str,
) -> tuple[str, ...]:
    """Write the plan's creates and requeues (the caller's transaction); the released IDs."""
    creating = {e.occurrence_id for e in plan.entries if e.action is BackfillAction.CREATE}
    creates = [r for r in records if r.occurrence_id in creating]
    # The same rows materialization writes (ledger.creation), in this transaction.
    written = insert_created(connection, creates, utc_instant(at), by)
    lost = set(written.conflicts)
    planned = {r.occurrence_id for r in records if r.disposition is Disposition.PLANNED} & set(
        written.created
    )
    to_release = sorted(planned - lost)
    released = list(
        transition_where(
            connection,
            S.PLANNED,
            S.DUE,
            in_values(connection, OCCURRENCES.c.occurrence_id, to_release),
            now_utc=at,
            by=by,
            why=why,
            expected=len(to_release),
            values={"backfill_at_utc": at},
        )
        if to_release
        else ()
    )
    for entry in plan.entries:
        if entry.action is not BackfillAction.REQUEUE:
            continue
        owns_slot = exists().where(
            and_(
                SLOTS.c.schedule_id == OCCURRENCES.c.schedule_id,
                SLOTS.c.logical_slot_id == OCCURRENCES.c.logical_slot_id,
                SLOTS.c.owner_occurrence_id == OCCURRENCES.c.occurrence_id,
            )
        )
        transition(
            connection,
            entry.occurrence_id,
            S.DUE,
            now_utc=at,
            by=by,
            why=why,
            guard=owns_slot,
            values={"backfill_at_utc": at},
            backfill=True,
        )
        released.append(entry.occurrence_id)
    order = {e.occurrence_id: n for n, e in enumerate(plan.entries)}
    return tuple(sorted(released, key=order.__getitem__))
