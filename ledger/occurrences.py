"""Dispatch transitions of one occurrence: claim, running, redelivery, cancel.

Each function is one transaction around one compare-and-set (:func:`ledger.transitions.transition`)
plus its event row. An attempt is one try of an occurrence, identified by ``(occurrence_id,
claim_generation)``: a won claim (or a redelivery) bumps the occurrence's claim generation and opens
the attempt of that generation. How an attempt ends is :mod:`ledger.attempt_outcomes`; the claim
with its decisions around it is :mod:`ledger.dispatch`.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Mapping
from dataclasses import replace
from datetime import datetime
from typing import Any

from sqlalchemy import Connection, Exists, and_, exists, insert, select

from ledger.attempt_outcomes import lose_attempt
from ledger.db import Ledger
from ledger.errors import ClaimLost, IllegalTransition
from ledger.events import (
    ATTEMPTS,
    OCCURRENCES,
    SLOTS,
    Now,
    check_now,
    fact_time,
    load_occurrence,
    require_aware,
)
from ledger.gate import lock_gate, schedule_cutovers
from ledger.states import OccurrenceState, sources
from ledger.transitions import transition
from ledger.views import AttemptView, ClaimResult, OccurrenceView
from lifecycle import ClaimRefusal, GateView
from timecontract import owning_revision

_CLAIMABLE = sources(OccurrenceState.DISPATCHING)  # DUE, RETRY_WAIT
PACED_MARK = "; paced "
"""Separates a paced claim's event text from its evidence (JSON data, sorted keys)."""


def paced_evidence(why: str) -> dict[str, Any] | None:
    """The pacing evidence a claim's event text carries (:func:`claim_in`), or ``None``.

    Args:
        why: an occurrence event's ``why``.

    Returns:
        The JSON data after :data:`PACED_MARK` (``{"pacedBy": "catchUpSpacing", …}``), or
        ``None`` when the event records no pacing.
    """
    _, mark, data = why.partition(PACED_MARK)
    if not mark:
        return None
    evidence = json.loads(data)
    return evidence if isinstance(evidence, dict) else None


def claim(
    ledger: Ledger,
    occurrence_id: str,
    gate_view: GateView,
    *,
    worker_identity: str,
    implementation_alias: str,
    input_digest: str,
    now_utc: Now,
) -> ClaimResult:
    """Claim an occurrence for dispatch: ``DUE|RETRY_WAIT → DISPATCHING`` and a new attempt.

    The claim wins only if, when it commits, the gate still shows exactly ``gate_view`` (the
    same active revision, not disabled, the same ``disable_generation`` and ``execution_epoch``),
    the gate's implementation alias is the one the worker runs, the occurrence's revision still
    owns its instant (``timecontract.owning_revision`` over the published cutovers) and the
    occurrence still owns its logical slot (DESIGN §4 invariant 3). The gate row is locked ``FOR
    SHARE`` first, so a concurrent disable, publish or rollback either commits before (and the
    claim is refused) or waits until the claim commits; publish adds revisions only under that
    lock, so the cutovers read after it hold until the claim commits.

    Args:
        ledger: the ledger.
        occurrence_id: the occurrence to claim.
        gate_view: the gate as the claimer read it (:func:`ledger.get_gate`).
        worker_identity: who claims (stored on the attempt).
        implementation_alias: the implementation the worker runs.
        input_digest: digest of the inputs the attempt will send (stored on the attempt).
        now_utc: when (aware UTC), or the clock to read it from once the gate and the
            occurrence are locked (:data:`ledger.events.Now`); the attempt's ``started_at_utc``.

    Returns:
        The new attempt, or a refusal with its :class:`ClaimRefusal` reason (nothing written).

    Raises:
        ValueError: ``gate_view`` is another schedule's.
        ScheduleNotFound: the schedule has no gate.

    """
    check_now(now_utc)
    return ledger.write(
        lambda c: claim_in(
            c,
            occurrence_id,
            gate_view,
            worker_identity=worker_identity,
            implementation_alias=implementation_alias,
            input_digest=input_digest,
            now_utc=now_utc,
        )
    )


