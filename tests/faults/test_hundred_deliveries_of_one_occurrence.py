"""Matrix 12: 100 deliveries of one occurrence ID give at most one confirmed effect; an
unconfirmed effect stays UNKNOWN_EFFECT and reaches the human queue within 30 minutes, unsent.

Deliveries come from every layer that can repeat: 100 concurrent starts of the occurrence workflow
(what a replaying or restarted schedule workflow does), 100 concurrent executions of the
execute-attempt activity for one claim (what Temporal's activity retries do after lost
completions), and 100 posts to the sink with the same key.
"""

from __future__ import annotations

import asyncio
from datetime import timedelta
from pathlib import Path

import pytest
from faultkit import (
    LOCAL_EGRESS,
    day,
    due_occurrences,
    gate_view,
    in_process_worker,
    local_actions,
    publish,
    running_sink,
    spec_data,
    sqlite_ledger,
    start_occurrence,
    upcoming,
)
from temporal_env import start_time_skipping
from temporalio.client import WorkflowFailureError
from temporalio.common import WorkflowIDReusePolicy
from temporalio.exceptions import WorkflowAlreadyStartedError

import ledger
from activities import io
from activities.actions import ActionContext, OutcomeKind
from activities.actions.http_action import HttpAction
from activities.clock import FixedClock
from activities.ledger_activities import AlmanacActivities
from almanac.gates.simulation import SimulatedOccurrenceInput, SimulatedOccurrenceWorkflow
from ledger import Ledger, OccurrenceState, ReconciliationResolution

pytestmark = [pytest.mark.fault]

DELIVERIES = 100


def test_a_hundred_concurrent_attempt_executions_confirm_one_effect(store: Ledger) -> None:
    with running_sink() as sink:
        spec = publish(store, spec_data("hundred", sink), day(10, 8))
        (due,) = due_occurrences(store, spec, (day(10, 8), day(11, 8)), day(10, 9))
        activities = AlmanacActivities(
            store, local_actions(), identity="w", clock=FixedClock(day(10, 9))
        )
        claimed = activities.claim(
            io.ClaimOccurrenceInput(due.occurrence_id, gate_view(store, "hundred"), day(10, 9))
        )
        assert claimed.claimed
        attempt = io.ExecuteAttemptInput(
            due.occurrence_id, claimed.claim_generation, 1, 3, day(10, 9)
        )

        async def deliver_all() -> list[object]:
            calls = [activities.execute_attempt(attempt) for _ in range(DELIVERIES)]
            return await asyncio.gather(*calls, return_exceptions=True)

        results = asyncio.run(deliver_all())
        effects = sink.effects()
        detail = ledger.show_occurrence(store, due.occurrence_id)
    # Losers fail (a lost claim, an illegal transition): Temporal would retry them, and a retry
    # then finds the outcome recorded. None of them made a second effect.
    assert [e.idempotency_key for e in effects] == [due.occurrence_id]
    assert detail.occurrence.state is OccurrenceState.SUCCEEDED
    succeeded = [a for a in detail.attempts if a.outcome == "SUCCEEDED"]
    assert len(succeeded) == 1
    assert any(isinstance(r, io.ExecuteAttemptResult) for r in results)


@pytest.mark.anyio
async def test_a_hundred_posts_of_one_key_record_one_effect() -> None:
    with running_sink() as sink:
        action = HttpAction(egress=LOCAL_EGRESS)
        ctx = ActionContext(
            occurrence_id="posts.r1.20270110T090000.f0",
            schedule_id="posts",
            revision=1,
            nominal_local="2027-01-10T09:00:00",
            instant_utc="2027-01-10T09:00:00Z",
            attempt=1,
            parameters={"url": f"{sink.url}/effects"},
        )
        outcomes = await asyncio.gather(*(action.invoke(ctx) for _ in range(DELIVERIES)))
        effects = sink.effects()
    assert all(o.kind is OutcomeKind.CONFIRMED for o in outcomes)
    assert len({o.result["effectId"] for o in outcomes if o.result}) == 1
    assert len(effects) == 1 and effects[0].delivery_count == DELIVERIES


