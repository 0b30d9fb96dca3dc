"""The schedule loop's release: what is due (an activity), its children started, the horizon read.

One :class:`ScheduleReleases` per schedule run holds what the run knows of its occurrences: those
it has started, the children still running, the overlap buffer's size and the latest horizon
reading (what the ``upcoming`` query answers). The ledger decides what is due (``io.RELEASE_DUE``,
through the misfire, overlap and pacing rules); this module carries the decision out and starts
each released occurrence as a child ``AlmanacOccurrence`` with workflow ID = occurrenceId (a
duplicate start is a no-op). Passed through the workflow sandbox (imported once, not per
instance); its methods call ``temporalio.workflow`` and run only inside a workflow.
"""

from __future__ import annotations

import asyncio
import contextlib
import dataclasses
from collections.abc import Callable
from datetime import datetime, timedelta
from typing import Any

from temporalio import workflow
from temporalio.common import Priority, WorkflowIDReusePolicy
from temporalio.exceptions import ActivityError, ApplicationError, WorkflowAlreadyStartedError
from temporalio.exceptions import TimeoutError as TemporalTimeoutError

from activities import io
from activities.ledger_activities import AlmanacActivities
from workflows import search_attributes as sa
from workflows.contracts import (
    LEDGER_RETRY,
    LEDGER_TIMEOUT,
    OCCURRENCE_WORKFLOW,
    OccurrenceInput,
    ScheduleInput,
    ScheduleState,
)
from workflows.schedule_timing import release_not_before

CONCURRENT_CHILD_STARTS = "almanac-concurrent-child-starts"
"""Patch ID: a wake-up's children are started together, a batch per workflow task."""
RELEASE_AND_MATERIALIZE = "almanac-release-and-materialize"
"""Patch ID: no ``almanac.materialize`` activity of its own after a wake-up's child starts."""
OCCURRENCE_PRIORITY_PATCH = "almanac-occurrence-priority"
"""Patch ID: occurrence children are started at :data:`OCCURRENCE_PRIORITY`."""
LOCAL_RELEASE = "almanac-local-release"
"""Patch ID: a timer's wake-up releases in a local activity (the child starts do not wait for a
server round trip), its follow-up materialization an activity scheduled with the starts."""
ALIAS_TASK_QUEUE_PATCH = "almanac-alias-task-queue"
"""Patch ID: an occurrence runs on the task queue of its gate's non-default implementation alias."""
OVERLAP_BUFFER_PATCH = "almanac-overlap-buffer"
"""Patch ID: while a release holds buffered occurrences, a child's end wakes the loop."""
CATCH_UP_PACING = "almanac-catch-up-pacing"
"""Patch ID: the occurrences one release hands out are given start slots ``catchUpSpacing``
apart (``io.CatchUpPacing``), which their workflows wait for before claiming."""
OCCURRENCE_PRIORITY = Priority(priority_key=4)
"""Task-queue priority of an occurrence workflow and its activities (Temporal: 1 first … 5 last,
default 3; children and activities inherit). Below the schedule workflows' default, so in a
backlog (a catch-up after an outage) the matching service hands out every schedule's pending
work — materializing its horizon, deciding its missed occurrences, a disable or a revision —
before the occurrences' own tasks: the seed's materialization bound does not wait for the
catch-up's executions, and an operator's change is not queued behind them. Without a backlog
the order changes nothing."""
LOCAL_RETRY_THRESHOLD = timedelta(milliseconds=1)
"""The local release's retries all wait on workflow timers (every backoff of ``LEDGER_RETRY`` is
longer): durable, visible in the history, and the workflow task is not held open while the ledger
is unreachable (the SDK's default, a minute, retries in the worker's memory, on the wall clock)."""
CHILD_START_BATCH = 100
"""Child starts issued in one workflow task at most (bounds the task's commands)."""

