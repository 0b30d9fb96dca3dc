"""Isolation: the densest supported schedule delays neither other schedules nor commands.

The property (README, *Density and isolation*): with a schedule at the densest supported density
applied on the same worker, a control command — a ``disable`` of another schedule, a ``delete``
of the dense schedule itself — returns its verdict within :data:`CONTROL_BOUND`, and at most
:data:`CONTROL_FACTOR` times the same command on the quiet worker (whichever is larger); and
the other schedule's occurrences keep starting within :data:`DISPATCH_BOUND` of their instants.

The dense schedule is written through BYxxx lists (``FREQ=DAILY`` with every hour, every minute
and every other second): 30 a minute, the bound itself, with a rule period of a day, so a
look-ahead sized in periods would be 2,000 days (86 million occurrences) and one materialization
would hold the schedule's workflow, and a worker thread, for as long as it runs. Real time on the
dev server: the commands' latencies are what an operator waits.
"""

from __future__ import annotations

import time
from collections.abc import Awaitable
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any, TypeVar

import anyio
import pytest
from stack import Stack, running_stack, wait_until_sleeping
from temporal_env import eventually
from temporalio.testing import WorkflowEnvironment

from activities.ledger_activities import MATERIALIZE_LIMIT
from ledger import OccurrenceState, show_occurrence
from workflows import ScheduleWorkflow
from workflows.contracts import DeleteInput, DisableInput

pytestmark = [pytest.mark.anyio, pytest.mark.temporal, pytest.mark.slow]

T = TypeVar("T")
DAY = datetime(2026, 12, 1, 9, tzinfo=UTC)
EVERY_OTHER_SECOND = ",".join(str(s) for s in range(0, 60, 2))
DENSE_RULE = (
    f"FREQ=DAILY;BYHOUR={','.join(map(str, range(24)))};"
    f"BYMINUTE={','.join(map(str, range(60)))};BYSECOND={EVERY_OTHER_SECOND}"
)
QUIET_RULE = "FREQ=SECONDLY;INTERVAL=5"
CONTROL_BOUND = 15.0
"""Seconds a control command may take with the dense schedule applied, unless 10× the quiet
figure is more (measured here: 0.05–0.12 s quiet, 0.3 s disable and 0.9 s delete with it)."""
CONTROL_FACTOR = 10
DISPATCH_BOUND = timedelta(seconds=5)
"""The other schedule's lag: its occurrence's RUNNING event minus its instant (measured: 0.1–0.3 s
with the dense schedule applied; 22 s when the dense look-ahead was sized in periods)."""


def spec(schedule_id: str, rule: str) -> dict[str, Any]:
    return {
        "schema": "scheduleSpec.v1",
        "scheduleId": schedule_id,
        "revision": 1,
        "timeZone": "UTC",
        "tzdbVersion": "2026a",
        "rule": rule,
        "misfirePolicy": "SKIP",
        "cutoverAt": "2026-12-01T08:00:00Z",
    }


async def timed(call: Awaitable[T]) -> tuple[T, float]:
    """``call``'s result and its seconds; fails the test past ``CONTROL_BOUND`` (no hang)."""
    started = time.monotonic()
    with anyio.fail_after(CONTROL_BOUND):
        result = await call
    return result, time.monotonic() - started


async def start(stack: Stack, schedule_id: str, rule: str) -> Any:
    return await stack.start_schedule(
        stack.spec(spec(schedule_id, rule)),
        simulate_from=DAY,
        stop_after=DAY + timedelta(minutes=20),
    )


def started_lags(stack: Stack, after: datetime) -> list[timedelta]:
    """The quiet schedule's succeeded occurrences after ``after``: RUNNING event minus instant."""
    lags = []
    for row in stack.occurrences("quiet", from_utc=after, states=[OccurrenceState.SUCCEEDED]):
        assert row.instant_utc is not None
        events = show_occurrence(stack.ledger, row.occurrence_id).events
        running = next(e.at_utc for e in events if e.to_state == OccurrenceState.RUNNING.value)
        lags.append(running - row.instant_utc)
    return lags


async def test_dense_schedule_delays_neither_commands_nor_other_schedules(
    dev_env: WorkflowEnvironment, tmp_path: Path, task_queue: str
) -> None:
    async with running_stack(dev_env, tmp_path, task_queue) as stack:
        quiet = await start(stack, "quiet", QUIET_RULE)
        await wait_until_sleeping(quiet)
        # The quiet worker's figure for the same command (also bounded, so no test hangs).
        _, quiet_disable = await timed(
            quiet.execute_update(ScheduleWorkflow.disable_update, DisableInput("quiet figure"))
        )
        await timed(quiet.execute_update(ScheduleWorkflow.enable_update))
        bound = max(CONTROL_BOUND, CONTROL_FACTOR * quiet_disable)

        dense = await start(stack, "dense", DENSE_RULE)
        # The dense schedule's first materialization is under way (or done): commands now.
        applied_at = await stack.simulated_now(dense)
        verdict, disable_took = await timed(
            quiet.execute_update(ScheduleWorkflow.disable_update, DisableInput("isolation"))
        )
        assert verdict.changed and disable_took <= bound
        _, enable_took = await timed(quiet.execute_update(ScheduleWorkflow.enable_update))
        assert enable_took <= bound
        enabled_at = await stack.simulated_now(quiet)

        # The quiet schedule keeps dispatching on time next to the dense one.
        lags = await eventually(
            lambda: anyio.to_thread.run_sync(started_lags, stack, enabled_at),
            lambda found: len(found) >= 3,
            timeout=60.0,
        )
        assert max(lags) <= DISPATCH_BOUND, lags

        # A delete of the dense schedule itself is answered as promptly.
        gone, delete_took = await timed(
            dense.execute_update(ScheduleWorkflow.delete_update, DeleteInput("isolation"))
        )
        assert gone.gate.deleted_at_utc is not None and delete_took <= bound
        # Its look-ahead was bounded in occurrences, not in days.
        written = len(stack.occurrences("dense", from_utc=applied_at - timedelta(minutes=1)))
        assert 0 < written <= MATERIALIZE_LIMIT
