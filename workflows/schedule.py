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

This module is the workflow's interface and its loop; each step is a sibling module's, passed
through the sandbox so a new instance runs this module alone (DESIGN §6):
``schedule_validation`` (the update validators), ``schedule_changes`` (the queued changes and
their verdicts), ``schedule_release`` (the release, the child starts, the horizon reading),
``schedule_checks`` (deadline sweeps, failure-streak decisions) and ``schedule_timing`` (the
timer, the instant a release decides as of, continue-as-new). Each defines the patch IDs of its
own path.
"""

from __future__ import annotations

import contextlib
import dataclasses
from datetime import datetime, timedelta
from typing import Any

from temporalio import workflow
from temporalio.exceptions import ActivityError, ApplicationError

with workflow.unsafe.imports_passed_through():
    # The steps' modules call the deadline and streak activities, but their results are decoded
    # here: the converter reads a dataclass's field types from its module in the sandbox's
    # ``sys.modules``, where a module passed through appears once this module imports it by name.
    from activities import io
    from activities.deadlines import SweepDeadlinesResult  # noqa: F401
    from activities.streak_activities import DecideFailureStreakResult  # noqa: F401
    from timecontract.secrets import REDACTED, secret_problems
    from workflows.contracts import (
        Command,
        DeleteInput,
        DisableInput,
        EnableInput,
        OccurrenceInput,
        ScheduleInput,
        ScheduleState,
    )
    from workflows.schedule_changes import ScheduleChanges
    from workflows.schedule_checks import DeadlineSweeps, StreakDecisions
    from workflows.schedule_release import ScheduleReleases
    from workflows.schedule_timing import history_full, sleep_for
    from workflows.schedule_validation import check_backfill, check_by, check_reason, check_spec

WORKFLOW_ID_PREFIX = "almanac-schedule-"
# Deprecated patches (docs/operating/upgrades.md): each ID marks a path that is the only one now.
# ``workflow.deprecate_patch`` records its marker where ``workflow.patched`` did, so runs of the
# previous release (markers in their history) replay here, and a worker of the previous release
# replays runs of this one; the calls go in the next release. The sibling modules define theirs.
MATERIALIZE_IN_RELEASE = "almanac-materialize-in-release"
"""Patch ID: a refresh's materialization runs in the release activity, before the release."""
BOUNDED_MATERIALIZE = "almanac-bounded-materialize"
"""Patch ID: a materialization stopped at its bound (``truncated``) is continued at the next
wake-up, ``MIN_DELAY`` later, with queued changes applied between two bounded calls."""
UPDATES_PATCH = "almanac-control-updates"
"""Patch ID: a run started without a revision waits for a first change, and ends if none comes."""
SIGNAL_SECRETS_PATCH = "almanac-signal-secrets"
"""Patch ID: a ``publish_revision`` signal whose spec holds a literal secret is rejected and
recorded without the value (its payload is in history as sent; it goes no further)."""
FIRST_COMMAND_WAIT = timedelta(minutes=1)
"""How long a run started without a revision waits for one (update-with-start: no wait)."""
BACKFILL_REFUSED = "BackfillRefused"
"""The error type of a backfill the ledger refused (window, ownership, bound): nothing written."""
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
        self._status = io.ScheduleStatus(
            params.schedule_id, None, None, rejected_signals=self._state.rejected_signals
        )
        # The steps share this run's state and status; the seams are handed over bound, so a
        # subclass's clock and child input are the ones used.
        self._changes = ScheduleChanges(params, self._state, self._status, self._now)
        self._releases = ScheduleReleases(params, self._state, self._status, self._occurrence_input)
        self._deadlines = DeadlineSweeps(params.schedule_id, self._state, self._now)
        self._streaks = StreakDecisions(params.schedule_id, self._state)
        self._wake_on_child_end = False
        """A child's end wakes the loop (buffered occurrences wait, or streaks are decided)."""

    # -- signals: validated here, applied by the loop; never raise ---------------------------
    @workflow.signal
    def disable(self, payload: Any = None) -> None:
        """Disable the schedule. Payload: a reason string or ``{"reason": "..."}``."""
        reason = payload.get("reason") if isinstance(payload, dict) else payload
        if not isinstance(reason, str) or not reason.strip():
            self._changes.reject("disable", f"needs a non-empty reason, got {payload!r}")
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
            self._changes.reject(
                "publish_revision", f"needs a spec mapping, got {type(payload).__name__}"
            )
            return
        problems = secret_problems(payload)
        if problems:
            workflow.deprecate_patch(SIGNAL_SECRETS_PATCH)
            # Temporal wrote the payload into history before this handler ran: refuse it here,
            # so it goes no further (the ledger, the activity's input), and say nothing of it.
            self._changes.reject(
                "publish_revision",
                f"{problems[0].field}={REDACTED}: {problems[0].problem}; send specs by update "
                "(almanac apply): a signal's payload is recorded in history as sent",
            )
            return
        self._state.pending.append(Command("publish_revision", spec=payload))

    # -- updates: validated before they enter history, answered with the ledger's verdict -------
    @workflow.update(name="publish_revision")
    async def publish_revision_update(self, spec: dict[str, Any]) -> io.PublishRevisionResult:
        """Publish a revision (scheduleSpec.v1 data); returns the ledger's verdict."""
        result: io.PublishRevisionResult = await self._changes.submit("publish_revision", spec=spec)
        return result

    @publish_revision_update.validator
    def _validate_publish(self, spec: dict[str, Any]) -> None:
        self._changes.check_open()
        check_spec(spec, self._params.schedule_id, self._status.gate)

    @workflow.update(name="disable")
    async def disable_update(self, params: DisableInput) -> io.ChangeGateResult:
        """Disable the schedule; returns the gate generation and how many DUE were cancelled."""
        result: io.ChangeGateResult = await self._changes.submit(
            "disable", reason=params.reason.strip(), by=params.by or "update"
        )
        return result

    @disable_update.validator
    def _validate_disable(self, params: DisableInput) -> None:
        self._changes.check_open()
        check_reason(params)
        check_by(params.by)

    @workflow.update(name="enable")
    async def enable_update(self, params: EnableInput | None = None) -> io.ChangeGateResult:
        """Enable the schedule; returns how many came due while disabled, run and expired."""
        by = params.by if params is not None and params.by else "update"
        result: io.ChangeGateResult = await self._changes.submit(
            "enable", reason="enabled by update", by=by
        )
        return result

    @enable_update.validator
    def _validate_enable(self, params: EnableInput | None = None) -> None:
        self._changes.check_open()
        check_by(None if params is None else params.by)

    @workflow.update(name="delete")
    async def delete_update(self, params: DeleteInput) -> io.DeleteScheduleResult:
        """Delete the schedule (the workflow then completes); returns what was cancelled."""
        self._changes.deleting = True
        try:
            result: io.DeleteScheduleResult = await self._changes.submit(
                "delete", reason=params.reason.strip(), by=params.by or "update"
            )
        except ApplicationError:
            self._changes.deleting = False  # not applied: the schedule runs on, changes welcome
            raise
        return result

    @delete_update.validator
    def _validate_delete(self, params: DeleteInput) -> None:
        self._changes.check_open()
        check_reason(params)
        check_by(params.by)

    @workflow.update(name="backfill")
    async def backfill_update(self, params: io.BackfillRequest) -> io.BackfillResult:
        """Backfill a past window (or plan it: ``dry_run``); returns the plan the ledger made."""
        result: io.BackfillResult = await self._changes.submit("backfill", backfill=params)
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
        self._changes.check_open()
        check_backfill(params, self._now())

    # -- queries ------------------------------------------------------------------------------
    @workflow.query
    def status(self) -> io.ScheduleStatus:
        """Gate, active revision, next instant and counts by state (latest ledger reading)."""
        return self._status

    @workflow.query
    def upcoming(self, n: int = 10) -> list[io.UpcomingOccurrence]:
        """The next ``n`` (at most 20) occurrences from the latest materialization."""
        return self._releases.upcoming[: max(0, int(n))]

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
                self._status.last_rejected_at_utc = self._now()
                return self._status
        timer_for: datetime | None = None  # the instant the loop's timer was set for
        while True:
            now = self._now()
            if self._changes.ending or (end is not None and now >= end):
                await self._finish_handlers()
                return self._status
            try:
                changed = await self._changes.apply()
                if self._changes.ending:
                    continue  # deleted, or a refused first revision: nothing more to run
                refreshing = changed or now >= next_refresh
                if refreshing:
                    workflow.deprecate_patch(MATERIALIZE_IN_RELEASE)
                await self._releases.release_and_start(
                    now, materialize_first=refreshing, timer_for=timer_for
                )
                if self._deadlines.due(now, refreshing):
                    await self._deadlines.sweep()
                if self._streaks.due(refreshing, self._releases.ended):
                    await self._streaks.decide(self._releases.ended)
                if refreshing:
                    next_refresh = now + refresh
                if self._releases.truncated:
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
            if self._changes.ending:
                continue
            if history_full(self._params.max_history_events):
                await self._finish_handlers()
                if self._changes.ending:
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
            if self._deadlines.next_deadline is not None:
                wake = min(wake, self._deadlines.next_deadline)
            if end is not None:
                wake = min(wake, end)
            held = self._releases.holding()
            self._wake_on_child_end = held or self._streaks.on()
            if held and not self._releases.watched:
                wake = min(wake, self._now() + HELD_POLL)
            delay, timer_for = self._sleep_for(wake, enabled)
            self._releases.child_ended = False
            with contextlib.suppress(TimeoutError):
                await workflow.wait_condition(self._woken, timeout=delay)
                timer_for = None  # a signal or a child's end woke the loop, not the timer

    def _woken(self) -> bool:
        """The loop's wake-up condition besides its timer: a signal, or a child's end if held."""
        return bool(self._state.pending) or (self._wake_on_child_end and self._releases.child_ended)

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
                await self._changes.apply()

    def _sleep_for(self, wake: datetime, enabled: bool) -> tuple[timedelta, datetime | None]:
        """How long the loop sleeps for ``wake``, and the instant its timer is for (if any).

        ``schedule_timing.sleep_for`` on this schedule's clock and next instant; a test's seam
        (``tests/workflows/slow_timer_tasks.py`` makes the task that sets the timer slow).
        """
        return sleep_for(wake, self._now(), self._status.next_instant_utc, enabled)

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
