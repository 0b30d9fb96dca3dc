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
``UNKNOWN_EFFECT`` case — go through :class:`LedgerClient`, one ledger operation per method, with
no Temporal call.
``status`` and ``upcoming`` are true *now*: they read the ledger (``settings.resolved_ledger_url``;
:mod:`almanac.readings`) for the gate, the counts by state and the next occurrences, and ask the
schedule workflow's ``status`` query (answered by a worker: with none running it fails with
:class:`NoWorkerAnswered` after ``query_timeout``) only for what the workflow alone knows — its
last error, rejected signals, materialization high-water mark. Where the ledger cannot be read
(a SQLite file on another machine, a database out of reach), they fall back to the workflow's
reading from its last wake-up, and say so (:attr:`LiveStatus.source`).

Errors:

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
import functools
import re
from collections.abc import Callable
from contextlib import AbstractContextManager
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from typing import TYPE_CHECKING, Any

from temporalio.api.enums.v1 import WorkflowExecutionStatus
from temporalio.client import (
    Client,
    WithStartWorkflowOperation,
    WorkflowHandle,
    WorkflowQueryFailedError,
    WorkflowUpdateFailedError,
    WorkflowUpdateRPCTimeoutOrCancelledError,
)
from temporalio.common import WorkflowIDConflictPolicy
from temporalio.exceptions import ApplicationError
from temporalio.service import RetryConfig, RPCError, RPCStatusCode

from activities import io
from almanac import manual, readings
from almanac.settings import AlmanacSettings
from timecontract import AlmanacError, InvalidSpec, ScheduleSpecV1, format_instant
from timecontract.secrets import secret_problems
from workflows import ScheduleInput, ScheduleWorkflow, schedule_workflow_id
from workflows.contracts import DeleteInput, DisableInput, EnableInput
from workflows.schedule import ENDING, NOT_APPLIED, WORKFLOW_ID_PREFIX, BackfillRequest

if TYPE_CHECKING:
    from ledger.deadlines import DeadlineMissView

SCHEDULE_WORKFLOW_TYPE = "AlmanacSchedule"
"""The schedule workflow's type name (``WorkflowType="AlmanacSchedule"`` in list queries)."""
DEFAULT_QUERY_TIMEOUT = timedelta(seconds=10)
DEFAULT_UPDATE_TIMEOUT = timedelta(seconds=60)
DEFAULT_BACKFILL_MAX = 1000
"""A backfill's default bound on creates and requeues (``ledger.DEFAULT_MAX_OCCURRENCES``)."""
CONNECT_TIMEOUT = timedelta(seconds=10)
# A command line waits a few seconds for an unreachable frontend, not the SDK's default ten.
CONNECT_RETRY = RetryConfig(max_elapsed_time_millis=3000, max_retries=5)


class ChangeRejected(AlmanacError, ValueError):
    """The schedule refused a change: its validator, or the ledger's verdict.

    Attributes:
        field: what was refused (``revision``, ``cutoverAt``, ``action.name``, ``reason`` …), or
            empty when the refusal is not about one field.
        value: the refused value (JSON data), or ``None``.
        verdict: the ledger's verdict object, when the ledger refused (``None``: the validator).

    """

    def __init__(
        self,
        message: str,
        *,
        field: str = "",
        value: Any = None,
        verdict: Any = None,
        code: str = "",
    ) -> None:
        """Keep the message verbatim (it names the field and value when there is one)."""
        super().__init__(message)
        self.field = field
        self.value = value
        self.verdict = verdict
        self.code = code
        """The validator's error type (``InvalidUpdate``, ``ScheduleEnding``), else empty."""


class ApplyRefused(ChangeRejected):
    """A spec cannot be applied: no action, or a revision or cutover the schedule refuses."""


