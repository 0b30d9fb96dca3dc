"""A real Almanac stack for workflow tests: worker + ledger + sink on a given Temporal env.

The worker is the production one (``almanac.worker.build_worker``) running the simulated-clock
workflows (``almanac.gates.simulation``: the production workflows plus a clock offset and a stop
instant), on a task queue of the test's own, with a SQLite ledger file migrated for the test (or a
given ledger URL, e.g. PostgreSQL) and a real sink on 127.0.0.1.

Histories: with ``ALMANAC_RECORD_HISTORIES=1`` in the environment, :func:`record_history` writes the
histories tests hand it to ``tests/workflows/histories/`` (see the README there); otherwise it does
nothing, so the committed files change only on purpose."""

from __future__ import annotations

import contextlib
import copy
import os
from collections.abc import AsyncIterator, Sequence
from concurrent.futures import ThreadPoolExecutor
from contextlib import asynccontextmanager
from dataclasses import dataclass, field
from datetime import datetime, timedelta
from pathlib import Path
from typing import Any

from temporal_env import SKIPPED_TIME_MAX_HISTORY_EVENTS, eventually
from temporalio.client import Client, WorkflowHandle
from temporalio.service import RPCError
from temporalio.testing import WorkflowEnvironment

from almanac import worker
from almanac.gates import simulation
from almanac.gates.simulated_clock import SimulatedClock
from almanac.gates.simulation import SimulatedScheduleInput, SimulatedScheduleWorkflow
from almanac.registration import register_search_attributes
from almanac.settings import AlmanacSettings, TemporalSettings
from almanac.stack.sink import Sink
from ledger import Ledger, OccurrenceView, list_occurrences
from ledger.migrate import upgrade
from workflows import schedule_workflow_id

SINK_ALLOWANCE = "127.0.0.1"
"""The stack's sink listens on loopback, which the egress policy refuses unless allowed."""


@dataclass
class Stack:
    """What a workflow test drives and inspects."""

    env: WorkflowEnvironment
    client: Client
    ledger: Ledger
    sink: Sink
    task_queue: str
    _offsets: dict[str, float] = field(default_factory=dict)

    def spec(self, base: dict[str, Any], **overrides: Any) -> dict[str, Any]:
        """Spec data with the http action pointed at this stack's sink."""
        data = copy.deepcopy(base)
        data.update(overrides)
        data.setdefault(
            "action",
            {
                "name": "http",
                "parameters": {
                    "url": f"{self.sink.url}/effects",
                    "resultUrl": f"{self.sink.url}/effects/{{idempotencyKey}}",
                    "timeoutSeconds": 5,
                },
            },
        )
        return data

    def offset(self, handle: WorkflowHandle[Any, Any]) -> timedelta:
        """The run's simulation offset: its clock minus the environment's (zero if none)."""
        return timedelta(seconds=self._offsets.get(handle.id, 0.0))

    async def simulated_now(self, handle: WorkflowHandle[Any, Any]) -> datetime:
        """The schedule's clock now: the environment's time plus the run's simulation offset."""
        return await self.env.get_current_time() + self.offset(handle)

    def occurrences(self, schedule_id: str, **kw: Any) -> list[OccurrenceView]:
        """The ledger's occurrences of ``schedule_id`` (``list_occurrences`` keywords)."""
        return list_occurrences(self.ledger, schedule_id, **kw)

    async def start_schedule(
        self, spec: dict[str, Any], *, simulate_from: datetime, stop_after: datetime, **kw: Any
    ) -> WorkflowHandle[SimulatedScheduleWorkflow, Any]:
        """Start a schedule whose clock reads ``simulate_from`` now, ending at ``stop_after``.

        In skipped time the run's history limit is ``SKIPPED_TIME_MAX_HISTORY_EVENTS`` unless
        ``kw`` names one (the test server's limit, explained there).
        """
        if self.env.supports_time_skipping:
            kw.setdefault("max_history_events", SKIPPED_TIME_MAX_HISTORY_EVENTS)
        offset = (simulate_from - await self.env.get_current_time()).total_seconds()
        self._offsets[schedule_workflow_id(spec["scheduleId"])] = offset
        params = SimulatedScheduleInput(
            schedule_id=spec["scheduleId"],
            initial_spec=spec,
            clock_offset_seconds=offset,
            stop_after_utc=stop_after,
            **kw,
        )
        return await self.client.start_workflow(
            SimulatedScheduleWorkflow.run,
            params,
            id=schedule_workflow_id(spec["scheduleId"]),
            task_queue=self.task_queue,
        )


