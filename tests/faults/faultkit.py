"""Shared pieces of the fault matrix: specs, a ledger with due occurrences, workers, waits.

Workers are the production ones running the simulated-clock workflows
(``almanac.gates.simulation``): either ``python -m tests.faults.simulated_worker`` as a real
subprocess (so a test can SIGKILL it) or ``almanac.gates.simulated_worker.in_process`` (so a
time-skipping test can stop it and start it again on the same ledger and sink). Every wait has a
deadline and polls a condition; no test sleeps for a fixed time. No helper reads the wall-clock
*date*: simulated instants are fixed, and a dev-server test maps them onto the server's clock with
``clock_offset_seconds``."""

from __future__ import annotations

import asyncio
import os
import signal
import subprocess
import sys
import time
from collections.abc import AsyncIterator, Awaitable, Callable, Iterator
from contextlib import asynccontextmanager, contextmanager
from dataclasses import dataclass
from datetime import datetime, timedelta
from pathlib import Path
from typing import Any, TypeVar

from temporalio.api.enums.v1 import TaskQueueType
from temporalio.api.taskqueue.v1 import TaskQueue
from temporalio.api.workflowservice.v1 import DescribeTaskQueueRequest
from temporalio.client import Client, WorkflowHandle
from temporalio.service import RPCError, RPCStatusCode

import ledger
from activities import io
from activities.actions import ActionRegistry, EgressPolicy
from almanac import worker
from almanac.gates import simulated_worker
from almanac.gates.simulation import (
    SimulatedOccurrenceInput,
    SimulatedOccurrenceWorkflow,
    SimulatedScheduleInput,
    SimulatedScheduleWorkflow,
)
from almanac.registration import register_search_attributes
from almanac.settings import AlmanacSettings, TemporalSettings
from almanac.stack.sink import Sink
from ledger import Ledger, OccurrenceState, OccurrenceView
from ledger.migrate import upgrade
from timecontract import ScheduleSpecV1, load_spec
from workflows import schedule_workflow_id as _schedule_workflow_id

LOCAL_EGRESS = EgressPolicy.allowing(["127.0.0.1"])
"""The tests' sinks listen on loopback, which the default egress policy refuses."""


def local_actions() -> ActionRegistry:
    """The built-in adapters, allowed to reach the test's sink on loopback."""
    return ActionRegistry.default(egress=LOCAL_EGRESS)


T = TypeVar("T")
REPO = Path(__file__).resolve().parents[2]
TZDB = "2026a"


def spec_data(schedule_id: str, sink: Sink | None = None, **overrides: Any) -> dict[str, Any]:
    """A daily 09:00 UTC spec (revision 1, cutover 2027-01-01) with the http action on ``sink``.

    ``overrides`` are camelCase spec fields; ``timeoutSeconds`` / ``resultUrl`` tune the action
    (``resultUrl=None`` makes a downstream that cannot be asked).
    """
    timeout = overrides.pop("timeoutSeconds", 10)
    result_url: Any = overrides.pop("resultUrl", "default")
    data: dict[str, Any] = {
        "schema": "scheduleSpec.v1",
        "scheduleId": schedule_id,
        "revision": 1,
        "timeZone": "UTC",
        "tzdbVersion": TZDB,
        "rule": "FREQ=DAILY;BYHOUR=9;BYMINUTE=0",
        "gapPolicy": "SKIP",
        "foldPolicy": "FIRST_ONLY",
        "misfirePolicy": "CATCH_UP_BOUNDED",
        "maxCatchUp": 2,
        "cutoverAt": "2027-01-01T00:00:00Z",
    }
    if sink is not None:
        parameters: dict[str, Any] = {"url": f"{sink.url}/effects", "timeoutSeconds": timeout}
        if result_url == "default":
            parameters["resultUrl"] = f"{sink.url}/effects/{{idempotencyKey}}"
        elif result_url is not None:
            parameters["resultUrl"] = result_url
        data["action"] = {"name": "http", "parameters": parameters}
    data.update(overrides)
    return data


def sqlite_ledger(tmp_path: Path) -> tuple[str, Ledger]:
    """A fresh, migrated SQLite ledger file in ``tmp_path``: its URL and a handle."""
    url = f"sqlite:///{tmp_path / 'ledger.sqlite3'}"
    upgrade(url)
    return url, Ledger.from_url(url)


def publish(ledger_: Ledger, data: dict[str, Any], now_utc: datetime) -> ScheduleSpecV1:
    """Validate ``data`` and publish it at ``now_utc``; returns the spec."""
    spec = load_spec(data)
    ledger.publish_revision(ledger_, spec, now_utc, by="test")
    return spec


