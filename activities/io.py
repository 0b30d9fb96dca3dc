"""The activities' input and result dataclasses: the contract between workflows and activities.

Workflows call the activities by method reference (``workflow.execute_activity_method(
AlmanacActivities.claim, ClaimOccurrenceInput(...), ...)``), so the input and result types come
from the methods' signatures. The names below are the activity types registered on the worker and
written in every recorded history: they never change. Every payload is a frozen dataclass made of
types Temporal's default converter supports: ``str``, ``int``, ``bool``, aware ``datetime`` (UTC),
lists and nested dataclasses. Durations cross as ``*_seconds`` floats, because the converter has no
``timedelta``. Names follow ``<Verb><Noun>Input``/``…Result`` and differ from the ledger's own
types (``GateSnapshot`` here, ``ledger.GateView`` there).

Every input's ``now_utc`` is the workflow's instant when it scheduled the call. Temporal hands it
back unchanged when the activity is retried (after a crash, minutes later), so the activities use
it only as a *decision* instant (the materialization window, the release/misfire decision) and
read every instant they record from their own clock (``activities.clock``). The field stays in
the other inputs because recorded histories carry it.
"""

from dataclasses import dataclass, field
from datetime import datetime
from typing import Any

MATERIALIZE = "almanac.materialize"
RELEASE_DUE = "almanac.release_due"
PUBLISH_REVISION = "almanac.publish_revision"
SET_GATE = "almanac.set_gate"
CLAIM = "almanac.claim"
EXECUTE_ATTEMPT = "almanac.execute_attempt"
QUERY_EFFECT = "almanac.query_effect"
ESCALATE = "almanac.escalate"
RECORD_TRIGGER = "almanac.record_trigger"

DEFAULT_IMPLEMENTATION_ALIAS = "default"
"""``ledger.DEFAULT_IMPLEMENTATION_ALIAS`` (repeated here: workflows see only this module)."""


def alias_task_queue(base: str, alias: str) -> str:
    """The task queue of an implementation alias's occurrence workflows (canary routing).

    ``base`` itself for the default alias (so a single-implementation deployment has one queue),
    else ``<base>.<alias>`` (``almanac.v2``): workers of alias ``v2`` poll it, nobody else does.
    The schedule workflow starts each occurrence on the queue of the alias its gate names; the
    claim checks the alias again (a worker of another alias is refused).
    """
    return base if alias == DEFAULT_IMPLEMENTATION_ALIAS else f"{base}.{alias}"


@dataclass(frozen=True)
class GateSnapshot:
    """The schedule gate as a releaser read it, carried to the claim (DESIGN §4 invariant 3).

    A claim succeeds only if the gate still shows exactly these values when the claim commits. The
    payload copy of ``ledger.GateView`` (``activities.ledger_activities.gate_payload``).
    """

    schedule_id: str
    active_revision: int
    disabled: bool
    disabled_reason: str | None
    disable_generation: int
    execution_epoch: int
    implementation_alias: str
    updated_at_utc: datetime


@dataclass(frozen=True)
class UpcomingOccurrence:
    """One occurrence as shown by the ``upcoming`` query and carried to an occurrence workflow."""

    occurrence_id: str
    schedule_id: str
    revision: int
    nominal_local: str
    """ISO local date-time without offset (``2026-11-01T01:30:00``)."""
    fold: int
    instant_utc: datetime
    state: str
    jitter_seconds: float = 0.0
    """The dispatch delay recorded at materialization (``occurrences.jitter_ms``): the occurrence
    workflow waits it on a durable timer before its first claim. 0 without ``jitter``."""


@dataclass(frozen=True)
class MaterializeOccurrencesInput:
    """Materialize ``[from_utc, now + horizon)`` for every revision that owns part of it.

    ``from_utc`` is the previous run's ``materialized_through_utc`` (``None`` the first time: the
    ledger clamps the window to each revision's cutover and publication, never backfilling).
    """

    schedule_id: str
    now_utc: datetime
    horizon_seconds: float
    from_utc: datetime | None = None
    upcoming_limit: int = 20


@dataclass(frozen=True)
class MaterializeOccurrencesResult:
    """What the ledger holds after materializing, for the workflow's timers and queries."""

    gate: GateSnapshot
    materialized_through_utc: datetime
    next_instant_utc: datetime | None
    """The earliest PLANNED instant after ``now`` (the next timer), if any."""
    upcoming: list[UpcomingOccurrence]
    counts_by_state: dict[str, int]
    inserted: int


@dataclass(frozen=True)
class ReleaseDueInput:
    """Release due occurrences at ``now`` through the misfire policy."""

    schedule_id: str
    now_utc: datetime


