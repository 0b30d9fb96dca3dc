"""Strict downstreams and a worker SIGKILLed mid-call: the ledger agrees with the downstream.

Real processes: a Temporal dev server, two simulated worker processes
(``tests.faults.simulated_worker``) one after the other, a SQLite ledger file shared with the test,
and two strict sinks (``Sink(strict=True)``) that behave like a downstream following the
Idempotency-Key header draft or Stripe: the effect is stored at first receipt; a repeat of the key
with another payload is answered 422, a repeat while the first request is still being answered 409.

- The *slow* downstream holds every key's first request for :data:`SLOW_HOLD` seconds, so the
  redelivery after the kill arrives while it is in flight: 409.
- The *quick* downstream holds each key's first request for a seeded random 0–3 s, so the kill
  lands at random points of those calls: before the answer, after it but before the ledger
  recorded it, or after the outcome was recorded.

Worker A runs :data:`PER_DOWNSTREAM` occurrences against each. Once the slow downstream has every
first request, a seeded random wait (0–:data:`KILL_SPREAD` s) picks the kill; worker B starts at
once. The invariant, for every occurrence: the ledger's final state agrees with the downstream's
record — SUCCEEDED exactly when the downstream holds the effect, and never FAILED (a "key already
used" answer is evidence of an effect: reconcile or UNKNOWN_EFFECT). Also: a redelivery sends the
same bytes (the quick downstream refused nothing), and an attempt lost with worker A is recorded
LOST, found by worker B, with no finish time.
"""

from __future__ import annotations

import random
import time
from pathlib import Path

import anyio
import pytest
from faultkit import (
    day,
    due_occurrences,
    gate_view,
    publish,
    server_address,
    spawn_worker,
    spec_data,
    sqlite_ledger,
    start_occurrence,
    wait_until,
    worker_env,
)
from temporalio.testing import WorkflowEnvironment

import ledger
from almanac.stack.sink import Sink
from ledger import AttemptOutcome, OccurrenceState

pytestmark = [
    pytest.mark.anyio,
    pytest.mark.temporal,
    pytest.mark.fault,
    pytest.mark.slow,
    pytest.mark.timeout(420),
]

PER_DOWNSTREAM = 4
SLOW_HOLD = 45.0
"""Seconds the slow downstream holds a first request: past the attempt's heartbeat timeout (10 s)
and a new worker's start, so the redelivery finds it in flight."""
KILL_SPREAD = 3.0
SEEDS = [20270110, 20270111]


@pytest.mark.parametrize("seed", SEEDS)
async def test_ledger_agrees_with_strict_downstreams_after_a_sigkill_mid_call(
    dev_env: WorkflowEnvironment, task_queue: str, tmp_path: Path, seed: int
) -> None:
    rng = random.Random(seed)
    url, ledger_ = sqlite_ledger(tmp_path)
    env = worker_env(server_address(dev_env.client), task_queue, url, tmp_path)
    log = tmp_path / "workers.log"
    released = day(10, 9, 0, 5)
    with Sink(strict=True) as slow, Sink(strict=True) as quick:
        keys: dict[str, Sink] = {}
        for name, sink in (("slow", slow), ("quick", quick)):
            for n in range(PER_DOWNSTREAM):
                data = spec_data(f"strict-{name}-{n}", sink, timeoutSeconds=120)
                spec = publish(ledger_, data, day(10, 8))
                (due,) = due_occurrences(ledger_, spec, (day(10, 8), day(11, 8)), released)
                keys[due.occurrence_id] = sink
                hold = SLOW_HOLD if sink is slow else rng.uniform(0.0, 3.0)
                sink.add_fault(match=due.occurrence_id, delay=hold, delayTimes=1)

        first = spawn_worker(env, log, "strict-worker-A")
        second = None
        try:
            handles = [
                await start_occurrence(
                    dev_env.client,
                    task_queue,
                    ledger.show_occurrence(ledger_, key).occurrence,
                    gate_view(ledger_, ledger.show_occurrence(ledger_, key).occurrence.schedule_id),
                    simulated_now_utc=released,
                    server_now_utc=await dev_env.get_current_time(),
                    action_timeout_seconds=180.0,
                )
                for key in keys
            ]
            slow_keys = [k for k, s in keys.items() if s is slow]
            wait_until(
                lambda: [slow.effect(k) is not None for k in slow_keys],
                all,
                timeout=90,
                what="the slow downstream holds every first request",
            )
            time.sleep(rng.uniform(0.0, KILL_SPREAD))  # the random point of the kill
            first.kill()
            second = spawn_worker(env, log, "strict-worker-B")
            with anyio.fail_after(300):
                outcomes = [await handle.result() for handle in handles]
        finally:
            if first.process.poll() is None:
                first.kill()
            if second is not None:
                second.stop()

        assert len(outcomes) == len(keys)
        for key, sink in keys.items():
            detail = ledger.show_occurrence(ledger_, key)
            effect = sink.effect(key)
            state = detail.occurrence.state
            # The invariant: the business record agrees with the downstream's record.
            assert state is not OccurrenceState.FAILED, (key, detail.attempts)
            assert (state is OccurrenceState.SUCCEEDED) == (effect is not None), (key, state)
            for attempt in detail.attempts:
                if attempt.outcome == AttemptOutcome.LOST.value:
                    assert attempt.worker_identity == "strict-worker-A"
                    assert attempt.finished_at_utc is None
                    assert attempt.lost_detected_by == "strict-worker-B"
                    assert attempt.lost_detected_at_utc is not None
            if sink is slow:
                # Killed mid-call: attempt 1 lost, the redelivery met 409 in flight, and the result
                # query found the effect (UNKNOWN_EFFECT → SUCCEEDED), never FAILED.
                assert detail.attempts[0].outcome == AttemptOutcome.LOST.value, detail.attempts
                assert effect is not None and effect.refused_count >= 1
                assert OccurrenceState.UNKNOWN_EFFECT.value in [e.to_state for e in detail.events]
        # A redelivery is the same request: the quick downstream never saw a changed payload.
        assert [
            (e.idempotency_key, e.refused_count) for e in quick.effects() if e.refused_count
        ] == []
    ledger_.dispose()