def claim_in(
    connection: Connection,
    occurrence_id: str,
    gate_view: GateView,
    *,
    worker_identity: str,
    implementation_alias: str,
    input_digest: str,
    now_utc: Now,
    paced: Mapping[str, Any] | None = None,
) -> ClaimResult:
    """:func:`claim` in the caller's transaction (same arguments, same result, same errors).

    ``paced``: evidence of the start slot the occurrence waited for (``catchUpSpacing``), JSON
    data appended to the won claim's event as ``; paced {…}`` (:func:`paced_evidence` reads it
    back): the evidence costs no transaction of its own.
    """
    row = connection.execute(
        select(OCCURRENCES).where(OCCURRENCES.c.occurrence_id == occurrence_id)
    ).one_or_none()
    if row is None:
        return ClaimResult(refusal=ClaimRefusal.NOT_FOUND, detail=occurrence_id)
    occurrence = OccurrenceView.from_row(row)
    if occurrence.schedule_id != gate_view.schedule_id:
        raise ValueError(
            f"gate view of {gate_view.schedule_id!r} for occurrence of {occurrence.schedule_id!r}"
        )
    gate = lock_gate(connection, occurrence.schedule_id)
    for check in GATE_CHECKS:
        refusal = check(gate, gate_view, implementation_alias)
        if refusal is not None:
            return refusal
    if occurrence.state not in _CLAIMABLE:
        return _not_claimable(occurrence_id, occurrence.state)
    refusal = OWNERSHIP_CHECK(connection, occurrence)
    if refusal is not None:
        return refusal
    now = fact_time(connection, now_utc, occurrence_id)
    generation = occurrence.claim_generation + 1
    why = (
        f"attempt {generation} claimed by {worker_identity} "
        f"(alias {implementation_alias}, epoch {gate.execution_epoch}, "
        f"disable generation {gate.disable_generation})"
    )
    if paced:
        why += PACED_MARK + json.dumps(dict(paced), sort_keys=True)
    try:
        transition(
            connection,
            occurrence,
            OccurrenceState.DISPATCHING,
            now_utc=now,
            by=worker_identity,
            why=why,
            state_reason=f"claimed by {worker_identity}",
            guard=_owns_slot(),
            values={"claim_generation": generation, "next_attempt_at_utc": None},
        )
    except ClaimLost:
        return _lost(connection, occurrence_id)
    attempt = AttemptView(
        occurrence_id=occurrence_id,
        claim_generation=generation,
        worker_identity=worker_identity,
        implementation_alias=implementation_alias,
        execution_epoch=gate.execution_epoch,
        disable_generation=gate.disable_generation,
        gate_revision=gate.active_revision,
        input_digest=input_digest,
        started_at_utc=now,
        finished_at_utc=None,
        outcome=None,
        error_class=None,
        error_message=None,
    )
    connection.execute(insert(ATTEMPTS).values(**_attempt_values(attempt)))
    return ClaimResult(attempt=attempt)


def _attempt_values(attempt: AttemptView) -> dict[str, object]:
    return {name: getattr(attempt, name) for name in AttemptView.__slots__}


def _disabled(gate: GateView, view: GateView, alias: str) -> ClaimResult | None:
    if gate.disabled:
        return ClaimResult(
            refusal=ClaimRefusal.DISABLED, detail=f"disabled: {gate.disabled_reason}"
        )
    return None


def _disable_generation(gate: GateView, view: GateView, alias: str) -> ClaimResult | None:
    if gate.disable_generation != view.disable_generation:
        return ClaimResult(
            refusal=ClaimRefusal.DISABLE_GENERATION_CHANGED,
            detail=f"disable generation {gate.disable_generation}, read {view.disable_generation}",
        )
    return None


def _execution_epoch(gate: GateView, view: GateView, alias: str) -> ClaimResult | None:
    if gate.execution_epoch != view.execution_epoch:
        return ClaimResult(
            refusal=ClaimRefusal.EXECUTION_EPOCH_CHANGED,
            detail=f"execution epoch {gate.execution_epoch}, read {view.execution_epoch}",
        )
    return None