class ScheduleNotRunning(AlmanacError, LookupError):
    """No schedule workflow runs for this scheduleId: never applied, or deleted.

    ``deleted_at_utc`` (aware UTC) and ``deleted_reason`` are set when the ledger, read here,
    says the schedule was deleted; the message then says so instead of "apply its spec first".
    """

    def __init__(
        self,
        schedule_id: str,
        *,
        deleted_at_utc: datetime | None = None,
        deleted_reason: str | None = None,
    ) -> None:
        """Name the schedule in the message (and when and why it was deleted, if known)."""
        if deleted_at_utc is None:
            message = f"schedule {schedule_id!r} is not running (apply its spec first)"
        else:
            why = f" ({deleted_reason})" if deleted_reason else ""
            message = (
                f"schedule {schedule_id!r} was deleted at {format_instant(deleted_at_utc)}{why}: "
                "every fact is kept in the ledger (almanac ledger list); re-apply its spec with a "
                "higher revision to revive it"
            )
        super().__init__(message)
        self.schedule_id = schedule_id
        self.deleted_at_utc = deleted_at_utc
        self.deleted_reason = deleted_reason


class TriggerRefused(AlmanacError, ValueError):
    """A manual run the schedule's gate would refuse (disabled or deleted): nothing was started."""


class TemporalUnavailable(AlmanacError):
    """The Temporal frontend could not be reached, or failed the call (an operational error)."""


class NoWorkerAnswered(AlmanacError):
    """A query timed out: no Almanac worker polls the task queue (start ``almanac worker``)."""


class ChangeNotApplied(AlmanacError):
    """The schedule admitted a change but its activity failed: nothing was changed.

    An operational failure (the ledger unreachable past the retry bound), or a deterministic
    error the activity recorded on the schedule (its ``schedule_events`` say why).
    """


class NoVerdict(AlmanacError):
    """A change got no verdict in time: no worker applied it (it may still be, when one polls)."""


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


@dataclass
class LiveStatus(io.ScheduleStatus):
    """A schedule's status: the ledger's facts now, with what only the workflow knows.

    ``gate``, ``counts_by_state`` and ``next_instant_utc`` come from the ledger when
    ``source == "ledger"``; from the workflow's last wake-up when ``source == "workflow"`` (the
    ledger could not be read: ``ledger_problem`` says why).
    """

    source: str = "workflow"
    """``ledger`` (read now) or ``workflow`` (the workflow's reading at its last wake-up)."""
    read_at_utc: datetime | None = None
    """When the ledger was read (``None`` for the workflow's reading)."""
    ledger_problem: str = ""
    """Why the ledger was not read (empty when it was)."""
    worker_problem: str = ""
    """Why the workflow's part (last error, rejections, high-water mark) is missing: no worker
    answered its query (empty when one did)."""
    next_materialized: bool = True
    """``False``: ``next_instant_utc`` lies beyond the horizon, projected from the specs."""
    revision_now: int | None = None
    """The revision that owns now (its cutover has passed), from the ledger; ``None`` when not
    read or before the first cutover. ``gate.active_revision`` is the latest published."""
    pending: tuple[readings.PendingRevision, ...] = ()
    """Published revisions whose cutover is still ahead (they own nothing yet)."""
    deadline: str | None = None
    """The owning revision's ``deadline`` (``PT30M``), from the ledger; None without one."""
    deadline_misses: int = 0
    """Deadline misses the ledger records for the schedule (0 when not read)."""
    latest_deadline_miss: DeadlineMissView | None = None
    """The miss with the latest deadline, from the ledger."""
    failure_streak: readings.FailureStreakReading | None = None
    """The failure-streak policy, current streak and latest facts, from the ledger."""
    holidays: tuple[readings.HolidayDecision, ...] = ()
    """The ledger's first holiday decisions from now on (skipped or moved, with the holiday and
    the calendar release); empty when the ledger was not read."""

    def take(self, reading: readings.LedgerReading) -> None:
        """Put the ledger's reading in place of the workflow's (``source`` becomes ``ledger``)."""
        self.gate = reading.gate or self.gate
        self.counts_by_state = reading.counts_by_state
        self.next_instant_utc = reading.next_instant_utc
        self.next_materialized = reading.next_materialized
        self.revision_now, self.pending = reading.revision_now, reading.pending
        self.deadline, self.deadline_misses = reading.deadline, reading.deadline_misses
        self.latest_deadline_miss = reading.latest_deadline_miss
        self.failure_streak = reading.failure_streak
        self.holidays = reading.holidays
        self.source, self.read_at_utc = "ledger", reading.read_at_utc


