"""The activities' input and result dataclasses: the contract between workflows and activities.

Workflows call the activities by method reference (``workflow.execute_activity_method(
AlmanacActivities.claim, ClaimOccurrenceInput(...), ...)``), so the input and result types come
from the methods' signatures. The names below are the activity types registered on the worker and
written in every recorded history: they never change. Every payload is a frozen dataclass made of
types Temporal's default converter supports: ``str``, ``int``, ``bool``, aware ``datetime`` (UTC),
lists and nested dataclasses. Durations cross as ``*_seconds`` floats, because the converter has no
``timedelta``. Names follow ``<Verb><Noun>Input``/``…Result``; the values both sides share (states,
the gate, an occurrence) are ``lifecycle``'s, defined once.

Every input's ``now_utc`` is the workflow's instant when it scheduled the call. Temporal hands it
back unchanged when the activity is retried (after a crash, minutes later), so the activities use
it only as a *decision* instant (the materialization window, the release/misfire decision) and
read every instant they record from their own clock (``activities.clock``). The field stays in
the other inputs because recorded histories carry it.
"""

from dataclasses import dataclass, field
from datetime import datetime, timedelta
from typing import Any

from lifecycle import DEFAULT_IMPLEMENTATION_ALIAS as DEFAULT_IMPLEMENTATION_ALIAS
from lifecycle import GateView, OccurrenceState
from lifecycle import UpcomingOccurrence as UpcomingOccurrence

MATERIALIZE = "almanac.materialize"
RELEASE_DUE = "almanac.release_due"
PUBLISH_REVISION = "almanac.publish_revision"
SET_GATE = "almanac.set_gate"
CLAIM = "almanac.claim"
EXECUTE_ATTEMPT = "almanac.execute_attempt"
CLAIM_AND_EXECUTE = "almanac.claim_and_execute"
QUERY_EFFECT = "almanac.query_effect"
ESCALATE = "almanac.escalate"
CHANGE_GATE = "almanac.change_gate"
DELETE_SCHEDULE = "almanac.delete_schedule"
RECORD_TRIGGER = "almanac.record_trigger"
BACKFILL = "almanac.backfill"

RELEASE_LEAD = timedelta(milliseconds=100)
"""How early a schedule's timer fires before an occurrence's instant (a duration, 0.1 s).
Temporal starts a timer when the workflow task that asks for it completes, so a timer of
``instant - workflow.now()`` fires late by that task's processing time (longer on a busy
worker); a timer shortened by this lead fires before the instant and the release waits for
it (``ReleaseDueInput.not_before_utc``): the release is never earlier than the instant."""
MAX_RELEASE_HOLD = timedelta(seconds=1)
"""The longest wait ``ReleaseDueInput.not_before_utc`` is honoured for (a duration)."""
RELEASE_GRACE = timedelta(seconds=1)
"""How late the workflow task a timer woke may start and still decide as of the timer's instant
(a duration, 1 s; ``workflows.schedule_timing``). A timer fires late when the task that set it
took longer than :data:`RELEASE_LEAD` (a busy worker); that is
not downtime (DESIGN §4: the misfire policy applies *after downtime*), so ``lateness`` is not
counted from it. A task that starts later than this — a worker that was down — decides as of its
own start, and the misfire policy applies."""


def alias_task_queue(base: str, alias: str) -> str:
    """The task queue of an implementation alias's occurrence workflows (canary routing).

    ``base`` itself for the default alias (so a single-implementation deployment has one queue),
    else ``<base>.<alias>`` (``almanac.v2``): workers of alias ``v2`` poll it, nobody else does.
    The schedule workflow starts each occurrence on the queue of the alias its gate names; the
    claim checks the alias again (a worker of another alias is refused).
    """
    return base if alias == DEFAULT_IMPLEMENTATION_ALIAS else f"{base}.{alias}"


