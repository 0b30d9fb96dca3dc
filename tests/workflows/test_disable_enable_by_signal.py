"""Disable and enable by signal, in skipped time; malformed signals are rejected, never fatal.

Two hourly UTC schedules (lateness PT5M) run side by side from 00:30Z. At 01:30Z both are
disabled; at 03:30Z both are enabled again. Expectations, from the spec text and DESIGN §4:

- 01:00 ran before the disable; 02:00 and 03:00 pass while disabled and do not run then.
- On enable, both are more than ``lateness`` overdue, so the misfire policy decides: ``SKIP``
  expires both (MISFIRE_EXPIRED); ``CATCH_UP_BOUNDED`` with maxCatchUp 1 runs the most recent
  one (03:00) and expires the other.
- 04:00 and 05:00 run normally. Disable and enable each bump the gate's disable generation.
"""

from __future__ import annotations

from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import pytest
from stack import Stack, record_history, running_stack, try_query, wait_until_sleeping
from temporal_env import eventually, start_time_skipping
from temporalio.client import WorkflowExecutionStatus, WorkflowHandle

from ledger import OccurrenceState, get_gate
from workflows import ScheduleWorkflow

pytestmark = [pytest.mark.anyio, pytest.mark.temporal, pytest.mark.slow]

DAY = datetime(2026, 12, 1, tzinfo=UTC)
SIMULATE_FROM = DAY + timedelta(minutes=30)
STOP = DAY + timedelta(hours=5, minutes=30)


def spec(schedule_id: str, **policy: Any) -> dict[str, Any]:
    return {
        "schema": "scheduleSpec.v1",
        "scheduleId": schedule_id,
        "revision": 1,
        "timeZone": "Etc/UTC",
        "tzdbVersion": "2026a",
        "rule": "FREQ=HOURLY;BYMINUTE=0",
        "lateness": "PT5M",
        "cutoverAt": "2026-11-30T00:00:00Z",
        **policy,
    }


def oid(schedule_id: str, hour: int) -> str:
    return f"{schedule_id}.r1.{DAY + timedelta(hours=hour):%Y%m%dT%H%M%S}.f0"


def states(stack: Stack, schedule_id: str) -> dict[int, OccurrenceState]:
    rows = stack.occurrences(schedule_id, to_utc=STOP)
    return {r.instant_utc.hour: r.state for r in rows if r.instant_utc is not None}


async def status(handle: WorkflowHandle[ScheduleWorkflow, Any]) -> Any:
    return await try_query(handle, ScheduleWorkflow.status)


async def test_disable_enable_by_signal_then_the_misfire_policy_decides(tmp_path: Path) -> None:
    env = await start_time_skipping()
    try:
        async with running_stack(env, tmp_path, "disable-enable") as stack:
            skip = await stack.start_schedule(
                stack.spec(spec("gate-skip", misfirePolicy="SKIP")),
                simulate_from=SIMULATE_FROM,
                stop_after=STOP,
                horizon_seconds=timedelta(hours=12).total_seconds(),
            )
            catch_up = await stack.start_schedule(
                stack.spec(spec("gate-catch-up", misfirePolicy="CATCH_UP_BOUNDED", maxCatchUp=1)),
                simulate_from=SIMULATE_FROM,
                stop_after=STOP,
                horizon_seconds=timedelta(hours=12).total_seconds(),
            )
            handles = {"gate-skip": skip, "gate-catch-up": catch_up}

            await env.sleep(timedelta(hours=1))  # → 01:30Z
            for sid in handles:
                await eventually(
                    lambda sid=sid: _async(states(stack, sid)),
                    lambda s: s.get(1) is OccurrenceState.SUCCEEDED,
                )
            for handle in handles.values():
                await wait_until_sleeping(handle)
                await handle.signal("disable", {"reason": "maintenance window"})
            # Malformed signals: recorded and rejected; the workflow keeps running.
            await skip.signal("disable", {})
            await skip.signal("publish_revision", "not a spec")
            for handle in handles.values():
                disabled = await eventually(
                    lambda h=handle: status(h),
                    lambda s: s is not None and s.gate is not None and s.gate.disabled,
                )
                assert disabled.gate.disabled_reason == "maintenance window"
            rejected = await status(skip)
            assert rejected.rejected_signals == 2
            assert rejected.last_rejected_signal.startswith("publish_revision: needs a spec")
            assert (await status(catch_up)).rejected_signals == 0
            for sid in handles:
                gate = get_gate(stack.ledger, sid)
                assert (gate.disabled, gate.disable_generation) == (True, 1)

            await env.sleep(timedelta(hours=2))  # → 03:30Z: 02:00 and 03:00 passed, disabled
            for sid in handles:
                assert states(stack, sid) == {
                    1: OccurrenceState.SUCCEEDED,
                    2: OccurrenceState.PLANNED,
                    3: OccurrenceState.PLANNED,
                    4: OccurrenceState.PLANNED,
                    5: OccurrenceState.PLANNED,
                }
            assert {e.idempotency_key for e in stack.sink.effects()} == {
                oid("gate-skip", 1),
                oid("gate-catch-up", 1),
            }
            for handle in handles.values():
                described = await handle.describe()
                assert described.status is WorkflowExecutionStatus.RUNNING
                await wait_until_sleeping(handle)
                await handle.signal("enable")

            for handle in handles.values():
                await handle.result()
            assert states(stack, "gate-skip") == {
                1: OccurrenceState.SUCCEEDED,
                2: OccurrenceState.MISFIRE_EXPIRED,
                3: OccurrenceState.MISFIRE_EXPIRED,
                4: OccurrenceState.SUCCEEDED,
                5: OccurrenceState.SUCCEEDED,
            }
            assert states(stack, "gate-catch-up") == {
                1: OccurrenceState.SUCCEEDED,
                2: OccurrenceState.MISFIRE_EXPIRED,
                3: OccurrenceState.SUCCEEDED,
                4: OccurrenceState.SUCCEEDED,
                5: OccurrenceState.SUCCEEDED,
            }
            for sid in handles:
                gate = get_gate(stack.ledger, sid)
                assert (gate.disabled, gate.disable_generation) == (False, 2)
            effects = stack.sink.effects()
            assert sorted(e.idempotency_key for e in effects) == sorted(
                [oid("gate-skip", h) for h in (1, 4, 5)]
                + [oid("gate-catch-up", h) for h in (1, 3, 4, 5)]
            )
            assert all(e.delivery_count == 1 for e in effects)
            await record_history(stack.client, skip.id, "schedule-disable-enable-skip")
    finally:
        await env.shutdown()


async def _async(value: Any) -> Any:
    return value
