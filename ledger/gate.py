"""The schedule gate: publish a revision, disable, enable — each one transaction.

Every operation that can change whether a claim may succeed updates the one gate row of its
schedule, and every claim locks that row (``FOR SHARE``) before its compare-and-set, so on
PostgreSQL a claim and a gate change are ordered by the row lock: exactly one of them goes first
(DESIGN §4 invariant 3). On SQLite, ``BEGIN IMMEDIATE`` serializes all writers.

Decisions:

- ``disable`` bumps ``disable_generation`` and cancels the schedule's ``DUE`` occurrences (reason
  ``disabled: …``): they were released to run, and nothing may run now. ``PLANNED`` occurrences
  stay: while disabled, ``release_due`` releases nothing, and after ``enable`` the misfire policy
  decides which of the overdue ones still run (never more than the catch-up bound). Occurrences in
  ``RETRY_WAIT`` stay too (their retries are refused while disabled; the workflow may cancel them).
  A claim after a disable commits fails with ``DISABLED`` or ``DISABLE_GENERATION_CHANGED``.
- ``enable`` also bumps ``disable_generation``: a claimer that read the gate before a
  disable/enable cycle must re-read it.
- a rollout or rollback (:func:`ledger.rollout.switch_implementation`) sets the implementation
  alias and bumps ``execution_epoch`` on the same row: claims that read the old epoch, or run the
  old alias, fail once it commits.
- ``delete_schedule`` disables the gate for good (``disabled_reason`` ``deleted: …``, bumps the
  disable generation, sets ``deleted_at_utc``) and cancels what has not been dispatched
  (``PLANNED``, ``DUE``, ``RETRY_WAIT``); dispatched effects finish and every row stays.
  ``enable`` refuses a deleted schedule; publishing a *higher* revision revives it (the same
  successor rules as any later revision: its cutoverAt may not lie in the past).

Each gate change appends a ``schedule_events`` row in its own transaction
(:mod:`ledger.schedule_trail`).
"""

from __future__ import annotations

from datetime import datetime
from typing import Any

from sqlalchemy import Connection, Select, func, insert, select, update

from ledger.db import Ledger
from ledger.errors import ClaimLost, RevisionRejected, ScheduleDeleted, ScheduleNotFound
from ledger.events import GATES, OCCURRENCES, REVISIONS, SLOTS, insert_ignore, require_aware
from ledger.schedule_trail import append_schedule_event
from ledger.states import OccurrenceState, ScheduleEventKind
from ledger.transitions import transition_where
from ledger.views import (
    DEFAULT_IMPLEMENTATION_ALIAS,
    GateChange,
    PublishResult,
    gate_from_row,
)
from lifecycle import GateView
from timecontract import Cutover, ScheduleSpecV1, format_instant, owned_interval


def lock_gate(connection: Connection, schedule_id: str, *, exclusive: bool = False) -> GateView:
    """Read a schedule's gate row under a row lock (``FOR SHARE``, or ``FOR UPDATE``).

    On PostgreSQL the lock lasts until the transaction ends: a concurrent gate change waits for a
    shared holder, and a shared reader that waited sees the committed change. SQLite has no row
    locks; its writers are serialized by ``BEGIN IMMEDIATE``.

    Raises:
        ScheduleNotFound: no gate row for ``schedule_id``.

    """
    statement = select(GATES).where(GATES.c.schedule_id == schedule_id)
    return _one_gate(connection, schedule_id, statement.with_for_update(read=not exclusive))


def gate_in(connection: Connection, schedule_id: str) -> GateView:
    """:func:`get_gate` in the caller's transaction: the row as read, without a row lock.

    Raises:
        ScheduleNotFound: no gate row for ``schedule_id``.

    """
    statement = select(GATES).where(GATES.c.schedule_id == schedule_id)
    return _one_gate(connection, schedule_id, statement)