GateSnapshot = GateView
"""The gate view a releaser read, carried to the claim: ``lifecycle.GateView`` itself (the
name callers outside the activities used for it)."""


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

    gate: GateView
    materialized_through_utc: datetime
    next_instant_utc: datetime | None
    """The earliest PLANNED instant after ``now`` (the next timer), if any."""
    upcoming: list[UpcomingOccurrence]
    counts_by_state: dict[str, int]
    inserted: int
    truncated: bool = False
    """The window held more than one call writes (``MATERIALIZE_LIMIT`` occurrences): it ends at
    ``materialized_through_utc``, before ``now + horizon``; the rest is the next call's."""


@dataclass(frozen=True)
class ReleaseDueInput:
    """Release due occurrences at ``now`` through the misfire policy."""

    schedule_id: str
    now_utc: datetime
    then_materialize: MaterializeOccurrencesInput | None = None
    """If the release decided anything (occurrences DUE or expired), materialize this window in
    the same activity afterwards and return the reading in ``ReleaseDueResult.materialized``:
    one activity instead of two (runs past the ``almanac-release-and-materialize`` patch ask for
    it; ``None``: release only)."""
    materialize_first: MaterializeOccurrencesInput | None = None
    """Materialize this window *before* releasing, in the same activity: a refresh's or a
    change's materialization, in the same activity as the release (runs past the
    ``almanac-materialize-in-release`` patch ask for it). A
    deterministic error fails the activity before anything is released, as the separate
    activity's failure skipped that wake-up's release. The reading taken after the release is
    returned in ``ReleaseDueResult.materialized`` whether or not the release decided anything
    (``then_materialize`` is then not needed: the window is the same)."""
    not_before_utc: datetime | None = None
    """The instant this wake-up's timer was set for (aware UTC): the release decides as of it.
    Either the timer fired :data:`RELEASE_LEAD` early (later than ``now_utc``): the release then
    waits until the activity's clock reaches it — after materializing first, before releasing —
    so nothing is released before its instant; the wait is only taken while it is at most
    :data:`MAX_RELEASE_HOLD` (a longer one means the clocks disagree). Or the timer's task
    started late, at most :data:`RELEASE_GRACE` after it (earlier than ``now_utc``): nothing to
    wait for, and ``lateness`` counts from the instant, not from the busy worker's task.
    ``None``: decide as of ``now_utc``, at once."""


@dataclass(frozen=True)
class ReleaseDueResult:
    """DUE occurrences to start children for (oldest first), the gate view, the expired count."""

    gate: GateView
    due: list[UpcomingOccurrence]
    expired: int
    held: int = 0
    """DUE occurrences buffered behind a running one (``overlapPolicy`` ``BUFFER_ONE``/
    ``BUFFER_ALL``), not in ``due``: the schedule starts them when the running one ends."""
    skipped_overlap: int = 0
    """Occurrences this release recorded ``SKIPPED_OVERLAP``."""
    materialized: MaterializeOccurrencesResult | None = None
    """The reading after the release: when ``materialize_first`` was given, or when
    ``then_materialize`` asked for it and the release decided anything (else ``None``)."""
    materialize_error: str | None = None
    """Why the follow-up materialization was refused (a deterministic error, recorded on the
    schedule as the materialize activity's): the release stands and its children still start."""
    catch_up_spacing_seconds: float = 0.0
    """The largest ``catchUpSpacing`` of the revisions owning ``due`` (0: none), when ``due``
    holds more than one occurrence: the schedule starts them that far apart."""


@dataclass(frozen=True)
class CatchUpPacing:
    """A released occurrence's start slot under ``catchUpSpacing``: it claims no earlier.

    The schedule workflow gives the ``slot``-th (from 0, oldest first) of the occurrences one
    release handed out the instant ``until_utc`` = the release's workflow time + ``slot`` ×
    ``spacing_seconds``; the occurrence waits for it on a durable timer (workflow time) before
    its first claim, which records this as evidence (:meth:`evidence`).
    """

    slot: int
    """Position among the release's occurrences, oldest first (0 is never paced)."""
    spacing_seconds: float
    """The spacing applied (``catchUpSpacing``), seconds."""
    until_utc: datetime
    """The start slot, in workflow time: the release + ``slot`` × ``spacing_seconds``."""

    def evidence(self) -> dict[str, Any]:
        """What the claim records: ``{"pacedBy": "catchUpSpacing", "delaySeconds": …, …}``."""
        return {
            "pacedBy": "catchUpSpacing",
            "delaySeconds": self.slot * self.spacing_seconds,
            "spacingSeconds": self.spacing_seconds,
            "slot": self.slot,
        }


