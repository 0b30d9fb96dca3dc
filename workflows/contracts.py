"""The workflows' payloads and shared activity options, imported passed through the sandbox.

The workflow sandbox re-imports a workflow's module for every new workflow instance, so that an
instance's module globals are its own. What this module holds is shared by every instance, so
it holds nothing a workflow changes and nothing that reads the clock or does I/O: the frozen
dataclasses of the workflows' inputs, results and queued commands (and ``ScheduleState``, whose
instances each run creates), the ledger activities' timeout and retry policy (never mutated: a
``RetryPolicy`` is not frozen, the error types are a tuple), and the occurrence workflow's type
name. The workflow modules import it with
``workflow.unsafe.imports_passed_through()`` (as they import ``activities.io``), so it is loaded
once per worker process, not once per instance: creating a dataclass compiles its methods, a cost
a workflow instance should not pay (the schedule workflow starts its children by type name for
the same reason). Nothing here is a command or an event: moving these definitions out of the
workflow modules changes no history. ``tests/workflows/test_sandbox_runs_only_the_workflow_module``
checks what an instance runs.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from datetime import datetime, timedelta
from typing import Any

from temporalio.common import RetryPolicy

from activities import io
from activities.ledger_activities import DEFAULT_HORIZON
from activities.ledger_activities import NON_RETRYABLE_ERROR_TYPES as NON_RETRYABLE_ERROR_TYPES

OCCURRENCE_WORKFLOW = "AlmanacOccurrence"
"""The occurrence workflow's type name: a schedule or manual run starts its children by it."""
LEDGER_TIMEOUT = timedelta(seconds=30)
"""Start-to-close timeout of every ledger activity (one transaction or a few)."""
LEDGER_RETRY = RetryPolicy(
    initial_interval=timedelta(seconds=1),
    maximum_interval=timedelta(seconds=30),
    # Bounded: about 4 minutes of an unreachable ledger (1+2+4+8+16 s, then 30 s each). Then the
    # schedule loop records the failure and tries again at its next wake-up; nothing retries
    # forever (issue 10).
    maximum_attempts=12,
    non_retryable_error_types=NON_RETRYABLE_ERROR_TYPES,
)
NOTIFY_TIMEOUT = timedelta(seconds=60)
"""Start-to-close timeout of one failure-streak notification attempt (the action's own timeout
bounds the call: at most ``timeoutSeconds``, 600 s for ``http``; a slower attempt is lost and
counted)."""
NOTIFY_RETRY = RetryPolicy(
    initial_interval=timedelta(seconds=1),
    maximum_interval=timedelta(seconds=10),
    maximum_attempts=3,
    non_retryable_error_types=NON_RETRYABLE_ERROR_TYPES,
)
"""A failure-streak notification: three attempts (the activity records the third's failure)."""
DEFAULT_REFRESH = timedelta(hours=1)
"""How often a schedule materializes again without a signal (``ScheduleInput.refresh_seconds``)."""
DEFAULT_MAX_HISTORY_EVENTS = 1_000
"""A schedule run's history length before it continues as new (``ScheduleInput``). A restart
replays the whole run in one workflow task, whose timeout is 10 s, and a history of a few
thousand events can take longer than that on a busy worker; so a run stays near a thousand
events, far below the server's suggestion at 4,096. Each hourly refresh adds about ten events and
each occurrence about twenty, so a quiet daily schedule continues as new every three to four days;
continuing costs one small workflow task and carries ``ScheduleState``."""


@dataclass(frozen=True)
class OccurrenceInput:
    """What an occurrence workflow needs: the occurrence, the gate view, limits."""

    occurrence: io.UpcomingOccurrence
    gate: io.GateSnapshot
    max_attempts: int = 3
    action_timeout_seconds: float = 120.0
    reconcile_deadline_seconds: float = 1800.0
    """Seed: an UNKNOWN_EFFECT is reconciled or queued for a human within 30 minutes."""
    first_retry_delay_seconds: float = 10.0
    """Backoff before the second attempt (doubles per attempt); tests shorten it."""
    pacing: io.CatchUpPacing | None = None
    """The start slot ``catchUpSpacing`` gave it: waited for before the first claim."""


@dataclass(frozen=True)
class OccurrenceOutcome:
    """How the occurrence workflow ended: the ledger state and why."""

    occurrence_id: str
    state: str
    attempts: int
    detail: str


