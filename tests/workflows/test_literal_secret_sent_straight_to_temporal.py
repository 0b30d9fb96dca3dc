"""Issue 27 §3: a spec with a literal secret sent straight to Temporal, skipping the CLI.

A real dev server, the worker, a SQLite ledger. The spec's ``http`` action sends a canary in a
header whose name is on no list (``X-Upstream: Bearer <canary>``: credential-shaped). Sent:

- by **update-with-start** (what ``apply`` sends, built by hand) to a schedule not yet running,
  and by **update** to a running one: each validator refuses it (``InvalidUpdate``, the field
  named, the value ``<redacted>``), and the fetched history holds no trace of the canary — a
  refused update never reaches history (Temporal only records accepted updates);
- through the **Python client** from a ``ScheduleSpecV1`` built without ``load_spec``: refused
  before anything is sent;
- by **signal**: Temporal records a signal's payload before any handler runs, so the canary is
  in the ``WorkflowExecutionSignaled`` event — and, by the ``almanac-signal-secrets`` patch,
  nowhere after it: the handler rejects it (recorded without the value in the status query), no
  activity carries it and the ledger holds no trace of it.
"""

from __future__ import annotations

import sqlite3
from datetime import timedelta
from pathlib import Path
from typing import Any

import pytest
from stack import record_history, running_stack, try_query
from temporal_env import eventually
from temporalio.client import (
    WithStartWorkflowOperation,
    WorkflowHandle,
    WorkflowUpdateFailedError,
)
from temporalio.common import WorkflowIDConflictPolicy
from temporalio.exceptions import ApplicationError
from temporalio.testing import WorkflowEnvironment

from almanac.client import AlmanacClient
from almanac.settings import AlmanacSettings, TemporalSettings
from timecontract import InvalidSpec, ScheduleSpecV1, format_instant
from workflows import ScheduleInput, ScheduleWorkflow, schedule_workflow_id

pytestmark = [pytest.mark.anyio, pytest.mark.temporal, pytest.mark.slow]

CANARY = "Zq8canaryX4v2k9-history"
SID = "secret-straight"


def spec_data(url: str, cutover: str, revision: int, **headers: Any) -> dict[str, Any]:
    return {
        "schema": "scheduleSpec.v1",
        "scheduleId": SID,
        "revision": revision,
        "timeZone": "Etc/UTC",
        "tzdbVersion": "2026a",
        "rule": "FREQ=DAILY;BYHOUR=3",
        "misfirePolicy": "SKIP",
        "cutoverAt": cutover,
        "action": {"name": "http", "parameters": {"url": url, "headers": headers}},
    }


async def refused(call: Any) -> ApplicationError:
    with pytest.raises(WorkflowUpdateFailedError) as failed:
        await call
    cause = failed.value.cause
    assert isinstance(cause, ApplicationError) and cause.type == "InvalidUpdate"
    return cause


async def history_text(handle: WorkflowHandle[Any, Any]) -> str:
    """Every event as protobuf text: payloads as their bytes (``to_json`` base64-encodes them)."""
    return "\n".join(str(event) for event in (await handle.fetch_history()).events)


def ledger_text(path: Path) -> str:
    with sqlite3.connect(path) as db:
        tables = [r[0] for r in db.execute("select name from sqlite_master where type='table'")]
        return "\n".join(repr(row) for t in tables for row in db.execute(f'select * from "{t}"'))


