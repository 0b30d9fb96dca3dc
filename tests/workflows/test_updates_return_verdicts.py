"""Changes by Temporal update return the ledger's verdict; validators keep bad ones out of history.

An hourly UTC schedule (lateness PT5M, CATCH_UP_BOUNDED with maxCatchUp 1) runs in skipped time
from 00:30Z. Expectations from the spec text and DESIGN §3–4, not from the code:

- 01:00 runs. At 01:30 ``disable`` answers gate generation 1 (a second one: unchanged, still 1).
- 02:00 and 03:00 pass while disabled. At 03:30 ``enable`` answers generation 2 and says two came
  due; both are more than PT5M late, so the bound runs the most recent (03:00) and expires 02:00.
- The active revision published again is harmless (the ledger answers "unchanged"); revision 2
  with a cutover before "now" is refused by the ledger, naming ``cutoverAt`` and its value.
- ``delete`` cancels every occurrence not yet dispatched, keeps every row, and the workflow
  completes.

The time-skipping test server (temporal-test-server 1.40) supports updates and update-with-start
(checked); it does not skip time while a client waits on an update, which the loop does not need.
"""

from __future__ import annotations

import logging
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import pytest
from stack import Stack, record_history, running_stack, wait_until_sleeping
from temporal_env import eventually, start_time_skipping
from temporalio.client import WorkflowExecutionStatus, WorkflowHandle, WorkflowUpdateFailedError
from temporalio.exceptions import ApplicationError

from activities import io
from ledger import OccurrenceState, get_gate, list_occurrences, schedule_events
from workflows import ScheduleWorkflow
from workflows.contracts import DeleteInput, DisableInput

pytestmark = [pytest.mark.anyio, pytest.mark.temporal, pytest.mark.slow]

SID = "verdicts"
DAY = datetime(2026, 12, 1, tzinfo=UTC)
STOP = DAY + timedelta(hours=8)


def spec(revision: int = 1, **overrides: Any) -> dict[str, Any]:
    return {
        "schema": "scheduleSpec.v1",
        "scheduleId": SID,
        "revision": revision,
        "timeZone": "Etc/UTC",
        "tzdbVersion": "2026a",
        "rule": "FREQ=HOURLY;BYMINUTE=0",
        "misfirePolicy": "CATCH_UP_BOUNDED",
        "maxCatchUp": 1,
        "lateness": "PT5M",
        "cutoverAt": "2026-11-30T00:00:00Z",
        **overrides,
    }


def states(stack: Stack) -> dict[int, OccurrenceState]:
    rows = stack.occurrences(SID, to_utc=DAY + timedelta(hours=4))
    return {r.instant_utc.hour: r.state for r in rows if r.instant_utc is not None}


async def _async(value: Any) -> Any:
    return value


async def refused(call: Any) -> tuple[str, Any, str]:
    """The validator's refusal: (field, value, message)."""
    with pytest.raises(WorkflowUpdateFailedError) as failed:
        await call
    cause = failed.value.cause
    assert isinstance(cause, ApplicationError) and cause.type == "InvalidUpdate"
    details = cause.details[0]
    return details["field"], details["value"], cause.message


async def updates_in_history(handle: WorkflowHandle[Any, Any]) -> list[str]:
    history = await handle.fetch_history()
    return [
        e.workflow_execution_update_accepted_event_attributes.accepted_request.input.name
        for e in history.events
        if e.HasField("workflow_execution_update_accepted_event_attributes")
    ]


