"""The schedule loop's changes: queued by signals and updates, applied one at a time by activities.

A change (a ``Command``) waits in ``ScheduleState.pending`` (carried over continue-as-new)
until the loop applies it through its activity, so changes race with dispatch only on the
ledger's gate. An update's handler waits for its verdict (:meth:`ScheduleChanges.submit`); a
signal's change is fire and forget, and a refusal is recorded in the status query, never raised.
Passed through the workflow sandbox (imported once, not per instance); the methods call
``temporalio.workflow`` and run only inside a workflow.
"""

from __future__ import annotations

from collections.abc import Callable
from datetime import datetime
from typing import Any

from temporalio import workflow
from temporalio.exceptions import ActivityError, ApplicationError

from activities import io
from activities.ledger_activities import AlmanacActivities
from workflows.contracts import (
    LEDGER_RETRY,
    LEDGER_TIMEOUT,
    Command,
    NotApplied,
    ScheduleInput,
    ScheduleState,
)
from workflows.schedule_validation import refuse_ending

BACKFILL_PATCH = "almanac-backfill"
"""Patch ID: the ``backfill`` update's path."""
NOT_APPLIED = "ChangeNotApplied"
"""The error type of an update whose activity failed (a deterministic error, already recorded on
the schedule, or the ledger unreachable past the retry bound): an operational failure."""


class ScheduleChanges:
    """One schedule run's queue of changes, their verdicts and whether the run is ending.

    The run's :class:`ScheduleState` and ``io.ScheduleStatus`` are shared with the workflow: a
    change updates the gate and the revision's flags there, and a refusal the status's count.
    """

    def __init__(
        self,
        params: ScheduleInput,
        state: ScheduleState,
        status: io.ScheduleStatus,
        now: Callable[[], datetime],
    ) -> None:
        """Start a run's changes with nothing answered and the schedule open.

        Args:
            params: the run's input.
            state: the run's state (its ``pending`` queue is the one applied).
            status: the status query's answer.
            now: the schedule's clock (the workflow's seam): the instant each change is applied.
        """
        self._params = params
        self._state = state
        self._status = status
        self._now = now
        self._verdicts: dict[str, Any] = {}
        self.deleting = False
        """A delete was admitted: validators refuse further changes."""
        self.ending = False
        """Nothing more to run (deleted, or no revision): the loop returns its status."""

    def check_open(self) -> None:
        """Refuse an update while a delete is admitted or the run is ending (a validator's step).

        Raises:
            ApplicationError: of type ``schedule_validation.ENDING``.
        """
        if self.deleting or self.ending:
            refuse_ending(self._params.schedule_id)

    def reject(self, signal: str, problem: str, *, by_update: bool = False) -> None:
        """Record a refused change in the status query, the worker log and the count carried on.

        The history holds it too (the signal itself, or the update's verdict). ``by_update``:
        the change came as an update, not a signal.
        """
        workflow.logger.warning(
            "rejected %s %s: %s", "update" if by_update else "signal", signal, problem
        )
        self._state.rejected_signals += 1
        self._status.rejected_signals = self._state.rejected_signals
        self._status.last_rejected_signal = f"{signal}: {problem}"
        self._status.last_rejected_at_utc = self._now()

    async def submit(self, kind: str, **fields: Any) -> Any:
        """Queue the current update's change and wait for its verdict.

        Args:
            kind: the ``Command`` kind (the update's name).
            **fields: the ``Command``'s other fields.

        Returns:
            The ledger's verdict (an ``io.*Result``).

        Raises:
            ApplicationError: of type :data:`NOT_APPLIED` when the change's activity failed.
        """
        update_id = workflow.current_update_info().id  # type: ignore[union-attr]
        self._state.pending.append(Command(kind, update_id=update_id, **fields))
        await workflow.wait_condition(lambda: update_id in self._verdicts)
        verdict = self._verdicts.pop(update_id)
        if isinstance(verdict, NotApplied):
            raise ApplicationError(
                f"the change was not applied: {verdict.why}", type=NOT_APPLIED, non_retryable=True
            )
        return verdict

    async def apply(self) -> bool:
        """Apply every queued change in order; whether there was any.

        Raises:
            ActivityError: a change's activity failed (an update's caller gets
                ``NotApplied``; the loop records it and goes on).
            ApplicationError: a first revision (the input's) the ledger refused: nothing to run.
        """
        changed = False
        while self._state.pending:
            command = self._state.pending.pop(0)
            changed = True
            if self.ending:
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
            self.reject(
                "publish_revision",
                f"revision rejected: {result.reason}",
                by_update=command.update_id is not None,
            )
            if not result.schedule_live:
                # No gate, or a deleted one: nothing to run (the caller has the verdict).
                self.ending = True
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
            io.DeleteScheduleInput(
                self._params.schedule_id, command.reason, self._now(), by=command.by
            ),
            start_to_close_timeout=LEDGER_TIMEOUT,
            retry_policy=LEDGER_RETRY,
        )
        if result.gate is not None:
            self._status.gate = result.gate
        # Deleted now, deleted before, or never created: this workflow has nothing to run.
        self.ending = True
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
            self.reject(command.kind, why)
        self._answer(command, verdict)

    def _answer(self, command: Command, verdict: Any) -> None:
        if command.update_id is not None:
            self._verdicts[command.update_id] = verdict


__all__ = ["NOT_APPLIED", "ScheduleChanges"]
