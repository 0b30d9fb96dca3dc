"""Rollout and rollback of a schedule's implementation alias, with requeue (DESIGN §5, seed).

A schedule's gate names the implementation alias whose workers may claim its occurrences. Moving
a schedule to another alias — forward (a canary **rollout**) or back (a **rollback**) — is one
transaction per gate, :func:`switch_implementation`:

1. the gate row is locked exclusively, its ``implementation_alias`` set and its
   ``execution_epoch`` incremented in one compare-and-set update; every claim locks the same row
   and checks both, so from this commit no claim that read the old epoch, or that runs another
   alias, succeeds (:func:`ledger.claim`);
2. an ``implementation_switches`` row records the switch (kind, from, to, epochs, reason); the
   requeue events name it (``rollback #7 …``);
3. the schedule's occurrences are sorted out:

   - ``DUE`` (released, never claimed: claim generation 0, so no attempt past a claim) whose
     occurrence-ID format the target alias recognises: **requeued**, a ``DUE → DUE`` event naming
     the switch (the claim under the old epoch can no longer win; the caller starts them on the
     target alias's task queue, ``almanac.rollout``);
   - ``DUE`` or ``PLANNED`` whose ID format the target alias does not recognise: ``CANCELLED`` with
     the reason, and their logical slots released, so the target implementation materializes the
     slots again under its own format (never a silent drop, never a double owner);
   - ``DISPATCHING`` / ``RUNNING``: dispatch already won, never cancelled: the attempt finishes, or
     goes to ``UNKNOWN_EFFECT`` and reconciliation; listed;
   - ``RETRY_WAIT``: started (an attempt ran and failed without effect); its next claim is refused
     at the new epoch; listed for a decision (cancel it, or let it stand);
   - ``UNKNOWN_EFFECT``: reconciliation continues; listed.

   ``PLANNED`` occurrences in a recognised format are untouched: the target implementation
   releases them at their instants. Terminal occurrences — ``SUCCEEDED`` above all — are never
   touched: nothing is deleted or re-sent.

Switching a gate to the alias it already shows changes nothing (no epoch bump, nothing requeued):
a rollout or rollback can be repeated safely.
"""

from __future__ import annotations

import hashlib
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from datetime import datetime
from enum import StrEnum

from sqlalchemy import Connection, select, update

from ledger.db import Ledger
from ledger.errors import ClaimLost, ImplementationNotRegistered
from ledger.events import (
    ALIASES,
    GATES,
    OCCURRENCES,
    SLOTS,
    SWITCHES,
    insert_ignore,
    require_aware,
)
from ledger.gate import lock_gate
from ledger.states import OccurrenceState
from ledger.transitions import transition, transition_where
from ledger.views import gate_from_row
from lifecycle import GateView

S = OccurrenceState
CANARY_BUCKETS = 10_000
"""A schedule's canary bucket is in ``[0, CANARY_BUCKETS)``: percentages to two decimals."""


class SwitchKind(StrEnum):
    """Which way a switch moves a schedule (recorded on ``implementation_switches``)."""

    ROLLOUT = "ROLLOUT"
    """Forward, to a candidate implementation (canary)."""
    ROLLBACK = "ROLLBACK"
    """Back to the previous implementation."""


@dataclass(frozen=True, slots=True)
class NotRequeued:
    """An occurrence a switch did not requeue, and why (its state when the switch committed)."""

    occurrence_id: str
    state: OccurrenceState
    why: str


@dataclass(frozen=True, slots=True)
class SwitchResult:
    """What one switch of one schedule did.

    Attributes:
        schedule_id: the schedule.
        kind: rollout or rollback.
        from_alias: the gate's alias before.
        to_alias: the gate's alias after.
        changed: ``False`` when the gate already showed ``to_alias`` (nothing was done).
        epoch_before: the execution epoch before.
        epoch_after: the execution epoch after (``epoch_before + 1`` when changed).
        switch_id: the ``implementation_switches`` row (``None`` when unchanged).
        requeued: occurrences put back to ``DUE`` for the target alias, sorted.
        not_requeued: the schedule's other non-terminal occurrences in flight, with why, sorted.
        gate: the gate afterwards.

    """

    schedule_id: str
    kind: SwitchKind
    from_alias: str
    to_alias: str
    changed: bool
    epoch_before: int
    epoch_after: int
    switch_id: int | None
    requeued: tuple[str, ...]
    not_requeued: tuple[NotRequeued, ...]
    gate: GateView