async def test_updates_answer_with_the_ledgers_verdict_and_delete_ends_the_run(
    tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    caplog.set_level(logging.WARNING, logger="temporalio.workflow")
    env = await start_time_skipping()
    try:
        async with running_stack(env, tmp_path, "verdicts") as stack:
            handle = await stack.start_schedule(
                stack.spec(spec()),
                simulate_from=DAY + timedelta(minutes=30),
                stop_after=STOP,
                horizon_seconds=timedelta(hours=6).total_seconds(),
            )
            await env.sleep(timedelta(hours=1))  # → 01:30Z
            await eventually(
                lambda: _async(states(stack)), lambda s: s.get(1) is OccurrenceState.SUCCEEDED
            )
            await wait_until_sleeping(handle)

            field, value, message = await refused(
                handle.execute_update(ScheduleWorkflow.disable_update, DisableInput("  "))
            )
            assert (field, value) == ("reason", "  ") and "non-empty reason" in message
            field, value, message = await refused(
                handle.execute_update(ScheduleWorkflow.disable_update, DisableInput("x", by=" "))
            )
            assert (field, value) == ("by", " ") and "who decides" in message
            assert await updates_in_history(handle) == []  # refused before history

            off = await handle.execute_update(
                ScheduleWorkflow.disable_update, DisableInput("maintenance window")
            )
            assert (off.changed, off.gate.disabled, off.gate.disable_generation) == (True, True, 1)
            assert off.cancelled == 0
            again = await handle.execute_update(
                ScheduleWorkflow.disable_update, DisableInput("maintenance window")
            )
            assert (again.changed, again.gate.disable_generation) == (False, 1)

            await wait_until_sleeping(handle)
            await env.sleep(timedelta(hours=2))  # → 03:30Z: 02:00 and 03:00 passed, disabled
            await wait_until_sleeping(handle)
            on: io.ChangeGateResult = await handle.execute_update(ScheduleWorkflow.enable_update)
            assert (on.changed, on.gate.disabled, on.gate.disable_generation) == (True, False, 2)
            assert (on.came_due, on.released, on.expired) == (2, 1, 1)
            assert on.misfire_policy == "CATCH_UP_BOUNDED (maxCatchUp 1), lateness PT5M"
            await eventually(
                lambda: _async(states(stack)), lambda s: s.get(3) is OccurrenceState.SUCCEEDED
            )
            assert states(stack)[2] is OccurrenceState.MISFIRE_EXPIRED

            same = await handle.execute_update(
                ScheduleWorkflow.publish_revision_update, stack.spec(spec())
            )
            assert same.accepted and not same.created  # the active revision again: unchanged
            past = stack.spec(spec(2, cutoverAt="2026-12-01T02:00:00Z"))
            verdict = await handle.execute_update(ScheduleWorkflow.publish_revision_update, past)
            assert not verdict.accepted and verdict.schedule_live
            assert (verdict.field, verdict.value) == ("cutoverAt", "2026-12-01T02:00:00Z")
            # The worker log says how the refused change came: by update, not by signal.
            logged = [r.getMessage() for r in caplog.records]
            assert any("rejected update publish_revision: revision rejected" in m for m in logged)
            assert not any("rejected signal publish_revision" in m for m in logged)
            assert get_gate(stack.ledger, SID).active_revision == 1
            assert (await handle.describe()).status is WorkflowExecutionStatus.RUNNING

            await wait_until_sleeping(handle)
            undispatched = {
                o.occurrence_id
                for o in list_occurrences(stack.ledger, SID)
                if o.state
                in (OccurrenceState.PLANNED, OccurrenceState.DUE, OccurrenceState.RETRY_WAIT)
            }
            assert undispatched
            before = {o.occurrence_id for o in list_occurrences(stack.ledger, SID)}
            gone: io.DeleteScheduleResult = await handle.execute_update(
                ScheduleWorkflow.delete_update, DeleteInput("retired")
            )
            assert gone.deleted and gone.cancelled == len(undispatched)
            assert gone.gate.deleted_at_utc is not None and gone.gate.disabled
            final = await handle.result()
            assert final.deleted
            after = {o.occurrence_id: o for o in list_occurrences(stack.ledger, SID)}
            assert after.keys() == before  # the ledger keeps every fact
            for oid in undispatched:
                assert after[oid].state is OccurrenceState.CANCELLED
                assert after[oid].state_reason == "deleted: retired"
            kinds = [e.kind for e in schedule_events(stack.ledger, SID)]
            assert kinds == [
                "PUBLISHED",
                "DISABLED",
                "ENABLED",
                "REVISION_REJECTED",
                "DELETED",
            ]
            assert await updates_in_history(handle) == [
                "disable",
                "disable",
                "enable",
                "publish_revision",
                "publish_revision",
                "delete",
            ]
            await record_history(stack.client, handle.id, "schedule-updates-then-delete")
    finally:
        await env.shutdown()