@pytest.mark.anyio
@pytest.mark.temporal
@pytest.mark.slow
async def test_a_hundred_starts_of_one_occurrence_workflow_run_it_once(tmp_path: Path) -> None:
    url, store = sqlite_ledger(tmp_path)
    env = await start_time_skipping()
    try:
        with running_sink() as sink:
            spec = publish(store, spec_data("starts", sink), day(10, 8))
            (due,) = due_occurrences(store, spec, (day(10, 8), day(11, 8)), day(10, 9))
            params = SimulatedOccurrenceInput(
                occurrence=upcoming(due),
                gate=gate_view(store, "starts"),
                clock_offset_seconds=(day(10, 9) - await env.get_current_time()).total_seconds(),
            )

            async def start() -> object:
                try:
                    return await env.client.start_workflow(
                        SimulatedOccurrenceWorkflow.run,
                        params,
                        id=due.occurrence_id,
                        task_queue="starts",
                        id_reuse_policy=WorkflowIDReusePolicy.REJECT_DUPLICATE,
                    )
                except WorkflowAlreadyStartedError as exc:
                    return exc

            async with in_process_worker(env.client, "starts", url, tmp_path, "w"):
                started = await asyncio.gather(*(start() for _ in range(DELIVERIES)))
                handles = [s for s in started if not isinstance(s, WorkflowAlreadyStartedError)]
                assert len(handles) == 1
                outcome = await handles[0].result()  # type: ignore[attr-defined]
                # After completion, a start of the same ID is refused too (never run again).
                again = await start()
                assert isinstance(again, WorkflowAlreadyStartedError)
            effects = sink.effects()
            detail = ledger.show_occurrence(store, due.occurrence_id)
    finally:
        await env.shutdown()
        store.dispose()
    assert outcome.state == "SUCCEEDED"
    assert len(effects) == 1 and effects[0].delivery_count == 1
    assert len(detail.attempts) == 1


@pytest.mark.anyio
@pytest.mark.temporal
@pytest.mark.slow
@pytest.mark.parametrize(
    "queryable",
    [
        pytest.param(False, id="no-result-query"),
        pytest.param(
            True,
            id="query-never-answers",
        ),
    ],
)
async def test_an_unconfirmed_effect_reaches_the_human_queue_within_30_minutes_unsent(
    tmp_path: Path, queryable: bool
) -> None:
    url, store = sqlite_ledger(tmp_path)
    env = await start_time_skipping()
    try:
        with running_sink() as sink:
            # The result query, when there is one, goes to a port nobody listens on.
            result_url = "http://127.0.0.1:9/effects/{idempotencyKey}" if queryable else None
            data = spec_data("unknown", sink, timeoutSeconds=1, resultUrl=result_url)
            spec = publish(store, data, day(10, 8))
            (due,) = due_occurrences(store, spec, (day(10, 8), day(11, 8)), day(10, 9))
            sink.add_fault(match=due.occurrence_id, delay=600)  # recorded, never answered
            async with in_process_worker(env.client, "unknown", url, tmp_path, "w"):
                handle = await start_occurrence(
                    env.client,
                    "unknown",
                    due,
                    gate_view(store, "unknown"),
                    simulated_now_utc=day(10, 9),
                    server_now_utc=await env.get_current_time(),
                )
                try:
                    outcome = await handle.result()
                except WorkflowFailureError as exc:  # pragma: no cover - reported below
                    raise AssertionError(f"occurrence workflow failed: {exc.cause}") from exc
            detail = ledger.show_occurrence(store, due.occurrence_id)
            effect = sink.effect(due.occurrence_id)
            assert detail.case is not None
            queued = ledger.human_queue(store, detail.case.deadline_utc)
    finally:
        await env.shutdown()
        store.dispose()
    assert outcome.state == "UNKNOWN_EFFECT"
    assert detail.occurrence.state is OccurrenceState.UNKNOWN_EFFECT
    case = detail.case
    assert case is not None and case.resolution is ReconciliationResolution.HUMAN
    # By its deadline the case is in the human queue (queued, or overdue and therefore queued).
    assert [c.occurrence_id for c in queued] == [case.occurrence_id]
    assert case.resolved_at_utc is not None
    assert case.resolved_at_utc - case.opened_at_utc <= timedelta(minutes=30)
    # Never resent: one delivery, one attempt.
    assert effect is not None and effect.delivery_count == 1
    assert len(detail.attempts) == 1