@asynccontextmanager
async def running_stack(
    env: WorkflowEnvironment,
    tmp_path: Path,
    task_queue: str,
    *,
    ledger_url: str | None = None,
    sink_signing_secret: str | None = None,
    extra_task_queues: tuple[str, ...] = (),
    workflows: Sequence[type] = simulation.WORKFLOWS,
) -> AsyncIterator[Stack]:
    """A worker on ``env`` with a fresh ledger and a sink, stopped on exit.

    ``ledger_url``: a migrated ledger to use (default: a fresh SQLite file in ``tmp_path``).
    ``sink_signing_secret``: the sink verifies Standard Webhooks signatures with this key.
    The worker's secrets directory is ``tmp_path / "secrets"``.
    ``extra_task_queues``: the same worker (alias ``default``) also polls these queues.
    ``workflows``: what the worker registers (default: the simulated workflows).
    """
    url = ledger_url or f"sqlite:///{tmp_path / 'ledger.sqlite3'}"
    if ledger_url is None:
        upgrade(url)
    settings = AlmanacSettings(
        data_dir=tmp_path,
        ledger_url=url,
        temporal=TemporalSettings(task_queue=task_queue),
        egress_allow=(SINK_ALLOWANCE,),
    )
    await register_search_attributes(env.client)
    ledger_ = Ledger.from_url(url)
    options = worker.WorkerOptions(
        identity=f"test-worker-{task_queue}", max_concurrent_activities=8
    )
    with (
        Sink(signing_secret=sink_signing_secret) as sink,
        ThreadPoolExecutor(max_workers=8) as executor,
    ):
        clock = SimulatedClock()
        async with contextlib.AsyncExitStack() as running:
            for queue in (task_queue, *extra_task_queues):
                await running.enter_async_context(
                    worker.build_worker(
                        env.client,
                        settings,
                        ledger_,
                        options,
                        executor,
                        workflows=workflows,
                        task_queue=queue,
                        clock=clock,
                        interceptors=[clock],
                    )
                )
            yield Stack(env, env.client, ledger_, sink, task_queue)
    ledger_.dispose()


async def try_query(handle: WorkflowHandle[Any, Any], query: Any, *args: Any) -> Any:
    """``handle.query(query, *args)``, or ``None`` if the server did not answer within 2 s.

    For polling with ``eventually``: the time-skipping test server sometimes leaves a query that
    arrives while a workflow task is in flight unanswered until its deadline (seen here right
    after a signal: "query deadline exceeded"); the next poll gets an answer.
    """
    try:
        return await handle.query(query, *args, rpc_timeout=timedelta(seconds=2))
    except RPCError:
        return None


async def wait_until_sleeping(handle: WorkflowHandle[Any, Any], timeout: float = 20.0) -> None:
    """Wait until the run's last history event is a started timer (idle: no task in flight).

    The time-skipping test server mishandles some concurrency: a run terminated mid-task left
    time skipping stuck, and signals racing a child workflow's start sometimes failed the
    schedule's task completion ("invalid history builder state for action") and wedged it. The
    tests signal and terminate only idle runs; the dev server needs no such care.
    """

    async def last_event() -> str | None:
        history = await handle.fetch_history()
        return history.events[-1].WhichOneof("attributes")

    await eventually(
        last_event, lambda kind: kind == "timer_started_event_attributes", timeout=timeout
    )


HISTORIES = Path(__file__).resolve().parent / "histories"
RECORD_ENV = "ALMANAC_RECORD_HISTORIES"


def recording() -> bool:
    """Whether this run re-records the replay histories (``ALMANAC_RECORD_HISTORIES=1``)."""
    return os.environ.get(RECORD_ENV) == "1"


async def record_history(
    client: Client, workflow_id: str, name: str, run_id: str | None = None
) -> None:
    """Save a run's history (default: the latest) as ``histories/<name>.json`` when recording."""
    if not recording():
        return
    history = await client.get_workflow_handle(workflow_id, run_id=run_id).fetch_history()
    HISTORIES.mkdir(exist_ok=True)
    (HISTORIES / f"{name}.json").write_text(history.to_json() + "\n")
