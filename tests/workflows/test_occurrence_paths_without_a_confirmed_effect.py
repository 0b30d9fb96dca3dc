"""The occurrence workflow's two remaining paths, in skipped time (and their replay histories).

- A claim refused: the schedule was disabled after the releaser read the gate. The workflow's
  only activity is the claim; it ends with the ledger's state (CANCELLED, by the disable) and the
  refusal, and nothing reaches the downstream (DESIGN §4 invariant 3).
- A result query that never answers: the call was sent and its answer lost (UNKNOWN_EFFECT); the
  result URL cannot be reached. The workflow asks again with growing waits, stops asking before
  the case's 30-minute deadline and puts the case in the human queue by that deadline (DESIGN §4
  invariant 5); the occurrence stays UNKNOWN_EFFECT and the call is never re-sent.

Each occurrence runs on its own (started as the schedule would start it, with the gate view its
releaser read), on the simulated calendar 2027-01-10 09:00 UTC.
"""

from __future__ import annotations

import json
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import pytest
from stack import Stack, record_history, running_stack
from temporal_env import start_time_skipping

import ledger
from activities import io
from almanac.gates.simulation import SimulatedOccurrenceInput, SimulatedOccurrenceWorkflow
from timecontract import parse_spec

pytestmark = [pytest.mark.anyio, pytest.mark.temporal]

NINE = datetime(2027, 1, 10, 9, tzinfo=UTC)
UNREACHABLE = "http://127.0.0.1:9"
"""The discard port: nothing listens, a connection is refused at once."""


def _spec(schedule_id: str, stack: Stack, result_url: str | None) -> dict[str, Any]:
    parameters = {"url": f"{stack.sink.url}/effects", "timeoutSeconds": 1}
    if result_url is not None:
        parameters["resultUrl"] = result_url
    return {
        "schema": "scheduleSpec.v1",
        "scheduleId": schedule_id,
        "revision": 1,
        "timeZone": "UTC",
        "tzdbVersion": "2026a",
        "rule": "FREQ=DAILY;BYHOUR=9;BYMINUTE=0",
        "cutoverAt": "2027-01-01T00:00:00Z",
        "action": {"name": "http", "parameters": parameters},
    }


def _released(stack: Stack, data: dict[str, Any]) -> tuple[ledger.OccurrenceView, io.GateSnapshot]:
    """Publish at 08:00, materialize the day, release at 09:00: the DUE row and the gate read."""
    spec = parse_spec(data)
    eight = NINE - timedelta(hours=1)
    ledger.publish_revision(stack.ledger, spec, eight, by="test")
    ledger.materialize(stack.ledger, spec, eight, eight + timedelta(days=1), eight, by="test")
    ledger.release_due(stack.ledger, spec.schedule_id, NINE, by="test")
    (row,) = ledger.list_occurrences(
        stack.ledger, spec.schedule_id, states=[ledger.OccurrenceState.DUE]
    )
    return row, ledger.get_gate(stack.ledger, spec.schedule_id)


async def _run(stack: Stack, row: ledger.OccurrenceView, gate: io.GateSnapshot) -> Any:
    assert row.instant_utc is not None
    offset = (NINE - await stack.env.get_current_time()).total_seconds()
    handle = await stack.client.start_workflow(
        SimulatedOccurrenceWorkflow.run,
        SimulatedOccurrenceInput(
            occurrence=row.upcoming(),
            gate=gate,
            clock_offset_seconds=offset,
        ),
        id=row.occurrence_id,
        task_queue=stack.task_queue,
    )
    return await handle.result()


async def _activities(stack: Stack, workflow_id: str) -> list[str]:
    history = await stack.client.get_workflow_handle(workflow_id).fetch_history()
    return [
        e.activity_task_scheduled_event_attributes.activity_type.name
        for e in history.events
        if e.HasField("activity_task_scheduled_event_attributes")
    ]


async def _carried_schedule_ids(stack: Stack, workflow_id: str, activity: str) -> list[Any]:
    """The ``schedule_id`` of each ``activity`` input the workflow scheduled (JSON payloads)."""
    history = await stack.client.get_workflow_handle(workflow_id).fetch_history()
    return [
        json.loads(attributes.input.payloads[0].data).get("schedule_id")
        for e in history.events
        if e.HasField("activity_task_scheduled_event_attributes")
        and (attributes := e.activity_task_scheduled_event_attributes).activity_type.name
        == activity
    ]


async def test_a_claim_refused_after_a_disable_ends_the_occurrence_cancelled(
    tmp_path: Path,
) -> None:
    env = await start_time_skipping()
    try:
        async with running_stack(env, tmp_path, "claim-refused") as stack:
            row, gate = _released(stack, _spec("refused-daily", stack, None))
            ledger.disable(stack.ledger, "refused-daily", NINE, by="test", reason="maintenance")

            outcome = await _run(stack, row, gate)

            assert outcome.state == "CANCELLED"
            assert outcome.detail.startswith("DISABLED")
            assert outcome.attempts == 0
            # One activity: the claim (refused inside claim_and_execute, before any action call).
            assert await _activities(stack, row.occurrence_id) == ["almanac.claim_and_execute"]
            detail = ledger.show_occurrence(stack.ledger, row.occurrence_id)
            assert detail.occurrence.state is ledger.OccurrenceState.CANCELLED
            assert detail.attempts == ()
            assert stack.sink.effects() == []
            await record_history(stack.client, row.occurrence_id, "occurrence-claim-refused")
    finally:
        await env.shutdown()


async def test_a_result_query_that_never_answers_reaches_the_human_queue_by_the_deadline(
    tmp_path: Path,
) -> None:
    env = await start_time_skipping()
    try:
        async with running_stack(env, tmp_path, "query-deadline") as stack:
            data = _spec("unanswered-daily", stack, f"{UNREACHABLE}/effects/{{idempotencyKey}}")
            row, gate = _released(stack, data)
            # The sink records the call, then holds its answer past the 1 s timeout: a lost ack.
            stack.sink.add_fault(match=row.occurrence_id, delay=600, delayTimes=1)

            outcome = await _run(stack, row, gate)

            assert (outcome.state, outcome.detail) == ("UNKNOWN_EFFECT", "reconciliation")
            kinds = await _activities(stack, row.occurrence_id)
            queries = kinds.count("almanac.query_effect")
            assert queries >= 3, kinds  # asked again and again, with growing waits
            assert kinds[-1] == "almanac.escalate"
            # The scheduleId travels in the payloads; the activities do not parse it from the ID.
            for activity in ("almanac.query_effect", "almanac.escalate"):
                carried = await _carried_schedule_ids(stack, row.occurrence_id, activity)
                assert set(carried) == {"unanswered-daily"}, (activity, carried)
            detail = ledger.show_occurrence(stack.ledger, row.occurrence_id)
            assert detail.occurrence.state is ledger.OccurrenceState.UNKNOWN_EFFECT
            case = detail.case
            assert case is not None and case.resolution is ledger.ReconciliationResolution.HUMAN
            assert case.resolved_at_utc is not None
            assert case.resolved_at_utc <= case.opened_at_utc + timedelta(minutes=30)
            assert case.resolved_at_utc >= case.opened_at_utc + timedelta(minutes=20)
            [effect] = stack.sink.effects()
            assert (effect.idempotency_key, effect.delivery_count) == (row.occurrence_id, 1)
            await record_history(
                stack.client, row.occurrence_id, "occurrence-query-deadline-human-queue"
            )
    finally:
        await env.shutdown()
