"""A wake-up that releases an occurrence starts its child in the same workflow task.

Dispatch lag (issue 14) is the time from an instant to its child's start. Past the patch
``almanac-local-release`` the path is: the timer's workflow task runs the release (the ledger's
compare-and-set to DUE) as a local activity and completes with the child start and the follow-up
``almanac.materialize`` activity scheduled together; no release activity task (scheduled by one
task, dispatched by the server, completed into another) and no materialization before the
start. Checked on the history of a real run on the time-skipping server, so the assertion is
about the commands the workflow issued, not about the code's structure.
"""

from __future__ import annotations

import json
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import pytest
from stack import running_stack
from temporal_env import start_time_skipping
from temporalio.api.enums.v1 import EventType

from activities import io
from ledger import OccurrenceState

pytestmark = [pytest.mark.anyio, pytest.mark.temporal]

SCHEDULE_ID = "every-ten-minutes"
SPEC = {
    "schema": "scheduleSpec.v1",
    "scheduleId": SCHEDULE_ID,
    "revision": 1,
    "timeZone": "UTC",
    "tzdbVersion": "2026a",
    "rule": "FREQ=MINUTELY;INTERVAL=10",
    "misfirePolicy": "SKIP",
    "cutoverAt": "2026-10-31T00:00:00Z",
}
SIMULATE_FROM = datetime(2026, 11, 1, 0, 5, tzinfo=UTC)
STOP = datetime(2026, 11, 1, 0, 45, tzinfo=UTC)  # instants 00:10, 00:20, 00:30, 00:40
RAN = 4


LOCAL_ACTIVITY_MARKER = "core_local_activity"
"""The marker a local activity's result is recorded in (Temporal's SDK core)."""


def _marker_data(attributes: Any) -> bytes:
    return b"".join(p.data for v in attributes.details.values() for p in v.payloads)


def _input(attributes: Any) -> dict[str, Any]:
    decoded: dict[str, Any] = json.loads(attributes.input.payloads[0].data)
    return decoded


async def test_a_released_child_is_started_by_the_task_that_released_it(
    tmp_path: Path,
) -> None:
    env = await start_time_skipping()
    try:
        async with running_stack(env, tmp_path, "starts-first") as stack:
            handle = await stack.start_schedule(
                stack.spec(SPEC),
                simulate_from=SIMULATE_FROM,
                stop_after=STOP,
                horizon_seconds=timedelta(hours=1).total_seconds(),
            )
            await handle.result()
            ran = stack.occurrences(SCHEDULE_ID, to_utc=STOP)
            assert [r.state for r in ran] == [OccurrenceState.SUCCEEDED] * RAN
            history = await handle.fetch_history()
    finally:
        await env.shutdown()

    scheduled = {
        e.event_id: e.activity_task_scheduled_event_attributes
        for e in history.events
        if e.event_type == EventType.EVENT_TYPE_ACTIVITY_TASK_SCHEDULED
    }
    released_by_task = {
        e.marker_recorded_event_attributes.workflow_task_completed_event_id
        for e in history.events
        if e.event_type == EventType.EVENT_TYPE_MARKER_RECORDED
        and e.marker_recorded_event_attributes.marker_name == LOCAL_ACTIVITY_MARKER
        and io.RELEASE_DUE.encode() in _marker_data(e.marker_recorded_event_attributes)
    }
    readings_by_task = {
        a.workflow_task_completed_event_id
        for a in scheduled.values()
        if a.activity_type.name == io.MATERIALIZE
    }
    started_by_task = [
        e.start_child_workflow_execution_initiated_event_attributes.workflow_task_completed_event_id
        for e in history.events
        if e.event_type == EventType.EVENT_TYPE_START_CHILD_WORKFLOW_EXECUTION_INITIATED
    ]
    assert len(started_by_task) == RAN
    # Every start goes out in the task that released it and scheduled the follow-up reading ...
    assert all(task in released_by_task for task in started_by_task)
    assert all(task in readings_by_task for task in started_by_task)
    # ... and no release activity task was asked to materialize after releasing.
    releases = [a for a in scheduled.values() if a.activity_type.name == io.RELEASE_DUE]
    assert all(_input(a).get("then_materialize") is None for a in releases)