def register_implementation(
    ledger: Ledger, alias: str, id_formats: Iterable[int], now_utc: datetime, *, by: str
) -> frozenset[int]:
    """Record (or widen) the occurrence-ID formats an implementation alias recognises.

    A worker calls this on start. Formats only accumulate: an alias that once recognised a format
    keeps it (a build of the same alias that drops a format must take a new alias).

    Returns:
        The formats recorded for ``alias`` afterwards.

    """
    require_aware("now_utc", now_utc)
    wanted = frozenset(id_formats)
    if not wanted or min(wanted) < 1:
        raise ValueError(f"id_formats must be positive versions, got {sorted(wanted)}")

    def work(connection: Connection) -> frozenset[int]:
        connection.execute(
            insert_ignore(connection, ALIASES).values(
                alias=alias,
                id_formats=_formats_text(wanted),
                registered_at_utc=now_utc,
                registered_by=by,
            )
        )
        row = connection.execute(
            select(ALIASES.c.id_formats).where(ALIASES.c.alias == alias).with_for_update()
        ).scalar_one()
        merged = _parse_formats(row) | wanted
        if merged != _parse_formats(row):
            connection.execute(
                update(ALIASES)
                .where(ALIASES.c.alias == alias)
                .values(
                    id_formats=_formats_text(merged), registered_at_utc=now_utc, registered_by=by
                )
            )
        return merged

    return ledger.write(work)


def recognised_id_formats(ledger: Ledger, alias: str) -> frozenset[int] | None:
    """The ID formats ``alias`` registered, or ``None`` if no worker of it ever registered."""
    row = ledger.read(
        lambda c: c.execute(
            select(ALIASES.c.id_formats).where(ALIASES.c.alias == alias)
        ).scalar_one_or_none()
    )
    return None if row is None else _parse_formats(row)


def list_gates(ledger: Ledger) -> list[GateView]:
    """Every schedule's gate, by schedule ID."""
    return ledger.read(
        lambda c: [
            gate_from_row(row) for row in c.execute(select(GATES).order_by(GATES.c.schedule_id))
        ]
    )


def canary_bucket(schedule_id: str) -> int:
    """A schedule's stable canary bucket in ``[0, 10000)``: the first 8 bytes of SHA-256, mod.

    It depends on the schedule ID alone (not on the other schedules, the clock or the process), so
    a ``P`` % rollout selects the same schedules every time, and a larger ``P`` only adds some.
    """
    digest = hashlib.sha256(schedule_id.encode()).digest()
    return int.from_bytes(digest[:8], "big") % CANARY_BUCKETS


def in_canary(schedule_id: str, percent: float) -> bool:
    """Whether ``schedule_id`` is in the first ``percent`` % (0–100) of canary buckets."""
    if not 0 <= percent <= 100:
        raise ValueError(f"percent must be within 0..100, got {percent}")
    return canary_bucket(schedule_id) < round(percent * CANARY_BUCKETS / 100)


def switch_implementation(
    ledger: Ledger,
    schedule_id: str,
    to_alias: str,
    now_utc: datetime,
    *,
    kind: SwitchKind,
    by: str,
    reason: str,
    id_formats: frozenset[int] | None = None,
) -> SwitchResult:
    """Move one schedule to ``to_alias``: flip alias, bump epoch, requeue — one transaction.

    See the module docstring for what happens to each occurrence.

    Args:
        ledger: the ledger.
        schedule_id: the schedule.
        to_alias: the implementation alias whose workers may claim from this commit on.
        now_utc: when (aware UTC).
        kind: rollout or rollback (recorded; the requeue events name it).
        by: who (gate ``updated_by``, switch row, event rows).
        reason: why (required: recorded on the switch and every event it writes).
        id_formats: the occurrence-ID formats ``to_alias`` recognises; ``None``: as registered
            (:func:`register_implementation`).

    Returns:
        What changed (:class:`SwitchResult`).

    Raises:
        ScheduleNotFound: no such schedule.
        ImplementationNotRegistered: ``id_formats`` is ``None`` and ``to_alias`` never registered.
        ValueError: an empty reason or alias.

    """
    require_aware("now_utc", now_utc)
    if not reason.strip() or not to_alias.strip():
        raise ValueError("a switch needs a target alias and a reason")
    formats = id_formats if id_formats is not None else recognised_id_formats(ledger, to_alias)
    if formats is None:
        raise ImplementationNotRegistered(to_alias)

    def work(connection: Connection) -> SwitchResult:
        gate = lock_gate(connection, schedule_id, exclusive=True)
        epoch = gate.execution_epoch
        if gate.implementation_alias == to_alias:
            return SwitchResult(
                schedule_id, kind, to_alias, to_alias, False, epoch, epoch, None, (), (), gate
            )
        changed = connection.execute(
            update(GATES)
            .where(GATES.c.schedule_id == schedule_id)
            .where(GATES.c.execution_epoch == epoch)
            .values(
                implementation_alias=to_alias,
                execution_epoch=epoch + 1,
                updated_at_utc=now_utc,
                updated_by=by,
            )
        ).rowcount
        if changed != 1:  # pragma: no cover (the exclusive lock holds the row)
            raise ClaimLost(schedule_id, f"execution epoch moved from {epoch}")
        switch_id = connection.execute(
            SWITCHES.insert()
            .values(
                schedule_id=schedule_id,
                kind=kind.value,
                from_alias=gate.implementation_alias,
                to_alias=to_alias,
                epoch_before=epoch,
                epoch_after=epoch + 1,
                reason=reason,
                at_utc=now_utc,
                by=by,
            )
            .returning(SWITCHES.c.id)
        ).scalar_one()
        label = (
            f"{kind.value.lower()} #{switch_id} of {schedule_id} from "
            f"{gate.implementation_alias} to {to_alias} (epoch {epoch} → {epoch + 1}): {reason}"
        )
        requeued, not_requeued = _sort_out(
            connection, schedule_id, formats, to_alias, label, now_utc, by
        )
        return SwitchResult(
            schedule_id,
            kind,
            gate.implementation_alias,
            to_alias,
            True,
            epoch,
            epoch + 1,
            switch_id,
            requeued,
            not_requeued,
            lock_gate(connection, schedule_id),
        )

    return ledger.write(work)