@dataclass(frozen=True)
class PublishRevisionInput:
    """A revision published by signal: the raw spec data, validated by the activity."""

    schedule_id: str
    spec: dict[str, Any]
    now_utc: datetime


@dataclass(frozen=True)
class PublishRevisionResult:
    """The ledger's verdict on a revision: accepted, or rejected with the field, value and reason.

    A rejected revision changes nothing. Fields after ``reason`` were added with the update paths
    (issue 10); results recorded before them decode with the defaults.
    """

    accepted: bool
    revision: int | None
    reason: str
    """``published`` / ``already published (same digest)``, or why it was rejected."""
    field: str = ""
    """For a rejection: the spec field refused (``revision``, ``cutoverAt``, ``action.name``,
    ``action.parameters.url`` …), empty when the refusal is not about one field."""
    value: Any = None
    """For a rejection: the refused value as JSON data (``None`` when there is none)."""
    cutover_at_utc: datetime | None = None
    """The accepted revision's cutover (it owns ``[cutoverAt, next cutover)``)."""
    created: bool = False
    """The revision is new (``False``: the identical revision was published before)."""
    created_schedule: bool = False
    """The revision created the schedule (its first), or revived a deleted one."""
    superseded: int = 0
    """Occurrences of older revisions the new cutover cancelled."""
    gate: GateView | None = None
    """The gate after the call (``None``: the schedule has no gate)."""
    schedule_live: bool = True
    """``False`` when, after the call, the schedule has no gate or a deleted one: a rejected
    revision then leaves nothing to run, and the schedule workflow ends."""


@dataclass(frozen=True)
class SetGateInput:
    """Disable (with a reason) or enable a schedule; both bump the disable generation."""

    schedule_id: str
    disabled: bool
    reason: str
    now_utc: datetime
    by: str = "signal"


@dataclass(frozen=True)
class ChangeGateInput:
    """Disable (with a reason) or enable a schedule, and report what the change did."""

    schedule_id: str
    disabled: bool
    reason: str
    now_utc: datetime
    by: str = "update"


@dataclass(frozen=True)
class ChangeGateResult:
    """The ledger's verdict on a disable or enable (the ``disable``/``enable`` updates' answer).

    On enable the occurrences that came due while disabled are decided at once by the misfire
    policy, and counted here: ``came_due`` + ``due_before_disable`` = ``released`` + ``expired``.
    """

    schedule_id: str
    disabled: bool
    """The state asked for."""
    changed: bool
    """``False``: the gate was in that state already (nothing was written)."""
    gate: GateView | None
    """The gate afterwards (its ``disable_generation`` fences every earlier claim)."""
    rejected: str = ""
    """Non-empty when the change was refused (a deleted schedule cannot be enabled)."""
    cancelled: int = 0
    """Disable: DUE occurrences cancelled (``disabled: <reason>``)."""
    came_due: int = 0
    """Enable: PLANNED occurrences whose instant passed while disabled."""
    due_before_disable: int = 0
    """Enable: PLANNED occurrences whose instant had passed already when the schedule was
    disabled (no worker released them: an outage, a worker run with ``--no-catch-up``). The
    misfire policy decides them with the others (counted in ``released``/``expired``), but
    they did not come due while disabled."""
    released: int = 0
    """Enable: of those, released to run now (within lateness, or caught up)."""
    expired: int = 0
    """Enable: of those, recorded MISFIRE_EXPIRED."""
    misfire_policy: str = ""
    """Enable: the active revision's misfire policy (with ``maxCatchUp`` when bounded)."""