async def test_a_literal_secret_sent_to_the_workflow_never_reaches_history_by_update(
    dev_env: WorkflowEnvironment, tmp_path: Path, task_queue: str
) -> None:
    async with running_stack(dev_env, tmp_path, task_queue) as stack:
        now = await dev_env.get_current_time()
        cutover = format_instant((now - timedelta(hours=1)).replace(microsecond=0))
        url = f"{stack.sink.url}/effects"
        literal = spec_data(url, cutover, 1, **{"X-Upstream": f"Bearer {CANARY}"})
        workflow_id = schedule_workflow_id(SID)

        # Update-with-start, as `apply` sends it, but carrying the literal: refused.
        start = WithStartWorkflowOperation(
            ScheduleWorkflow.run,
            ScheduleInput(schedule_id=SID),
            id=workflow_id,
            id_conflict_policy=WorkflowIDConflictPolicy.USE_EXISTING,
            task_queue=task_queue,
        )
        cause = await refused(
            stack.client.execute_update_with_start_workflow(
                ScheduleWorkflow.publish_revision_update, literal, start_workflow_operation=start
            )
        )
        assert cause.details[0]["field"] == "action.parameters.headers.X-Upstream"
        assert cause.details[0]["value"] == "<redacted>"
        assert CANARY not in str(cause)
        handle = stack.client.get_workflow_handle(workflow_id)
        assert CANARY not in await history_text(handle)

        # The Python client, with a spec built without load_spec: refused before sending.
        settings = AlmanacSettings(temporal=TemporalSettings(task_queue=task_queue))
        client = AlmanacClient(stack.client, settings)
        valid = spec_data(url, cutover, 1, **{"X-Team": "ops"})
        with pytest.raises(InvalidSpec) as raised:
            await client.apply(ScheduleSpecV1.model_validate(literal))
        assert CANARY not in str(raised.value)

        # A running schedule: the valid spec is applied, then the literal as revision 2.
        assert (await client.apply(ScheduleSpecV1.model_validate(valid))).verdict.accepted
        cause = await refused(
            handle.execute_update(
                ScheduleWorkflow.publish_revision_update,
                spec_data(url, cutover, 2, **{"X-Upstream": f"Bearer {CANARY}"}),
            )
        )
        assert CANARY not in str(cause)
        history = await history_text(handle)
        assert "X-Team" in history  # non-vacuous: the accepted spec is there
        assert CANARY not in history
        assert CANARY not in ledger_text(tmp_path / "ledger.sqlite3")
        await handle.terminate("proof done")


async def test_a_literal_secret_by_signal_is_refused_and_goes_no_further(
    dev_env: WorkflowEnvironment, tmp_path: Path, task_queue: str
) -> None:
    async with running_stack(dev_env, tmp_path, task_queue) as stack:
        now = await dev_env.get_current_time()
        cutover = format_instant((now - timedelta(hours=1)).replace(microsecond=0))
        url = f"{stack.sink.url}/effects"
        settings = AlmanacSettings(temporal=TemporalSettings(task_queue=task_queue))
        client = AlmanacClient(stack.client, settings)
        valid = spec_data(url, cutover, 1, **{"X-Team": "ops"})
        assert (await client.apply(ScheduleSpecV1.model_validate(valid))).verdict.accepted
        handle = client.handle(SID)

        literal = spec_data(url, cutover, 2, **{"X-Upstream": f"Bearer {CANARY}"})
        await handle.signal(ScheduleWorkflow.publish_revision, literal)
        status = await eventually(
            lambda: try_query(handle, ScheduleWorkflow.status),
            lambda s: s is not None and s.rejected_signals == 1,
            timeout=30,
        )
        assert "action.parameters.headers.X-Upstream=<redacted>" in status.last_rejected_signal
        assert CANARY not in status.last_rejected_signal

        history = await handle.fetch_history()
        signaled = [
            e for e in history.events if e.HasField("workflow_execution_signaled_event_attributes")
        ]
        assert len(signaled) == 1 and CANARY in str(signaled[0])  # Temporal recorded it as sent
        after = [e for e in history.events if e.event_id > signaled[0].event_id]
        assert after and not any(CANARY in str(e) for e in after)
        assert CANARY not in ledger_text(tmp_path / "ledger.sqlite3")
        assert any(
            e.HasField("marker_recorded_event_attributes") and "almanac-signal-secrets" in str(e)
            for e in after
        )
        await handle.terminate("proof done")
        await record_history(stack.client, handle.id, "schedule-signal-secret-refused")
