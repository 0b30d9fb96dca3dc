"""The Python client: apply, disable, enable, delete, backfill, status and upcoming, over Temporal.

The command line is a thin layer over this module; your code can use it the same way::

    import asyncio
    from pathlib import Path

    from almanac.client import AlmanacClient
    from almanac.settings import AlmanacSettings
    from timecontract import load_spec

    async def main() -> None:
        settings = AlmanacSettings()                     # ALMANAC_TEMPORAL_ADDRESS, ...
        client = await AlmanacClient.connect(settings)   # raises TemporalUnavailable
        spec = load_spec(Path("examples/every-10-seconds.yaml"), settings.tzdb_store)
        result = await client.apply(spec)                # the ledger's verdict, or ApplyRefused
        print(result.action, result.revision, result.verdict.cutover_at_utc)
        off = await client.disable("every-10-seconds", reason="maintenance window")
        print(off.gate.disable_generation, off.cancelled)
        on = await client.enable("every-10-seconds")
        print(on.came_due, on.released, on.expired, on.misfire_policy)

    asyncio.run(main())

Every change is a Temporal **update** of the schedule's long-lived workflow (ID
``almanac-schedule-<scheduleId>``, type ``AlmanacSchedule``) and returns the ledger's verdict:
the workflow's validator refuses a malformed change before it enters history, the workflow applies
an admitted one through an activity, and the activity's answer comes back. ``apply`` is one
update-with-start: it starts the workflow if it is not running (``USE_EXISTING`` otherwise) and
publishes the spec as a revision in the same call, so even a first revision returns its verdict.
Before anything is sent, ``apply`` checks the spec for literal secrets (the rule of
``timecontract.secrets``; the workflow's validator applies it again) and its action against the
registered adapters' parameter models (no worker needed).

A verdict needs a worker: without one the call waits up to ``update_timeout`` and raises
:class:`NoVerdict` (an admitted change may still be applied when a worker polls). Queries
(``status``, ``upcoming``) likewise fail with :class:`NoWorkerAnswered` after ``query_timeout``.

Every ledger write of a running schedule happens in the worker's activities; this client only
reads the ledger. The operator's own writes — recording a window by hand, resolving an
``UNKNOWN_EFFECT`` case — go through :class:`almanac.ledger_client.LedgerClient`, one ledger
operation per method, with no Temporal call. ``status``, ``upcoming`` and ``list_schedules`` are
the reading half, :class:`almanac.schedule_reader.ScheduleReader`: true *now*, from the ledger,
with the workflow's query for what only it knows (that module's docstring).

Errors (defined in :mod:`almanac.client_errors`):

- :class:`ApplyRefused`, :class:`ChangeRejected` (``ValueError``): the change was refused,
  by the validator or by the ledger; ``field`` and ``value`` name what (``revision``,
  ``cutoverAt``, ``action.name``, ``action.parameters.url``, ``reason`` …).
- ``timecontract.SpecError`` (``ValueError``): the action failed the edge check; nothing was sent.
- ``timecontract.InvalidSpec`` (``ValueError``): the spec holds a literal secret; nothing was sent.
- :class:`ScheduleNotRunning` (``LookupError``): no running schedule workflow with that ID.
- :class:`TemporalUnavailable`: the frontend cannot be reached (or refused the call).
- :class:`NoWorkerAnswered`, :class:`NoVerdict`: no worker answered in time (operational).
- :class:`ChangeNotApplied`: the change's activity failed (the ledger unreachable past the
  retry bound, or a deterministic error recorded on the schedule; operational).
"""

from __future__ import annotations

import asyncio
import dataclasses
from collections.abc import Callable
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from typing import Any

from temporalio.client import (
    Client,
    WithStartWorkflowOperation,
    WorkflowUpdateFailedError,
    WorkflowUpdateRPCTimeoutOrCancelledError,
)
from temporalio.common import WorkflowIDConflictPolicy
from temporalio.exceptions import ApplicationError
from temporalio.service import RPCError