def _utc_now() -> datetime:
    return datetime.now(UTC)


@dataclass(frozen=True)
class ScheduleSummary:
    """One running schedule workflow and its status (``None`` when its query failed)."""

    schedule_id: str
    workflow_id: str
    status: LiveStatus | None
    problem: str = ""
    """Why ``status`` is missing (the query's error), else empty."""


async def connect_temporal(settings: AlmanacSettings) -> Client:
    """Connect to the Temporal frontend named by the settings (address, namespace, TLS, API key).

    Raises:
        TemporalUnavailable: the frontend did not answer within 10 seconds, or refused.
    """
    temporal = settings.temporal
    try:
        tls = temporal.tls_config()
    except ValueError as exc:
        raise TemporalUnavailable(f"Temporal TLS settings: {exc}") from None
    try:
        return await asyncio.wait_for(
            Client.connect(
                temporal.address,
                namespace=temporal.namespace,
                tls=tls,
                api_key=temporal.api_key_value(),
                retry_config=CONNECT_RETRY,
            ),
            timeout=CONNECT_TIMEOUT.total_seconds(),
        )
    except (TimeoutError, RuntimeError, RPCError) as exc:
        first = (str(exc) or "no answer within 10s").splitlines()[0]
        # tonic's transport errors nest the OS error: keep just its message.
        if (found := re.search(r'message: "([^"]+)"', first)) is not None:
            first = found.group(1)
        raise TemporalUnavailable(
            f"Temporal unreachable at {temporal.address} (namespace {temporal.namespace}): {first}"
        ) from exc


def ledger_published_specs(handle: Any, schedule_id: str) -> list[ScheduleSpecV1]:
    """``ledger.published_specs``, imported on use (the control path loads no SQLAlchemy)."""
    import ledger

    return ledger.published_specs(handle, schedule_id)


def spec_differences(
    old: dict[str, Any], new: dict[str, Any], prefix: str = ""
) -> list[tuple[str, Any, Any]]:
    """The leaves where two resolved specs differ: ``(dotted path, old, new)``, in key order.

    A key only one side has is a difference with ``None`` on the other side.
    """
    found: list[tuple[str, Any, Any]] = []
    for key in sorted({*old, *new}):
        a, b, path = old.get(key), new.get(key), f"{prefix}{key}"
        if isinstance(a, dict) and isinstance(b, dict):
            found += spec_differences(a, b, f"{path}.")
        elif a != b:
            found.append((path, a, b))
    return found


def check_action(spec: ScheduleSpecV1) -> None:
    """Check the spec's action against the built-in adapters' parameter models (no worker).

    The catalog (``activities.actions.catalog``) holds the very models the worker's registry
    (``ActionRegistry.default``) validates with, so a name or a parameter the worker would refuse
    is refused before anything is sent — without importing the adapters.

    Raises:
        SpecError: ``action.name`` (no such adapter) or ``action.parameters.<field>``, with the
            value.
    """
    if spec.action is None:
        return
    from activities.actions.catalog import check_action as check_parameters

    check_secrets(spec)
    check_parameters(spec.action.name, spec.action.parameters)


