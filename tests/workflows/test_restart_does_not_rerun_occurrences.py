"""Restarting a schedule workflow (terminate, start again on the same ledger) re-runs nothing.

Hourly UTC from 00:30Z. 01:00 runs and SUCCEEDS. At 01:30Z a rollback moves the gate to an
implementation alias no worker runs, so the 02:00 occurrence's workflow goes to that alias's task
queue (``activities.io.alias_task_queue``); a misrouted worker of the default alias polls it and
is refused its claim (the claim checks the alias), so it completes, leaving the row DUE (DESIGN §5:
a rollback stops new claims). Then the schedule workflow
is terminated and started again: the ledger never releases the SUCCEEDED 01:00 again, and the DUE
02:00 — whose workflow already completed — is not started again either (REJECT_DUPLICATE: the start
is refused, counted as a duplicate start, and the occurrence keeps its single run).
"""

from __future__ import annotations

from datetime import UTC, datetime, timedelta
from pathlib import Path

import pytest
from stack import running_stack, wait_until_sleeping
from temporal_env import eventually, start_time_skipping
from temporalio.client import WorkflowExecutionStatus

from activities.io import alias_task_queue
from ledger import OccurrenceState, SwitchKind, show_occurrence, switch_implementation

pytestmark = [pytest.mark.anyio, pytest.mark.temporal, pytest.mark.slow]

SCHEDULE_ID = "restarted"
DAY = datetime(2026, 12, 1, tzinfo=UTC)
SPEC = {
    "schema": "scheduleSpec.v1",
    "scheduleId": SCHEDULE_ID,
    "revision": 1,
    "timeZone": "Etc/UTC",
    "tzdbVersion": "2026a",
    "rule": "FREQ=HOURLY;BYMINUTE=0",
    "misfirePolicy": "SKIP",
    "cutoverAt": "2026-11-30T00:00:00Z",
}
ONE = f"{SCHEDULE_ID}.r1.20261201T010000.f0"
TWO = f"{SCHEDULE_ID}.r1.20261201T020000.f0"


async def test_restarted_schedule_reruns_no_occurrence(tmp_path: Path) -> None:
    env = await start_time_skipping()
    try:
        phantom = alias_task_queue("restart", "nobody-runs-this")
        async with running_stack(env, tmp_path, "restart", extra_task_queues=(phantom,)) as stack:
            horizon = timedelta(hours=6).total_seconds()
            first = await stack.start_schedule(
                stack.spec(SPEC),
                simulate_from=DAY + timedelta(minutes=30),
                stop_after=DAY + timedelta(hours=6),
                horizon_seconds=horizon,
            )
            await env.sleep(timedelta(hours=1))  # → 01:30Z
            await eventually(
                lambda: _state(stack.ledger, ONE), lambda s: s is OccurrenceState.SUCCEEDED
            )
            now = await stack.simulated_now(first)
            switch_implementation(
                stack.ledger,
                SCHEDULE_ID,
                "nobody-runs-this",
                now,
                kind=SwitchKind.ROLLBACK,
                by="test",
                reason="test: no worker runs the target alias",
                id_formats=frozenset({1}),
            )
            await env.sleep(timedelta(hours=1))  # → 02:30Z
            two = stack.client.get_workflow_handle(TWO)
            await eventually(two.describe, lambda d: d.status is WorkflowExecutionStatus.COMPLETED)
            assert await _state(stack.ledger, TWO) is OccurrenceState.DUE
            runs = {
                oid: (await stack.client.get_workflow_handle(oid).describe()).run_id
                for oid in (ONE, TWO)
            }

            # Terminated mid-task, the test server sometimes never skipped time again (seen here
            # 1 run in 3: the next result() hung); terminate an idle run.
            await wait_until_sleeping(first)
            await first.terminate(reason="test: restart the schedule workflow")
            second = await stack.start_schedule(
                stack.spec(SPEC),
                simulate_from=await stack.simulated_now(first),
                stop_after=DAY + timedelta(hours=3, minutes=30),
                horizon_seconds=horizon,
            )
            status = await second.result()
            assert status.duplicate_starts == 1  # the completed 02:00, refused by Temporal
            assert await _state(stack.ledger, ONE) is OccurrenceState.SUCCEEDED
            assert await _state(stack.ledger, TWO) is OccurrenceState.DUE
            for oid, run_id in runs.items():
                described = await stack.client.get_workflow_handle(oid).describe()
                assert described.run_id == run_id
            effects = stack.sink.effects()
            assert [(e.idempotency_key, e.delivery_count) for e in effects] == [(ONE, 1)]
            assert len(show_occurrence(stack.ledger, ONE).attempts) == 1
    finally:
        await env.shutdown()


async def _state(ledger_, occurrence_id: str) -> OccurrenceState:  # type: ignore[no-untyped-def]
    return show_occurrence(ledger_, occurrence_id).occurrence.state