from activities import io
from almanac import manual, readings
from almanac.apply_checks import (
    check_action,
    check_applicable,
    check_disable_reason,
    differs_from_published,
    ledger_published_specs,
)
from almanac.client_errors import (
    ApplyRefused,
    ChangeNotApplied,
    ChangeRejected,
    NoVerdict,
    ScheduleNotRunning,
    TemporalUnavailable,
    failed_call,
)
from almanac.schedule_reader import DEFAULT_QUERY_TIMEOUT, ScheduleReader, utc_now
from almanac.settings import AlmanacSettings
from timecontract import ScheduleSpecV1, SpecError
from workflows import ScheduleInput, ScheduleWorkflow, schedule_workflow_id
from workflows.contracts import DeleteInput, DisableInput, EnableInput
from workflows.schedule import BackfillRequest
from workflows.schedule_changes import NOT_APPLIED
from workflows.schedule_validation import ENDING

DEFAULT_UPDATE_TIMEOUT = timedelta(seconds=60)
DEFAULT_BACKFILL_MAX = 1000
"""A backfill's default bound on creates and requeues (``ledger.DEFAULT_MAX_OCCURRENCES``)."""


@dataclass(frozen=True)
class ApplyResult:
    """The verdict on ``apply``: what happened to the spec's revision.

    ``action`` is ``started`` (the schedule's first revision: its gate was created, or a deleted
    schedule revived), ``published`` (a new revision of a running schedule) or ``unchanged``
    (the identical revision was active already).
    """

    schedule_id: str
    revision: int
    action: str
    workflow_id: str
    verdict: io.PublishRevisionResult
    """The ledger's verdict (cutover, gate, superseded occurrences)."""


def refusal_line(field: str | None, value: object, reason: str) -> str:
    """``<field>=<value>: <reason>``, unless the reason already names the field that way.

    The value is shown as a spec problem shows it (``timecontract.SpecError``: ``null``,
    ``true``, a string quoted, at most ``MAX_SHOWN`` characters).
    """
    if not field or reason.startswith(f"{field}="):
        return reason
    return str(SpecError(field, value, reason))


