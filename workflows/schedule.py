"""``ScheduleWorkflow``: one long-lived workflow per schedule, ID ``almanac-schedule-<scheduleId>``.

Loop: materialize the horizon (activity) → release due occurrences through the misfire policy
(activity) → start one child ``OccurrenceWorkflow`` per released occurrence, workflow ID =
occurrenceId → sleep on a durable timer until the next instant, the next refresh, or a signal →
continue-as-new when Temporal suggests it.

Signals (``disable``, ``enable``, ``publish_revision``) are queued and applied by the loop through
activities, one at a time, so they race with dispatch only on the ledger's gate. A malformed signal
is rejected and recorded; it never raises, so it can never wedge the workflow.

The input (:class:`ScheduleInput`) is what a caller gives; what one run hands the next across
continue-as-new is one :class:`ScheduleState` in the input's ``state`` field (samples-python's
safe_message_handlers). ``_now``, ``_end_utc`` and ``_occurrence_input`` are the seams a simulated
clock overrides (``devtools.simulation``); production runs on ``workflow.now()`` and never ends.
"""

from __future__ import annotations

import asyncio
import contextlib
import dataclasses
from dataclasses import dataclass, field
from datetime import datetime, timedelta
from typing import Any

from temporalio import workflow
from temporalio.common import (
    SearchAttributePair,
    TypedSearchAttributes,
    WorkflowIDReusePolicy,
)
from temporalio.exceptions import ActivityError, ApplicationError, WorkflowAlreadyStartedError

from workflows import search_attributes as sa
from workflows.occurrence import LEDGER_RETRY, LEDGER_TIMEOUT, OccurrenceInput, OccurrenceWorkflow

with workflow.unsafe.imports_passed_through():
    from activities import io
    from activities.ledger_activities import AlmanacActivities

WORKFLOW_ID_PREFIX = "almanac-schedule-"
DEFAULT_HORIZON = timedelta(days=14)
DEFAULT_REFRESH = timedelta(hours=1)
HELD_POLL = timedelta(minutes=1)
"""How soon to release again while buffered occurrences wait and no child is watched (after a
continue-as-new, the running occurrence was started by an earlier run)."""


def schedule_workflow_id(schedule_id: str) -> str:
    """The schedule workflow's ID for ``schedule_id`` (``almanac-schedule-daily-ops-summary``)."""
    return WORKFLOW_ID_PREFIX + schedule_id


@dataclass(frozen=True)
class Command:
    """A signal waiting to be applied: ``kind`` is disable, enable or publish_revision."""

    kind: str
    reason: str = ""
    spec: dict[str, Any] | None = None
    initial: bool = False
    """The workflow input's first revision: if the ledger refuses it there is nothing to run."""


@dataclass
class ScheduleState:
    """What one run hands the next across continue-as-new (none of it is the caller's to set)."""

    pending: list[Command] = field(default_factory=list)
    """Signals received and not yet applied, oldest first."""
    materialized_through_utc: datetime | None = None
    """High-water mark: the next materialization starts here (after downtime too)."""
    rejected_signals: int = 0
    """Malformed signals and rejected revisions so far (the ``status`` query's counter)."""


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
    state: ScheduleState | None = None
    """Carried across continue-as-new; ``None`` on a first start."""


