"""A schedule's timer fires before the instant, and nothing is released before it (issue 14).

Temporal starts a timer when the workflow task that asks for it completes, so a timer of
``instant - workflow.now()`` fires late by that task's processing time; past the patch
``almanac-early-wake`` the loop asks for ``io.RELEASE_LEAD`` less, and the release waits in the
activity until the worker's clock reaches the instant. On a dev server in real time (the clock of
work and the server's agree), checked three ways:

- the mechanism, from the history: every timer for an instant was asked to fire exactly the lead
  before it (the duration relative to its task's start, ``workflow.now()``), which holds however
  busy the machine is;
- the safety, from the ledger: every occurrence's ``PLANNED → DUE`` event is recorded at or after
  its instant (the DESIGN's event trail, stamped by the clock of work);
- and from the server: every occurrence workflow started at or after its instant.
"""

from __future__ import annotations

from datetime import UTC, datetime, timedelta
from pathlib import Path

import pytest
from stack import record_history, running_stack
from temporal_env import start_dev_server
from temporalio.api.enums.v1 import EventType

import ledger
from activities import io
from ledger import OccurrenceState

pytestmark = [pytest.mark.anyio, pytest.mark.temporal]

SCHEDULE_ID = "every-two-seconds"
DAY = datetime(2026, 12, 1, 9, tzinfo=UTC)
INSTANTS = [DAY + timedelta(seconds=s) for s in (2, 4, 6, 8)]
SPEC = {
    "schema": "scheduleSpec.v1",
    "scheduleId": SCHEDULE_ID,
    "revision": 1,
    "timeZone": "UTC",
    "tzdbVersion": "2026a",
    "rule": "FREQ=SECONDLY;INTERVAL=2",
    "start": "2026-12-01T09:00:02",
    "end": "2026-12-01T09:00:08",
    "misfirePolicy": "SKIP",
    "cutoverAt": "2026-12-01T08:00:00Z",
}
TOLERANCE = timedelta(milliseconds=1)
"""Timer durations cross as protobuf durations and the offset as a float: sub-millisecond."""


async def test_timers_fire_a_lead_early_and_releases_wait_for_the_instant(
    tmp_path: Path, task_queue: str
) -> None:
    env = await start_dev_server()
    try:
        async with running_stack(env, tmp_path, task_queue) as stack:
            handle = await stack.start_schedule(
                stack.spec(SPEC),
                simulate_from=DAY - timedelta(milliseconds=500),
                stop_after=DAY + timedelta(seconds=10),
                horizon_seconds=timedelta(hours=1).total_seconds(),
            )
            await handle.result()
            offset = stack.offset(handle)
            ran = stack.occurrences(SCHEDULE_ID)
            details = {
                o.occurrence_id: ledger.show_occurrence(stack.ledger, o.occurrence_id) for o in ran
            }
            history = await handle.fetch_history()
            await record_history(env.client, handle.id, "schedule-early-wake")
    finally:
        await env.shutdown()

    assert [(o.instant_utc, o.state) for o in ran] == [
        (i, OccurrenceState.SUCCEEDED) for i in INSTANTS
    ]
    # The safety: nothing became DUE before its instant, by the clock that recorded it.
    for detail in details.values():
        (due,) = [e for e in detail.events if e.to_state == OccurrenceState.DUE.value]
        assert detail.occurrence.instant_utc is not None
        assert due.at_utc >= detail.occurrence.instant_utc, detail.occurrence.occurrence_id

    # The mechanism: each instant's timer was asked for the lead before it, measured from the
    # start of the workflow task that asked (workflow.now(), here plus the simulation offset).
    task_started: datetime | None = None
    targets = []
    child_starts = {}
    for event in history.events:
        at = event.event_time.ToDatetime().replace(tzinfo=UTC) + offset
        if event.event_type == EventType.EVENT_TYPE_WORKFLOW_TASK_STARTED:
            task_started = at
        elif event.event_type == EventType.EVENT_TYPE_TIMER_STARTED:
            assert task_started is not None
            duration = event.timer_started_event_attributes.start_to_fire_timeout.ToTimedelta()
            targets.append(task_started + duration)
        elif event.event_type == EventType.EVENT_TYPE_CHILD_WORKFLOW_EXECUTION_STARTED:
            started = event.child_workflow_execution_started_event_attributes
            child_starts[started.workflow_execution.workflow_id] = at
    for instant in INSTANTS:
        early = instant - io.RELEASE_LEAD
        assert any(abs(t - early) <= TOLERANCE for t in targets), (instant, targets)
    assert not any(abs(t - i) <= TOLERANCE for t in targets for i in INSTANTS)
    # The server started each occurrence at or after its instant.
    assert len(child_starts) == len(INSTANTS)
    for occurrence_id, started_at in child_starts.items():
        instant = details[occurrence_id].occurrence.instant_utc
        assert instant is not None and started_at >= instant, occurrence_id