def _one_gate(connection: Connection, schedule_id: str, statement: Select[Any]) -> GateView:
    row = connection.execute(statement).one_or_none()
    if row is None:
        raise ScheduleNotFound(schedule_id)
    return gate_from_row(row)


def schedule_cutovers(connection: Connection, schedule_id: str) -> list[Cutover]:
    """A schedule's published revisions and their cutovers, for ``timecontract.cutover``.

    Read after :func:`lock_gate`, the list cannot change before the transaction ends: publish
    inserts revisions only under the exclusive gate lock.
    """
    rows = connection.execute(
        select(REVISIONS.c.revision, REVISIONS.c.cutover_at_utc).where(
            REVISIONS.c.schedule_id == schedule_id
        )
    )
    return [Cutover(row.revision, row.cutover_at_utc) for row in rows]


def get_gate(ledger: Ledger, schedule_id: str) -> GateView:
    """Read a schedule's gate (what a claimer passes to :func:`ledger.claim`).

    Raises:
        ScheduleNotFound: no such schedule.

    """
    return ledger.read(lambda connection: gate_in(connection, schedule_id))


def publish_revision(
    ledger: Ledger,
    spec: ScheduleSpecV1,
    now_utc: datetime,
    *,
    by: str,
    implementation_alias: str = DEFAULT_IMPLEMENTATION_ALIAS,
) -> PublishResult:
    """Publish a spec's revision: store it, make it the gate's active revision, supersede.

    The first revision of a schedule creates its gate (with ``implementation_alias``) and may have
    a ``cutoverAt`` in the past (DESIGN §3). A later revision must be greater than the active one,
    its ``cutoverAt`` must not lie before ``now_utc`` and must follow every earlier cutover. Older
    revisions' ``PLANNED``/``DUE`` occurrences at or after the cutover become ``CANCELLED``
    (reason ``superseded by revision N``) and their logical slots are released, so the new
    revision takes them by compare-and-set when it materializes. Publishing the identical
    revision again (same digest) changes nothing.

    Args:
        ledger: the ledger.
        spec: the validated spec; stored as ``spec.canonical_json()`` with ``spec.digest()``.
        now_utc: the decision instant (aware UTC); also ``published_at_utc``.
        by: who publishes.
        implementation_alias: the gate's alias if this creates the schedule (else ignored).

    Returns:
        What happened, with the gate afterwards.

    Raises:
        RevisionRejected: the revision does not increase, its digest differs from the published
            revision of the same number, or its cutover is in the past or not after the last one.

    """
    require_aware("now_utc", now_utc)
    schedule_id, number = spec.schedule_id, spec.revision

    def work(connection: Connection) -> PublishResult:
        created_gate = (
            connection.execute(
                insert_ignore(connection, GATES)
                .values(
                    schedule_id=schedule_id,
                    active_revision=number,
                    disabled=False,
                    disable_generation=0,
                    execution_epoch=0,
                    implementation_alias=implementation_alias,
                    created_at_utc=now_utc,
                    updated_at_utc=now_utc,
                    updated_by=by,
                )
                # RETURNING, not rowcount: drivers need not report rowcount for INSERT.
                .returning(GATES.c.schedule_id)
            ).first()
            is not None
        )
        gate = lock_gate(connection, schedule_id, exclusive=True)
        if gate.deleted and number <= gate.active_revision:
            raise RevisionRejected(
                f"{schedule_id} was deleted at revision {gate.active_revision}: re-applying it "
                f"needs a higher revision (publish revision {gate.active_revision + 1} or higher)",
                value=number,
            )
        existing = connection.execute(
            select(REVISIONS.c.digest).where(
                REVISIONS.c.schedule_id == schedule_id, REVISIONS.c.revision == number
            )
        ).scalar_one_or_none()
        if existing is not None:
            if existing != spec.digest():
                raise RevisionRejected(
                    f"{schedule_id} r{number} is already published with digest {existing}; "
                    "publish a higher revision to change it",
                    value=number,
                )
            return PublishResult(schedule_id, number, False, (), gate)
        if not created_gate:
            _check_successor(connection, gate, spec, now_utc)
            revive = (
                {
                    "disabled": False,
                    "disabled_reason": None,
                    "deleted_at_utc": None,
                    "disable_generation": gate.disable_generation + 1,
                }
                if gate.deleted
                else {}
            )
            bumped = connection.execute(
                update(GATES)
                .where(GATES.c.schedule_id == schedule_id)
                .where(GATES.c.active_revision == gate.active_revision)
                .values(active_revision=number, updated_at_utc=now_utc, updated_by=by, **revive)
            ).rowcount
            if bumped != 1:
                raise ClaimLost(schedule_id, f"active revision changed from {gate.active_revision}")
        connection.execute(
            insert(REVISIONS).values(
                schedule_id=schedule_id,
                revision=number,
                spec_json=spec.canonical_json(),
                digest=spec.digest(),
                cutover_at_utc=spec.cutover_at,
                published_at_utc=now_utc,
                published_by=by,
            )
        )
        superseded = () if created_gate else _supersede(connection, spec, now_utc, by)
        revived = not created_gate and gate.deleted
        append_schedule_event(
            connection,
            schedule_id,
            ScheduleEventKind.PUBLISHED,
            now_utc,
            by=by,
            revision=number,
            detail=(
                f"revision {number} active from cutoverAt {format_instant(spec.cutover_at)}"
                + (f"; {len(superseded)} superseded" if superseded else "")
                + ("; schedule revived" if revived else "")
            ),
        )
        return PublishResult(
            schedule_id,
            number,
            True,
            superseded,
            lock_gate(connection, schedule_id),
            created_schedule=created_gate or revived,
        )

    return ledger.write(work)


