"""``AlmanacClient.apply`` is one update-with-start: even a first revision returns its verdict.

Through the production client against a real worker (time-skipping server; the worker runs the
simulated-clock workflows, which read a production input as a clock offset of 0). Expectations
from DESIGN §3 and issue 10: the first apply starts the schedule and answers with its revision,
cutover and gate; a second apply of the same revision is refused by the validator; an unknown
adapter or a bad parameter is refused before anything is sent (the edge check) and, sent anyway,
by the publish activity — naming ``action.name`` / ``action.parameters.url`` — after which the run
that had no schedule ends; a deleted schedule comes back only with a higher revision.
"""

from __future__ import annotations

from datetime import datetime, timedelta
from pathlib import Path
from typing import Any

import pytest
from stack import record_history, running_stack
from temporal_env import eventually, start_time_skipping
from temporalio.client import WithStartWorkflowOperation, WorkflowExecutionStatus
from temporalio.common import WorkflowIDConflictPolicy

from almanac.client import AlmanacClient
from almanac.client_errors import ApplyRefused, ChangeRejected
from almanac.settings import AlmanacSettings, TemporalSettings
from ledger import ScheduleNotFound, get_gate, schedule_events
from timecontract import SpecError, format_instant, parse_spec
from workflows import ScheduleInput, ScheduleWorkflow, schedule_workflow_id

pytestmark = [pytest.mark.anyio, pytest.mark.temporal, pytest.mark.slow]


def spec_data(sid: str, now: datetime, revision: int = 1, **overrides: Any) -> dict[str, Any]:
    return {
        "schema": "scheduleSpec.v1",
        "scheduleId": sid,
        "revision": revision,
        "timeZone": "Etc/UTC",
        "tzdbVersion": "2026a",
        "rule": "FREQ=HOURLY;BYMINUTE=0",
        "misfirePolicy": "SKIP",
        # Relative to the server's clock, never the wall-clock date.
        "cutoverAt": format_instant((now - timedelta(hours=1)).replace(microsecond=0)),
        **overrides,
    }


async def test_apply_returns_the_first_revisions_verdict(tmp_path: Path) -> None:
    env = await start_time_skipping()
    try:
        async with running_stack(env, tmp_path, "apply-uws") as stack:
            settings = AlmanacSettings(temporal=TemporalSettings(task_queue=stack.task_queue))
            client = AlmanacClient(env.client, settings)
            now = await env.get_current_time()
            data = stack.spec(spec_data("uws", now))

            first = await client.apply(parse_spec(data))
            assert (first.action, first.revision) == ("started", 1)
            assert first.workflow_id == "almanac-schedule-uws"
            verdict = first.verdict
            assert verdict.accepted and verdict.created_schedule
            assert format_instant(verdict.cutover_at_utc) == data["cutoverAt"]
            assert verdict.gate.active_revision == 1 and verdict.gate.disable_generation == 0

            again = await client.apply(parse_spec(data))  # the same spec: harmless
            assert (again.action, again.revision) == ("unchanged", 1)
            with pytest.raises(ApplyRefused) as same:
                await client.apply(parse_spec({**data, "rule": "FREQ=DAILY;BYHOUR=3"}))
            assert (same.value.field, same.value.value) == ("revision", 1)
            assert "already published" in str(same.value)

            off = await client.disable("uws", "maintenance")
            assert off.changed and off.gate.disable_generation == 1
            on = await client.enable("uws")
            assert on.changed and on.gate.disable_generation == 2 and on.came_due == 0

            gone = await client.delete("uws", "retired")
            assert gone.deleted
            handle = client.handle("uws")
            assert (await handle.result()).deleted
            await record_history(env.client, handle.id, "schedule-applied-by-update-with-start")
            with pytest.raises(ApplyRefused, match="needs a higher revision") as again:
                await client.apply(parse_spec(data))
            assert again.value.field == "revision"
            later = format_instant((now + timedelta(days=1)).replace(microsecond=0))
            revived = await client.apply(parse_spec({**data, "revision": 2, "cutoverAt": later}))
            assert (revived.action, revived.revision) == ("started", 2)
            assert not get_gate(stack.ledger, "uws").deleted
            with pytest.raises(ChangeRejected, match="non-empty reason"):
                await client.delete("uws", " ")
    finally:
        await env.shutdown()


@pytest.mark.parametrize(
    ("action", "field", "value"),
    [
        ({"name": "ftp", "parameters": {}}, "action.name", "ftp"),
        (
            {"name": "http", "parameters": {"url": "not a url"}},
            "action.parameters.url",
            "not a url",
        ),
    ],
)
async def test_an_action_the_adapters_refuse_never_starts_a_schedule(
    tmp_path: Path, action: dict[str, Any], field: str, value: str
) -> None:
    env = await start_time_skipping()
    try:
        async with running_stack(env, tmp_path, "edge") as stack:
            settings = AlmanacSettings(temporal=TemporalSettings(task_queue=stack.task_queue))
            client = AlmanacClient(env.client, settings)
            now = await env.get_current_time()
            data = spec_data("bad-action", now, action=action)

            # At the edge: refused before anything is sent.
            with pytest.raises(SpecError) as edge:
                await client.apply(parse_spec(data))
            assert (edge.value.field, edge.value.value) == (field, value)
            assert not await client.is_running("bad-action")

            # Sent anyway (e.g. `temporal workflow update`): the publish activity refuses it.
            start = WithStartWorkflowOperation(
                ScheduleWorkflow.run,
                ScheduleInput(schedule_id="bad-action"),
                id=schedule_workflow_id("bad-action"),
                task_queue=stack.task_queue,
                id_conflict_policy=WorkflowIDConflictPolicy.USE_EXISTING,
            )
            verdict = await env.client.execute_update_with_start_workflow(
                ScheduleWorkflow.publish_revision_update, data, start_workflow_operation=start
            )
            assert not verdict.accepted and not verdict.schedule_live
            assert (verdict.field, verdict.value) == (field, value)
            handle = await start.workflow_handle()
            await handle.result()  # nothing to run: the workflow completes
            if field == "action.name":
                await record_history(env.client, handle.id, "schedule-first-revision-refused")
            assert (await handle.describe()).status is WorkflowExecutionStatus.COMPLETED
            with pytest.raises(ScheduleNotFound):
                get_gate(stack.ledger, "bad-action")
            events = await eventually(
                lambda: _async(schedule_events(stack.ledger, "bad-action")), bool
            )
            assert [e.kind for e in events] == ["REVISION_REJECTED"]
            assert field in events[0].detail
    finally:
        await env.shutdown()


async def _async(value: Any) -> Any:
    return value