def due_occurrences(
    ledger_: Ledger,
    spec: ScheduleSpecV1,
    window: tuple[datetime, datetime],
    release_at_utc: datetime,
) -> list[OccurrenceView]:
    """Materialize ``window`` for ``spec`` and release at ``release_at_utc``; the DUE rows."""
    ledger.materialize(ledger_, spec, window[0], window[1], window[0], by="test")
    ledger.release_due(ledger_, spec.schedule_id, release_at_utc, by="test")
    return ledger.list_occurrences(ledger_, spec.schedule_id, states=[OccurrenceState.DUE])


def gate_view(ledger_: Ledger, schedule_id: str) -> io.GateSnapshot:
    """The gate as a releaser reads it, in the workflow payload's shape."""
    return ledger.get_gate(ledger_, schedule_id)


async def start_occurrence(
    client: Client,
    task_queue: str,
    view: OccurrenceView,
    gate: io.GateSnapshot,
    *,
    simulated_now_utc: datetime,
    server_now_utc: datetime,
    **limits: Any,
) -> WorkflowHandle[SimulatedOccurrenceWorkflow, Any]:
    """Start an occurrence workflow exactly as the schedule workflow does (ID = occurrenceId).

    ``simulated_now_utc - server_now_utc`` becomes the child's clock offset, so its activities
    stamp the ledger in the simulated calendar.
    """
    params = SimulatedOccurrenceInput(
        occurrence=view.upcoming(),
        gate=gate,
        clock_offset_seconds=(simulated_now_utc - server_now_utc).total_seconds(),
        **limits,
    )
    return await client.start_workflow(
        SimulatedOccurrenceWorkflow.run, params, id=view.occurrence_id, task_queue=task_queue
    )


async def start_schedule(
    client: Client,
    task_queue: str,
    data: dict[str, Any],
    *,
    simulated_now_utc: datetime,
    server_now_utc: datetime,
    stop_after_utc: datetime,
    **kw: Any,
) -> WorkflowHandle[SimulatedScheduleWorkflow, Any]:
    """Start the schedule workflow with a clock reading ``simulated_now_utc`` now."""
    params = SimulatedScheduleInput(
        schedule_id=data["scheduleId"],
        initial_spec=data,
        clock_offset_seconds=(simulated_now_utc - server_now_utc).total_seconds(),
        stop_after_utc=stop_after_utc,
        **kw,
    )
    return await client.start_workflow(
        SimulatedScheduleWorkflow.run,
        params,
        id=_schedule_workflow_id(data["scheduleId"]),
        task_queue=task_queue,
    )


def wait_until(
    probe: Callable[[], T], accept: Callable[[T], bool], *, timeout: float, what: str
) -> T:
    """Poll ``probe`` until ``accept`` holds; raise ``AssertionError`` after ``timeout`` seconds."""
    deadline = time.monotonic() + timeout
    while True:
        value = probe()
        if accept(value):
            return value
        if time.monotonic() >= deadline:
            raise AssertionError(f"{what}: not met within {timeout}s; last value: {value!r}")
        time.sleep(0.05)


async def await_until(
    probe: Callable[[], Awaitable[T] | T],
    accept: Callable[[T], bool],
    *,
    timeout: float,
    what: str,
) -> T:
    """:func:`wait_until` for async code (``probe`` may be sync or async)."""
    deadline = time.monotonic() + timeout
    while True:
        value = probe()
        if asyncio.iscoroutine(value) or isinstance(value, Awaitable):
            value = await value  # type: ignore[misc]
        if accept(value):  # type: ignore[arg-type]
            return value  # type: ignore[return-value]
        if time.monotonic() >= deadline:
            raise AssertionError(f"{what}: not met within {timeout}s; last value: {value!r}")
        await asyncio.sleep(0.05)


def states(ledger_: Ledger, schedule_id: str) -> dict[str, OccurrenceState]:
    """occurrenceId → state for every occurrence of the schedule."""
    return {o.occurrence_id: o.state for o in ledger.list_occurrences(ledger_, schedule_id)}


# -- workers ----------------------------------------------------------------------------------


@dataclass
class WorkerProcess:
    """A simulated worker as a child process of the test (its own session, its own log)."""

    process: subprocess.Popen[bytes]
    log: Path

    def kill(self) -> None:
        """SIGKILL this process (only this one, by its pid) and reap it."""
        self.process.send_signal(signal.SIGKILL)
        self.process.wait(timeout=30)

    def stop(self) -> None:
        """SIGTERM, wait for the graceful exit (SIGKILL if it hangs past 30 s)."""
        if self.process.poll() is not None:
            return
        self.process.send_signal(signal.SIGTERM)
        try:
            self.process.wait(timeout=30)
        except subprocess.TimeoutExpired:
            self.kill()


