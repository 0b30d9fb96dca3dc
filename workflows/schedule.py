"""``ScheduleWorkflow``: one long-lived workflow per schedule, ID ``almanac-schedule-<scheduleId>``.

Loop: materialize the horizon (activity) → release due occurrences through the misfire policy
(activity) → start one child ``OccurrenceWorkflow`` per released occurrence, workflow ID =
occurrenceId → sleep on a durable timer until the next instant, the next refresh, or a signal →
continue-as-new when Temporal suggests it.

Changes arrive two ways, both queued and applied by the loop through activities, one at a time, so
they race with dispatch only on the ledger's gate:

- **Updates** (``publish_revision``, ``disable``, ``enable``, ``delete``, ``backfill``; what
  ``almanac`` and :class:`almanac.client.AlmanacClient` send): a validator rejects a malformed
  payload before it enters history (a spec holding a literal secret included: the rule of
  ``timecontract.secrets``, as ``almanac validate`` applies it); an admitted change waits for
  the loop to apply it and returns the ledger's verdict (``io.PublishRevisionResult``,
  ``io.ChangeGateResult``, ``io.DeleteScheduleResult``, ``io.BackfillResult``).
- **Signals** (``publish_revision``, ``disable``, ``enable``; kept for ``temporal`` CLI and UI
  users): fire and forget. A malformed signal is rejected and recorded; it never raises, so it can
  never wedge the workflow. A signal's payload is in history before its handler runs, so a
  published spec holding a literal secret is refused there (and never reaches the ledger), but
  it is in history: only the update path keeps a literal out of it.

A ``delete`` ends the workflow (it completes with its status) once the ledger has deleted the
schedule; so does a first revision the ledger rejects when it arrives by update (no schedule to
run: the caller has the verdict), and a run started without a revision that receives none.

The input (:class:`ScheduleInput`) is what a caller gives; what one run hands the next across
continue-as-new is one :class:`ScheduleState` in the input's ``state`` field (samples-python's
safe_message_handlers). ``_now``, ``_end_utc`` and ``_occurrence_input`` are the seams a simulated
clock overrides (``almanac.gates.simulation``); production runs on ``workflow.now()`` and never
ends.
"""

from __future__ import annotations

import asyncio
import contextlib
import dataclasses
import json
from datetime import UTC, datetime, timedelta
from typing import Any, NoReturn

from temporalio import workflow
from temporalio.common import (
    Priority,
    WorkflowIDReusePolicy,
)
from temporalio.exceptions import (
    ActivityError,
    ApplicationError,
    WorkflowAlreadyStartedError,
)
from temporalio.exceptions import TimeoutError as TemporalTimeoutError

from workflows import search_attributes as sa

with workflow.unsafe.imports_passed_through():
    from activities import io
    from activities.deadlines import DeadlineActivities, SweepDeadlinesInput
    from activities.ledger_activities import AlmanacActivities
    from activities.streak_activities import (
        DecideFailureStreakInput,
        NotifyFailureStreakInput,
        StreakNotice,
    )
    from timecontract.secrets import REDACTED, secret_problems
    from workflows.contracts import (
        LEDGER_RETRY,
        LEDGER_TIMEOUT,
        NOTIFY_RETRY,
        NOTIFY_TIMEOUT,
        OCCURRENCE_WORKFLOW,
        Command,
        DeleteInput,
        DisableInput,
        EnableInput,
        NotApplied,
        OccurrenceInput,
        ScheduleInput,
        ScheduleState,
    )