@dataclass(frozen=True)
class DeleteScheduleInput:
    """Delete a schedule: nothing new is claimed; the ledger keeps every fact."""

    schedule_id: str
    reason: str
    now_utc: datetime
    by: str = "update"


@dataclass(frozen=True)
class DeleteScheduleResult:
    """The ledger's verdict on a delete (the ``delete`` update's answer)."""

    schedule_id: str
    deleted: bool
    """``True`` when this call deleted it; ``False``: already deleted, or ``rejected``."""
    gate: GateView | None
    cancelled: int = 0
    """PLANNED, DUE and RETRY_WAIT occurrences cancelled (``deleted: <reason>``)."""
    rejected: str = ""
    """Non-empty when the delete was refused (the schedule has no gate)."""


@dataclass(frozen=True)
class ClaimOccurrenceInput:
    """Claim an occurrence for dispatch against the gate view its releaser read."""

    occurrence_id: str
    gate: GateView
    now_utc: datetime
    pacing: CatchUpPacing | None = None
    """The start slot the occurrence waited for (a first claim only): recorded with the claim."""


@dataclass(frozen=True)
class ClaimOccurrenceResult:
    """The claim's outcome: ``claimed`` with the attempt's claim generation, or a refusal."""

    claimed: bool
    claim_generation: int
    refusal: str | None
    """Why the ledger refused: a ``ledger.ClaimRefusal`` (e.g. ``DISABLED``, ``NOT_CLAIMABLE``)."""
    state: OccurrenceState
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
    schedule_id: str | None = None
    """The occurrence's scheduleId, where a refusal is recorded; ``None`` in inputs recorded
    before the workflow carried it: then parsed from ``occurrence_id``."""


@dataclass(frozen=True)
class ExecuteAttemptResult:
    """The recorded outcome: the occurrence's new state and, for RETRY_WAIT, the backoff."""

    state: OccurrenceState
    """SUCCEEDED, RETRY_WAIT, FAILED or UNKNOWN_EFFECT."""
    retry_after_seconds: float = 0.0
    can_query_result: bool = False
    detail: str = ""
    reconcile_deadline_utc: datetime | None = None
    """For UNKNOWN_EFFECT: the case's deadline (opened + 30 minutes), in the ledger's clock."""


@dataclass(frozen=True)
class ClaimAndExecuteInput:
    """Claim an occurrence against the releaser's gate view and, if won, run one attempt.

    One activity where there were two (``claim``, then ``execute_attempt``): the ledger's claim
    CAS is still the acceptance point, inside the activity, before the action is called.
    """

    occurrence_id: str
    gate: GateView
    claim_number: int
    """The claim this would be if won (1 for the first); see ``ExecuteAttemptInput``."""
    max_attempts: int
    now_utc: datetime
    first_retry_delay_seconds: float = 10.0
    pacing: CatchUpPacing | None = None
    """The start slot the occurrence waited for (a first claim only): recorded with the claim."""


@dataclass(frozen=True)
class ClaimAndExecuteResult:
    """The claim's outcome and, when it was won, the attempt's (``ExecuteAttemptResult``)."""

    claimed: bool
    """False: the ledger refused the claim (``refusal``), or could not be reached (``retry``)."""
    state: OccurrenceState
    """The occurrence's state after the call."""
    refusal: str | None = None
    ledger_unavailable: bool = False
    """The claim could not reach the ledger: claim again with the ledger's retry policy."""
    attempt: ExecuteAttemptResult | None = None


@dataclass(frozen=True)
class QueryEffectInput:
    """Ask the downstream whether an UNKNOWN_EFFECT occurrence's effect happened."""

    occurrence_id: str
    now_utc: datetime
    schedule_id: str | None = None
    """The occurrence's scheduleId, where a refusal is recorded; ``None`` in inputs recorded
    before the workflow carried it: then parsed from ``occurrence_id``."""


@dataclass(frozen=True)
class QueryEffectResult:
    """``known`` is False while the downstream cannot tell; ``state``: the ledger's state after."""

    known: bool
    state: OccurrenceState
    detail: str = ""


