"""Reading a schedule: its status and upcoming occurrences, true *now*.

``status`` and ``upcoming`` read the ledger (``settings.resolved_ledger_url``;
:mod:`almanac.readings`) for the gate, the counts by state and the next occurrences, and ask the
schedule workflow's ``status`` query (answered by a worker: with none running it fails with
:class:`NoWorkerAnswered` after ``query_timeout``) only for what the workflow alone knows — its
last error, rejected signals, materialization high-water mark. Where the ledger cannot be read
(a SQLite file on another machine, a database out of reach), they fall back to the workflow's
reading from its last wake-up, and say so (:attr:`LiveStatus.source`).
"""

from __future__ import annotations

import asyncio
import dataclasses
import functools
import re
from collections.abc import Callable
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from typing import TYPE_CHECKING, Any, Self

from temporalio.api.enums.v1 import WorkflowExecutionStatus
from temporalio.client import Client, WorkflowHandle, WorkflowQueryFailedError
from temporalio.service import RetryConfig, RPCError, RPCStatusCode

from activities import io
from almanac import readings
from almanac.client_errors import (
    NoWorkerAnswered,
    ScheduleNotRunning,
    TemporalUnavailable,
    failed_call,
)
from almanac.settings import AlmanacSettings
from workflows import ScheduleWorkflow, schedule_workflow_id
from workflows.schedule import WORKFLOW_ID_PREFIX

if TYPE_CHECKING:
    from ledger.deadlines import DeadlineMissView

SCHEDULE_WORKFLOW_TYPE = "AlmanacSchedule"
"""The schedule workflow's type name (``WorkflowType="AlmanacSchedule"`` in list queries)."""
DEFAULT_QUERY_TIMEOUT = timedelta(seconds=10)
CONNECT_TIMEOUT = timedelta(seconds=10)
# A command line waits a few seconds for an unreachable frontend, not the SDK's default ten.
CONNECT_RETRY = RetryConfig(max_elapsed_time_millis=3000, max_retries=5)


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
    answered its query, or Temporal was unreachable (empty when a worker answered)."""
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


def utc_now() -> datetime:
    """Now, aware UTC: the default clock of the readings."""
    return datetime.now(UTC)


def ledger_alone(
    settings: AlmanacSettings,
    schedule_id: str,
    n: int,
    unavailable: TemporalUnavailable,
    clock: Callable[[], datetime] = utc_now,
) -> tuple[LiveStatus, list[readings.Upcoming]]:
    """A schedule's status and next ``n`` occurrences from the ledger, when Temporal is not asked.

    ``unavailable`` (Temporal unreachable) becomes ``worker_problem``: the workflow's part is
    missing, and so is the proof that its workflow runs (a deleted schedule shows its deleted
    gate). The ledger is opened once, for the reading or the hint.

    Raises:
        TemporalUnavailable: ``unavailable`` itself when the ledger cannot be read here; with
            "the ledger knows no <id>" added when it was read and does not know the schedule, and
            "did you mean <scheduleId>?" when it knows a close one
            (:func:`almanac.readings.nearest_schedule_id`).
    """
    try:
        handle = readings.open_ledger(settings.resolved_ledger_url)
    except Exception:  # a malformed URL, a missing driver: nothing to read
        handle = None
    if handle is None:
        raise unavailable
    try:
        found = _known_reading(handle, schedule_id, n, clock(), settings)
        meant = None if found else readings.nearest_schedule_id(handle, schedule_id)
    except Exception:  # unreachable, not migrated: Temporal's absence is the news
        raise unavailable from None
    finally:
        handle.dispose()
    if found is not None:
        live = LiveStatus(schedule_id, None, None, worker_problem=str(unavailable))
        live.take(found[0])
        return live, found[1]
    hint = f": did you mean {meant}?" if meant else ""
    raise TemporalUnavailable(
        f"{unavailable}; the ledger knows no {schedule_id!r}{hint}"
    ) from unavailable


def _known_reading(
    handle: Any, schedule_id: str, n: int, now: datetime, settings: AlmanacSettings
) -> tuple[readings.LedgerReading, list[readings.Upcoming]] | None:
    """The ledger's reading and next ``n`` occurrences of a schedule it knows, else ``None``.

    Raises:
        Exception: whatever reading the ledger raises (unreachable, not migrated).
    """
    store = settings.tzdb_store
    reading = readings.read_status(handle, schedule_id, now, tzdb_store=store)
    if reading.gate is None:
        return None
    return reading, readings.read_upcoming(handle, schedule_id, now, n, tzdb_store=store)


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
            f"Temporal unreachable at {temporal.address} (namespace {temporal.namespace}): "
            f"{first}{_local_hint(temporal.address, first)}"
        ) from exc


def _local_hint(address: str, problem: str) -> str:
    """For a refused connection to a loopback ``host:port``, how to start the local stack.

    A loopback address means a server on this machine was expected: the dev stack (``make run``).
    Only a refusal says nothing listens there (a TLS or protocol mismatch is another problem).
    Returns ``""`` otherwise.
    """
    if "refused" not in problem.lower():
        return ""
    host = address.rpartition(":")[0].strip("[]").lower()
    if host == "localhost" or host.startswith("127.") or host == "::1":
        return "; is the dev stack running? Start it with `make run`"
    return ""


class ScheduleReader:
    """Read schedule workflows: status, upcoming occurrences, the running schedules.

    The reading half of :class:`almanac.client.AlmanacClient`, usable alone where nothing is
    changed.
    """

    def __init__(
        self,
        client: Client,
        settings: AlmanacSettings,
        query_timeout: timedelta = DEFAULT_QUERY_TIMEOUT,
        *,
        read_ledger: bool = True,
        clock: Callable[[], datetime] = utc_now,
    ) -> None:
        """Wrap a connected Temporal client.

        Args:
            client: a connected ``temporalio.client.Client`` (its namespace is used).
            settings: names the task queue schedule workflows run on, and the ledger.
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
    async def connect(cls, settings: AlmanacSettings) -> Self:
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
            raise failed_call(exc) from exc
        return description.raw_description.workflow_execution_info.status == (
            WorkflowExecutionStatus.WORKFLOW_EXECUTION_STATUS_RUNNING
        )

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
        if gate is None:
            return ScheduleNotRunning(schedule_id, meant=await self._nearest_known(schedule_id))
        if gate.deleted_at_utc is None:
            return ScheduleNotRunning(schedule_id)
        reason = gate.disabled_reason or ""
        return ScheduleNotRunning(
            schedule_id,
            deleted_at_utc=gate.deleted_at_utc,
            deleted_reason=reason.removeprefix("deleted: ") or None,
        )

    async def _nearest_known(self, schedule_id: str) -> str | None:
        """The ledger's scheduleId closest to an unknown one (``did you mean``), where readable."""
        handle, _ = await self._reading_ledger()
        if handle is None:
            return None
        return await asyncio.to_thread(readings.nearest_schedule_id, handle, schedule_id)

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
            raise failed_call(exc) from exc
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
        # its client-side timeout (its message "timeout", or an "h2 protocol error"). The
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
        return failed_call(exc)


def _first_line(exc: BaseException) -> str:
    return (str(exc) or type(exc).__name__).splitlines()[0]