@workflow.defn(name="AlmanacSchedule")
class ScheduleWorkflow:
    """Materializes, releases and dispatches one schedule's occurrences (module docstring)."""

    @workflow.init
    def __init__(self, params: ScheduleInput) -> None:
        """Restore the state carried over a continue-as-new; queue the input's first revision."""
        self._params = params
        self._state = params.state or ScheduleState()
        if params.initial_spec is not None:
            initial = Command("publish_revision", spec=params.initial_spec, initial=True)
            self._state.pending.insert(0, initial)
        self._started: set[str] = set()
        self._status = io.ScheduleStatus(
            params.schedule_id, None, None, rejected_signals=self._state.rejected_signals
        )
        self._upcoming: list[io.UpcomingOccurrence] = []
        # Overlap buffering (ledger.overlap): occurrences held behind a running one start when a
        # child this run started ends; ``_watched`` counts the children still running.
        self._held = 0
        self._watched = 0
        self._child_ended = False
        self._wake_on_child_end = False

    # -- signals: validated here, applied by the loop; never raise ---------------------------
    @workflow.signal
    def disable(self, payload: Any = None) -> None:
        """Disable the schedule. Payload: a reason string or ``{"reason": "..."}``."""
        reason = payload.get("reason") if isinstance(payload, dict) else payload
        if not isinstance(reason, str) or not reason.strip():
            self._reject("disable", f"needs a non-empty reason, got {payload!r}")
            return
        self._state.pending.append(Command("disable", reason=reason.strip()))

    @workflow.signal
    def enable(self, payload: Any = None) -> None:
        """Enable the schedule (payload ignored)."""
        self._state.pending.append(Command("enable", reason="enabled by signal"))

    @workflow.signal
    def publish_revision(self, payload: Any = None) -> None:
        """Publish a new revision. Payload: the scheduleSpec.v1 data (validated by an activity)."""
        if not isinstance(payload, dict):
            self._reject("publish_revision", f"needs a spec mapping, got {type(payload).__name__}")
            return
        self._state.pending.append(Command("publish_revision", spec=payload))

    def _reject(self, signal: str, problem: str) -> None:
        # Recorded in the status query, the worker log and the history (the signal itself).
        workflow.logger.warning("rejected signal %s: %s", signal, problem)
        self._state.rejected_signals += 1
        self._status.rejected_signals = self._state.rejected_signals
        self._status.last_rejected_signal = f"{signal}: {problem}"

    # -- queries ------------------------------------------------------------------------------
    @workflow.query
    def status(self) -> io.ScheduleStatus:
        """Gate, active revision, next instant and counts by state (latest ledger reading)."""
        return self._status

    @workflow.query
    def upcoming(self, n: int = 10) -> list[io.UpcomingOccurrence]:
        """The next ``n`` (at most 20) occurrences from the latest materialization."""
        return self._upcoming[: max(0, int(n))]

    # -- the loop -----------------------------------------------------------------------------
    @workflow.run
    async def run(self, params: ScheduleInput) -> io.ScheduleStatus:
        """Run until ``_end_utc`` (never, in production; a simulation ends at its stop instant)."""
        refresh = timedelta(seconds=params.refresh_seconds)
        next_refresh = self._now()
        end = self._end_utc()
        while True:
            now = self._now()
            if end is not None and now >= end:
                await workflow.wait_condition(workflow.all_handlers_finished)
                return self._status
            try:
                changed = await self._apply_commands()
                if changed or now >= next_refresh:
                    await self._materialize(now)
                    next_refresh = now + refresh
                await self._release_and_start(now)
            except ActivityError as exc:
                # The ledger refused or stayed unreachable past the retry policy: survive it,
                # show it in the status query, and try again at the next wake-up.
                cause = str(exc.cause or exc)
                workflow.logger.error("schedule loop step failed: %s", cause)
                self._status.last_error = cause
                next_refresh = now + refresh
            if workflow.info().is_continue_as_new_suggested():
                await workflow.wait_condition(workflow.all_handlers_finished)
                # The first revision is queued (or applied) by now: it is not the next run's input.
                workflow.continue_as_new(
                    dataclasses.replace(params, initial_spec=None, state=self._state)
                )
            wake = next_refresh
            gate = self._status.gate
            # While disabled nothing is released: wait for a signal or the next refresh.
            enabled = gate is not None and not gate.disabled
            if enabled and self._status.next_instant_utc is not None:
                wake = min(wake, self._status.next_instant_utc)
            if end is not None:
                wake = min(wake, end)
            self._wake_on_child_end = self._holding()
            if self._wake_on_child_end and not self._watched:
                wake = min(wake, self._now() + HELD_POLL)
            # At least a second: a wake-up that finds nothing to do must not spin.
            delay = max(wake - self._now(), timedelta(seconds=1))
            self._child_ended = False
            with contextlib.suppress(TimeoutError):
                await workflow.wait_condition(self._woken, timeout=delay)

    async def _apply_commands(self) -> bool:
        changed = False
        while self._state.pending:
            command = self._state.pending.pop(0)
            changed = True
            now = self._now()
            schedule_id = self._params.schedule_id
            if command.kind == "publish_revision":
                result = await workflow.execute_activity_method(
                    AlmanacActivities.publish_revision,
                    io.PublishRevisionInput(schedule_id, command.spec or {}, now),
                    start_to_close_timeout=LEDGER_TIMEOUT,
                    retry_policy=LEDGER_RETRY,
                )
                if not result.accepted and command.initial:
                    # The input's revision was refused: there is no schedule to run. (A refused
                    # signal carried over a continue-as-new is only recorded, below.)
                    raise ApplicationError(
                        f"first revision rejected: {result.reason}", type="RevisionRejected"
                    )
                if result.accepted:
                    # A new cutover may lie behind the high-water mark: re-materialize every
                    # revision's owned range (idempotent; the ledger clamps each one).
                    self._state.materialized_through_utc = None
                else:
                    # Recorded like a malformed signal: the status query shows it.
                    self._reject("publish_revision", f"revision rejected: {result.reason}")
            else:
                disabled = command.kind == "disable"
                await workflow.execute_activity_method(
                    AlmanacActivities.set_gate,
                    io.SetGateInput(schedule_id, disabled, command.reason, now),
                    start_to_close_timeout=LEDGER_TIMEOUT,
                    retry_policy=LEDGER_RETRY,
                )
        return changed

    async def _materialize(self, now: datetime) -> None:
        result = await workflow.execute_activity_method(
            AlmanacActivities.materialize,
            io.MaterializeOccurrencesInput(
                self._params.schedule_id,
                now,
                self._params.horizon_seconds,
                from_utc=self._state.materialized_through_utc,
            ),
            start_to_close_timeout=LEDGER_TIMEOUT,
            retry_policy=LEDGER_RETRY,
        )
        self._upcoming = result.upcoming
        self._status.gate = result.gate
        self._status.next_instant_utc = result.next_instant_utc
        self._status.counts_by_state = result.counts_by_state
        self._status.materialized_through_utc = result.materialized_through_utc
        self._state.materialized_through_utc = result.materialized_through_utc

    async def _release_and_start(self, now: datetime) -> None:
        released = await workflow.execute_activity_method(
            AlmanacActivities.release_due,
            io.ReleaseDueInput(self._params.schedule_id, now),
            start_to_close_timeout=LEDGER_TIMEOUT,
            retry_policy=LEDGER_RETRY,
        )
        self._status.gate = released.gate
        self._held = released.held
        for occurrence in released.due:
            if occurrence.occurrence_id not in self._started:
                await self._start_child(occurrence, released.gate)
        if released.due or released.expired:
            await self._materialize(now)

    async def _start_child(self, occurrence: io.UpcomingOccurrence, gate: io.GateSnapshot) -> None:
        self._started.add(occurrence.occurrence_id)
        task_queue = self._params.occurrence_task_queue
        alias = gate.implementation_alias
        # Canary routing (issue 12): an occurrence runs on the task queue of the implementation
        # alias its gate names. Only a non-default alias asks for the patch, so histories of
        # single-implementation deployments are unchanged.
        if alias != io.DEFAULT_IMPLEMENTATION_ALIAS and workflow.patched(
            "almanac-alias-task-queue"
        ):
            task_queue = io.alias_task_queue(task_queue or workflow.info().task_queue, alias)
        try:
            child = await workflow.start_child_workflow(
                OccurrenceWorkflow.run,
                self._occurrence_input(occurrence, gate),
                id=occurrence.occurrence_id,
                task_queue=task_queue,
                # Children outlive this run's continue-as-new; a completed occurrence is never
                # started again (REJECT_DUPLICATE refuses a closed ID, running or not).
                parent_close_policy=workflow.ParentClosePolicy.ABANDON,
                id_reuse_policy=WorkflowIDReusePolicy.REJECT_DUPLICATE,
                search_attributes=TypedSearchAttributes(
                    [
                        SearchAttributePair(sa.SCHEDULE_ID, occurrence.schedule_id),
                        SearchAttributePair(sa.REVISION, occurrence.revision),
                        SearchAttributePair(sa.NOMINAL_LOCAL, occurrence.nominal_local),
                        SearchAttributePair(sa.OCCURRENCE_STATE, occurrence.state),
                    ]
                ),
            )
        except WorkflowAlreadyStartedError:
            # Harmless by construction: the ID is the occurrence. Recorded in the log and status.
            workflow.logger.info("occurrence %s already started", occurrence.occurrence_id)
            self._status.duplicate_starts += 1
            return
        self._watched += 1
        asyncio.create_task(self._watch(child))  # noqa: RUF006 (the loop's flag is the result)

    def _woken(self) -> bool:
        """The loop's wake-up condition besides its timer: a signal, or a child's end if held."""
        return bool(self._state.pending) or (self._wake_on_child_end and self._child_ended)

    # -- overlap buffering (ledger.overlap decides; the loop only wakes) ---------------------
    def _holding(self) -> bool:
        """Whether buffered occurrences wait: then a child's end wakes the loop to release."""
        # Only a release that held something asks for the patch, so histories of schedules
        # without a buffering overlapPolicy are unchanged.
        return self._held > 0 and workflow.patched("almanac-overlap-buffer")

    async def _watch(self, child: workflow.ChildWorkflowHandle[Any, Any]) -> None:
        """Note when a started occurrence ends (its outcome is the ledger's, not read here)."""
        with contextlib.suppress(Exception):
            await child
        self._watched -= 1
        self._child_ended = True

    # -- seams a simulated clock overrides (devtools.simulation) ------------------------------
    def _occurrence_input(
        self, occurrence: io.UpcomingOccurrence, gate: io.GateSnapshot
    ) -> OccurrenceInput:
        """The child workflow's input for ``occurrence``, released under ``gate``."""
        return OccurrenceInput(
            occurrence=occurrence,
            gate=gate,
            max_attempts=self._params.occurrence_max_attempts,
            first_retry_delay_seconds=self._params.occurrence_first_retry_delay_seconds,
            action_timeout_seconds=self._params.occurrence_action_timeout_seconds,
        )

    def _now(self) -> datetime:
        """The schedule's clock: the instant the ledger is told it is."""
        return workflow.now()

    def _end_utc(self) -> datetime | None:
        """The instant at which the loop returns its status; ``None``: it never does."""
        return None


__all__ = [
    "Command",
    "ScheduleInput",
    "ScheduleState",
    "ScheduleWorkflow",
    "schedule_workflow_id",
]