def _implementation_alias(gate: GateView, view: GateView, alias: str) -> ClaimResult | None:
    if gate.implementation_alias != alias:
        return ClaimResult(
            refusal=ClaimRefusal.IMPLEMENTATION_ALIAS_MISMATCH,
            detail=f"gate alias {gate.implementation_alias!r}, worker runs {alias!r}",
        )
    return None


def _active_revision(gate: GateView, view: GateView, alias: str) -> ClaimResult | None:
    if gate.active_revision != view.active_revision:
        return ClaimResult(
            refusal=ClaimRefusal.REVISION_CHANGED,
            detail=f"active revision {gate.active_revision}, read {view.active_revision}",
        )
    return None


GATE_CHECKS: tuple[Callable[[GateView, GateView, str], ClaimResult | None], ...] = (
    _disabled,
    _disable_generation,
    _execution_epoch,
    _implementation_alias,
    _active_revision,
)
"""The claim's gate checks, in order: each compares the locked gate with the claimer's view (and
the worker's alias) and returns a refusal or ``None``. A tuple so that the acceptance-point gate's
mutation test (``tests/faults/test_gate_mutants.py``) can drop each one in turn and see the gate
fail."""


def _owning_revision(connection: Connection, occurrence: OccurrenceView) -> ClaimResult | None:
    """Refuse a claim of an occurrence whose revision no longer owns its instant (cutovers)."""
    owner = owning_revision(
        occurrence.placed_at_utc, schedule_cutovers(connection, occurrence.schedule_id)
    )
    if owner != occurrence.revision:
        return _not_owner(occurrence.occurrence_id, f"revision {owner} owns its instant")
    return None


OWNERSHIP_CHECK: Callable[[Connection, OccurrenceView], ClaimResult | None] = _owning_revision
"""The claim's cutover check, after the gate checks and the state check (a seam like
:data:`GATE_CHECKS`, for the same mutation test)."""


def _owns_slot() -> Exists:
    return exists().where(
        and_(
            SLOTS.c.schedule_id == OCCURRENCES.c.schedule_id,
            SLOTS.c.logical_slot_id == OCCURRENCES.c.logical_slot_id,
            SLOTS.c.owner_occurrence_id == OCCURRENCES.c.occurrence_id,
        )
    )


def _not_claimable(occurrence_id: str, state: OccurrenceState) -> ClaimResult:
    return ClaimResult(
        refusal=ClaimRefusal.NOT_CLAIMABLE, detail=f"{occurrence_id} is {state.value}"
    )


def _not_owner(occurrence_id: str, why: str) -> ClaimResult:
    return ClaimResult(
        refusal=ClaimRefusal.NOT_OWNER,
        detail=f"{occurrence_id} no longer owns its logical slot or its instant ({why})",
    )


def _lost(connection: Connection, occurrence_id: str) -> ClaimResult:
    """The refusal of a claim whose compare-and-set changed no row (read again to say why)."""
    state = OccurrenceState(
        connection.execute(
            select(OCCURRENCES.c.state).where(OCCURRENCES.c.occurrence_id == occurrence_id)
        ).scalar_one()
    )
    if state not in _CLAIMABLE:
        return _not_claimable(occurrence_id, state)
    return _not_owner(occurrence_id, "another occurrence holds its logical slot")


def mark_running(
    ledger: Ledger, occurrence_id: str, claim_generation: int, now_utc: Now, *, by: str
) -> OccurrenceView:
    """``DISPATCHING → RUNNING``: the downstream accepted the call of attempt ``claim_generation``.

    ``now_utc``: an instant or a clock read once the occurrence is locked (:func:`fact_time`).

    Returns:
        The occurrence before the transition.

    Raises:
        OccurrenceNotFound, IllegalTransition, ClaimLost (another attempt holds the claim).

    """
    check_now(now_utc)
    return ledger.write(
        lambda c: transition(
            c,
            occurrence_id,
            OccurrenceState.RUNNING,
            now_utc=fact_time(c, now_utc, occurrence_id),
            by=by,
            why=f"attempt {claim_generation} running",
            claim_generation=claim_generation,
        )
    )