WORKFLOW_ID_PREFIX = "almanac-schedule-"
# Deprecated patches (docs/operating/upgrades.md): each ID marks a path that is the only one now.
# ``workflow.deprecate_patch`` records its marker where ``workflow.patched`` did, so runs of the
# previous release (markers in their history) replay here, and a worker of the previous release
# replays runs of this one; the calls go in the next release.
CONCURRENT_CHILD_STARTS = "almanac-concurrent-child-starts"
"""Patch ID: a wake-up's children are started together, a batch per workflow task."""
RELEASE_AND_MATERIALIZE = "almanac-release-and-materialize"
"""Patch ID: no ``almanac.materialize`` activity of its own after a wake-up's child starts."""
OCCURRENCE_PRIORITY_PATCH = "almanac-occurrence-priority"
"""Patch ID: occurrence children are started at :data:`OCCURRENCE_PRIORITY`."""
MATERIALIZE_IN_RELEASE = "almanac-materialize-in-release"
"""Patch ID: a refresh's materialization runs in the release activity, before the release."""
LOCAL_RELEASE = "almanac-local-release"
"""Patch ID: a timer's wake-up releases in a local activity (the child starts do not wait for a
server round trip), its follow-up materialization an activity scheduled with the starts."""
EARLY_WAKE = "almanac-early-wake"
"""Patch ID: a timer for an instant fires ``io.RELEASE_LEAD`` early; the release waits for it
(a timer starts when its task completes, so one for the instant itself fires late)."""
ON_TIME = "almanac-on-time"
"""Patch ID: a timer's wake-up whose task starts at most ``io.RELEASE_GRACE`` after the instant
decides as of the instant (``lateness`` counts from it, not from a busy worker's task); a wake-up
that was not the timer's sleeps exactly until a next instant nearer than ``MIN_DELAY``."""
SHORT_HISTORY = "almanac-short-history"
"""Patch ID: a run continues as new at ``ScheduleInput.max_history_events``, not only at the
server's suggestion (a restart's replay stays inside the workflow-task timeout)."""
BOUNDED_MATERIALIZE = "almanac-bounded-materialize"
"""Patch ID: a materialization stopped at its bound (``truncated``) is continued at the next
wake-up, ``MIN_DELAY`` later, with queued changes applied between two bounded calls."""
UPDATES_PATCH = "almanac-control-updates"
"""Patch ID: a run started without a revision waits for a first change, and ends if none comes."""
BACKFILL_PATCH = "almanac-backfill"
"""Patch ID: the ``backfill`` update's path."""
SIGNAL_SECRETS_PATCH = "almanac-signal-secrets"
"""Patch ID: a ``publish_revision`` signal whose spec holds a literal secret is rejected and
recorded without the value (its payload is in history as sent; it goes no further)."""
ALIAS_TASK_QUEUE_PATCH = "almanac-alias-task-queue"
"""Patch ID: an occurrence runs on the task queue of its gate's non-default implementation alias."""
OVERLAP_BUFFER_PATCH = "almanac-overlap-buffer"
"""Patch ID: while a release holds buffered occurrences, a child's end wakes the loop."""
CATCH_UP_PACING = "almanac-catch-up-pacing"
"""Patch ID: the occurrences one release hands out are given start slots ``catchUpSpacing``
apart (``io.CatchUpPacing``), which their workflows wait for before claiming."""
DEADLINES_PATCH = "almanac-deadlines"
"""Patch ID: a schedule whose revision has a ``deadline`` sweeps its deadlines (an activity) at
the start of a run, at each refresh and on a durable timer for the earliest pending deadline."""
FAILURE_STREAKS_PATCH = "almanac-failure-streaks"
"""Patch ID: a schedule whose revision has a ``failureStreak`` decides it (an activity) at each
refresh and when a child ends (which then wakes the loop), and notifies each pending fact in the
background (bounded attempts; a failure is recorded and never stops the loop)."""
OCCURRENCE_PRIORITY = Priority(priority_key=4)
"""Task-queue priority of an occurrence workflow and its activities (Temporal: 1 first … 5 last,
default 3; children and activities inherit). Below the schedule workflows' default, so in a
backlog (a catch-up after an outage) the matching service hands out every schedule's pending
work — materializing its horizon, deciding its missed occurrences, a disable or a revision —
before the occurrences' own tasks: the seed's materialization bound does not wait for the
catch-up's executions, and an operator's change is not queued behind them. Without a backlog
the order changes nothing."""
MIN_DELAY = timedelta(seconds=1)
"""The shortest sleep of the loop, but for one until a next instant (``ON_TIME``): a wake-up that
finds nothing to do must not spin."""
LOCAL_RETRY_THRESHOLD = timedelta(milliseconds=1)
"""The local release's retries all wait on workflow timers (every backoff of ``LEDGER_RETRY`` is
longer): durable, visible in the history, and the workflow task is not held open while the ledger
is unreachable (the SDK's default, a minute, retries in the worker's memory, on the wall clock)."""
CHILD_START_BATCH = 100
"""Child starts issued in one workflow task at most (bounds the task's commands)."""
FIRST_COMMAND_WAIT = timedelta(minutes=1)
"""How long a run started without a revision waits for one (update-with-start: no wait)."""
MAX_SPEC_BYTES = 64 * 1024
"""Size bound of a published spec (JSON), checked by the update validator."""
MAX_REASON_CHARS = 500
"""Size bound of a disable or delete reason."""
MAX_BY_CHARS = 200
"""Size bound of who decides a gate change (the ledger's ``by`` columns hold 200)."""
INVALID_UPDATE = "InvalidUpdate"
"""The error type of a validator's refusal (a malformed or refused change)."""
ENDING = "ScheduleEnding"
"""The error type of a refusal because this run is ending (deleted, or nothing to run): a new run
of the same workflow ID can take the change once this one has closed."""
NOT_APPLIED = "ChangeNotApplied"
"""The error type of an update whose activity failed (a deterministic error, already recorded on
the schedule, or the ledger unreachable past the retry bound): an operational failure."""
BACKFILL_REFUSED = "BackfillRefused"
"""The error type of a backfill the ledger refused (window, ownership, bound): nothing written."""
MAX_BACKFILL_BOUND = 2000
"""The largest ``max_occurrences`` a backfill may ask for (the validator refuses more): the
ledger's cap on a window's occurrences (``ledger.backfill.MAX_WINDOW_OCCURRENCES``)."""
HELD_POLL = timedelta(minutes=1)
"""How soon to release again while buffered occurrences wait and no child is watched (after a
continue-as-new, the running occurrence was started by an earlier run)."""


BackfillRequest = io.BackfillRequest
"""The ``backfill`` update's input (defined in ``activities.io``: passed through the sandbox, so
its ``datetime`` fields decode; a workflow module's own ``datetime`` is the sandbox's proxy)."""