def check_secrets(spec: ScheduleSpecV1) -> None:
    """Refuse a spec holding a literal secret (``timecontract.secrets``), however it was built.

    ``load_spec`` applies the rule, but a spec built another way (``ScheduleSpecV1`` from data)
    has not been through it; the schedule workflow's validator would refuse it too, after a
    round trip.

    Raises:
        InvalidSpec: every literal secret, named by its field, its value ``<redacted>``.
    """
    if problems := secret_problems(spec.resolved()):
        raise InvalidSpec(problems, schedule_id=spec.schedule_id, revision=spec.revision)


def check_applicable(spec: ScheduleSpecV1) -> None:
    """Refuse a spec that cannot be applied whatever runs: one without an ``action``.

    Raises:
        ApplyRefused: naming the field (``action``) and the schedule.
    """
    if spec.action is None:
        raise ApplyRefused(
            f"action=None: {spec.schedule_id} r{spec.revision} has no action; "
            "a spec without one can be validated and previewed, not applied"
        )


class AlmanacClient:
    """Start and steer schedule workflows; read their status (see the module docstring)."""

    def __init__(
        self,
        client: Client,
        settings: AlmanacSettings,
        query_timeout: timedelta = DEFAULT_QUERY_TIMEOUT,
        update_timeout: timedelta = DEFAULT_UPDATE_TIMEOUT,
        *,
        read_ledger: bool = True,
        clock: Callable[[], datetime] = _utc_now,
    ) -> None:
        """Wrap a connected Temporal client.

        Args:
            client: a connected ``temporalio.client.Client`` (its namespace is used).
            settings: names the task queue new schedule workflows run on, and the ledger.
            query_timeout: how long a ``status``/``upcoming`` query waits for a worker.
            read_ledger: answer ``status``/``upcoming`` from the ledger (``False``: from the
                workflow's queries only, as of its last wake-up).
            clock: "now" for ledger readings (aware UTC).
            update_timeout: how long a change waits for its verdict.
        """
        self._client = client
        self._settings = settings
        self._query_timeout = query_timeout
        self._clock = clock
        self._ledger_url = settings.resolved_ledger_url if read_ledger else None
        self._ledger: Any = None
        self._update_timeout = update_timeout

    @classmethod
    async def connect(cls, settings: AlmanacSettings) -> AlmanacClient:
        """Connect to the Temporal frontend named by ``settings`` (raises TemporalUnavailable)."""
        return cls(await connect_temporal(settings), settings)

    @property
    def temporal(self) -> Client:
        """The underlying Temporal client."""
        return self._client

    def handle(self, schedule_id: str) -> WorkflowHandle[ScheduleWorkflow, io.ScheduleStatus]:
        """The schedule workflow's handle (it may not exist)."""
        return self._client.get_workflow_handle_for(
            ScheduleWorkflow.run, schedule_workflow_id(schedule_id)
        )

    async def is_running(self, schedule_id: str) -> bool:
        """Whether the schedule's workflow exists and is running (not closed)."""
        try:
            description = await self.handle(schedule_id).describe()
        except RPCError as exc:
            if exc.status == RPCStatusCode.NOT_FOUND:
                return False
            raise _unavailable(exc) from exc
        return description.raw_description.workflow_execution_info.status == (
            WorkflowExecutionStatus.WORKFLOW_EXECUTION_STATUS_RUNNING
        )

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
                f"{verdict.field or 'spec'}={verdict.value!r}: {reason}"
                if verdict.field
                else reason,
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
        """``; the published r1 differs from this spec in <field>: published …, here …``.

        Said when the ledger can be read here (else ``""``): which fields make the digests
        differ, so the one line says what to change. ``almanac dev`` aims an example's ``http``
        action at its own sink's port when that is not the examples' 8765 (README "almanac
        dev"), so an unedited example then differs in ``action.parameters.url``.
        """
        handle, _ = await self._reading_ledger()
        if handle is None:
            return ""
        try:
            specs = await asyncio.to_thread(ledger_published_specs, handle, spec.schedule_id)
        except Exception:  # unreachable, not migrated: the refusal alone is still true
            return ""
        published = next((s for s in specs if s.revision == spec.revision), None)
        if published is None:
            return ""
        differences = spec_differences(published.resolved(), spec.resolved())
        if not differences:
            return ""
        shown = "; ".join(
            f"{path}: published {old!r}, here {new!r}" for path, old, new in differences[:3]
        )
        more = f" (and {len(differences) - 3} more)" if len(differences) > 3 else ""
        return f"; the published r{spec.revision} differs in {shown}{more}"

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

    async def delete(self, schedule_id: str, reason: str) -> io.DeleteScheduleResult:
        """Delete a schedule: its workflow completes, nothing new is claimed, every fact stays.

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
                    ScheduleWorkflow.delete_update, DeleteInput(reason.strip())
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
        """Run a past window on purpose (README "Backfill"); with ``dry_run``, only plan it.

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

    async def status(self, schedule_id: str) -> LiveStatus:
        """Gate, next instant and counts by state as the ledger says them now (module docstring).

        The schedule workflow's ``status`` query adds its last error, rejected signals and
        materialization high-water mark (and proves the schedule runs).

        Without a worker to answer the query the ledger's reading is still returned, with
        ``worker_problem`` saying why the workflow's part is missing (as ``upcoming`` does).

        Raises:
            ScheduleNotRunning: no running schedule workflow with that ID.
            NoWorkerAnswered: no worker answered the workflow's query and the ledger cannot be
                read here either.
        """
        try:
            workflow_status: io.ScheduleStatus = await self._query(
                schedule_id, "status", None, io.ScheduleStatus
            )
        except NoWorkerAnswered as exc:
            return await self._ledger_status(schedule_id, exc)
        live = LiveStatus(**dataclasses.asdict(workflow_status))
        # asdict turned the gate into a dict: put the dataclass back.
        live.gate = workflow_status.gate
        handle, problem = await self._reading_ledger()
        if handle is None:
            live.ledger_problem = problem
            return live
        try:
            reading = await self._read_status(handle, schedule_id)
        except Exception as exc:  # unreachable, not migrated, a driver error: fall back
            live.ledger_problem = _first_line(exc)
            return live
        live.take(reading)
        return live

    async def _read_status(self, handle: Any, schedule_id: str) -> readings.LedgerReading:
        return await asyncio.to_thread(
            functools.partial(
                readings.read_status,
                handle,
                schedule_id,
                self._clock(),
                tzdb_store=self._settings.tzdb_store,
            )
        )

    async def _not_running(self, schedule_id: str) -> ScheduleNotRunning:
        """The error for a schedule with no running workflow, saying when it was deleted if so."""
        gate = await self._ledger_gate(schedule_id)
        if gate is None or gate.deleted_at_utc is None:
            return ScheduleNotRunning(schedule_id)
        reason = gate.disabled_reason or ""
        return ScheduleNotRunning(
            schedule_id,
            deleted_at_utc=gate.deleted_at_utc,
            deleted_reason=reason.removeprefix("deleted: ") or None,
        )

    async def _ledger_gate(self, schedule_id: str) -> io.GateSnapshot | None:
        """The ledger's gate of ``schedule_id`` where the ledger can be read here, else ``None``."""
        handle, _ = await self._reading_ledger()
        if handle is None:
            return None
        try:
            reading = await asyncio.to_thread(
                readings.read_status, handle, schedule_id, self._clock()
            )
        except Exception:  # unreachable, not migrated: nothing to add
            return None
        return reading.gate

    async def _ledger_status(self, schedule_id: str, unanswered: NoWorkerAnswered) -> LiveStatus:
        """The ledger's reading alone, when no worker answers the workflow's query."""
        handle, _ = await self._reading_ledger()
        if handle is None:
            raise unanswered
        if not await self.is_running(schedule_id):
            raise await self._not_running(schedule_id)
        try:
            reading = await self._read_status(handle, schedule_id)
        except Exception:  # unreachable, not migrated: the worker's absence is the news
            raise unanswered from None
        live = LiveStatus(schedule_id, None, None, worker_problem=str(unanswered))
        live.take(reading)
        return live

    async def upcoming(self, schedule_id: str, n: int = 10) -> list[readings.Upcoming]:
        """The next ``n`` (at most 20) occurrences, in instant order.

        From the ledger (its open occurrences, with their states now), completed beyond the
        horizon from the published specs (``materialized=False``); when the ledger cannot be read,
        the workflow's ``upcoming`` query (its last materialization).

        Raises:
            ScheduleNotRunning: no running schedule workflow with that ID (either way).
        """
        n = max(0, min(int(n), 20))
        handle, _ = await self._reading_ledger()
        if handle is not None:
            if not await self.is_running(schedule_id):
                raise await self._not_running(schedule_id)
            now = self._clock()
            try:
                return await asyncio.to_thread(
                    readings.read_upcoming,
                    handle,
                    schedule_id,
                    now,
                    n,
                    tzdb_store=self._settings.tzdb_store,
                )
            except Exception:  # fall back to the workflow's reading, as status does
                pass
        rows: list[io.UpcomingOccurrence] = await self._query(
            schedule_id, "upcoming", n, list[io.UpcomingOccurrence]
        )
        return [
            readings.Upcoming(
                occurrence_id=row.occurrence_id,
                schedule_id=row.schedule_id,
                revision=row.revision,
                nominal_local=row.nominal_local,
                fold=row.fold,
                instant_utc=row.instant_utc,
                state=row.state,
                holiday=row.holiday,
                calendar=row.calendar_release,
            )
            for row in rows
        ]

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
        _refuse_closed_gate(schedule_id, await self._ledger_gate(schedule_id))
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
            raise _unavailable(exc) from exc
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

    async def _reading_ledger(self) -> tuple[Any, str]:
        """The ledger handle to read, opened once; or ``None`` and why not."""
        if self._ledger_url is None:
            return None, "ledger reading is off"
        if self._ledger is None:
            try:
                self._ledger = readings.open_ledger(self._ledger_url)
            except Exception as exc:
                return None, _first_line(exc)
            if self._ledger is None:
                return None, f"no ledger at {self._ledger_url} on this machine"
        return self._ledger, ""

    def close(self) -> None:
        """Release the ledger connections the client opened (the Temporal client needs none)."""
        if self._ledger is not None:
            self._ledger.dispose()
            self._ledger = None

    async def list_schedules(self) -> list[ScheduleSummary]:
        """Every running schedule workflow in the namespace, with its status, by scheduleId.

        Uses the visibility store (``WorkflowType="AlmanacSchedule"``), which is eventually
        consistent: a schedule started a moment ago may be missing for about a second.
        """
        query = f'WorkflowType="{SCHEDULE_WORKFLOW_TYPE}" AND ExecutionStatus="Running"'
        ids: list[str] = []
        try:
            async for execution in self._client.list_workflows(query):
                if execution.id.startswith(WORKFLOW_ID_PREFIX):
                    ids.append(execution.id.removeprefix(WORKFLOW_ID_PREFIX))
        except RPCError as exc:
            raise _unavailable(exc) from exc
        summaries = []
        for schedule_id in sorted(set(ids)):
            try:
                status: LiveStatus | None = await self.status(schedule_id)
                problem = ""
            except (NoWorkerAnswered, ScheduleNotRunning) as exc:
                status, problem = None, str(exc)
            summaries.append(
                ScheduleSummary(schedule_id, schedule_workflow_id(schedule_id), status, problem)
            )
        return summaries

    async def _query(self, schedule_id: str, name: str, arg: object, result_type: Any) -> Any:
        args = [] if arg is None else [arg]
        try:
            return await self.handle(schedule_id).query(
                name, args=args, result_type=result_type, rpc_timeout=self._query_timeout
            )
        except WorkflowQueryFailedError as exc:
            raise TemporalUnavailable(f"query on {schedule_id!r} failed: {exc}") from exc
        except RPCError as exc:
            raise await self._translate(schedule_id, exc) from exc

    async def _translate(self, schedule_id: str, exc: RPCError) -> Exception:
        if exc.status == RPCStatusCode.NOT_FOUND:
            return await self._not_running(schedule_id)
        # The call's own deadline passed: DEADLINE_EXCEEDED, or CANCELLED as the SDK core reports
        # its client-side timeout ("timeout", or "h2 protocol error" seen on this machine). The
        # server answers a query on a queue nobody polled lately with FAILED_PRECONDITION.
        timed_out = exc.status in (RPCStatusCode.DEADLINE_EXCEEDED, RPCStatusCode.CANCELLED)
        no_poller = (
            exc.status == RPCStatusCode.FAILED_PRECONDITION and "no poller" in exc.message.lower()
        )
        if timed_out or no_poller:
            return NoWorkerAnswered(
                f"no worker answered the query on {schedule_id!r} within "
                f"{self._query_timeout.total_seconds():g}s: is a worker running on task queue "
                f"{self._settings.temporal.task_queue!r}? (`almanac worker`)"
            )
        return _unavailable(exc)


