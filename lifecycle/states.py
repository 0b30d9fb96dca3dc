"""The occurrence states and claim refusals (DESIGN §4): their one definition.

Members are ``StrEnum``s: a state crosses the workflow boundary as its name (the wire shape the
recorded histories hold) and compares equal to it. The legal transitions between them are the
ledger's (:data:`ledger.states.TRANSITIONS`).
"""

from __future__ import annotations

from enum import StrEnum


class OccurrenceState(StrEnum):
    """The state of one occurrence (DESIGN §4; names match the seed)."""

    PLANNED = "PLANNED"
    """Materialized, its instant not yet released."""
    DUE = "DUE"
    """Released by misfire planning; may be claimed."""
    DISPATCHING = "DISPATCHING"
    """A claim won; the downstream call is being made."""
    RUNNING = "RUNNING"
    """The downstream accepted the call."""
    SUCCEEDED = "SUCCEEDED"
    """Terminal: the effect is confirmed."""
    RETRY_WAIT = "RETRY_WAIT"
    """The last attempt failed without effect; waiting for the next attempt."""
    UNKNOWN_EFFECT = "UNKNOWN_EFFECT"
    """The outcome of a dispatched attempt is not known; a reconciliation case is open."""
    FAILED = "FAILED"
    """Terminal: retries exhausted, non-retryable, or reconciled as not applied."""
    SKIPPED_GAP = "SKIPPED_GAP"
    """Terminal: the nominal local time does not exist (DST gap) or lost its slot (collision)."""
    MISFIRE_EXPIRED = "MISFIRE_EXPIRED"
    """Terminal: missed by more than ``lateness`` and beyond the catch-up bound."""
    CANCELLED = "CANCELLED"
    """Terminal: cancelled before any dispatch won (disabled, superseded by revision N, …)."""
    SKIPPED_OVERLAP = "SKIPPED_OVERLAP"
    """Terminal: came due while the schedule's previous occurrence still ran, and the spec's
    ``overlapPolicy`` (``SKIP``, or ``BUFFER_ONE`` with the buffer full) skips it. Never
    dispatched, so no effect can exist."""
    SKIPPED_HOLIDAY = "SKIPPED_HOLIDAY"
    """Terminal, created so: the nominal date is not a business day of the pinned calendar
    (``holiday`` names why), or a holiday move landed on a slot another occurrence holds."""
    EXCLUDED = "EXCLUDED"
    """Terminal, created so: the nominal time is excluded by the spec's ``exdates``."""


class ClaimRefusal(StrEnum):
    """Why a dispatch claim was refused (DESIGN §4 invariant 3). A refusal is a return value."""

    NOT_FOUND = "NOT_FOUND"
    """No such occurrence."""
    NOT_CLAIMABLE = "NOT_CLAIMABLE"
    """The occurrence is not DUE or RETRY_WAIT (another claim won, or it is terminal)."""
    DISABLED = "DISABLED"
    """The schedule is disabled."""
    DISABLE_GENERATION_CHANGED = "DISABLE_GENERATION_CHANGED"
    """The schedule was disabled or enabled since the claimer read the gate."""
    EXECUTION_EPOCH_CHANGED = "EXECUTION_EPOCH_CHANGED"
    """A rollback happened since the claimer read the gate."""
    IMPLEMENTATION_ALIAS_MISMATCH = "IMPLEMENTATION_ALIAS_MISMATCH"
    """The worker does not run the implementation alias the gate shows."""
    REVISION_CHANGED = "REVISION_CHANGED"
    """A revision was published since the claimer read the gate."""
    NOT_OWNER = "NOT_OWNER"
    """The occurrence's revision no longer owns its instant or its logical slot."""