def schedule_workflow_id(schedule_id: str) -> str:
    """The schedule workflow's ID for ``schedule_id`` (``almanac-schedule-daily-ops-summary``)."""
    return WORKFLOW_ID_PREFIX + schedule_id


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
        self._truncated = False
        """The latest materialization stopped at its occurrence bound (``BOUNDED_MATERIALIZE``)."""
        self._verdicts: dict[str, Any] = {}
        self._deleting = False
        """A delete was admitted: validators refuse further changes."""
        self._ending = False
        """Nothing more to run (deleted, or no revision): the loop returns its status."""
        # Overlap buffering (ledger.overlap): occurrences held behind a running one start when a
        # child this run started ends; ``_watched`` counts the children still running.
        self._held = 0
        self._watched = 0
        self._child_ended = False
        self._wake_on_child_end = False
        self._next_deadline: datetime | None = None
        """The earliest pending deadline the latest sweep returned (``DEADLINES_PATCH``)."""
        self._ended_since_decision = False
        """A child ended since the last failure-streak decision (``FAILURE_STREAKS_PATCH``)."""
        self._notifying: set[StreakNotice] = set()
        """Failure-streak notifications running in the background."""

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
        problems = secret_problems(payload)
        if problems:
            workflow.deprecate_patch(SIGNAL_SECRETS_PATCH)
            # Temporal wrote the payload into history before this handler ran: refuse it here,
            # so it goes no further (the ledger, the activity's input), and say nothing of it.
            self._reject(
                "publish_revision",
                f"{problems[0].field}={REDACTED}: {problems[0].problem}; send specs by update "
                "(almanac apply): a signal's payload is recorded in history as sent",
            )
            return
        self._state.pending.append(Command("publish_revision", spec=payload))

    def _reject(self, signal: str, problem: str, *, by_update: bool = False) -> None:
        # Recorded in the status query, the worker log and the history (the signal itself, or
        # the update's verdict). ``by_update``: the change came as an update, not a signal.
        workflow.logger.warning(
            "rejected %s %s: %s", "update" if by_update else "signal", signal, problem
        )
        self._state.rejected_signals += 1
        self._status.rejected_signals = self._state.rejected_signals
        self._status.last_rejected_signal = f"{signal}: {problem}"

    # -- updates: validated before they enter history, answered with the ledger's verdict -------
    @workflow.update(name="publish_revision")
    async def publish_revision_update(self, spec: dict[str, Any]) -> io.PublishRevisionResult:
        """Publish a revision (scheduleSpec.v1 data); returns the ledger's verdict."""
        result: io.PublishRevisionResult = await self._submit("publish_revision", spec=spec)
        return result

    @publish_revision_update.validator
    def _validate_publish(self, spec: dict[str, Any]) -> None:
        self._refuse_if_deleting()
        if not isinstance(spec, dict):
            _refuse("spec", type(spec).__name__, "needs a scheduleSpec.v1 mapping")
        size = len(json.dumps(spec, default=str))
        if size > MAX_SPEC_BYTES:
            _refuse("spec", f"{size} bytes", f"larger than {MAX_SPEC_BYTES} bytes")
        # The rule ``validate`` and the client apply: a literal secret never enters history.
        for problem in secret_problems(spec)[:1]:
            _refuse(problem.field, REDACTED, problem.problem)
        schedule_id = spec.get("scheduleId")
        if schedule_id != self._params.schedule_id:
            _refuse("scheduleId", schedule_id, f"this schedule is {self._params.schedule_id!r}")
        revision = spec.get("revision")
        if not isinstance(revision, int) or isinstance(revision, bool) or revision < 1:
            _refuse("revision", revision, "needs a positive integer")
        gate = self._status.gate
        # The active revision again goes on to the ledger: the same digest is "unchanged" (an
        # apply repeated is harmless), another digest is refused there, naming the revision.
        if gate is not None and revision < gate.active_revision:
            _refuse(
                "revision",
                revision,
                f"{schedule_id} revision {revision} does not increase (the active revision is "
                f"{gate.active_revision}; publish revision {gate.active_revision + 1} or higher)",
            )

    @workflow.update(name="disable")
    async def disable_update(self, params: DisableInput) -> io.ChangeGateResult:
        """Disable the schedule; returns the gate generation and how many DUE were cancelled."""
        result: io.ChangeGateResult = await self._submit(
            "disable", reason=params.reason.strip(), by=params.by or "update"
        )
        return result

    @disable_update.validator
    def _validate_disable(self, params: DisableInput) -> None:
        self._refuse_if_deleting()
        _check_reason(params)
        _check_by(params.by)

    @workflow.update(name="enable")
    async def enable_update(self, params: EnableInput | None = None) -> io.ChangeGateResult:
        """Enable the schedule; returns how many came due while disabled, run and expired."""
        by = params.by if params is not None and params.by else "update"
        result: io.ChangeGateResult = await self._submit(
            "enable", reason="enabled by update", by=by
        )
        return result

    @enable_update.validator
    def _validate_enable(self, params: EnableInput | None = None) -> None:
        self._refuse_if_deleting()
        _check_by(None if params is None else params.by)

    @workflow.update(name="delete")
    async def delete_update(self, params: DeleteInput) -> io.DeleteScheduleResult:
        """Delete the schedule (the workflow then completes); returns what was cancelled."""
        self._deleting = True
        try:
            result: io.DeleteScheduleResult = await self._submit(
                "delete", reason=params.reason.strip()
            )
        except ApplicationError:
            self._deleting = False  # not applied: the schedule runs on, changes are welcome
            raise
        return result

    @delete_update.validator
    def _validate_delete(self, params: DeleteInput) -> None:
        self._refuse_if_deleting()
        _check_reason(params)

    @workflow.update(name="backfill")
    async def backfill_update(self, params: io.BackfillRequest) -> io.BackfillResult:
        """Backfill a past window (or plan it: ``dry_run``); returns the plan the ledger made."""
        result: io.BackfillResult = await self._submit("backfill", backfill=params)
        if result.rejected:
            raise ApplicationError(
                result.rejected,
                {"field": result.field, "value": result.value},
                type=BACKFILL_REFUSED,
                non_retryable=True,
            )
        return result

    @backfill_update.validator
    def _validate_backfill(self, params: io.BackfillRequest) -> None:
        self._refuse_if_deleting()
        _check_reason(params)
        if not isinstance(params.by, str) or not params.by.strip() or len(params.by) > 200:
            _refuse("by", params.by, "needs 1-200 characters (who asks)")
        for name, value in (("from", params.from_utc), ("to", params.to_utc)):
            if not isinstance(value, datetime) or value.utcoffset() is None:
                _refuse(name, str(value), "needs an instant with a UTC offset")
        if params.from_utc >= params.to_utc:
            _refuse("to", _z(params.to_utc), f"must be after from={_z(params.from_utc)}")
        now = self._now()
        if params.to_utc > now:
            _refuse(
                "to",
                _z(params.to_utc),
                f"lies after the schedule's now {_z(now)} (a backfill runs the past)",
            )
        bound = params.max_occurrences
        if not isinstance(bound, int) or not 1 <= bound <= MAX_BACKFILL_BOUND:
            _refuse("max", bound, f"needs 1 to {MAX_BACKFILL_BOUND}")

    def _refuse_if_deleting(self) -> None:
        if self._deleting or self._ending:
            _refuse(
                "scheduleId",
                self._params.schedule_id,
                "the schedule is deleted or ending; re-apply it (a higher revision) to revive it",
                kind=ENDING,
            )

    async def _submit(self, kind: str, **fields: Any) -> Any:
        update_id = workflow.current_update_info().id  # type: ignore[union-attr]
        self._state.pending.append(Command(kind, update_id=update_id, **fields))
        await workflow.wait_condition(lambda: update_id in self._verdicts)
        verdict = self._verdicts.pop(update_id)
        if isinstance(verdict, NotApplied):
            raise ApplicationError(
                f"the change was not applied: {verdict.why}", type=NOT_APPLIED, non_retryable=True
            )
        return verdict

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
        fresh = params.state is None and params.initial_spec is None
        if fresh:
            workflow.deprecate_patch(UPDATES_PATCH)
            # Started without a revision (update-with-start brings one with the start): wait for
            # the first change, and end if none comes — there is nothing to run.
            if not self._state.pending:
                with contextlib.suppress(TimeoutError):
                    await workflow.wait_condition(
                        lambda: bool(self._state.pending), timeout=FIRST_COMMAND_WAIT
                    )
            if not self._state.pending:
                self._status.last_rejected_signal = "started without a revision; none arrived"
                return self._status
        timer_for: datetime | None = None  # the instant the loop's timer was set for
        while True:
            now = self._now()
            if self._ending or (end is not None and now >= end):
                await self._finish_handlers()
                return self._status
            try:
                changed = await self._apply_commands()
                if self._ending:
                    continue  # deleted, or a refused first revision: nothing more to run
                refreshing = changed or now >= next_refresh
                if refreshing:
                    workflow.deprecate_patch(MATERIALIZE_IN_RELEASE)
                await self._release_and_start(
                    now, materialize_first=refreshing, timer_for=timer_for
                )
                if self._sweep_due(now, refreshing):
                    await self._sweep_deadlines()
                if self._streaks_due(refreshing):
                    await self._decide_streaks()
                if refreshing:
                    next_refresh = now + refresh
                if self._truncated:
                    workflow.deprecate_patch(BOUNDED_MATERIALIZE)
                    next_refresh = now  # the window's rest: the next wake-up's, a second away
            except ActivityError as exc:
                # The ledger refused (a deterministic error: non-retryable, already recorded on
                # the schedule by the activity) or stayed unreachable past the bounded retry
                # policy: survive it, show it in the status query, try again at the next wake-up.
                cause = str(exc.cause or exc)
                workflow.logger.error("schedule loop step failed: %s", cause)
                self._status.last_error = cause
                if isinstance(exc.cause, ApplicationError) and exc.cause.non_retryable:
                    self._status.rejections += 1
                next_refresh = now + refresh
            if self._ending:
                continue
            if self._history_full():
                await self._finish_handlers()
                if self._ending:
                    continue
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
            if self._next_deadline is not None:
                wake = min(wake, self._next_deadline)
            if end is not None:
                wake = min(wake, end)
            held = self._holding()
            self._wake_on_child_end = held or self._streaks_on()
            if held and not self._watched:
                wake = min(wake, self._now() + HELD_POLL)
            delay, timer_for = self._sleep_for(wake, enabled)
            self._child_ended = False
            with contextlib.suppress(TimeoutError):
                await workflow.wait_condition(self._woken, timeout=delay)
                timer_for = None  # a signal or a child's end woke the loop, not the timer

    def _sweep_due(self, now: datetime, refreshing: bool) -> bool:
        """Whether to sweep deadlines now: a schedule with deadlines, at a refresh or a deadline."""
        if not self._state.deadlines:
            return False
        due = self._next_deadline is not None and now >= self._next_deadline
        return (refreshing or due) and workflow.patched(DEADLINES_PATCH)

    async def _sweep_deadlines(self) -> None:
        """Record the deadlines passed by now in the ledger (once, there); note the next one.

        A failed sweep leaves no pending deadline: the next refresh sweeps again (no spinning).
        """
        self._next_deadline = None
        result = await workflow.execute_activity_method(
            DeadlineActivities.sweep_deadlines,
            SweepDeadlinesInput(self._params.schedule_id, self._now()),
            start_to_close_timeout=LEDGER_TIMEOUT,
            retry_policy=LEDGER_RETRY,
        )
        self._next_deadline = result.next_deadline_utc

    def _streaks_on(self) -> bool:
        """Whether the schedule decides failure streaks (a revision has a policy; patched)."""
        return self._state.failure_streak and workflow.patched(FAILURE_STREAKS_PATCH)

    def _streaks_due(self, refreshing: bool) -> bool:
        """Whether to decide failure streaks now: at a refresh, or after a child ended."""
        return (refreshing or self._ended_since_decision) and self._streaks_on()

    async def _decide_streaks(self) -> None:
        """Let the ledger record the streak facts (once, there); notify the pending ones."""
        self._ended_since_decision = False
        result = await workflow.execute_activity_method(
            AlmanacActivities.decide_failure_streak,
            DecideFailureStreakInput(self._params.schedule_id),
            start_to_close_timeout=LEDGER_TIMEOUT,
            retry_policy=LEDGER_RETRY,
        )
        for notice in result.pending:
            if notice not in self._notifying:
                self._notifying.add(notice)
                asyncio.create_task(self._notify(notice))  # noqa: RUF006 (tracked in the set)

    async def _notify(self, notice: StreakNotice) -> None:
        """Notify one fact in the background; its outcome is the ledger's, a failure only logged."""
        try:
            await workflow.execute_activity_method(
                AlmanacActivities.notify_failure_streak,
                NotifyFailureStreakInput(
                    self._params.schedule_id, notice, NOTIFY_RETRY.maximum_attempts
                ),
                start_to_close_timeout=NOTIFY_TIMEOUT,
                retry_policy=NOTIFY_RETRY,
            )
        except ActivityError as exc:
            workflow.logger.warning("failure-streak notification failed: %s", exc.cause or exc)
        finally:
            self._notifying.discard(notice)

    def _history_full(self) -> bool:
        """Whether this run should continue as new now (the server's hint, or ``SHORT_HISTORY``)."""
        info = workflow.info()
        if info.is_continue_as_new_suggested():
            return True
        if info.get_current_history_length() < self._params.max_history_events:
            return False
        workflow.deprecate_patch(SHORT_HISTORY)
        return True

    def _sleep_for(self, wake: datetime, enabled: bool) -> tuple[timedelta, datetime | None]:
        """How long the loop sleeps for ``wake``, and the instant the timer is for (if any).

        At least ``MIN_DELAY``, but when ``wake`` is the next instant: ``io.RELEASE_LEAD`` less
        (``EARLY_WAKE``), or exactly until it when it is nearer than that (``ON_TIME``).
        """
        until = wake - self._now()
        delay = max(until, MIN_DELAY)
        if not (enabled and wake == self._status.next_instant_utc):
            return delay, None
        if until - io.RELEASE_LEAD >= MIN_DELAY:
            workflow.deprecate_patch(EARLY_WAKE)
            return until - io.RELEASE_LEAD, wake
        if until > timedelta(0):
            workflow.deprecate_patch(ON_TIME)
            return until, wake
        return delay, None

    async def _finish_handlers(self) -> None:
        """Wait until every handler has finished, applying the changes updates are waiting for.

        Update handlers wait for the loop to apply their change, so before it returns or continues
        as new the loop applies what they queued (signals alone finish at once, as before).
        """
        while not workflow.all_handlers_finished():
            await workflow.wait_condition(
                lambda: (
                    workflow.all_handlers_finished()
                    or any(c.update_id is not None for c in self._state.pending)
                )
            )
            if not workflow.all_handlers_finished():
                await self._apply_commands()

    async def _apply_commands(self) -> bool:
        changed = False
        while self._state.pending:
            command = self._state.pending.pop(0)
            changed = True
            if self._ending:
                self._refuse_after_end(command)
                continue
            if command.update_id is not None:
                try:
                    await self._apply_update(command)
                except ActivityError as exc:
                    # The activity refused (recorded on the schedule) or the ledger stayed
                    # unreachable: the caller learns it, and the loop records it and goes on.
                    self._verdicts[command.update_id] = NotApplied(str(exc.cause or exc))
                    raise
                continue
            if command.kind == "publish_revision":
                await self._publish(command)
            else:
                disabled = command.kind == "disable"
                await workflow.execute_activity_method(
                    AlmanacActivities.set_gate,
                    io.SetGateInput(
                        self._params.schedule_id, disabled, command.reason, self._now()
                    ),
                    start_to_close_timeout=LEDGER_TIMEOUT,
                    retry_policy=LEDGER_RETRY,
                )
        return changed

    async def _apply_update(self, command: Command) -> None:
        if command.kind == "publish_revision":
            await self._publish(command)
        elif command.kind == "delete":
            await self._delete(command)
        elif command.kind == "backfill":
            await self._backfill(command)
        else:
            await self._change_gate(command)

    async def _publish(self, command: Command) -> None:
        result = await workflow.execute_activity_method(
            AlmanacActivities.publish_revision,
            io.PublishRevisionInput(self._params.schedule_id, command.spec or {}, self._now()),
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
            if (command.spec or {}).get("deadline"):
                self._state.deadlines = True
            if (command.spec or {}).get("failureStreak"):
                self._state.failure_streak = True
            # A new cutover may lie behind the high-water mark: re-materialize every
            # revision's owned range (idempotent; the ledger clamps each one).
            self._state.materialized_through_utc = None
            if result.gate is not None:
                self._status.gate = result.gate
        else:
            # Recorded like a malformed signal: the status query shows it.
            self._reject(
                "publish_revision",
                f"revision rejected: {result.reason}",
                by_update=command.update_id is not None,
            )
            if not result.schedule_live:
                # No gate, or a deleted one: nothing to run (the caller has the verdict).
                self._ending = True
        self._answer(command, result)

    async def _change_gate(self, command: Command) -> None:
        disabled = command.kind == "disable"
        result = await workflow.execute_activity_method(
            AlmanacActivities.change_gate,
            io.ChangeGateInput(
                self._params.schedule_id, disabled, command.reason, self._now(), by=command.by
            ),
            start_to_close_timeout=LEDGER_TIMEOUT,
            retry_policy=LEDGER_RETRY,
        )
        if result.gate is not None:
            self._status.gate = result.gate
        self._answer(command, result)

    async def _backfill(self, command: Command) -> None:
        workflow.deprecate_patch(BACKFILL_PATCH)
        request = command.backfill
        assert request is not None  # queued only by the update, with its request
        result = await workflow.execute_activity_method(
            AlmanacActivities.backfill,
            io.BackfillInput(
                self._params.schedule_id,
                request.from_utc,
                request.to_utc,
                self._now(),
                request.reason.strip(),
                request.by,
                include_expired=request.include_expired,
                max_occurrences=request.max_occurrences,
                dry_run=request.dry_run,
            ),
            start_to_close_timeout=LEDGER_TIMEOUT,
            retry_policy=LEDGER_RETRY,
        )
        # The released occurrences are DUE: the loop's release, right after, starts them.
        self._answer(command, result)

    async def _delete(self, command: Command) -> None:
        result = await workflow.execute_activity_method(
            AlmanacActivities.delete_schedule,
            io.DeleteScheduleInput(self._params.schedule_id, command.reason, self._now()),
            start_to_close_timeout=LEDGER_TIMEOUT,
            retry_policy=LEDGER_RETRY,
        )
        if result.gate is not None:
            self._status.gate = result.gate
        # Deleted now, deleted before, or never created: this workflow has nothing to run.
        self._ending = True
        self._status.deleted = result.gate is not None
        self._answer(command, result)

    def _refuse_after_end(self, command: Command) -> None:
        why = "the schedule is deleted or ending: nothing more is applied"
        sid = self._params.schedule_id
        if command.kind == "publish_revision":
            revision = (command.spec or {}).get("revision")
            verdict: Any = io.PublishRevisionResult(
                False,
                revision if isinstance(revision, int) else None,
                why,
                field="scheduleId",
                value=sid,
                schedule_live=False,
            )
        elif command.kind == "delete":
            verdict = io.DeleteScheduleResult(sid, False, self._status.gate, rejected=why)
        elif command.kind == "backfill" and command.backfill is not None:
            request = command.backfill
            verdict = io.BackfillResult(
                sid,
                request.from_utc,
                request.to_utc,
                self._now(),
                request.dry_run,
                rejected=why,
                field="scheduleId",
                value=sid,
            )
        else:
            disabled = command.kind == "disable"
            verdict = io.ChangeGateResult(sid, disabled, False, self._status.gate, rejected=why)
        if command.update_id is None:
            self._reject(command.kind, why)
        self._answer(command, verdict)

    def _answer(self, command: Command, verdict: Any) -> None:
        if command.update_id is not None:
            self._verdicts[command.update_id] = verdict

    def _materialize_input(self, now: datetime) -> io.MaterializeOccurrencesInput:
        return io.MaterializeOccurrencesInput(
            self._params.schedule_id,
            now,
            self._params.horizon_seconds,
            from_utc=self._state.materialized_through_utc,
        )

    def _materialized(self, result: io.MaterializeOccurrencesResult) -> None:
        self._truncated = result.truncated
        self._upcoming = result.upcoming
        self._status.gate = result.gate
        self._status.next_instant_utc = result.next_instant_utc
        self._status.counts_by_state = result.counts_by_state
        self._status.materialized_through_utc = result.materialized_through_utc
        self._state.materialized_through_utc = result.materialized_through_utc

    async def _release_and_start(
        self, now: datetime, *, materialize_first: bool = False, timer_for: datetime | None = None
    ) -> None:
        """Release at ``now`` and start the released children (the release, then the starts).

        ``timer_for``: the instant this wake-up's timer was set for. While it is still ahead of
        ``now`` (``EARLY_WAKE``), or behind it by at most ``io.RELEASE_GRACE`` (``ON_TIME``), the
        release decides as of it, and waits for it when ahead (``ReleaseDueInput.not_before_utc``).

        ``materialize_first`` (a refresh or a change): the release activity materializes the
        horizon before releasing and returns the reading taken after the release. Otherwise (a
        timer's wake-up) the release is a local activity and, when it decided anything, the
        follow-up materialization an activity scheduled with the child starts, which do not wait
        for it.
        """
        not_before = None
        if timer_for is not None:
            if timer_for > now:
                not_before = timer_for
            elif now - timer_for <= io.RELEASE_GRACE:
                workflow.deprecate_patch(ON_TIME)
                not_before = timer_for
        # Ahead of now, the horizon is the instant's (its end is the instant + horizon, as if on
        # time); a late task's is its own.
        window_at = max(now, not_before or now)
        workflow.deprecate_patch(RELEASE_AND_MATERIALIZE)
        first = self._materialize_input(window_at) if materialize_first else None
        local = first is None  # a timer's wake-up: nothing to write first
        if local:
            workflow.deprecate_patch(LOCAL_RELEASE)
        release = io.ReleaseDueInput(
            self._params.schedule_id, now, materialize_first=first, not_before_utc=not_before
        )
        if local:
            released = await self._release_locally(release)
        else:
            released = await workflow.execute_activity_method(
                AlmanacActivities.release_due,
                release,
                start_to_close_timeout=LEDGER_TIMEOUT,
                retry_policy=LEDGER_RETRY,
            )
        self._status.gate = released.gate
        self._held = released.held
        reading: workflow.ActivityHandle[io.MaterializeOccurrencesResult] | None = None
        if local and (released.due or released.expired):
            # Scheduled before the starts, in the same workflow task; awaited after them.
            reading = workflow.start_activity_method(
                AlmanacActivities.materialize,
                self._materialize_input(window_at),
                start_to_close_timeout=LEDGER_TIMEOUT,
                retry_policy=LEDGER_RETRY,
            )
        workflow.deprecate_patch(CONCURRENT_CHILD_STARTS)
        new = [o for o in released.due if o.occurrence_id not in self._started]
        slots = self._pacing(new, released.catch_up_spacing_seconds)
        for at in range(0, len(new), CHILD_START_BATCH):
            batch = new[at : at + CHILD_START_BATCH]
            await asyncio.gather(
                *(self._start_child(o, released.gate, slots.get(o.occurrence_id)) for o in batch)
            )
        if reading is not None:
            self._materialized(await reading)
        elif released.materialized is not None:
            self._materialized(released.materialized)
        elif released.materialize_error is not None:
            # Refused and recorded by the activity; shown as a failed loop step is (the run loop).
            workflow.logger.error("schedule loop step failed: %s", released.materialize_error)
            self._status.last_error = released.materialize_error
            self._status.rejections += 1

    def _pacing(
        self, new: list[io.UpcomingOccurrence], spacing_seconds: float
    ) -> dict[str, io.CatchUpPacing]:
        """Start slots (``catchUpSpacing``) for a release's caught-up occurrences, oldest first.

        Caught up: resolved more than one spacing before now. The first of them starts at once;
        the ``k``-th gets workflow time now + ``k`` × spacing. An on-time occurrence (resolved
        within the last spacing) is never paced, so it never waits behind a backlog, and a
        release of one occurrence is never paced. Lateness was judged by the release from each
        resolved instant; a slot does not change it.
        """
        if spacing_seconds <= 0 or len(new) < 2 or not workflow.patched(CATCH_UP_PACING):
            return {}
        now = workflow.now()
        spacing = timedelta(seconds=spacing_seconds)
        behind = [o for o in new if o.instant_utc < now - spacing]
        return {
            o.occurrence_id: io.CatchUpPacing(k, spacing_seconds, now + k * spacing)
            for k, o in enumerate(behind)
            if k
        }

    async def _release_locally(self, release: io.ReleaseDueInput) -> io.ReleaseDueResult:
        """The release as a local activity, failing as the activity task does.

        The SDK resolves a failed local activity with the activity's own error (an
        ``ApplicationError``, or Temporal's ``TimeoutError``), not wrapped in an
        ``ActivityError`` as a failed activity task is; the loop survives ``ActivityError``
        alone (a deterministic refusal recorded on the schedule, or the ledger unreachable past
        the retry bound), so the error is wrapped here: the same shape on both paths.
        """
        try:
            return await workflow.execute_local_activity_method(
                AlmanacActivities.release_due,
                release,
                start_to_close_timeout=LEDGER_TIMEOUT,
                retry_policy=LEDGER_RETRY,
                local_retry_threshold=LOCAL_RETRY_THRESHOLD,
            )
        except (ApplicationError, TemporalTimeoutError) as exc:
            raise ActivityError(
                f"local activity {io.RELEASE_DUE} failed",
                scheduled_event_id=0,
                started_event_id=0,
                identity="",
                activity_type=io.RELEASE_DUE,
                activity_id="",
                retry_state=None,
            ) from exc

    async def _start_child(
        self,
        occurrence: io.UpcomingOccurrence,
        gate: io.GateSnapshot,
        pacing: io.CatchUpPacing | None = None,
    ) -> None:
        self._started.add(occurrence.occurrence_id)
        params = self._occurrence_input(occurrence, gate)
        if pacing is not None:
            params = dataclasses.replace(params, pacing=pacing)
        task_queue = self._params.occurrence_task_queue
        alias = gate.implementation_alias
        # Canary routing: an occurrence runs on the task queue of the implementation alias its
        # gate names. Only a non-default alias records the marker, as the patch did.
        if alias != io.DEFAULT_IMPLEMENTATION_ALIAS:
            workflow.deprecate_patch(ALIAS_TASK_QUEUE_PATCH)
            task_queue = io.alias_task_queue(task_queue or workflow.info().task_queue, alias)
        workflow.deprecate_patch(OCCURRENCE_PRIORITY_PATCH)
        try:
            child = await workflow.start_child_workflow(
                OCCURRENCE_WORKFLOW,
                params,
                id=occurrence.occurrence_id,
                task_queue=task_queue,
                priority=OCCURRENCE_PRIORITY,
                # Children outlive this run's continue-as-new; a completed occurrence is never
                # started again (REJECT_DUPLICATE refuses a closed ID, running or not).
                parent_close_policy=workflow.ParentClosePolicy.ABANDON,
                id_reuse_policy=WorkflowIDReusePolicy.REJECT_DUPLICATE,
                search_attributes=sa.for_occurrence(occurrence),
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
        # Only a release that held something records the marker, as the patch did.
        if self._held <= 0:
            return False
        workflow.deprecate_patch(OVERLAP_BUFFER_PATCH)
        return True

    async def _watch(self, child: workflow.ChildWorkflowHandle[Any, Any]) -> None:
        """Note when a started occurrence ends (its outcome is the ledger's, not read here)."""
        with contextlib.suppress(Exception):
            await child
        self._watched -= 1
        self._child_ended = True
        self._ended_since_decision = True

    # -- seams a simulated clock overrides (almanac.gates.simulation) ------------------------------
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


def _refuse(field_: str, value: Any, problem: str, *, kind: str = INVALID_UPDATE) -> NoReturn:
    """Reject an update in its validator: ``field=value: problem`` (details: field, value)."""
    raise ApplicationError(
        f"{field_}={value!r}: {problem}",
        {"field": field_, "value": value if _is_json_scalar(value) else repr(value)},
        type=kind,
        non_retryable=True,
    )


def _z(instant: datetime) -> str:
    """An instant as the README writes them: UTC, whole seconds, ``Z``."""
    utc = instant.astimezone(UTC).replace(microsecond=0)
    return utc.isoformat().replace("+00:00", "Z")


def _is_json_scalar(value: Any) -> bool:
    return value is None or isinstance(value, str | int | float | bool)


def _check_by(by: str | None) -> None:
    """Who decides a gate change: absent, or 1 to ``MAX_BY_CHARS`` printable characters."""
    if by is None:
        return
    if not isinstance(by, str) or not by.strip() or not by.isprintable():
        _refuse("by", by, "needs a non-empty, printable name of who decides")
    if len(by) > MAX_BY_CHARS:
        _refuse("by", f"{len(by)} characters", f"longer than {MAX_BY_CHARS}")


def _check_reason(params: DisableInput | DeleteInput | io.BackfillRequest) -> None:
    reason = getattr(params, "reason", None)
    if not isinstance(reason, str) or not reason.strip():
        _refuse("reason", reason, "needs a non-empty reason")
    if len(reason) > MAX_REASON_CHARS:
        _refuse("reason", f"{len(reason)} characters", f"longer than {MAX_REASON_CHARS}")
    try:
        reason.encode("utf-8")
    except UnicodeEncodeError as exc:
        # An unpaired surrogate (a byte that was not UTF-8): no ledger can store it.
        _refuse(
            "reason", f"{len(reason)} characters", f"not valid text at character {exc.start + 1}"
        )


__all__ = [
    "BackfillRequest",
    "Command",
    "DeleteInput",
    "DisableInput",
    "EnableInput",
    "ScheduleInput",
    "ScheduleState",
    "ScheduleWorkflow",
    "schedule_workflow_id",
]