def _check_successor(
    connection: Connection, gate: GateView, spec: ScheduleSpecV1, now_utc: datetime
) -> None:
    if spec.revision <= gate.active_revision:
        raise RevisionRejected(
            f"{spec.schedule_id}: revision {spec.revision} does not increase "
            f"(active revision is {gate.active_revision})",
            value=spec.revision,
        )
    if spec.cutover_at < now_utc:
        raise RevisionRejected(
            f"{spec.schedule_id} r{spec.revision}: cutoverAt {format_instant(spec.cutover_at)} "
            f"is before now ({format_instant(now_utc)}); a later revision never rewrites the past",
            field="cutoverAt",
            value=format_instant(spec.cutover_at),
        )
    last = connection.execute(
        select(func.max(REVISIONS.c.cutover_at_utc)).where(
            REVISIONS.c.schedule_id == spec.schedule_id
        )
    ).scalar_one_or_none()
    if last is not None and spec.cutover_at <= last:
        raise RevisionRejected(
            f"{spec.schedule_id} r{spec.revision}: cutoverAt {format_instant(spec.cutover_at)} "
            f"must follow the previous revision's cutover ({format_instant(last)})",
            field="cutoverAt",
            value=format_instant(spec.cutover_at),
        )


def _supersede(
    connection: Connection, spec: ScheduleSpecV1, now_utc: datetime, by: str
) -> tuple[str, ...]:
    """Cancel older revisions' not-yet-dispatched occurrences the new revision owns; free slots.

    The new revision is the newest, so it owns ``[cutoverAt, ∞)`` (``timecontract.owned_interval``
    over the published cutovers, the new one included).
    """
    why = f"superseded by revision {spec.revision}"
    start, end = owned_interval(spec.revision, schedule_cutovers(connection, spec.schedule_id))
    taken_over = [
        OCCURRENCES.c.schedule_id == spec.schedule_id,
        OCCURRENCES.c.revision < spec.revision,
        OCCURRENCES.c.instant_utc >= start,
    ]
    if end is not None:  # pragma: no cover (publish only appends the newest revision)
        taken_over.append(OCCURRENCES.c.instant_utc < end)
    cancelled = sorted(
        moved
        for state in (OccurrenceState.PLANNED, OccurrenceState.DUE)
        for moved in transition_where(
            connection,
            state,
            OccurrenceState.CANCELLED,
            *taken_over,
            now_utc=now_utc,
            by=by,
            why=why,
        )
    )
    # Every never-dispatched cancelled owner frees its slot: those cancelled just now, and those
    # cancelled before (a deleted schedule's, revived by this revision).
    owners = (
        select(OCCURRENCES.c.occurrence_id)
        .where(*taken_over)
        .where(OCCURRENCES.c.state == OccurrenceState.CANCELLED.value)
        .where(OCCURRENCES.c.claim_generation == 0)
    )
    connection.execute(
        update(SLOTS)
        .where(SLOTS.c.schedule_id == spec.schedule_id)
        .where(SLOTS.c.owner_occurrence_id.in_(owners))
        .values(
            owner_occurrence_id=None,
            owner_revision=None,
            released_at_utc=now_utc,
            release_reason=why,
        )
    )
    return tuple(cancelled)


