"""Occurrence states and the one table of legal transitions (DESIGN §4).

The table below is the single source of truth. :mod:`ledger.transitions`, through which every
state change goes, checks it (:func:`is_legal`) before its compare-and-set and raises
:class:`ledger.errors.IllegalTransition` for any other pair; the compare-and-set's ``WHERE state =
<observed>`` then catches a concurrent change. The database repeats the state list in a CHECK
constraint, so an unknown state cannot be written even by hand, and a trigger (migrations 0002,
0005, 0009, 0014 and 0018 hold frozen copies of this table — tests keep 0014's and 0018's equal)
rejects any other state change as a backstop, even one issued as raw SQL.

Decisions recorded here (DESIGN §4, invariant 5):

- ``RETRY_WAIT → CANCELLED`` is legal. An occurrence reaches ``RETRY_WAIT`` only when the last
  attempt's failure is *confirmed* to have had no effect (an unconfirmed outcome goes to
  ``UNKNOWN_EFFECT`` instead), so cancelling it never hides an effect whose dispatch won.
- ``SKIPPED_OVERLAP`` is reached only from ``PLANNED`` or ``DUE`` (never dispatched): the
  overlap policy decides before a claim, so a skip never hides an effect.
- ``DISPATCHING`` and ``RUNNING`` can never be cancelled: once a dispatch won, the effect may exist.
- ``UNKNOWN_EFFECT`` leaves only through reconciliation: ``SUCCEEDED`` (the downstream confirms the
  effect) or ``FAILED`` (confirmed not applied). Putting it in the human queue keeps the state and
  records the decision on its reconciliation case.
- ``MISFIRE_EXPIRED → DUE`` is not in :data:`TRANSITIONS` (``MISFIRE_EXPIRED`` stays terminal for
  the lifecycle: nothing automatic ever leaves it). It is the one edge of
  :data:`BACKFILL_TRANSITIONS`, taken only by an operator's ``almanac backfill --include-expired``
  (:mod:`ledger.backfill`, ``transition(..., backfill=True)``); the database allows it only in an
  update that also records the backfill (``backfill_at_utc``, migration 0009). An expired
  occurrence was never dispatched, so running it later can never be a second effect.
"""

from __future__ import annotations

from collections.abc import Mapping
from enum import StrEnum

# Re-exported: the states and refusals the table and the claim speak of (defined in lifecycle).
from lifecycle.states import ClaimRefusal as ClaimRefusal
from lifecycle.states import OccurrenceState as OccurrenceState

S = OccurrenceState

TRANSITIONS: Mapping[OccurrenceState, frozenset[OccurrenceState]] = {
    S.PLANNED: frozenset({S.DUE, S.CANCELLED, S.MISFIRE_EXPIRED, S.SKIPPED_OVERLAP}),
    S.DUE: frozenset({S.DISPATCHING, S.CANCELLED, S.MISFIRE_EXPIRED, S.SKIPPED_OVERLAP}),
    S.DISPATCHING: frozenset({S.RUNNING, S.UNKNOWN_EFFECT, S.RETRY_WAIT, S.FAILED}),
    S.RUNNING: frozenset({S.SUCCEEDED, S.RETRY_WAIT, S.UNKNOWN_EFFECT, S.FAILED}),
    S.RETRY_WAIT: frozenset({S.DISPATCHING, S.CANCELLED, S.FAILED}),
    S.UNKNOWN_EFFECT: frozenset({S.SUCCEEDED, S.FAILED}),
    S.SUCCEEDED: frozenset(),
    S.FAILED: frozenset(),
    S.SKIPPED_GAP: frozenset(),
    S.MISFIRE_EXPIRED: frozenset(),
    S.CANCELLED: frozenset(),
    S.SKIPPED_OVERLAP: frozenset(),
    S.SKIPPED_HOLIDAY: frozenset(),
    S.EXCLUDED: frozenset(),
}
"""Legal transitions: ``TRANSITIONS[from]`` is the set of states ``from`` may move to."""