class AlmanacClient(ScheduleReader):
    """Start and steer schedule workflows; read their status (see the module docstring)."""

    def __init__(
        self,
        client: Client,
        settings: AlmanacSettings,
        query_timeout: timedelta = DEFAULT_QUERY_TIMEOUT,
        update_timeout: timedelta = DEFAULT_UPDATE_TIMEOUT,
        *,
        read_ledger: bool = True,
        clock: Callable[[], datetime] = utc_now,
    ) -> None:
        """Wrap a connected Temporal client (the other arguments are :class:`ScheduleReader`'s).

        ``update_timeout``: how long a change waits for its verdict.
        """
        super().__init__(client, settings, query_timeout, read_ledger=read_ledger, clock=clock)
        self._update_timeout = update_timeout

    async def apply(self, spec: ScheduleSpecV1, *, horizon: timedelta | None = None) -> ApplyResult:
        """Publish ``spec`` as a revision, starting the schedule's workflow if it is not running.

        One update-with-start (see the module docstring): the answer is the ledger's verdict.

        Args:
            spec: a checked spec (``timecontract.load_spec``) with an action.
            horizon: how far ahead a new schedule workflow materializes occurrences (default 14
                days; the activity shortens it for high-frequency rules). Ignored when the
                schedule runs already.

        Returns:
            The verdict: ``started``, ``published`` or ``unchanged`` (see :class:`ApplyResult`).

        Raises:
            ApplyRefused: the spec has no action, or the schedule refused it (naming the field
                and value: a revision that does not increase, a cutover in the past, …).
            SpecError: the action's name or parameters fail the registered adapters' check.
            InvalidSpec: the spec holds a literal secret (nothing is sent).
            NoVerdict: no worker applied it within ``update_timeout``.
            TemporalUnavailable: Temporal failed the call.
        """
        check_applicable(spec)
        check_action(spec)
        workflow_id = schedule_workflow_id(spec.schedule_id)
        verdict: io.PublishRevisionResult
        try:
            verdict = await self._publish(spec, horizon)
        except ApplyRefused as exc:
            if exc.code != ENDING:
                raise
            # The running workflow is ending (deleted, or its revision was refused a moment
            # ago): once it has closed, the same call starts a new run.
            await self._closed(spec.schedule_id)
            verdict = await self._publish(spec, horizon)
        if not verdict.accepted:
            reason = verdict.reason
            if "already published with digest" in reason:
                reason += await self._published_differs(spec)
            raise ApplyRefused(
                refusal_line(verdict.field, verdict.value, reason),
                field=verdict.field,
                value=verdict.value,
                verdict=verdict,
            )
        action = (
            "started"
            if verdict.created_schedule
            else ("published" if verdict.created else "unchanged")
        )
        return ApplyResult(spec.schedule_id, spec.revision, action, workflow_id, verdict)

    async def _published_differs(self, spec: ScheduleSpecV1) -> str:
        """Which fields differ from the published revision, where the ledger can be read here.

        ``""`` when it cannot be read: the refusal alone is still true.
        """
        handle, _ = await self._reading_ledger()
        if handle is None:
            return ""
        try:
            specs = await asyncio.to_thread(ledger_published_specs, handle, spec.schedule_id)
        except Exception:  # unreachable, not migrated: the refusal alone is still true
            return ""
        return differs_from_published(specs, spec)

    async def _publish(
        self, spec: ScheduleSpecV1, horizon: timedelta | None
    ) -> io.PublishRevisionResult:
        """One update-with-start of ``publish_revision`` (a new start operation each call)."""
        params = ScheduleInput(schedule_id=spec.schedule_id)
        if horizon is not None:
            params = dataclasses.replace(params, horizon_seconds=horizon.total_seconds())
        start = WithStartWorkflowOperation(
            ScheduleWorkflow.run,
            params,
            id=schedule_workflow_id(spec.schedule_id),
            task_queue=self._settings.temporal.task_queue,
            id_conflict_policy=WorkflowIDConflictPolicy.USE_EXISTING,
        )
        verdict: io.PublishRevisionResult = await self._update(
            spec.schedule_id,
            self._client.execute_update_with_start_workflow(
                ScheduleWorkflow.publish_revision_update,
                spec.resolved(),
                start_workflow_operation=start,
            ),
            ApplyRefused,
        )
        return verdict

    async def _closed(self, schedule_id: str) -> None:
        """Wait (at most ``update_timeout``) for the schedule's current run to close."""
        try:
            await asyncio.wait_for(
                self.handle(schedule_id).result(), self._update_timeout.total_seconds()
            )
        except TimeoutError as exc:
            raise NoVerdict(f"schedule {schedule_id!r} is ending but has not closed") from exc
        except RPCError as exc:
            raise await self._translate(schedule_id, exc) from exc
        except Exception:
            return

    async def disable(
        self, schedule_id: str, reason: str, *, by: str | None = None
    ) -> io.ChangeGateResult:
        """Disable a schedule: the ledger gate flips, DUE occurrences are cancelled.

        ``by`` names who decides (``console:alice``), recorded as the events' ``by``; without
        it the ledger records ``update``.

        Returns:
            The verdict: ``changed`` (``False``: it was disabled already), the gate (its
            ``disable_generation`` fences every claim that read the gate before) and how many
            DUE occurrences were ``cancelled``.

        Raises:
            ChangeRejected: ``reason`` is empty, or the schedule is deleted.
            ScheduleNotRunning: no running schedule workflow with that ID.
            NoVerdict, TemporalUnavailable: operational failures.
        """
        reason = check_disable_reason(reason)
        return await self._gate_update(
            schedule_id,
            self.handle(schedule_id).execute_update(
                ScheduleWorkflow.disable_update, DisableInput(reason, by)
            ),
        )

    async def enable(self, schedule_id: str, *, by: str | None = None) -> io.ChangeGateResult:
        """Enable a disabled schedule; the misfire policy decides what came due meanwhile.

        ``by`` names who decides, recorded as the ENABLED event's ``by`` (else ``update``).

        Returns:
            The verdict: ``changed``, the gate, and — when it changed — ``came_due`` (instants
            that passed while disabled), of which ``released`` run now and ``expired`` are
            recorded MISFIRE_EXPIRED, under ``misfire_policy``.

        Raises:
            ChangeRejected: the schedule is deleted.
            ScheduleNotRunning: no running schedule workflow with that ID.
            NoVerdict, TemporalUnavailable: operational failures.
        """
        handle = self.handle(schedule_id)
        return await self._gate_update(
            schedule_id,
            handle.execute_update(ScheduleWorkflow.enable_update, EnableInput(by))
            if by is not None
            else handle.execute_update(ScheduleWorkflow.enable_update),
        )

    async def delete(
        self, schedule_id: str, reason: str, *, by: str | None = None
    ) -> io.DeleteScheduleResult:
        """Delete a schedule: its workflow completes, nothing new is claimed, every fact stays.

        ``by`` names who decides, recorded as the DELETED event's ``by`` (else ``update``).
        Re-applying the scheduleId later needs a higher revision (whose cutoverAt is not past).

        Returns:
            The verdict: ``deleted`` (``False``: it was deleted already) and how many
            undispatched occurrences (PLANNED, DUE, RETRY_WAIT) were ``cancelled``.

        A schedule deleted before (its workflow has completed) is answered from the ledger,
        where it can be read here: ``deleted=False``, as the workflow would answer.

        Raises:
            ChangeRejected: ``reason`` is empty.
            ScheduleNotRunning: no running schedule workflow with that ID (and the ledger here
                does not know it as deleted).
            NoVerdict, TemporalUnavailable: operational failures.
        """
        if not reason.strip():
            raise ChangeRejected(
                f"reason={reason!r}: deleting needs a non-empty reason", field="reason"
            )
        try:
            verdict: io.DeleteScheduleResult = await self._update(
                schedule_id,
                self.handle(schedule_id).execute_update(
                    ScheduleWorkflow.delete_update, DeleteInput(reason.strip(), by)
                ),
                ChangeRejected,
            )
        except ScheduleNotRunning:
            gate = await self._ledger_gate(schedule_id)
            if gate is None or gate.deleted_at_utc is None:
                raise
            return io.DeleteScheduleResult(schedule_id, False, gate)
        if verdict.rejected:
            raise ChangeRejected(verdict.rejected, field="scheduleId", value=schedule_id)
        return verdict

    async def backfill(
        self,
        schedule_id: str,
        from_utc: datetime,
        to_utc: datetime,
        *,
        reason: str,
        by: str | None = None,
        include_expired: bool = False,
        max_occurrences: int = DEFAULT_BACKFILL_MAX,
        dry_run: bool = False,
    ) -> io.BackfillResult:
        """Run a past window on purpose; with ``dry_run``, only plan it.

        The window ``[from_utc, to_utc)`` is half-open, in UTC; it must lie before the schedule's
        own now and be owned by the revision in force. Occurrences never materialized there are
        created with their normal IDs and run; ``MISFIRE_EXPIRED`` ones are moved back to DUE only
        with ``include_expired``; every other one (SUCCEEDED, UNKNOWN_EFFECT, …) is reported and
        left alone. A plan with more than ``max_occurrences`` creates and requeues is refused.

        Args:
            schedule_id: the schedule.
            from_utc: window start, aware (any offset; compared in UTC), inclusive.
            to_utc: window end, aware, exclusive.
            reason: why (recorded on every event the backfill writes); not empty.
            by: who (default ``<user>@<host>`` of this process).
            include_expired: requeue ``MISFIRE_EXPIRED`` occurrences.
            max_occurrences: the bound (default 1000, at most 2000).
            dry_run: return the plan, write nothing.

        Returns:
            The plan (``entries``, each ``CREATE``/``REQUEUE``/``SKIP`` with its state) and the IDs
            ``released`` to run (empty on a dry run). The schedule starts them right away.

        Raises:
            ChangeRejected: a naive or empty window, a window in the schedule's future or not
                owned by the revision in force, a disabled or deleted schedule, a plan over the
                bound, an empty reason; ``field`` and ``value`` name it. Nothing was written.
            ScheduleNotRunning: no running schedule workflow with that ID.
            NoVerdict, TemporalUnavailable, ChangeNotApplied: operational failures.

        """
        for name, value in (("from", from_utc), ("to", to_utc)):
            if value.tzinfo is None or value.utcoffset() is None:
                raise ChangeRejected(
                    f"{name}={value.isoformat()!r}: an instant needs a UTC offset (end it in Z)",
                    field=name,
                    value=value.isoformat(),
                )
        if not reason.strip():
            raise ChangeRejected(
                f"reason={reason!r}: a backfill needs a non-empty reason", field="reason"
            )
        request = BackfillRequest(
            from_utc.astimezone(UTC),
            to_utc.astimezone(UTC),
            reason.strip(),
            by or manual.caller_identity(),
            include_expired=include_expired,
            max_occurrences=max_occurrences,
            dry_run=dry_run,
        )
        result: io.BackfillResult = await self._update(
            schedule_id,
            self.handle(schedule_id).execute_update(ScheduleWorkflow.backfill_update, request),
            ChangeRejected,
        )
        return result

    async def _gate_update(self, schedule_id: str, call: Any) -> io.ChangeGateResult:
        verdict: io.ChangeGateResult = await self._update(schedule_id, call, ChangeRejected)
        if verdict.rejected:
            raise ChangeRejected(
                verdict.rejected, field="scheduleId", value=schedule_id, verdict=verdict
            )
        return verdict

    async def _update(self, schedule_id: str, call: Any, rejected: type[ChangeRejected]) -> Any:
        """Await an update call: its result, or one of the documented errors."""
        timeout = self._update_timeout.total_seconds()
        try:
            return await asyncio.wait_for(call, timeout=timeout)
        except WorkflowUpdateFailedError as exc:
            cause = exc.cause
            if isinstance(cause, ApplicationError) and cause.type == NOT_APPLIED:
                raise ChangeNotApplied(f"{schedule_id}: {cause.message}") from exc
            if isinstance(cause, ApplicationError):
                details = cause.details[0] if cause.details else {}
                if not isinstance(details, dict):
                    details = {}
                raise rejected(
                    cause.message,
                    field=str(details.get("field", "")),
                    value=details.get("value"),
                    code=cause.type or "",
                ) from exc
            raise TemporalUnavailable(f"update on {schedule_id!r} failed: {exc}") from exc
        except (TimeoutError, WorkflowUpdateRPCTimeoutOrCancelledError) as exc:
            raise NoVerdict(
                f"no verdict from {schedule_id!r} within {timeout:g}s: no worker applied the "
                f"change (task queue {self._settings.temporal.task_queue!r}); an admitted change "
                "is applied when a worker polls, unless the Temporal server restarts first (it "
                "keeps a change no worker accepted in memory) — check `almanac status`, and send "
                "it again if it is not there"
            ) from exc
        except RPCError as exc:
            raise await self._translate(schedule_id, exc) from exc

    async def trigger(
        self,
        schedule_id: str,
        *,
        reason: str,
        request_id: str | None = None,
        by: str | None = None,
        wait: bool = False,
        requested_at_utc: datetime | None = None,
    ) -> manual.TriggerReport:
        """Run one manual occurrence now, once per request ID (see :func:`almanac.manual.trigger`).

        Refused before anything is started or written when the schedule's workflow is not
        running (never applied, or deleted) or, where the ledger can be read here, its gate is
        disabled: the claim would refuse it, so the run would only record a cancellation.

        Raises:
            ValueError: an empty reason or a malformed request ID (nothing was sent).
            ScheduleNotRunning: no running schedule workflow with that ID.
            TriggerRefused: the ledger's gate is disabled or deleted.
            TemporalUnavailable: Temporal failed the call.
        """
        manual.check_request(schedule_id, reason, request_id)  # bad input first: nothing sent
        if not await self.is_running(schedule_id):
            raise await self._not_running(schedule_id)
        manual.refuse_closed_gate(schedule_id, await self._ledger_gate(schedule_id))
        try:
            report = await manual.trigger(
                self._client,
                self._settings,
                schedule_id,
                reason=reason,
                request_id=request_id,
                by=by,
                wait=wait,
                requested_at_utc=requested_at_utc,
            )
        except RPCError as exc:
            raise failed_call(exc) from exc
        return dataclasses.replace(report, ledger_state=await self._ledger_state(report))

    async def _ledger_state(self, report: manual.TriggerReport) -> str | None:
        """The ledger's state of a trigger's occurrence now (``None``: not readable or absent).

        A repeated request ID starts nothing, so the ledger is where its result is: it may have
        succeeded long ago, or been reconciled since the run ended.
        """
        handle, _ = await self._reading_ledger()
        if handle is None:
            return None
        try:
            return await asyncio.to_thread(
                readings.read_occurrence_state, handle, report.occurrence_id
            )
        except Exception:  # unreachable, not migrated: nothing to add
            return None