class WindowTooLarge(AlmanacError, ValueError):
    """A window holds more occurrences than one materialization writes; nothing was written."""

    def __init__(self, limit: int) -> None:
        super().__init__(
            f"the window holds more than {limit} occurrences, the most one materialization "
            "writes: narrow the window (nothing was written)"
        )
        self.limit = limit


class LedgerClient:
    """The operator's writes to the ledger, without Temporal: each method is one ledger operation.

    Built over an opener — a context manager factory yielding a ``ledger.Ledger`` for the length
    of one operation, opened only once the input has been checked — and a clock ("now" when a
    method is not given one: aware UTC).
    """

    def __init__(
        self,
        open_ledger: Callable[[], AbstractContextManager[Any]],
        clock: Callable[[], datetime] = _utc_now,
    ) -> None:
        """Write through ledgers ``open_ledger`` yields; ``clock`` gives the decision instant."""
        self._open = open_ledger
        self._clock = clock

    def materialize(
        self,
        spec: ScheduleSpecV1,
        from_utc: datetime,
        to_utc: datetime,
        *,
        now_utc: datetime | None = None,
        by: str,
        tzdb_store: Any = None,
    ) -> Any:
        """Publish ``spec``'s revision if new and record its occurrences in ``[from_utc, to_utc)``.

        Bounded as every materialization is: a window holding more than
        ``activities.ledger_activities.MATERIALIZE_LIMIT`` records is refused before anything is
        written (counted lazily). The written window is clamped to what the revision owns from
        its cutover and publication on: materialization never backfills.

        Returns:
            ``ledger.MaterializeResult`` with the window's rows.

        Raises:
            WindowTooLarge: the window holds too many occurrences (nothing written).
            ledger.RevisionRejected: the revision cannot be published.
        """
        from itertools import islice

        import ledger
        from activities.ledger_activities import MATERIALIZE_LIMIT
        from timecontract import iter_occurrences

        window = iter_occurrences(spec, from_utc, to_utc, tzdb_store=tzdb_store)
        if sum(1 for _ in islice(window, MATERIALIZE_LIMIT + 1)) > MATERIALIZE_LIMIT:
            raise WindowTooLarge(MATERIALIZE_LIMIT)
        at = now_utc or self._clock()
        with self._open() as handle:
            ledger.publish_revision(handle, spec, at, by=by)
            return ledger.materialize(
                handle, spec, from_utc, to_utc, at, by=by, tzdb_store=tzdb_store
            )

    def shadow_run(
        self,
        alias: str,
        schedule_id: str,
        from_utc: datetime,
        to_utc: datetime,
        *,
        by: str,
        tzdb_store: Any = None,
        between_batches: Callable[[], None] | None = None,
    ) -> Any:
        """Compute ``schedule_id``'s ``[from_utc, to_utc)`` as ``alias``'s shadow, now.

        Only the shadow tables are written (``ledger.shadow.shadow_materialize``: comparison
        records, never dispatched); ``between_batches`` runs between two write transactions.

        Returns:
            ``ledger.shadow.ShadowRunResult``.
        """
        from ledger.shadow import shadow_materialize

        with self._open() as handle:
            return shadow_materialize(
                handle,
                alias,
                schedule_id,
                from_utc,
                to_utc,
                self._clock(),
                by=by,
                tzdb_store=tzdb_store,
                between_batches=between_batches,
            )

    def resolve(self, occurrence_id: str, outcome: str, *, by: str, note: str | None = None) -> Any:
        """Resolve an ``UNKNOWN_EFFECT`` case by hand now: one compare-and-set, with its event.

        ``SUCCEEDED`` confirms the effect; ``NOT_APPLIED`` ends the occurrence ``FAILED`` (a new
        run is a separate decision, never a blind resend). ``by`` and ``note`` are stored on the
        case (``ledger.resolve_reconciliation``). The CLI and the console both call this.

        Returns:
            ``ledger.CaseView``: the case afterwards.

        Raises:
            ChangeRejected: ``outcome`` is not one of ``RESOLUTIONS`` or ``by`` is blank (named
                with its value); nothing is written.
            ledger.CaseNotFound: no open case for the occurrence (resolved already, or none).
            ledger.ClaimLost: a concurrent resolution won.
        """
        import ledger

        if outcome not in RESOLUTIONS:
            raise ChangeRejected(
                f"outcome={outcome!r}: one of {', '.join(RESOLUTIONS)}",
                field="outcome",
                value=outcome,
            )
        if not by.strip():
            raise ChangeRejected(f"by={by!r}: name who decides", field="by", value=by)
        resolution = ledger.ReconciliationResolution(outcome)
        with self._open() as handle:
            return ledger.resolve_reconciliation(
                handle, occurrence_id, resolution, self._clock(), by=by, note=note
            )