TERMINAL: frozenset[OccurrenceState] = frozenset(s for s, nxt in TRANSITIONS.items() if not nxt)
"""States with no way out: SUCCEEDED, FAILED, SKIPPED_GAP, MISFIRE_EXPIRED, CANCELLED,
SKIPPED_OVERLAP, SKIPPED_HOLIDAY, EXCLUDED."""

INITIAL: frozenset[OccurrenceState] = frozenset(
    {S.PLANNED, S.SKIPPED_GAP, S.SKIPPED_HOLIDAY, S.EXCLUDED}
)
"""States an occurrence is created in (by materialization)."""

LIVE: frozenset[OccurrenceState] = frozenset(TRANSITIONS) - TERMINAL - {S.SKIPPED_GAP}
"""States in which an occurrence still holds its logical slot and may yet act."""


BACKFILL_TRANSITIONS: Mapping[OccurrenceState, frozenset[OccurrenceState]] = {
    S.MISFIRE_EXPIRED: frozenset({S.DUE}),
}
"""Edges only an operator's backfill takes (module docstring): ``MISFIRE_EXPIRED → DUE``."""


def sources(to_state: OccurrenceState) -> frozenset[OccurrenceState]:
    """The states from which ``to_state`` may be reached (the ``WHERE state IN`` of a CAS)."""
    return frozenset(s for s, nxt in TRANSITIONS.items() if to_state in nxt)


def is_legal(
    from_state: OccurrenceState, to_state: OccurrenceState, *, backfill: bool = False
) -> bool:
    """Whether ``from_state → to_state`` is in :data:`TRANSITIONS`.

    With ``backfill`` (an operator's backfill, :mod:`ledger.backfill`), the edges of
    :data:`BACKFILL_TRANSITIONS` are legal too.
    """
    if to_state in TRANSITIONS[from_state]:
        return True
    return backfill and to_state in BACKFILL_TRANSITIONS.get(from_state, frozenset())


class AttemptOutcome(StrEnum):
    """How an attempt ended (``None`` while it runs)."""

    SUCCEEDED = "SUCCEEDED"
    RETRYABLE_FAILURE = "RETRYABLE_FAILURE"
    FAILED = "FAILED"
    UNKNOWN = "UNKNOWN"
    LOST = "LOST"
    """Its worker stopped before recording an outcome, so nobody saw it end: ``finished_at_utc``
    stays NULL and ``lost_detected_at_utc`` / ``lost_detected_by`` say when and by whom the loss
    was noticed (the next try of the same dispatch)."""


class ReconciliationResolution(StrEnum):
    """How a reconciliation case for an UNKNOWN_EFFECT occurrence was resolved."""

    SUCCEEDED = "SUCCEEDED"
    """The downstream confirms the effect: the occurrence becomes SUCCEEDED."""
    NOT_APPLIED = "NOT_APPLIED"
    """The downstream confirms no effect: the occurrence becomes FAILED (never silently re-sent)."""
    HUMAN = "HUMAN"
    """Put in the human queue: the occurrence stays UNKNOWN_EFFECT, the case stays open."""


class ScheduleEventKind(StrEnum):
    """What a ``schedule_events`` row records: a fact about a schedule as a whole."""

    PUBLISHED = "PUBLISHED"
    """A revision became active (``revision``)."""
    REVISION_REJECTED = "REVISION_REJECTED"
    """A revision was refused; ``detail`` names the field, the value and why."""
    DISABLED = "DISABLED"
    """The gate was disabled (``detail``: the reason and the new disable generation)."""
    ENABLED = "ENABLED"
    """The gate was enabled (``detail``: the new disable generation and the misfire decision)."""
    DELETED = "DELETED"
    """The schedule was deleted: nothing new is claimed; every fact is kept."""
    ACTIVITY_REJECTED = "ACTIVITY_REJECTED"
    """An activity refused with a deterministic (non-retryable) error; the schedule ran on."""
