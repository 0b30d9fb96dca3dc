"""The ``temporal`` action on the real dev server: the effect is a workflow whose ID derives from
the occurrenceId, so a repeat start — while it runs or after it closed — is the same effect."""

from __future__ import annotations

import asyncio
import uuid
from typing import Any

import pytest
from temporalio import workflow
from temporalio.client import WorkflowExecutionStatus, WorkflowFailureError
from temporalio.testing import WorkflowEnvironment
from temporalio.worker import Worker

# The sandbox re-imports this module for EffectWorkflow; httpx (via the adapters) may not be.
with workflow.unsafe.imports_passed_through():
    from activities.actions import (
        ActionContext,
        ActionNotConfigured,
        ActionRegistry,
        InvalidActionParameters,
        OutcomeKind,
        QueryOutcomeKind,
        TemporalAction,
        effect_workflow_id,
    )

pytestmark = [pytest.mark.anyio, pytest.mark.temporal]


@workflow.defn(name="EffectWorkflow")
class EffectWorkflow:
    def __init__(self) -> None:
        self._release = False

    @workflow.run
    async def run(self, payload: dict[str, Any]) -> dict[str, Any]:
        await workflow.wait_condition(lambda: self._release)
        return payload

    @workflow.signal
    def release(self) -> None:
        self._release = True


def ctx(task_queue: str, occurrence_id: str, **extra: Any) -> ActionContext:
    return ActionContext(
        occurrence_id=occurrence_id,
        schedule_id="daily-ops-summary",
        revision=7,
        nominal_local="2026-11-01T01:30:00",
        instant_utc="2026-11-01T05:30:00Z",
        attempt=1,
        parameters={
            "workflowType": "EffectWorkflow",
            "taskQueue": task_queue,
            "input": {"report": "ops"},
            **extra,
        },
    )


def new_occurrence_id() -> str:
    return f"t{uuid.uuid4().hex[:10]}.r7.20261101T013000.f0"


async def test_start_is_confirmed_and_a_repeat_finds_the_same_run(
    dev_env: WorkflowEnvironment, task_queue: str
) -> None:
    action = TemporalAction(dev_env.client)
    occurrence_id = new_occurrence_id()
    context = ctx(task_queue, occurrence_id)
    async with Worker(dev_env.client, task_queue=task_queue, workflows=[EffectWorkflow]):
        first = await action.invoke(context)
        repeat = await action.invoke(context)  # still running: USE_EXISTING
        assert first.kind is repeat.kind is OutcomeKind.CONFIRMED
        assert first.result == repeat.result
        assert first.result is not None
        assert first.result["workflowId"] == effect_workflow_id(occurrence_id)

        handle = dev_env.client.get_workflow_handle(effect_workflow_id(occurrence_id))
        await handle.signal(EffectWorkflow.release)
        assert await handle.result() == {"report": "ops"}

        after_close = await action.invoke(context)  # closed: REJECT_DUPLICATE, never a rerun
        answer = await action.query_result(context)

    assert after_close.kind is OutcomeKind.CONFIRMED
    assert after_close.result == {**first.result, "alreadyClosed": True}
    assert answer.kind is QueryOutcomeKind.FOUND
    assert answer.result == {
        **first.result,
        "status": WorkflowExecutionStatus.COMPLETED.name,
    }
    runs = [w async for w in dev_env.client.list_workflows(f'WorkflowId="{handle.id}"')]
    assert len(runs) <= 1  # visibility may lag, but there is never a second run


async def test_query_before_any_start_is_not_found(dev_env: WorkflowEnvironment) -> None:
    answer = await TemporalAction(dev_env.client).query_result(ctx("q", new_occurrence_id()))
    assert answer.kind is QueryOutcomeKind.NOT_FOUND


def test_without_a_client_parameters_validate_but_invoking_raises() -> None:
    registry = ActionRegistry.default()
    caps = registry.validate("temporal", ctx("q", "x.r1.20261101T013000.f0").parameters)
    assert (caps.accepts_idempotency_key, caps.can_query_result) == (True, True)
    with pytest.raises(ActionNotConfigured):
        _ = TemporalAction(None).client


@pytest.mark.parametrize(
    ("override", "field"),
    [
        ({"workflowType": ""}, "action.parameters.workflowType"),
        ({"taskQueue": None}, "action.parameters.taskQueue"),
        ({"namespace": "other"}, "action.parameters.namespace"),
    ],
)
def test_invalid_parameters_name_the_parameter(override: dict[str, Any], field: str) -> None:
    params = {**ctx("q", "x").parameters, **override}
    with pytest.raises(InvalidActionParameters) as raised:
        TemporalAction(None).validate(params)
    assert raised.value.field == field


async def test_a_workflow_nothing_polls_for_is_started_with_a_bounded_execution_timeout(
    dev_env: WorkflowEnvironment,
) -> None:
    # No worker polls this queue: the started workflow would otherwise wait for ever.
    action = TemporalAction(dev_env.client)
    occurrence_id = new_occurrence_id()
    started = await action.invoke(ctx(f"nobody-{uuid.uuid4().hex[:8]}", occurrence_id))
    assert started.kind is OutcomeKind.CONFIRMED
    handle = dev_env.client.get_workflow_handle(effect_workflow_id(occurrence_id))
    description = await handle.describe()
    timeout = description.raw_description.execution_config.workflow_execution_timeout
    assert timeout.ToSeconds() == 86_400  # the documented default: a day
    await handle.terminate("test over")

    occurrence_id = new_occurrence_id()
    context = ctx(f"nobody-{uuid.uuid4().hex[:8]}", occurrence_id, executionTimeoutSeconds=2)
    assert (await action.invoke(context)).kind is OutcomeKind.CONFIRMED
    handle = dev_env.client.get_workflow_handle(effect_workflow_id(occurrence_id))
    with pytest.raises(WorkflowFailureError):
        await asyncio.wait_for(handle.result(), timeout=60)  # timed out by the server
    assert (await handle.describe()).status is WorkflowExecutionStatus.TIMED_OUT


@pytest.mark.parametrize("seconds", [0, 366 * 86_400 + 1, "soon"])
def test_an_execution_timeout_out_of_bounds_is_refused(seconds: Any) -> None:
    params = {**ctx("q", "x").parameters, "executionTimeoutSeconds": seconds}
    with pytest.raises(InvalidActionParameters) as raised:
        TemporalAction(None).validate(params)
    assert raised.value.field == "action.parameters.executionTimeoutSeconds"