def worker_env(
    temporal_address: str, task_queue: str, ledger_url: str, data_dir: Path
) -> dict[str, str]:
    """The ``ALMANAC_*`` environment of a worker process for this test."""
    env = {k: v for k, v in os.environ.items() if not k.startswith("ALMANAC_")}
    env.update(
        ALMANAC_DATA_DIR=str(data_dir),
        ALMANAC_LEDGER_URL=ledger_url,
        ALMANAC_TEMPORAL_ADDRESS=temporal_address,
        ALMANAC_TEMPORAL_NAMESPACE="default",
        ALMANAC_TEMPORAL_TASK_QUEUE=task_queue,
        ALMANAC_EGRESS_ALLOW="127.0.0.1",  # the test's sink is on loopback
        PYTHONUNBUFFERED="1",
    )
    return env


def spawn_worker(
    env: dict[str, str],
    log: Path,
    identity: str,
    *,
    module: str = "tests.faults.simulated_worker",
    args: tuple[str, ...] = (),
) -> WorkerProcess:
    """Start ``python -m MODULE --identity IDENTITY ARGS``; wait until it polls.

    ``module``: the simulated worker by default; ``"worker"`` runs the production one (``python
    -m worker``, real clock), e.g. with ``args=("--no-schedules",)`` for a canary pool.
    """
    handle = log.open("ab")
    process = subprocess.Popen(
        [sys.executable, "-m", module, "--identity", identity, *args],
        cwd=REPO,
        env=env,
        stdout=handle,
        stderr=subprocess.STDOUT,
        start_new_session=True,
    )
    handle.close()
    spawned = WorkerProcess(process, log)
    try:
        wait_until(
            lambda: (process.poll(), f"worker {identity} " in log.read_text(errors="replace")),
            lambda v: v[0] is not None or v[1],
            timeout=60,
            what=f"worker {identity} starts",
        )
    except AssertionError:
        spawned.kill()
        raise
    if process.poll() is not None:
        raise AssertionError(f"worker {identity} exited {process.returncode}:\n{log.read_text()}")
    return spawned


async def first_poll(client: Client, task_queue: str, identity: str) -> float:
    """``time.monotonic()`` when the server first lists ``identity`` polling the workflow queue."""
    request = DescribeTaskQueueRequest(
        namespace=client.namespace,
        task_queue=TaskQueue(name=task_queue),
        task_queue_type=TaskQueueType.TASK_QUEUE_TYPE_WORKFLOW,
    )

    async def pollers() -> list[str]:
        response = await client.workflow_service.describe_task_queue(request)
        return [p.identity for p in response.pollers]

    def listed(seen: list[str]) -> bool:
        return identity in seen

    await await_until(pollers, listed, timeout=60, what=f"{identity} polls")
    return time.monotonic()


@asynccontextmanager
async def in_process_worker(
    client: Client, task_queue: str, ledger_url: str, data_dir: Path, identity: str
) -> AsyncIterator[None]:
    """The production worker (``almanac.worker.build_worker``), simulated workflows, in process."""
    settings = AlmanacSettings(
        data_dir=data_dir,
        ledger_url=ledger_url,
        temporal=TemporalSettings(task_queue=task_queue),
        egress_allow=("127.0.0.1",),  # the test's sink is on loopback
    )
    try:
        await register_search_attributes(client)  # unregistered, child starts would hang
    except RPCError as exc:
        # A second registration on the time-skipping server (it cannot list what it has).
        if exc.status != RPCStatusCode.ALREADY_EXISTS:
            raise
    ledger_ = Ledger.from_url(ledger_url)
    options = worker.WorkerOptions(identity=identity, max_concurrent_activities=8)
    try:
        async with simulated_worker.in_process(client, settings, ledger_, options):
            yield
    finally:
        ledger_.dispose()


@contextmanager
def running_sink() -> Iterator[Sink]:
    """A sink on 127.0.0.1 (in-memory store), stopped on exit."""
    with Sink() as sink:
        yield sink


def server_address(client: Client) -> str:
    """The ``host:port`` of the client's Temporal frontend."""
    return client.service_client.config.target_host


def day(d: int, hour: int = 9, minute: int = 0, second: int = 0) -> datetime:
    """An instant in January 2027, UTC (the fault matrix's simulated calendar)."""
    from datetime import UTC

    return datetime(2027, 1, d, hour, minute, second, tzinfo=UTC)


ONE_DAY = timedelta(days=1)
