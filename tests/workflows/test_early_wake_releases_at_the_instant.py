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

from datetime import UTC
from pathlib import Path

import every_two_seconds as e2s
import pytest
from stack import record_history, running_stack
from temporal_env import start_dev_server
from temporalio.api.enums.v1 import EventType

import ledger
from activities import io
from ledger import OccurrenceState

pytestmark = [pytest.mark.anyio, pytest.mark.temporal]

SCHEDULE_ID = "every-two-seconds"
INSTANTS = e2s.INSTANTS


async def test_timers_fire_a_lead_early_and_releases_wait_for_the_instant(
    tmp_path: Path, task_queue: str
) -> None:
    env = await start_dev_server()
    try:
        async with running_stack(env, tmp_path, task_queue) as stack:
            handle = await e2s.start(stack, e2s.spec(SCHEDULE_ID))
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
    targets = [timer.target for timer in e2s.timers(history, offset)]
    for instant in INSTANTS:
        early = instant - io.RELEASE_LEAD
        assert any(abs(t - early) <= e2s.TOLERANCE for t in targets), (instant, targets)
    assert not any(abs(t - i) <= e2s.TOLERANCE for t in targets for i in INSTANTS)
    child_starts = {}
    for event in history.events:
        if event.event_type == EventType.EVENT_TYPE_CHILD_WORKFLOW_EXECUTION_STARTED:
            at = event.event_time.ToDatetime().replace(tzinfo=UTC) + offset
            started = event.child_workflow_execution_started_event_attributes
            child_starts[started.workflow_execution.workflow_id] = at
    # The server started each occurrence at or after its instant.
    assert len(child_starts) == len(INSTANTS)
    for occurrence_id, started_at in child_starts.items():
        instant = details[occurrence_id].occurrence.instant_utc
        assert instant is not None and started_at >= instant, occurrence_id