OccurrenceInputFor = Callable[[io.UpcomingOccurrence, io.GateSnapshot], OccurrenceInput]
"""Builds a child's input for an occurrence released under a gate (the workflow's seam)."""


class ScheduleReleases:
    """One schedule run's releases, child starts and horizon readings.

    The run's :class:`ScheduleState` and ``io.ScheduleStatus`` are shared with the workflow: a
    release updates the gate, the next instant, the counts and the high-water mark there.
    """

    def __init__(
        self,
        params: ScheduleInput,
        state: ScheduleState,
        status: io.ScheduleStatus,
        occurrence_input: OccurrenceInputFor,
    ) -> None:
        """Start a run's releases with nothing started and no reading yet."""
        self._params = params
        self._state = state
        self._status = status
        self._occurrence_input = occurrence_input
        self._started: set[str] = set()
        self.upcoming: list[io.UpcomingOccurrence] = []
        """The latest materialization's next occurrences (the ``upcoming`` query)."""
        self.truncated = False
        """The latest materialization stopped at its occurrence bound (``BOUNDED_MATERIALIZE``)."""
        # Overlap buffering (ledger.overlap): occurrences held behind a running one start when a
        # child this run started ends; ``watched`` counts the children still running.
        self.held = 0
        """Occurrences the latest release holds in the overlap buffer."""
        self.watched = 0
        """Children this run started that are still running."""
        self.child_ended = False
        """A child ended since the loop last cleared the flag (before each sleep)."""
        self.ended = 0
        """Children this run started that have ended (a failure-streak decision compares it)."""

    async def release_and_start(
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

        Raises:
            ActivityError: the release or the follow-up materialization failed (refused and
                recorded by the activity, or the ledger unreachable past the retry bound).
        """
        not_before = release_not_before(now, timer_for)
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
            released = await _release_locally(release)
        else:
            released = await workflow.execute_activity_method(
                AlmanacActivities.release_due,
                release,
                start_to_close_timeout=LEDGER_TIMEOUT,
                retry_policy=LEDGER_RETRY,
            )
        self._status.gate = released.gate
        self.held = released.held
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
        slots = _pacing(new, released.catch_up_spacing_seconds)
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

    def holding(self) -> bool:
        """Whether buffered occurrences wait: then a child's end wakes the loop to release."""
        # Only a release that held something records the marker, as the patch did.
        if self.held <= 0:
            return False
        workflow.deprecate_patch(OVERLAP_BUFFER_PATCH)
        return True

    def _materialize_input(self, now: datetime) -> io.MaterializeOccurrencesInput:
        return io.MaterializeOccurrencesInput(
            self._params.schedule_id,
            now,
            self._params.horizon_seconds,
            from_utc=self._state.materialized_through_utc,
        )

    def _materialized(self, result: io.MaterializeOccurrencesResult) -> None:
        self.truncated = result.truncated
        self.upcoming = result.upcoming
        self._status.gate = result.gate
        self._status.next_instant_utc = result.next_instant_utc
        self._status.counts_by_state = result.counts_by_state
        self._status.materialized_through_utc = result.materialized_through_utc
        self._state.materialized_through_utc = result.materialized_through_utc

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
        self.watched += 1
        asyncio.create_task(self._watch(child))  # noqa: RUF006 (the loop's flag is the result)

    async def _watch(self, child: workflow.ChildWorkflowHandle[Any, Any]) -> None:
        """Note when a started occurrence ends (its outcome is the ledger's, not read here)."""
        with contextlib.suppress(Exception):
            await child
        self.watched -= 1
        self.child_ended = True
        self.ended += 1


def _pacing(
    new: list[io.UpcomingOccurrence], spacing_seconds: float
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


async def _release_locally(release: io.ReleaseDueInput) -> io.ReleaseDueResult:
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


__all__ = ["CHILD_START_BATCH", "OCCURRENCE_PRIORITY", "ScheduleReleases"]