@dataclass(frozen=True)
class Command:
    """A change waiting to be applied: disable, enable, publish_revision, delete or backfill."""

    kind: str
    reason: str = ""
    spec: dict[str, Any] | None = None
    backfill: io.BackfillRequest | None = None
    """A backfill's request (``kind == "backfill"``)."""
    initial: bool = False
    """The workflow input's first revision: if the ledger refuses it there is nothing to run."""
    update_id: str | None = None
    """Set for an update: its verdict is handed back to the waiting handler (``None``: a signal)."""
    by: str = "update"
    """Who asked for a gate change or a delete (its events' ``by``): an operator, or ``update``."""


@dataclass(frozen=True)
class NotApplied:
    """An update's change whose activity failed: the handler raises ``ChangeNotApplied``."""

    why: str


@dataclass(frozen=True)
class DisableInput:
    """The ``disable`` update's input: why (recorded on the gate and on cancelled occurrences)."""

    reason: str
    by: str | None = None
    """Who decides (``console:alice``), recorded as the events' ``by``; ``None``: ``update``."""


@dataclass(frozen=True)
class EnableInput:
    """The ``enable`` update's optional input: who decides (``None``: ``update``)."""

    by: str | None = None


@dataclass(frozen=True)
class DeleteInput:
    """The ``delete`` update's input: why (recorded on the gate and on cancelled occurrences)."""

    reason: str
    by: str | None = None
    """Who decides (``alice@host``), recorded as its events' ``by``; ``None``: ``update``."""


@dataclass
class ScheduleState:
    """What one run hands the next across continue-as-new (none of it is the caller's to set)."""

    pending: list[Command] = field(default_factory=list)
    """Signals received and not yet applied, oldest first."""
    materialized_through_utc: datetime | None = None
    """High-water mark: the next materialization starts here (after downtime too)."""
    rejected_signals: int = 0
    """Malformed signals and rejected revisions so far (the ``status`` query's counter)."""
    deadlines: bool = False
    """A published revision has a ``deadline``: the loop sweeps deadlines (``DEADLINES_PATCH``)."""
    failure_streak: bool = False
    """A published revision has a ``failureStreak``: the loop decides streaks
    (``FAILURE_STREAKS_PATCH``)."""


@dataclass(frozen=True)
class ScheduleInput:
    """The schedule workflow's input: what a caller gives, plus the state a continued run carries.

    A caller sets ``schedule_id``, ``initial_spec`` and, if it wants, the horizon, refresh and
    occurrence options; ``state`` is ``None`` on a first start and set only by continue-as-new.
    """

    schedule_id: str
    initial_spec: dict[str, Any] | None = None
    """The first revision's spec data, published by the first loop (a continued run has none)."""
    horizon_seconds: float = DEFAULT_HORIZON.total_seconds()
    """How far ahead to materialize (less for a high-frequency rule; see the activity)."""
    refresh_seconds: float = DEFAULT_REFRESH.total_seconds()
    """How often to materialize again without a signal."""
    occurrence_max_attempts: int = 3
    occurrence_action_timeout_seconds: float = 120.0
    """How long one action attempt may take before Temporal retries it (a lost worker)."""
    occurrence_first_retry_delay_seconds: float = 10.0
    """Backoff before an occurrence's second attempt (doubles per attempt)."""
    occurrence_task_queue: str | None = None
    """Where occurrence workflows run (default: this workflow's task queue)."""
    max_history_events: int = DEFAULT_MAX_HISTORY_EVENTS
    """Continue as new once a run's history has this many events, or sooner when the server
    suggests it (``workflows.schedule_timing.SHORT_HISTORY``)."""
    state: ScheduleState | None = None
    """Carried across continue-as-new; ``None`` on a first start."""


@dataclass(frozen=True)
class ManualRunInput:
    """Who asks for which manual run, and why; the occurrence's limits as a schedule sets them."""

    schedule_id: str
    request_id: str
    reason: str
    by: str
    occurrence_task_queue: str | None = None
    """Where the occurrence runs (default: this workflow's queue; an alias routes it further)."""
    max_attempts: int = 3
    action_timeout_seconds: float = 120.0
    first_retry_delay_seconds: float = 10.0


@dataclass(frozen=True)
class ManualRunResult:
    """The manual occurrence, whether this run recorded it, and how it ended (if it ran here)."""

    occurrence_id: str
    created: bool
    outcome: OccurrenceOutcome | None
    """``None`` when the occurrence's workflow was started elsewhere (a repeat request)."""