@dataclass(frozen=True)
class EscalateInput:
    """Put an unresolved UNKNOWN_EFFECT occurrence in the human queue."""

    occurrence_id: str
    why: str
    now_utc: datetime
    schedule_id: str | None = None
    """The occurrence's scheduleId, where a refusal is recorded; ``None`` in inputs recorded
    before the workflow carried it: then parsed from ``occurrence_id``."""


@dataclass
class ScheduleStatus:
    """The ``status`` query's answer, from the latest ledger reading the workflow holds."""

    schedule_id: str
    gate: GateView | None
    next_instant_utc: datetime | None
    counts_by_state: dict[str, int] = field(default_factory=dict)
    materialized_through_utc: datetime | None = None
    rejected_signals: int = 0
    last_rejected_signal: str = ""
    """The latest malformed signal or rejected revision, and why (also in the worker log)."""
    last_rejected_at_utc: datetime | None = None
    """When ``last_rejected_signal`` was refused (the workflow's clock); ``None`` when none was."""
    last_error: str = ""
    """The latest activity failure the loop survived (it retries on the next wake-up)."""
    duplicate_starts: int = 0
    """Child starts refused because the occurrence's workflow already existed (harmless)."""
    rejections: int = 0
    """Deterministic activity errors the loop survived (each also a ``schedule_events`` row and a
    ``almanac_schedule_rejections_total`` increment)."""
    deleted: bool = False
    """The schedule was deleted: its workflow has completed (or is completing)."""


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
    gate: GateView
    created: bool


@dataclass(frozen=True)
class BackfillRequest:
    """The ``backfill`` update's input: a past window ``[from_utc, to_utc)`` to run on purpose.

    The window is checked against the schedule's own instant when the loop applies it (its
    ``to_utc`` may not lie after it) and against the revision in force (``ledger.backfill``).
    """

    from_utc: datetime
    to_utc: datetime
    reason: str
    by: str
    """Who asks (recorded on every event the backfill writes)."""
    include_expired: bool = False
    """Requeue ``MISFIRE_EXPIRED`` occurrences (``MISFIRE_EXPIRED → DUE``)."""
    max_occurrences: int = 1000
    """Refuse a plan with more creates and requeues than this (1 … 10000, the validator's bound)."""
    dry_run: bool = False
    """Return the plan; write nothing."""


@dataclass(frozen=True)
class BackfillInput:
    """Plan, and unless ``dry_run`` apply, a backfill of ``[from_utc, to_utc)`` (ledger.backfill).

    ``now_utc`` is the schedule's instant when it applied the request: the decision instant the
    window must lie before (and whose revision must own it).
    """

    schedule_id: str
    from_utc: datetime
    to_utc: datetime
    now_utc: datetime
    reason: str
    by: str
    include_expired: bool = False
    max_occurrences: int = 1000
    dry_run: bool = False


@dataclass(frozen=True)
class BackfillEntryPayload:
    """One record of the window and what the backfill does with it (``ledger.BackfillEntry``)."""

    occurrence_id: str
    nominal_local: str
    """ISO local date-time without offset."""
    fold: int
    instant_utc: datetime
    """Its instant (a skipped gap's: the transition's)."""
    action: str
    """``CREATE``, ``REQUEUE`` or ``SKIP``."""
    state: OccurrenceState | None
    """Its state before the backfill (``None``: never materialized)."""
    note: str = ""


@dataclass(frozen=True)
class BackfillResult:
    """The ``backfill`` update's answer: the plan, whether it was applied, or why it was refused."""

    schedule_id: str
    from_utc: datetime
    to_utc: datetime
    decided_at_utc: datetime
    """The schedule's instant the window was checked against."""
    dry_run: bool
    revision: int | None = None
    entries: list[BackfillEntryPayload] = field(default_factory=list)
    released: list[str] = field(default_factory=list)
    """Occurrence IDs moved to DUE by this call (the schedule starts them; empty on a dry run)."""
    max_occurrences: int = 1000
    rejected: str = ""
    """Non-empty when refused (nothing written): names the field and the value."""
    field: str = ""
    value: Any = None