def _sort_out(
    connection: Connection,
    schedule_id: str,
    formats: frozenset[int],
    to_alias: str,
    label: str,
    now_utc: datetime,
    by: str,
) -> tuple[tuple[str, ...], tuple[NotRequeued, ...]]:
    in_flight = (S.DUE, S.DISPATCHING, S.RUNNING, S.RETRY_WAIT, S.UNKNOWN_EFFECT)
    rows = connection.execute(
        select(
            OCCURRENCES.c.occurrence_id,
            OCCURRENCES.c.state,
            OCCURRENCES.c.claim_generation,
            OCCURRENCES.c.id_format,
        )
        .where(OCCURRENCES.c.schedule_id == schedule_id)
        .where(OCCURRENCES.c.state.in_([s.value for s in in_flight]))
        .order_by(OCCURRENCES.c.occurrence_id)
    ).all()
    requeued: list[str] = []
    listed: list[NotRequeued] = []
    for row in rows:
        state = S(row.state)
        if state is S.DUE and row.id_format in formats:
            transition(
                connection,
                row.occurrence_id,
                S.DUE,
                now_utc=now_utc,
                by=by,
                why=f"requeued by {label}",
                state_reason=f"requeued for {to_alias}",
                same_state=True,
                claim_generation=0,
            )
            requeued.append(row.occurrence_id)
        elif state is not S.DUE:
            listed.append(
                NotRequeued(row.occurrence_id, state, _why_not(state, row.claim_generation))
            )
    unknown_format = OCCURRENCES.c.id_format.not_in(sorted(formats))
    why = f"cancelled by {label}: ID format not recognised by {to_alias}"
    cancelled = [
        moved
        for state in (S.DUE, S.PLANNED)
        for moved in transition_where(
            connection,
            state,
            S.CANCELLED,
            OCCURRENCES.c.schedule_id == schedule_id,
            unknown_format,
            now_utc=now_utc,
            by=by,
            why=why,
        )
    ]
    if cancelled:
        connection.execute(
            update(SLOTS)
            .where(SLOTS.c.schedule_id == schedule_id)
            .where(SLOTS.c.owner_occurrence_id.in_(cancelled))
            .values(
                owner_occurrence_id=None,
                owner_revision=None,
                released_at_utc=now_utc,
                release_reason=why,
            )
        )
        listed.extend(
            NotRequeued(oid, S.CANCELLED, f"ID format not recognised by {to_alias}: cancelled")
            for oid in cancelled
        )
    return tuple(requeued), tuple(sorted(listed, key=lambda n: n.occurrence_id))


def _why_not(state: OccurrenceState, claim_generation: int) -> str:
    if state in (S.DISPATCHING, S.RUNNING):
        return (
            f"dispatch already won (attempt {claim_generation}): it finishes, or goes to "
            "UNKNOWN_EFFECT and reconciliation"
        )
    if state is S.RETRY_WAIT:
        return (
            f"started (attempt {claim_generation} failed without effect); its next claim is "
            "refused at the new epoch: cancel it or leave it for a decision"
        )
    return "outcome unknown: reconciliation continues"


def switches(ledger: Ledger, schedule_ids: Sequence[str] | None = None) -> list[dict[str, object]]:
    """The recorded switches (oldest first), optionally of some schedules only."""
    statement = select(SWITCHES).order_by(SWITCHES.c.id)
    if schedule_ids is not None:
        statement = statement.where(SWITCHES.c.schedule_id.in_(list(schedule_ids)))
    return ledger.read(lambda c: [dict(row._mapping) for row in c.execute(statement)])


def _formats_text(formats: frozenset[int]) -> str:
    return ",".join(str(f) for f in sorted(formats))


def _parse_formats(text: str) -> frozenset[int]:
    return frozenset(int(part) for part in text.split(",") if part.strip())