@dataclass(frozen=True)
class ReleaseDueResult:
    """DUE occurrences to start children for (oldest first), the gate view, the expired count."""

    gate: GateSnapshot
    due: list[UpcomingOccurrence]
    expired: int
    held: int = 0
    """DUE occurrences buffered behind a running one (``overlapPolicy`` ``BUFFER_ONE``/
    ``BUFFER_ALL``), not in ``due``: the schedule starts them when the running one ends."""
    skipped_overlap: int = 0
    """Occurrences this release recorded ``SKIPPED_OVERLAP``."""


@dataclass(frozen=True)
class PublishRevisionInput:
    """A revision published by signal: the raw spec data, validated by the activity."""

    schedule_id: str
    spec: dict[str, Any]
    now_utc: datetime


@dataclass(frozen=True)
class PublishRevisionResult:
    """Accepted, or rejected with the reason (a rejected revision changes nothing)."""

    accepted: bool
    revision: int | None
    reason: str


@dataclass(frozen=True)
class SetGateInput:
    """Disable (with a reason) or enable a schedule; both bump the disable generation."""

    schedule_id: str
    disabled: bool
    reason: str
    now_utc: datetime
    by: str = "signal"


@dataclass(frozen=True)
class ClaimOccurrenceInput:
    """Claim an occurrence for dispatch against the gate view its releaser read."""

    occurrence_id: str
    gate: GateSnapshot
    now_utc: datetime


@dataclass(frozen=True)
class ClaimOccurrenceResult:
    """The claim's outcome: ``claimed`` with the attempt's claim generation, or a refusal."""

    claimed: bool
    claim_generation: int
    refusal: str | None
    """Why the ledger refused: a ``ledger.ClaimRefusal`` (e.g. ``DISABLED``, ``NOT_CLAIMABLE``)."""
    state: str
    """The occurrence's state after the call."""


@dataclass(frozen=True)
class ExecuteAttemptInput:
    """Run the action of a claimed occurrence once and record the outcome in the ledger."""

    occurrence_id: str
    claim_generation: int
    """The claimed attempt: ``(occurrence_id, claim_generation)`` identifies it in the ledger."""
    claim_number: int
    """This workflow's n-th won claim of the occurrence (1 for the first); retries are allowed
    while it is below ``max_attempts``. A redelivery opens a new attempt but is not a new claim."""
    max_attempts: int
    now_utc: datetime
    first_retry_delay_seconds: float = 10.0
    """Backoff before the second attempt; it doubles per attempt (at most 10 minutes)."""


@dataclass(frozen=True)
class ExecuteAttemptResult:
    """The recorded outcome: the occurrence's new state and, for RETRY_WAIT, the backoff."""

    state: str
    """SUCCEEDED, RETRY_WAIT, FAILED or UNKNOWN_EFFECT."""
    retry_after_seconds: float = 0.0
    can_query_result: bool = False
    detail: str = ""
    reconcile_deadline_utc: datetime | None = None
    """For UNKNOWN_EFFECT: the case's deadline (opened + 30 minutes), in the ledger's clock."""


@dataclass(frozen=True)
class QueryEffectInput:
    """Ask the downstream whether an UNKNOWN_EFFECT occurrence's effect happened."""

    occurrence_id: str
    now_utc: datetime


@dataclass(frozen=True)
class QueryEffectResult:
    """``known`` is False while the downstream cannot tell; ``state``: the ledger's state after."""

    known: bool
    state: str
    detail: str = ""


@dataclass(frozen=True)
class EscalateInput:
    """Put an unresolved UNKNOWN_EFFECT occurrence in the human queue."""

    occurrence_id: str
    why: str
    now_utc: datetime


@dataclass
class ScheduleStatus:
    """The ``status`` query's answer, from the latest ledger reading the workflow holds."""

    schedule_id: str
    gate: GateSnapshot | None
    next_instant_utc: datetime | None
    counts_by_state: dict[str, int] = field(default_factory=dict)
    materialized_through_utc: datetime | None = None
    rejected_signals: int = 0
    last_rejected_signal: str = ""
    """The latest malformed signal or rejected revision, and why (also in the worker log)."""
    last_error: str = ""
    """The latest activity failure the loop survived (it retries on the next wake-up)."""
    duplicate_starts: int = 0
    """Child starts refused because the occurrence's workflow already existed (harmless)."""


@dataclass(frozen=True)
class RecordTriggerInput:
    """Record (once) and release a manual occurrence: ``<scheduleId>.manual.<requestId>``."""

    schedule_id: str
    request_id: str
    reason: str
    by: str


@dataclass(frozen=True)
class RecordTriggerResult:
    """The manual occurrence, the gate view to claim against, and whether this call recorded it."""

    occurrence: UpcomingOccurrence
    gate: GateSnapshot
    created: bool
