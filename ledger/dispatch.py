"""The dispatch decision of one occurrence: claim it, or settle why not, in one transaction.

A claim for dispatch is the acceptance point of an occurrence workflow's attempt. Besides the
compare-and-set of :func:`ledger.occurrences.claim_in` it decides, under the same locks:

- a ``RETRY_WAIT`` occurrence superseded under ``overlapPolicy: CANCEL_OTHER`` is cancelled, not
  claimed (``ledger.overlap.superseded_by``);
- a refusal for ``REVISION_CHANGED`` is checked once more against the gate as locked now: a
  revision published since the release does not by itself end an occurrence (the old revision
  still owns instants before the new cutover), so the ownership checks decide (``NOT_OWNER``
  cancels what the new revision took over);
- a retried claim (the caller's earlier try committed but its answer was lost) that finds the
  occurrence ``DISPATCHING`` or ``RUNNING`` adopts that claim: one workflow runs per occurrenceId,
  so the earlier claim was its own, and refusing it would strand the occurrence;
- a refusal that means "the gate no longer wants this run" (:data:`CANCELLING_REFUSALS`) cancels a
  ``DUE`` or ``RETRY_WAIT`` occurrence with the ledger's reason; other refusals (another claim
  won, a foreign implementation alias, a rollback's epoch) leave it as it is.

DESIGN §2: one change, one function, one transaction; the ledger decides the next state.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from sqlalchemy import Connection

from ledger.db import Ledger
from ledger.events import Now, check_now, fact_time, load_occurrence
from ledger.gate import lock_gate
from ledger.occurrences import claim_in
from ledger.overlap import superseded_by
from ledger.transitions import transition
from ledger.views import AttemptView, ClaimResult, OccurrenceView
from lifecycle import ClaimRefusal, GateView, OccurrenceState

S = OccurrenceState

CANCELLING_REFUSALS = frozenset(
    {
        ClaimRefusal.DISABLED,
        ClaimRefusal.DISABLE_GENERATION_CHANGED,
        ClaimRefusal.REVISION_CHANGED,
        ClaimRefusal.NOT_OWNER,
    }
)
"""Refusals that cancel the occurrence (``DUE``/``RETRY_WAIT`` only), with the ledger's reason."""
_IN_DISPATCH = frozenset({S.DISPATCHING, S.RUNNING})
_CANCELLABLE = frozenset({S.DUE, S.RETRY_WAIT})


@dataclass(frozen=True, slots=True)
class DispatchClaim:
    """What a claim for dispatch decided.

    Attributes:
        occurrence: the occurrence after the decision (``DISPATCHING`` when won; ``RUNNING`` may
            be adopted; ``CANCELLED`` when the refusal cancelled it).
        attempt: the attempt the claim opened (``None``: refused, or an earlier claim adopted).
        refusal: why the claim was refused (``None``: won or adopted).
        detail: the refusal in words (names the values compared, or the superseding occurrence).
        adopted: an earlier try's claim was adopted (see the module docstring).

    """

    occurrence: OccurrenceView
    attempt: AttemptView | None = None
    refusal: ClaimRefusal | None = None
    detail: str = ""
    adopted: bool = False

    @property
    def claimed(self) -> bool:
        """Whether the occurrence is this caller's to run (a won or adopted claim)."""
        return self.refusal is None

    @property
    def claim_generation(self) -> int:
        """The claimed attempt's generation (0 when refused)."""
        return self.occurrence.claim_generation if self.claimed else 0


def claim_for_dispatch(
    ledger: Ledger,
    occurrence_id: str,
    gate_view: GateView,
    *,
    worker_identity: str,
    implementation_alias: str,
    input_digest: str,
    now_utc: Now,
    retried: bool = False,
    paced: Mapping[str, Any] | None = None,
) -> DispatchClaim:
    """Claim an occurrence for dispatch, or settle its refusal, in one transaction.

    Args:
        ledger: the ledger.
        occurrence_id: the occurrence to claim.
        gate_view: the gate as its releaser read it.
        worker_identity: who claims (on the attempt and the events).
        implementation_alias: the implementation the worker runs.
        input_digest: digest of what the attempt will send (stored on the attempt).
        now_utc: an instant, or the clock read once the locks are held (:data:`Now`).
        retried: this is a retry of a claim whose answer may have been lost (the caller's
            earlier try may have committed): a ``DISPATCHING``/``RUNNING`` occurrence is adopted.
        paced: evidence of the start slot the occurrence waited for (``catchUpSpacing``): a
            won claim records it on its ``DISPATCHING`` event (``ledger.occurrences.claim_in``).

    Returns:
        The decision (module docstring); nothing is written for a refusal that does not cancel.

    Raises:
        OccurrenceNotFound: no such occurrence.
        ScheduleNotFound: the schedule has no gate.
        ValueError: ``gate_view`` is another schedule's.

    """
    check_now(now_utc)

    def work(connection: Connection) -> DispatchClaim:
        occurrence = load_occurrence(connection, occurrence_id)
        newer = superseded_by(connection, occurrence)
        if newer is not None:
            why = f"overlap: superseded by {newer} (overlapPolicy CANCEL_OTHER)"
            return _cancel(
                connection, occurrence, now_utc, worker_identity, why, f"superseded by {newer}"
            )
        result = _claim(connection, occurrence_id, gate_view, implementation_alias)
        if result.refusal is ClaimRefusal.REVISION_CHANGED:
            current = lock_gate(connection, occurrence.schedule_id)
            result = _claim(connection, occurrence_id, current, implementation_alias)
        return _settle(connection, occurrence_id, result, now_utc, worker_identity, retried)

    def _claim(connection: Connection, oid: str, view: GateView, alias: str) -> ClaimResult:
        return claim_in(
            connection,
            oid,
            view,
            worker_identity=worker_identity,
            implementation_alias=alias,
            input_digest=input_digest,
            now_utc=now_utc,
            paced=paced,
        )

    return ledger.write(work)


def _settle(
    connection: Connection,
    occurrence_id: str,
    result: ClaimResult,
    now_utc: Now,
    by: str,
    retried: bool,
) -> DispatchClaim:
    """The decision after the compare-and-set: won, adopted, cancelled or left as it is."""
    current = load_occurrence(connection, occurrence_id)
    if result.attempt is not None:
        return DispatchClaim(current, attempt=result.attempt)
    assert result.refusal is not None
    if retried and result.refusal is ClaimRefusal.NOT_CLAIMABLE and current.state in _IN_DISPATCH:
        return DispatchClaim(current, adopted=True)
    if result.refusal in CANCELLING_REFUSALS and current.state in _CANCELLABLE:
        why = f"claim refused: {result.refusal.value} {result.detail}".strip()
        return _cancel(connection, current, now_utc, by, why, result.detail, result.refusal)
    return DispatchClaim(current, refusal=result.refusal, detail=result.detail)


def _cancel(
    connection: Connection,
    occurrence: OccurrenceView,
    now_utc: Now,
    by: str,
    why: str,
    detail: str,
    refusal: ClaimRefusal = ClaimRefusal.NOT_CLAIMABLE,
) -> DispatchClaim:
    """Cancel a refused occurrence (``DUE|RETRY_WAIT → CANCELLED``) with ``why``."""
    now = fact_time(connection, now_utc, occurrence.occurrence_id)
    before = transition(connection, occurrence, S.CANCELLED, now_utc=now, by=by, why=why)
    after = load_occurrence(connection, before.occurrence_id)
    return DispatchClaim(after, refusal=refusal, detail=detail)
