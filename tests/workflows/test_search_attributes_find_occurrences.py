"""On the dev server, a schedule's occurrence workflows are found by their search attributes.

DESIGN §5: ``temporal workflow list --query 'ScheduleId="…"'`` and the client's ``list_workflows``
find a schedule's occurrences (visibility is eventually consistent, hence ``eventually``).
"""

from __future__ import annotations

import json
import subprocess
from datetime import UTC, datetime, timedelta
from pathlib import Path

import pytest
from stack import running_stack
from temporal_env import binary, eventually
from temporalio.client import Client
from temporalio.testing import WorkflowEnvironment

pytestmark = [pytest.mark.anyio, pytest.mark.temporal, pytest.mark.slow]

SCHEDULE_ID = "every-5-seconds-visible"


async def listed(client: Client, query: str) -> set[str]:
    return {w.id async for w in client.list_workflows(query)}


async def test_occurrences_are_listed_by_schedule_id(
    dev_env: WorkflowEnvironment, tmp_path: Path, task_queue: str
) -> None:
    async with running_stack(dev_env, tmp_path, task_queue) as stack:
        now = datetime.now(UTC)
        stop = now + timedelta(seconds=11)
        spec = {
            "schema": "scheduleSpec.v1",
            "scheduleId": SCHEDULE_ID,
            "revision": 2,
            "timeZone": "Etc/UTC",
            "tzdbVersion": "2026a",
            "rule": "FREQ=SECONDLY;INTERVAL=5",
            "cutoverAt": f"{now - timedelta(minutes=1):%Y-%m-%dT%H:%M:%SZ}",
        }
        handle = await stack.start_schedule(
            stack.spec(spec), simulate_from=now, stop_after=stop, horizon_seconds=60.0
        )
        await handle.result()
        ran = {r.occurrence_id for r in stack.occurrences(SCHEDULE_ID, to_utc=stop)}
        assert len(ran) >= 2
        query = f'ScheduleId="{SCHEDULE_ID}"'
        await eventually(lambda: listed(stack.client, query), lambda ids: ids == ran)
        some = sorted(ran)[0]
        nominal = some.split(".")[2]  # 20261130T112240 → 2026-11-30T11:22:40
        local = datetime.strptime(nominal, "%Y%m%dT%H%M%S").isoformat()
        narrow = f'{query} AND Revision=2 AND NominalLocal="{local}"'
        assert await listed(stack.client, narrow) == {some}
        done = await eventually(
            lambda: listed(stack.client, f'{query} AND OccurrenceState="SUCCEEDED"'),
            lambda ids: ids == ran,
        )
        assert done == ran

        address = stack.client.service_client.config.target_host
        command = [binary("temporal"), "workflow", "list", "--address", address]
        command += ["--namespace", stack.client.namespace, "--query", query, "--output", "json"]
        result = subprocess.run(command, capture_output=True, text=True, check=True, timeout=30)
        found = {w["execution"]["workflowId"] for w in _json_lines(result.stdout)}
        assert found == ran


def _json_lines(text: str) -> list[dict]:  # type: ignore[type-arg]
    text = text.strip()
    if text.startswith("["):
        return list(json.loads(text))
    return [json.loads(line) for line in text.splitlines() if line.strip()]
