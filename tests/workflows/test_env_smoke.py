"""Both Temporal environments start from the local binaries and run a workflow with an activity.

The dev server also answers visibility queries on Almanac's custom search attributes.
"""

from __future__ import annotations

import time
import uuid
from datetime import timedelta

import pytest
from temporal_env import eventually
from temporalio import activity, workflow
from temporalio.api.enums.v1 import IndexedValueType
from temporalio.api.operatorservice.v1 import ListSearchAttributesRequest
from temporalio.client import WorkflowExecution
from temporalio.common import TypedSearchAttributes
from temporalio.testing import WorkflowEnvironment
from temporalio.worker import Worker

from workflows import search_attributes

pytestmark = [pytest.mark.anyio, pytest.mark.temporal]


@activity.defn(name="smoke.greet")
async def greet(name: str) -> str:
    return f"hello {name}"


@workflow.defn(name="SmokeWorkflow")
class SmokeWorkflow:
    @workflow.run
    async def run(self, name: str, sleep_days: int) -> str:
        greeting = await workflow.execute_activity(
            greet, name, start_to_close_timeout=timedelta(seconds=10)
        )
        if sleep_days:
            await workflow.sleep(timedelta(days=sleep_days))
        return greeting


@workflow.defn(name="SmokeSearchAttributesWorkflow")
class SmokeSearchAttributesWorkflow:
    def __init__(self) -> None:
        self._done = False

    @workflow.run
    async def run(self, schedule_id: str) -> None:
        workflow.upsert_search_attributes(
            [
                search_attributes.SCHEDULE_ID.value_set(schedule_id),
                search_attributes.REVISION.value_set(7),
                search_attributes.NOMINAL_LOCAL.value_set("2026-11-01T01:30:00"),
                search_attributes.OCCURRENCE_STATE.value_set("RUNNING"),
            ]
        )
        await workflow.wait_condition(lambda: self._done)

    @workflow.signal
    def finish(self) -> None:
        self._done = True


async def test_time_skipping_env_runs_workflow_and_skips_a_three_day_timer(
    time_skipping_env: WorkflowEnvironment, task_queue: str
) -> None:
    client = time_skipping_env.client
    started = time.monotonic()
    async with Worker(client, task_queue=task_queue, workflows=[SmokeWorkflow], activities=[greet]):
        result = await client.execute_workflow(
            SmokeWorkflow.run, args=["ts", 3], id=f"smoke-{uuid.uuid4()}", task_queue=task_queue
        )
    assert result == "hello ts"
    assert time.monotonic() - started < 30  # three days of timer took seconds at most


async def test_dev_server_runs_workflow_with_activity(
    dev_env: WorkflowEnvironment, task_queue: str
) -> None:
    client = dev_env.client
    async with Worker(client, task_queue=task_queue, workflows=[SmokeWorkflow], activities=[greet]):
        result = await client.execute_workflow(
            SmokeWorkflow.run, args=["dev", 0], id=f"smoke-{uuid.uuid4()}", task_queue=task_queue
        )
    assert result == "hello dev"


async def test_dev_server_registers_almanac_search_attributes(dev_env: WorkflowEnvironment) -> None:
    response = await dev_env.client.operator_service.list_search_attributes(
        ListSearchAttributesRequest(namespace=dev_env.client.namespace)
    )
    expected = {
        "ScheduleId": IndexedValueType.INDEXED_VALUE_TYPE_KEYWORD,
        "Revision": IndexedValueType.INDEXED_VALUE_TYPE_INT,
        "NominalLocal": IndexedValueType.INDEXED_VALUE_TYPE_KEYWORD,
        "OccurrenceState": IndexedValueType.INDEXED_VALUE_TYPE_KEYWORD,
    }
    assert {k: response.custom_attributes.get(k) for k in expected} == expected


async def test_upserted_schedule_id_is_found_by_list_workflows(
    dev_env: WorkflowEnvironment, task_queue: str
) -> None:
    client = dev_env.client
    schedule_id = f"smoke-{uuid.uuid4().hex[:12]}"
    async with Worker(client, task_queue=task_queue, workflows=[SmokeSearchAttributesWorkflow]):
        handle = await client.start_workflow(
            SmokeSearchAttributesWorkflow.run,
            schedule_id,
            id=f"{schedule_id}.r7.20261101T013000.f0",
            task_queue=task_queue,
        )

        async def matching() -> list[WorkflowExecution]:
            return [w async for w in client.list_workflows(f'ScheduleId="{schedule_id}"')]

        found = await eventually(matching, lambda ws: len(ws) == 1)
        attrs: TypedSearchAttributes = found[0].typed_search_attributes
        assert found[0].id == handle.id
        assert attrs.get(search_attributes.REVISION) == 7
        assert attrs.get(search_attributes.NOMINAL_LOCAL) == "2026-11-01T01:30:00"
        by_revision = await eventually(
            lambda: _ids(client.list_workflows(f'ScheduleId="{schedule_id}" AND Revision=7')),
            lambda ids: ids == [handle.id],
        )
        assert by_revision == [handle.id]
        await handle.signal(SmokeSearchAttributesWorkflow.finish)
        await handle.result()


async def _ids(iterator: object) -> list[str]:
    return [w.id async for w in iterator]  # type: ignore[attr-defined]
