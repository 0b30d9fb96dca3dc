"""Matrix 8: the worker process dies after the downstream recorded the effect, before the ack.

Real processes: a Temporal dev server, ``python -m worker`` as a subprocess, a SQLite ledger file
shared with the test, and the sink. The sink records the first delivery and then holds the answer;
while it holds, the test SIGKILLs the worker. Temporal retries the activity on a new worker
process after the attempt's start-to-close timeout; the retry finds the occurrence RUNNING, records
attempt 1 as LOST (found by the new worker, no finish time) and re-sends with the same
Idempotency-Key.

The occurrence workflow is started the way the schedule workflow starts it (ID = occurrenceId)
but with a short ``action_timeout_seconds``: the schedule workflow cannot pass one (its children
get the 120 s default), so through it a lost ack costs two minutes before the retry.
"""

from __future__ import annotations

from pathlib import Path

import anyio
import pytest
from faultkit import (
    day,
    due_occurrences,
    gate_view,
    publish,
    running_sink,
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
from ledger import AttemptOutcome, OccurrenceState

pytestmark = [pytest.mark.anyio, pytest.mark.temporal, pytest.mark.fault, pytest.mark.slow]

ACTION_TIMEOUT = 8.0


async def test_sigkill_after_downstream_success_gives_one_effect_and_two_attempts(
    dev_env: WorkflowEnvironment, task_queue: str, tmp_path: Path
) -> None:
    url, ledger_ = sqlite_ledger(tmp_path)
    env = worker_env(server_address(dev_env.client), task_queue, url, tmp_path)
    log = tmp_path / "workers.log"
    with running_sink() as sink:
        data = spec_data("lost-ack", sink, timeoutSeconds=120)
        spec = publish(ledger_, data, day(10, 8))
        (due,) = due_occurrences(ledger_, spec, (day(10, 8), day(11, 8)), day(10, 9, 0, 5))
        key = due.occurrence_id
        # Record the first delivery, then hold the answer far longer than the test lasts.
        sink.add_fault(match=key, delay=600, delayTimes=1)

        first = spawn_worker(env, log, "fault-worker-A")
        second = None
        try:
            handle = await start_occurrence(
                dev_env.client,
                task_queue,
                due,
                gate_view(ledger_, spec.schedule_id),
                simulated_now_utc=day(10, 9, 0, 5),
                server_now_utc=await dev_env.get_current_time(),
                action_timeout_seconds=ACTION_TIMEOUT,
            )
            wait_until(
                lambda: sink.effect(key),
                lambda e: e is not None,
                timeout=60,
                what="the sink records the effect",
            )
            first.kill()
            running = ledger.show_occurrence(ledger_, key)
            assert running.occurrence.state is OccurrenceState.RUNNING
            second = spawn_worker(env, log, "fault-worker-B")
            with anyio.fail_after(120):
                outcome = await handle.result()
        finally:
            first.kill() if first.process.poll() is None else None
            if second is not None:
                second.stop()

        assert outcome.state == "SUCCEEDED"
        effects = sink.effects()
        assert [e.idempotency_key for e in effects] == [key]
        assert effects[0].delivery_count == 2  # the re-send carried the same key
        detail = ledger.show_occurrence(ledger_, key)
        assert detail.occurrence.state is OccurrenceState.SUCCEEDED
        attempts = [(a.claim_generation, a.outcome, a.error_class) for a in detail.attempts]
        assert attempts == [
            (1, AttemptOutcome.LOST.value, "LostAcknowledgement"),
            (2, AttemptOutcome.SUCCEEDED.value, None),
        ]
        assert detail.attempts[0].worker_identity == "fault-worker-A"
        assert detail.attempts[0].finished_at_utc is None
        assert detail.attempts[0].lost_detected_by == "fault-worker-B"
        assert detail.attempts[1].worker_identity == "fault-worker-B"
        # One occurrence, and no other occurrence of the schedule was touched.
        others = ledger.list_occurrences(ledger_, spec.schedule_id)
        assert [o.occurrence_id for o in others if o.state is OccurrenceState.SUCCEEDED] == [key]
    ledger_.dispose()
