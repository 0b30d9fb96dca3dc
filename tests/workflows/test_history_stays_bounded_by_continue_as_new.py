"""A long-lived schedule continues as new once its run's history passes a bound (issue 10 trial).

The trial saw the ``every-10-seconds`` example's history reach 1.2 MB in 17 minutes: the server
suggests continuing as new only at 4K events / 4 MB, and a worker that lost its cache replays the
whole run before its next task. Past the patch ``almanac-bounded-history`` a run ends by
continue-as-new after ``history_event_limit`` events (or 512 KiB).

A dev server (real time: the time-skipping server does not skip time for a run that began by
continue-as-new while the client waits on the first) and the simulated calendar: a schedule every
2 s for 40 s with a limit of 60 events. Expected, from the contract: the chain has several runs and
none is much longer than the limit (a run ends at the first wake-up past it: one wake-up's events
over at most); every 2-second instant of the window is SUCCEEDED exactly once (worked out here from
the rule, not from timecontract; lateness 1 h, so a loaded machine's late wake-up still runs), and
the sink holds one delivery each — continuing as new loses and repeats nothing.
"""

from __future__ import annotations

from datetime import UTC, datetime, timedelta
from pathlib import Path

import pytest
from stack import running_stack
from temporal_env import start_dev_server

from ledger import OccurrenceState, list_occurrences

pytestmark = [pytest.mark.anyio, pytest.mark.temporal, pytest.mark.slow]

LIMIT = 60
START = datetime(2027, 1, 10, 9, 0, tzinfo=UTC)
WINDOW = timedelta(seconds=40)
SPEC = {
    "schema": "scheduleSpec.v1",
    "scheduleId": "bounded-history",
    "revision": 1,
    "timeZone": "Etc/UTC",
    "tzdbVersion": "2026a",
    "rule": "FREQ=SECONDLY;INTERVAL=2",
    "lateness": "PT1H",
    "cutoverAt": "2027-01-10T09:00:00Z",
}


async def test_runs_continue_as_new_past_the_bound_and_lose_nothing(
    tmp_path: Path, task_queue: str
) -> None:
    env = await start_dev_server()
    try:
        async with running_stack(env, tmp_path, task_queue) as stack:
            stop = START + WINDOW
            handle = await stack.start_schedule(
                stack.spec(SPEC),
                simulate_from=START,
                stop_after=stop + timedelta(seconds=5),
                history_event_limit=LIMIT,
            )
            await handle.result()
            lengths = []
            run_id: str | None = handle.first_execution_run_id
            while run_id:
                history = await stack.client.get_workflow_handle(
                    handle.id, run_id=run_id
                ).fetch_history()
                lengths.append(len(history.events))
                last = history.events[-1]
                run_id = None
                if last.HasField("workflow_execution_continued_as_new_event_attributes"):
                    attributes = last.workflow_execution_continued_as_new_event_attributes
                    run_id = attributes.new_execution_run_id
            assert len(lengths) >= 3, lengths
            assert max(lengths) <= LIMIT + 40, lengths

            expected = {
                f"bounded-history.r1.{START + timedelta(seconds=s):%Y%m%dT%H%M%S}.f0"
                # 09:00:00 itself precedes the publication (a moment after START): never run.
                for s in range(2, int(WINDOW.total_seconds()), 2)
            }
            rows = list_occurrences(stack.ledger, "bounded-history", to_utc=stop)
            assert {r.occurrence_id for r in rows} == expected
            assert all(r.state is OccurrenceState.SUCCEEDED for r in rows), rows
            keys = [e.idempotency_key for e in stack.sink.effects()]
            assert sorted(k for k in keys if k in expected) == sorted(expected)
            assert all(e.delivery_count == 1 for e in stack.sink.effects())
    finally:
        await env.shutdown()
