"""A real Almanac stack for workflow tests: worker + ledger + sink on a given Temporal env.

The worker is the production one (``worker.build_worker``), on a task queue of the test's own, with
a SQLite ledger file migrated for the test and a real sink on 127.0.0.1.
"""

from __future__ import annotations

import copy
from collections.abc import AsyncIterator
from concurrent.futures import ThreadPoolExecutor
from contextlib import asynccontextmanager
from dataclasses import dataclass
from datetime import datetime
from pathlib import Path
from typing import Any

from temporalio.client import Client, WorkflowHandle
from temporalio.testing import WorkflowEnvironment

import worker
from almanac.registration import register_search_attributes
from almanac.settings import AlmanacSettings, TemporalSettings
from almanac.sink import Sink
from ledger import Ledger
from ledger.migrate import upgrade
from workflows import ScheduleInput, ScheduleWorkflow, schedule_workflow_id


@dataclass
class Stack:
    """What a workflow test drives and inspects."""

    env: WorkflowEnvironment
    client: Client
    ledger: Ledger
    sink: Sink
    task_queue: str

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

    async def start_schedule(
        self, spec: dict[str, Any], *, simulate_from: datetime, stop_after: datetime, **kw: Any
    ) -> WorkflowHandle[ScheduleWorkflow, Any]:
        """Start a schedule whose clock reads ``simulate_from`` now, ending at ``stop_after``."""
        offset = (simulate_from - await self.env.get_current_time()).total_seconds()
        params = ScheduleInput(
            schedule_id=spec["scheduleId"],
            initial_spec=spec,
            clock_offset_seconds=offset,
            stop_after_utc=stop_after,
            **kw,
        )
        return await self.client.start_workflow(
            ScheduleWorkflow.run,
            params,
            id=schedule_workflow_id(spec["scheduleId"]),
            task_queue=self.task_queue,
        )


@asynccontextmanager
async def running_stack(
    env: WorkflowEnvironment, tmp_path: Path, task_queue: str
) -> AsyncIterator[Stack]:
    """A worker on ``env`` with a fresh SQLite ledger and a sink, stopped on exit."""
    url = f"sqlite:///{tmp_path / 'ledger.sqlite3'}"
    upgrade(url)
    settings = AlmanacSettings(
        data_dir=tmp_path,
        ledger_url=url,
        temporal=TemporalSettings(task_queue=task_queue),
    )
    await register_search_attributes(env.client)
    ledger_ = Ledger.from_url(url)
    options = worker.WorkerOptions(identity=f"test-worker-{task_queue}")
    with Sink() as sink, ThreadPoolExecutor(max_workers=8) as executor:
        running = worker.build_worker(env.client, settings, ledger_, options, executor)
        async with running:
            yield Stack(env, env.client, ledger_, sink, task_queue)
    ledger_.dispose()
