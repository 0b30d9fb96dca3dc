"""The Python client: apply, disable, enable, status and upcoming, over a Temporal client.

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
        result = await client.apply(spec)                # started | published
        status = await client.status("every-10-seconds")
        print(result.action, status.gate.active_revision, status.counts_by_state)
        for o in await client.upcoming("every-10-seconds", 5):
            print(o.occurrence_id, o.nominal_local, o.instant_utc)
        await client.disable("every-10-seconds", reason="maintenance window")
        await client.enable("every-10-seconds")

    asyncio.run(main())

Applying a spec starts the schedule's long-lived workflow (ID ``almanac-schedule-<scheduleId>``,
type ``AlmanacSchedule``), which publishes the spec as its first revision; when the workflow runs
already, the spec is published as the next revision by signal. A revision that does not increase
is refused here, with the reason, before anything is sent (the ledger refuses it again, should two
clients race). A spec without an ``action`` is refused too: it can be previewed, not applied.

Every ledger write happens in the worker's activities; the client only reads the ledger.
``status`` and ``upcoming`` are true *now*: they read the ledger (``settings.resolved_ledger_url``;
:mod:`almanac.readings`) for the gate, the counts by state and the next occurrences, and ask the
schedule workflow's ``status`` query (answered by a worker: with none running it fails with
:class:`NoWorkerAnswered` after ``query_timeout``) only for what the workflow alone knows — its
last error, rejected signals, materialization high-water mark. Where the ledger cannot be read
(a SQLite file on another machine, a database out of reach), they fall back to the workflow's
reading from its last wake-up, and say so (:attr:`LiveStatus.source`). Errors:

- :class:`RevisionRejected` (``ValueError``): invalid input, nothing was sent.
- :class:`ScheduleNotRunning` (``LookupError``): no running schedule workflow with that ID.
- :class:`TemporalUnavailable`: the frontend cannot be reached (or refused the call).
- :class:`NoWorkerAnswered`: a query timed out (no worker polls the task queue).
"""

from __future__ import annotations

import asyncio
import dataclasses
import re
from collections.abc import Callable
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from typing import Any

from temporalio.api.enums.v1 import WorkflowExecutionStatus
from temporalio.client import Client, WorkflowHandle, WorkflowQueryFailedError
from temporalio.common import WorkflowIDConflictPolicy
from temporalio.service import RetryConfig, RPCError, RPCStatusCode

from activities import io
from almanac import manual, readings
from almanac.settings import AlmanacSettings
from timecontract import AlmanacError, ScheduleSpecV1
from workflows import ScheduleInput, ScheduleWorkflow, schedule_workflow_id
from workflows.schedule import WORKFLOW_ID_PREFIX

SCHEDULE_WORKFLOW_TYPE = "AlmanacSchedule"
"""The schedule workflow's type name (``WorkflowType="AlmanacSchedule"`` in list queries)."""
DEFAULT_QUERY_TIMEOUT = timedelta(seconds=10)
CONNECT_TIMEOUT = timedelta(seconds=10)
# A command line waits a few seconds for an unreachable frontend, not the SDK's default ten.
CONNECT_RETRY = RetryConfig(max_elapsed_time_millis=3000, max_retries=5)


class RevisionRejected(AlmanacError, ValueError):
    """A spec cannot be applied: no action, or a revision that does not increase."""


class ScheduleNotRunning(AlmanacError, LookupError):
    """No schedule workflow runs for this scheduleId (apply its spec first)."""

    def __init__(self, schedule_id: str) -> None:
        """Name the schedule in the message."""
        super().__init__(f"schedule {schedule_id!r} is not running (apply its spec first)")
        self.schedule_id = schedule_id


class TemporalUnavailable(AlmanacError):
    """The Temporal frontend could not be reached, or failed the call (an operational error)."""


class NoWorkerAnswered(AlmanacError):
    """A query timed out: no Almanac worker polls the task queue (start ``almanac worker``)."""


@dataclass(frozen=True)
class ApplyResult:
    """What ``apply`` did: ``started`` a new schedule workflow or ``published`` a revision."""

    schedule_id: str
    revision: int
    action: str
    """``started`` (a new schedule workflow) or ``published`` (a signal to the running one)."""
    workflow_id: str


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


