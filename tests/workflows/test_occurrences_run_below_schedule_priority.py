"""On the dev server, occurrence workflows run at a lower task-queue priority than schedules.

``workflows.schedule_release.OCCURRENCE_PRIORITY``: in a backlog (a catch-up after an outage)
Temporal's matching service hands out every schedule's own tasks (materialize, decide misfires,
apply a disable) before the occurrences' (Temporal's Priority: lower key first, default 3; a child
and its activities inherit the priority it was started with). This checks the part that is
Almanac's: the priority each workflow is started with, as the server recorded it.
"""

from __future__ import annotations

from datetime import UTC, datetime, timedelta
from pathlib import Path

import pytest
from stack import running_stack
from temporalio.testing import WorkflowEnvironment

from workflows.schedule_release import OCCURRENCE_PRIORITY

pytestmark = [pytest.mark.anyio, pytest.mark.temporal, pytest.mark.slow]


async def test_occurrences_start_at_priority_4_and_schedules_at_the_default(
    dev_env: WorkflowEnvironment, tmp_path: Path, task_queue: str
) -> None:
    assert OCCURRENCE_PRIORITY.priority_key == 4  # below the default 3 (seed: materialize first)
    async with running_stack(dev_env, tmp_path, task_queue) as stack:
        now = datetime.now(UTC)
        stop = now + timedelta(seconds=6)
        spec = {
            "schema": "scheduleSpec.v1",
            "scheduleId": "priority-5s",
            "revision": 1,
            "timeZone": "Etc/UTC",
            "tzdbVersion": "2026a",
            "rule": "FREQ=SECONDLY;INTERVAL=5",
            "cutoverAt": f"{now - timedelta(minutes=1):%Y-%m-%dT%H:%M:%SZ}",
        }
        handle = await stack.start_schedule(
            stack.spec(spec), simulate_from=now, stop_after=stop, horizon_seconds=60.0
        )
        await handle.result()
        ran = [r.occurrence_id for r in stack.occurrences("priority-5s", to_utc=stop)]
        assert ran
        started = (
            (await handle.fetch_history()).events[0].workflow_execution_started_event_attributes
        )
        assert started.priority.priority_key == 0  # unset: the server's default, 3
        for occurrence_id in ran:
            child = stack.client.get_workflow_handle(occurrence_id)
            await child.result()
            events = (await child.fetch_history()).events
            attributes = events[0].workflow_execution_started_event_attributes
            assert attributes.priority.priority_key == 4, occurrence_id