def change_gate(
    ledger: Ledger,
    schedule_id: str,
    now_utc: datetime,
    *,
    disabled: bool,
    by: str,
    reason: str | None = None,
) -> GateChange:
    """Disable (``disabled=True``, with a reason) or enable a schedule; say what changed.

    Disabling bumps ``disable_generation`` and cancels the schedule's ``DUE`` occurrences (reason
    ``disabled: …``); enabling bumps the generation again. Either is idempotent: a gate already in
    that state is returned with ``changed=False``. A ``DISABLED``/``ENABLED`` schedule event is
    appended in the same transaction.

    Raises:
        ScheduleNotFound: no such schedule.
        ScheduleDeleted: enabling a deleted schedule.
        ValueError: disabling without a reason.

    """
    require_aware("now_utc", now_utc)
    if disabled and not (reason or "").strip():
        raise ValueError("reason='': disabling needs a non-empty reason")
    return ledger.write(
        lambda connection: change_gate_in(
            connection, schedule_id, now_utc, disabled=disabled, by=by, reason=reason
        )
    )


def change_gate_in(
    connection: Connection,
    schedule_id: str,
    now_utc: datetime,
    *,
    disabled: bool,
    by: str,
    reason: str | None = None,
) -> GateChange:
    """:func:`change_gate` inside the caller's transaction (a decision that also pauses).

    Raises:
        ScheduleNotFound, ScheduleDeleted: as :func:`change_gate`.
    """
    gate = lock_gate(connection, schedule_id, exclusive=True)
    if not disabled and gate.deleted:
        raise ScheduleDeleted(schedule_id, "enable it")
    if gate.disabled == disabled:
        return GateChange(gate, False)
    _bump_generation(
        connection,
        gate,
        disabled=disabled,
        reason=reason if disabled else None,
        now_utc=now_utc,
        by=by,
    )
    cancelled: tuple[str, ...] = ()
    if disabled:
        cancelled = transition_where(
            connection,
            OccurrenceState.DUE,
            OccurrenceState.CANCELLED,
            OCCURRENCES.c.schedule_id == schedule_id,
            now_utc=now_utc,
            by=by,
            why=f"disabled: {reason}",
        )
    after = lock_gate(connection, schedule_id)
    kind = ScheduleEventKind.DISABLED if disabled else ScheduleEventKind.ENABLED
    detail = f"disable generation {after.disable_generation}"
    if disabled:
        detail = f"{reason}; {detail}; {len(cancelled)} due cancelled"
    append_schedule_event(connection, schedule_id, kind, now_utc, by=by, detail=detail)
    return GateChange(after, True, tuple(sorted(cancelled)))


def disable(
    ledger: Ledger, schedule_id: str, now_utc: datetime, *, by: str, reason: str
) -> GateView:
    """Disable a schedule: bump ``disable_generation``, cancel its ``DUE`` occurrences.

    Idempotent: disabling a disabled schedule changes nothing and returns its gate. (The gate part
    of :func:`change_gate`.)

    Raises:
        ScheduleNotFound: no such schedule.

    """
    return change_gate(ledger, schedule_id, now_utc, disabled=True, by=by, reason=reason).gate


