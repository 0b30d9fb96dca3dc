"""Matrix 9: occurrence N's retry runs after occurrence N+1 started; the two never mix.

Time-skipping server, the production worker and the schedule workflow; a minutely schedule. The
sink refuses N's first three deliveries (HTTP 500, nothing recorded), so N waits 10 s, 20 s and
40 s (``retry_delay``) in RETRY_WAIT: its fourth attempt starts 70 s after its instant, after
N+1's instant (60 s). Expected: N+1 is dispatched at its own instant, not behind N; each has
exactly one effect; N's four attempts and N+1's one attempt are recorded on their own occurrence.
"""

from __future__ import annotations

from datetime import timedelta
from pathlib import Path

import pytest
from faultkit import (
    await_until,
    day,
    in_process_worker,
    running_sink,
    spec_data,
    sqlite_ledger,
    start_schedule,
)
from temporal_env import start_time_skipping

import ledger
from ledger import AttemptOutcome, OccurrenceState

pytestmark = [pytest.mark.anyio, pytest.mark.temporal, pytest.mark.fault, pytest.mark.slow]


async def test_a_retry_after_the_next_period_leaves_both_occurrences_one_effect_each(
    tmp_path: Path,
) -> None:
    n_instant = day(10, 9, 0)
    n1_instant = n_instant + timedelta(minutes=1)
    url, ledger_ = sqlite_ledger(tmp_path)
    env = await start_time_skipping()
    try:
        with running_sink() as sink:
            data = spec_data("retry-late", sink, rule="FREQ=MINUTELY;INTERVAL=1")
            n_id = "retry-late.r1.20270110T090000.f0"
            n1_id = "retry-late.r1.20270110T090100.f0"
            sink.add_fault(match=n_id, failTimes=3, status=500)
            async with in_process_worker(env.client, "retry", url, tmp_path, "worker"):
                handle = await start_schedule(
                    env.client,
                    "retry",
                    data,
                    simulated_now_utc=n_instant - timedelta(seconds=30),
                    server_now_utc=await env.get_current_time(),
                    stop_after_utc=n_instant + timedelta(minutes=3),
                    occurrence_max_attempts=5,
                )
                await handle.result()
                await await_until(
                    lambda: [
                        ledger.show_occurrence(ledger_, i).occurrence.state for i in (n_id, n1_id)
                    ],
                    lambda s: s == [OccurrenceState.SUCCEEDED, OccurrenceState.SUCCEEDED],
                    timeout=60,
                    what="N and N+1 succeed",
                )
            n = ledger.show_occurrence(ledger_, n_id)
            n1 = ledger.show_occurrence(ledger_, n1_id)
            effects = {e.idempotency_key: e for e in sink.effects()}
    finally:
        await env.shutdown()
        ledger_.dispose()

    assert effects[n_id].delivery_count == 1 and effects[n1_id].delivery_count == 1
    assert [a.outcome for a in n.attempts] == [AttemptOutcome.RETRYABLE_FAILURE.value] * 3 + [
        AttemptOutcome.SUCCEEDED.value
    ]
    assert [a.outcome for a in n1.attempts] == [AttemptOutcome.SUCCEEDED.value]
    assert all(a.occurrence_id == n_id for a in n.attempts)
    # N's last attempt starts after N+1's instant …
    assert n.attempts[-1].started_at_utc > n1_instant
    # … and N+1 was dispatched on time, before N's last attempt: not delayed by N.
    assert n1.attempts[0].started_at_utc - n1_instant < timedelta(seconds=5)
    assert n1.attempts[0].started_at_utc < n.attempts[-1].started_at_utc
    # N waited in RETRY_WAIT (visible in the ledger's trail) across N+1's start.
    waits = [e for e in n.events if e.to_state == OccurrenceState.RETRY_WAIT.value]
    assert len(waits) == 3