def check_applicable(spec: ScheduleSpecV1) -> None:
    """Refuse a spec that cannot be applied whatever runs: one without an ``action``.

    Raises:
        RevisionRejected: naming the field (``action``) and the schedule.
    """
    if spec.action is None:
        raise RevisionRejected(
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
        """
        self._client = client
        self._settings = settings
        self._query_timeout = query_timeout
        self._clock = clock
        self._ledger_url = settings.resolved_ledger_url if read_ledger else None
        self._ledger: Any = None

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
        """Start the schedule with ``spec``, or publish it as the schedule's next revision.

        Args:
            spec: a checked spec (``timecontract.load_spec``) with an action.
            horizon: how far ahead a new schedule workflow materializes occurrences (default 14
                days; the activity shortens it for high-frequency rules). Ignored when the
                schedule runs already.

        Returns:
            ``started`` for a new schedule workflow, ``published`` for a signal to a running one.

        Raises:
            RevisionRejected: the spec has no action, or its revision does not exceed the
                schedule's active revision (nothing is sent).
            NoWorkerAnswered: the schedule runs but no worker answered its status query.
            TemporalUnavailable: Temporal failed the call.
        """
        check_applicable(spec)
        workflow_id = schedule_workflow_id(spec.schedule_id)
        if not await self.is_running(spec.schedule_id):
            params = ScheduleInput(schedule_id=spec.schedule_id, initial_spec=spec.resolved())
            if horizon is not None:
                params = dataclasses.replace(params, horizon_seconds=horizon.total_seconds())
            try:
                await self._client.start_workflow(
                    ScheduleWorkflow.run,
                    params,
                    id=workflow_id,
                    task_queue=self._settings.temporal.task_queue,
                    id_conflict_policy=WorkflowIDConflictPolicy.USE_EXISTING,
                )
            except RPCError as exc:
                raise _unavailable(exc) from exc
            return ApplyResult(spec.schedule_id, spec.revision, "started", workflow_id)
        status = await self.status(spec.schedule_id)
        latest = status.gate.active_revision if status.gate else 0
        if spec.revision <= latest:
            raise RevisionRejected(
                f"revision={spec.revision}: {spec.schedule_id} revision {spec.revision} does not "
                f"increase (the active revision is {latest}; publish revision {latest + 1} or "
                "higher)"
            )
        await self._signal(spec.schedule_id, "publish_revision", spec.resolved())
        return ApplyResult(spec.schedule_id, spec.revision, "published", workflow_id)

    async def wait_active(
        self, schedule_id: str, revision: int, timeout: timedelta = timedelta(seconds=10)
    ) -> io.ScheduleStatus | None:
        """Poll ``status`` until the gate's active revision is at least ``revision``.

        Returns:
            The status once it is, or ``None`` after ``timeout`` (the revision was not accepted
            yet, or was rejected: the worker log says why).
        """
        loop = asyncio.get_running_loop()
        deadline = loop.time() + timeout.total_seconds()
        while True:
            status = await self.status(schedule_id)
            if status.gate is not None and status.gate.active_revision >= revision:
                return status
            if loop.time() >= deadline:
                return None
            await asyncio.sleep(0.2)

    async def disable(self, schedule_id: str, reason: str) -> None:
        """Disable a schedule by signal (the ledger gate flips; racing claims lose).

        Raises:
            ValueError: ``reason`` is empty.
            ScheduleNotRunning: no running schedule workflow with that ID.
        """
        if not reason.strip():
            raise ValueError(f"reason={reason!r}: disabling needs a non-empty reason")
        await self._signal(schedule_id, "disable", {"reason": reason.strip()})

    async def enable(self, schedule_id: str) -> None:
        """Enable a disabled schedule by signal (raises ScheduleNotRunning)."""
        await self._signal(schedule_id, "enable", {})

    async def status(self, schedule_id: str) -> LiveStatus:
        """Gate, next instant and counts by state as the ledger says them now (module docstring).

        The schedule workflow's ``status`` query adds its last error, rejected signals and
        materialization high-water mark (and proves the schedule runs).

        Raises:
            ScheduleNotRunning: no running schedule workflow with that ID.
            NoWorkerAnswered: no worker answered the workflow's query.
        """
        workflow_status: io.ScheduleStatus = await self._query(
            schedule_id, "status", None, io.ScheduleStatus
        )
        live = LiveStatus(**dataclasses.asdict(workflow_status))
        # asdict turned the gate into a dict: put the dataclass back.
        live.gate = workflow_status.gate
        handle, problem = await self._reading_ledger()
        if handle is None:
            live.ledger_problem = problem
            return live
        now = self._clock()
        try:
            reading = await asyncio.to_thread(readings.read_status, handle, schedule_id, now)
        except Exception as exc:  # unreachable, not migrated, a driver error: fall back
            live.ledger_problem = _first_line(exc)
            return live
        live.gate = reading.gate or workflow_status.gate
        live.counts_by_state = reading.counts_by_state
        live.next_instant_utc = reading.next_instant_utc
        live.source, live.read_at_utc = "ledger", reading.read_at_utc
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
                raise ScheduleNotRunning(schedule_id)
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
        known = {f.name for f in dataclasses.fields(readings.Upcoming)}
        return [
            readings.Upcoming(**{k: v for k, v in dataclasses.asdict(row).items() if k in known})
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
    ) -> manual.TriggerResult:
        """Run one manual occurrence now, once per request ID (see :func:`almanac.manual.trigger`).

        Raises:
            ValueError: an empty reason or a malformed request ID (nothing was sent).
            TemporalUnavailable: Temporal failed the call.
        """
        try:
            return await manual.trigger(
                self._client,
                self._settings,
                schedule_id,
                reason=reason,
                request_id=request_id,
                by=by,
                wait=wait,
            )
        except RPCError as exc:
            raise _unavailable(exc) from exc

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
            raise self._translate(schedule_id, exc) from exc

    async def _signal(self, schedule_id: str, name: str, payload: object) -> None:
        try:
            await self.handle(schedule_id).signal(name, payload)
        except RPCError as exc:
            raise self._translate(schedule_id, exc) from exc

    def _translate(self, schedule_id: str, exc: RPCError) -> Exception:
        if exc.status == RPCStatusCode.NOT_FOUND:
            return ScheduleNotRunning(schedule_id)
        timed_out = exc.status == RPCStatusCode.CANCELLED and "timeout" in exc.message.lower()
        if exc.status == RPCStatusCode.DEADLINE_EXCEEDED or timed_out:
            return NoWorkerAnswered(
                f"no worker answered the query on {schedule_id!r} within "
                f"{self._query_timeout.total_seconds():g}s: is a worker running on task queue "
                f"{self._settings.temporal.task_queue!r}? (`almanac worker`)"
            )
        return _unavailable(exc)


def _first_line(exc: BaseException) -> str:
    return (str(exc) or type(exc).__name__).splitlines()[0]


def _unavailable(exc: RPCError) -> TemporalUnavailable:
    first = (exc.message or str(exc)).splitlines()[0]
    return TemporalUnavailable(f"Temporal failed the call ({exc.status.name}): {first}")