def enable(ledger: Ledger, schedule_id: str, now_utc: datetime, *, by: str) -> GateView:
    """Enable a disabled schedule (bumps ``disable_generation``); idempotent when enabled.

    Raises:
        ScheduleNotFound: no such schedule.
        ScheduleDeleted: the schedule is deleted.

    """
    return change_gate(ledger, schedule_id, now_utc, disabled=False, by=by).gate


def delete_schedule(
    ledger: Ledger, schedule_id: str, now_utc: datetime, *, by: str, reason: str
) -> GateChange:
    """Delete a schedule: nothing new is claimed, nothing is removed.

    One transaction: the gate becomes disabled (``disabled_reason`` ``deleted: <reason>``), its
    disable generation grows (claims that read the gate before lose) and ``deleted_at_utc`` is set;
    every ``PLANNED``, ``DUE`` and ``RETRY_WAIT`` occurrence becomes ``CANCELLED`` (reason
    ``deleted: <reason>``); a ``DELETED`` schedule event is appended. Occurrences already
    dispatched (``DISPATCHING``, ``RUNNING``, ``UNKNOWN_EFFECT``) finish or reconcile as usual: an
    effect whose dispatch won is never treated as cancelled. Idempotent: deleting a deleted
    schedule returns ``changed=False``.

    Raises:
        ScheduleNotFound: no such schedule.
        ValueError: an empty reason.

    """
    require_aware("now_utc", now_utc)
    if not reason.strip():
        raise ValueError("reason='': deleting needs a non-empty reason")

    def work(connection: Connection) -> GateChange:
        gate = lock_gate(connection, schedule_id, exclusive=True)
        if gate.deleted:
            return GateChange(gate, False)
        why = f"deleted: {reason}"
        changed = connection.execute(
            update(GATES)
            .where(GATES.c.schedule_id == schedule_id)
            .where(GATES.c.disable_generation == gate.disable_generation)
            .values(
                disabled=True,
                disabled_reason=why,
                disable_generation=gate.disable_generation + 1,
                deleted_at_utc=now_utc,
                updated_at_utc=now_utc,
                updated_by=by,
            )
        ).rowcount
        if changed != 1:
            raise ClaimLost(schedule_id, f"disable generation moved from {gate.disable_generation}")
        cancelled = [
            moved
            for state in (
                OccurrenceState.PLANNED,
                OccurrenceState.DUE,
                OccurrenceState.RETRY_WAIT,
            )
            for moved in transition_where(
                connection,
                state,
                OccurrenceState.CANCELLED,
                OCCURRENCES.c.schedule_id == schedule_id,
                now_utc=now_utc,
                by=by,
                why=why,
            )
        ]
        after = lock_gate(connection, schedule_id)
        append_schedule_event(
            connection,
            schedule_id,
            ScheduleEventKind.DELETED,
            now_utc,
            by=by,
            revision=after.active_revision,
            detail=f"{reason}; {len(cancelled)} not dispatched cancelled; every fact kept",
        )
        return GateChange(after, True, tuple(sorted(cancelled)))

    return ledger.write(work)


def _bump_generation(
    connection: Connection,
    gate: GateView,
    *,
    disabled: bool,
    reason: str | None,
    now_utc: datetime,
    by: str,
) -> None:
    changed = connection.execute(
        update(GATES)
        .where(GATES.c.schedule_id == gate.schedule_id)
        .where(GATES.c.disable_generation == gate.disable_generation)
        .values(
            disabled=disabled,
            disabled_reason=reason,
            disable_generation=gate.disable_generation + 1,
            updated_at_utc=now_utc,
            updated_by=by,
        )
    ).rowcount
    if changed != 1:
        raise ClaimLost(
            gate.schedule_id, f"disable generation moved from {gate.disable_generation}"
        )