def cancel(
    ledger: Ledger, occurrence_id: str, now_utc: datetime, *, by: str, why: str
) -> OccurrenceView:
    """``PLANNED|DUE|RETRY_WAIT → CANCELLED`` with a reason.

    ``RETRY_WAIT`` may be cancelled because it is entered only after a failure confirmed to have
    had no effect; ``DISPATCHING``, ``RUNNING`` and ``UNKNOWN_EFFECT`` never can (an effect whose
    dispatch won is never treated as cancelled).

    Returns:
        The occurrence before the transition.

    Raises:
        OccurrenceNotFound, IllegalTransition, ClaimLost.

    """
    require_aware("now_utc", now_utc)
    return ledger.write(
        lambda c: transition(
            c, occurrence_id, OccurrenceState.CANCELLED, now_utc=now_utc, by=by, why=why
        )
    )


def redeliver(
    ledger: Ledger,
    occurrence_id: str,
    claim_generation: int,
    now_utc: Now,
    *,
    by: str,
    input_digest: str,
) -> AttemptView:
    """Open attempt ``claim_generation + 1`` of a dispatch that lost its acknowledgement.

    When the worker running attempt N dies after the downstream may have accepted the call and
    before the outcome was recorded, Temporal retries the activity, which finds the occurrence
    still ``DISPATCHING`` or ``RUNNING`` under attempt N. For a downstream that honours the
    idempotency key, re-sending the same key is safe: attempt N is recorded ``LOST`` and
    attempt N+1 is opened in the same state (the dispatch already won; the gate is not asked again,
    seed: "an effect whose dispatch has already won … cannot be treated as canceled"). For other
    downstreams the caller records ``UNKNOWN_EFFECT`` instead. The event row records the
    redelivery (``from_state == to_state``).

    Returns:
        The new attempt.

    Raises:
        OccurrenceNotFound, IllegalTransition (not DISPATCHING/RUNNING), ClaimLost (another
        attempt holds the claim).

    """
    check_now(now_utc)

    def work(connection: Connection) -> AttemptView:
        now = fact_time(connection, now_utc, occurrence_id)
        current = load_occurrence(connection, occurrence_id)
        if current.state not in (OccurrenceState.DISPATCHING, OccurrenceState.RUNNING):
            raise IllegalTransition(occurrence_id, current.state, current.state)
        previous = connection.execute(
            select(ATTEMPTS)
            .where(ATTEMPTS.c.occurrence_id == occurrence_id)
            .where(ATTEMPTS.c.claim_generation == claim_generation)
        ).one_or_none()
        if previous is None or current.claim_generation != claim_generation:
            raise ClaimLost(occurrence_id, f"attempt {claim_generation} no longer holds the claim")
        generation = claim_generation + 1
        transition(
            connection,
            current,
            current.state,
            now_utc=now,
            by=by,
            why=(
                f"attempt {generation} redelivers attempt {claim_generation} with the same "
                "idempotency key (lost acknowledgement)"
            ),
            state_reason=f"attempt {generation} redelivers attempt {claim_generation}",
            claim_generation=claim_generation,
            values={"claim_generation": generation},
            same_state=True,
        )
        lose_attempt(
            connection,
            occurrence_id,
            claim_generation,
            now,
            by,
            "the worker stopped before recording the outcome",
        )
        # The same dispatch, checked against the same gate: only the attempt's own fields change.
        attempt = replace(
            AttemptView.from_row(previous),
            claim_generation=generation,
            worker_identity=by,
            input_digest=input_digest,
            started_at_utc=now,
            finished_at_utc=None,
            outcome=None,
            error_class=None,
            error_message=None,
        )
        connection.execute(insert(ATTEMPTS).values(**_attempt_values(attempt)))
        return attempt

    return ledger.write(work)