def check_disable_reason(reason: str) -> str:
    """``reason`` stripped: disabling needs one (the gate and its DISABLED event record it).

    Raises:
        ChangeRejected: ``reason`` is blank, named with its value; nothing is sent.
    """
    if not reason.strip():
        raise ChangeRejected(
            f"reason={reason!r}: disabling needs a non-empty reason", field="reason", value=reason
        )
    return reason.strip()


RESOLUTIONS = ("SUCCEEDED", "NOT_APPLIED")
"""What a person may decide for an UNKNOWN_EFFECT case (``ledger.ReconciliationResolution``)."""


def _refuse_closed_gate(schedule_id: str, gate: io.GateSnapshot | None) -> None:
    """Raise :class:`TriggerRefused` if the ledger's gate of ``schedule_id`` is closed.

    No gate yet: the schedule was applied a moment ago and its first publication is under way.
    """
    if gate is None:
        return
    if gate.deleted_at_utc is not None:
        raise TriggerRefused(f"schedule {schedule_id!r} is deleted: nothing was started")
    if gate.disabled:
        raise TriggerRefused(
            f"schedule {schedule_id!r} is disabled ({gate.disabled_reason}): enable it first; "
            "nothing was started"
        )


def _first_line(exc: BaseException) -> str:
    return (str(exc) or type(exc).__name__).splitlines()[0]


def _unavailable(exc: RPCError) -> TemporalUnavailable:
    first = (exc.message or str(exc)).splitlines()[0]
    return TemporalUnavailable(f"Temporal failed the call ({exc.status.name}): {first}")
