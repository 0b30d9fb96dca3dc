"""A schedule every two seconds on a dev server in real time, and how its timers ran.

Shared by the tests of a schedule's timers (``almanac-early-wake``, ``almanac-on-time``): four
instants, 09:00:02 to 09:00:08 UTC of a simulated calendar mapped onto the server's clock, and a
reading of the run's history that says, for each timer, when the workflow task that asked for it
started, the instant it was asked for, and when the task it woke started.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from typing import Any

from stack import Stack
from temporalio.api.enums.v1 import EventType
from temporalio.client import WorkflowHandle, WorkflowHistory

DAY = datetime(2026, 12, 1, 9, tzinfo=UTC)
INSTANTS = [DAY + timedelta(seconds=s) for s in (2, 4, 6, 8)]
"""The rule's instants: ``FREQ=SECONDLY;INTERVAL=2`` from 09:00:02 to 09:00:08."""
TOLERANCE = timedelta(milliseconds=1)
"""Timer durations cross as protobuf durations and the offset as a float: sub-millisecond."""


def spec(schedule_id: str, **overrides: str) -> dict[str, str | int]:
    """The scheduleSpec.v1 data of the four instants (``overrides``: camelCase fields)."""
    return {
        "schema": "scheduleSpec.v1",
        "scheduleId": schedule_id,
        "revision": 1,
        "timeZone": "UTC",
        "tzdbVersion": "2026a",
        "rule": "FREQ=SECONDLY;INTERVAL=2",
        "start": "2026-12-01T09:00:02",
        "end": "2026-12-01T09:00:08",
        "misfirePolicy": "SKIP",
        "cutoverAt": "2026-12-01T08:00:00Z",
        **overrides,
    }


async def start(stack: Stack, data: dict[str, Any]) -> WorkflowHandle[Any, Any]:
    """Start the schedule half a second before 09:00 of its calendar, stopping at 09:00:10."""
    return await stack.start_schedule(
        stack.spec(data),
        simulate_from=DAY - timedelta(milliseconds=500),
        stop_after=DAY + timedelta(seconds=10),
        horizon_seconds=timedelta(hours=1).total_seconds(),
    )


@dataclass(frozen=True)
class Timer:
    """One timer of the run, on the simulated calendar (aware UTC)."""

    asked_at: datetime
    """When the workflow task that asked for it started (its ``workflow.now()``)."""
    target: datetime
    """``asked_at`` plus the duration asked for."""
    woke_at: datetime | None
    """When the workflow task after it fired started (``None``: it never fired)."""


def timers(history: WorkflowHistory, offset: timedelta) -> list[Timer]:
    """Every timer of ``history`` in order; ``offset``: the simulated clock minus the server's."""
    asked: dict[int, tuple[datetime, datetime]] = {}
    woke: dict[int, datetime] = {}
    task_started: datetime | None = None
    fired: int | None = None
    for event in history.events:
        at = event.event_time.ToDatetime().replace(tzinfo=UTC) + offset
        if event.event_type == EventType.EVENT_TYPE_WORKFLOW_TASK_STARTED:
            task_started = at
            if fired is not None:
                woke[fired], fired = at, None
        elif event.event_type == EventType.EVENT_TYPE_TIMER_STARTED:
            assert task_started is not None
            duration = event.timer_started_event_attributes.start_to_fire_timeout.ToTimedelta()
            asked[event.event_id] = (task_started, task_started + duration)
        elif event.event_type == EventType.EVENT_TYPE_TIMER_FIRED:
            fired = event.timer_fired_event_attributes.started_event_id
    return [Timer(at, target, woke.get(event_id)) for event_id, (at, target) in asked.items()]
