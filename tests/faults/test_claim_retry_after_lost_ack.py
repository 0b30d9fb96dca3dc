"""A claim whose acknowledgement is lost: Temporal retries the claim activity; nothing is stranded.

Found by ``test_sigkill_worker_at_random_points.py``: a worker SIGKILLed after the claim
transaction committed (DUE → DISPATCHING) but before the activity completed makes Temporal run
the claim activity again (after its 30 s start-to-close timeout). The retry finds the occurrence
DISPATCHING — its own claim — and is refused ``NOT_CLAIMABLE``; the occurrence workflow then
completes with state DISPATCHING and the occurrence stays DISPATCHING for ever: never run, never
reconciled, not terminal (a lost occurrence). Seen in the random-kill run as
``{"attempts":0,"detail":"NOT_CLAIMABLE: fleet-06.r1.20270110T090012.f0 is DISPATCHING",
"state":"DISPATCHING"}``.

Deterministic repro: call the claim activity twice with the same input (what a retry does).
Expected: the retry continues the dispatch its first execution won (same claim generation), so the
workflow goes on to execute the attempt.
"""

from __future__ import annotations

import dataclasses

import pytest
from faultkit import (
    day,
    due_occurrences,
    gate_view,
    local_actions,
    publish,
    running_sink,
    spec_data,
)
from temporalio.testing import ActivityEnvironment

from activities import io
from activities.clock import FixedClock
from activities.ledger_activities import AlmanacActivities
from ledger import Ledger

pytestmark = [pytest.mark.fault]


def test_a_retried_claim_continues_the_dispatch_it_won(store: Ledger) -> None:
    with running_sink() as sink:
        spec = publish(store, spec_data("lost-claim-ack", sink), day(10, 8))
        (due,) = due_occurrences(store, spec, (day(10, 8), day(11, 8)), day(10, 9))
        activities = AlmanacActivities(
            store, local_actions(), identity="worker-A", clock=FixedClock(day(10, 9))
        )
        request = io.ClaimOccurrenceInput(
            due.occurrence_id, gate_view(store, spec.schedule_id), day(10, 9)
        )
        first = activities.claim(request)
        assert first.claimed and first.state == "DISPATCHING"
        other = AlmanacActivities(
            store, local_actions(), identity="worker-B", clock=FixedClock(day(10, 9))
        )
        # A second first-try claim (another caller) is still refused.
        assert not ActivityEnvironment().run(other.claim, request).claimed
        # The worker died before reporting `first`; Temporal runs the same activity again.
        env = ActivityEnvironment()
        env.info = dataclasses.replace(env.info, attempt=2)
        retry = env.run(other.claim, request)
        assert retry.claimed, retry
        assert retry.claim_generation == first.claim_generation


@pytest.mark.anyio
async def test_a_retried_claim_and_execute_sends_once_and_keeps_the_outcome(store: Ledger) -> None:
    """The folded activity (claim + attempt): a retry after a lost completion re-sends nothing.

    First try: the claim wins and the attempt succeeds, but its completion is lost. Temporal's
    retry (attempt 2) must report SUCCEEDED and the sink must have one effect. A first try by
    another caller on the same occurrence is refused by the claim, before any action call.
    """
    with running_sink() as sink:
        spec = publish(store, spec_data("lost-both-ack", sink), day(10, 8))
        (due,) = due_occurrences(store, spec, (day(10, 8), day(11, 8)), day(10, 9))
        activities = AlmanacActivities(
            store, local_actions(), identity="worker-A", clock=FixedClock(day(10, 9))
        )
        request = io.ClaimAndExecuteInput(
            due.occurrence_id, gate_view(store, spec.schedule_id), 1, 3, day(10, 9)
        )
        first = await ActivityEnvironment().run(activities.claim_and_execute, request)
        assert first.claimed and first.state == "SUCCEEDED"
        assert first.attempt is not None and first.attempt.state == "SUCCEEDED"
        other = AlmanacActivities(
            store, local_actions(), identity="worker-B", clock=FixedClock(day(10, 9))
        )
        refused = await ActivityEnvironment().run(other.claim_and_execute, request)
        assert not refused.claimed and refused.state == "SUCCEEDED"
        env = ActivityEnvironment()
        env.info = dataclasses.replace(env.info, attempt=2)
        retry = await env.run(other.claim_and_execute, request)
        assert retry.state == "SUCCEEDED"
        assert len(sink.effects()) == 1


@pytest.mark.anyio
async def test_a_claim_and_execute_retried_after_the_claim_runs_the_attempt_once(
    store: Ledger,
) -> None:
    """The worker died between the claim's commit and the action: the retry adopts the claim."""
    with running_sink() as sink:
        spec = publish(store, spec_data("lost-mid-ack", sink), day(10, 8))
        (due,) = due_occurrences(store, spec, (day(10, 8), day(11, 8)), day(10, 9))
        activities = AlmanacActivities(
            store, local_actions(), identity="worker-A", clock=FixedClock(day(10, 9))
        )
        gate = gate_view(store, spec.schedule_id)
        won = activities.claim(io.ClaimOccurrenceInput(due.occurrence_id, gate, day(10, 9)))
        assert won.claimed
        env = ActivityEnvironment()
        env.info = dataclasses.replace(env.info, attempt=2)
        request = io.ClaimAndExecuteInput(due.occurrence_id, gate, 1, 3, day(10, 9))
        retry = await env.run(activities.claim_and_execute, request)
        assert retry.claimed and retry.state == "SUCCEEDED", retry
        assert len(sink.effects()) == 1
