"""Matrix 7: two materializers discover the same occurrences at once, through the workflows.

Two production workers poll the same task queue and share one ledger (SQLite file or PostgreSQL
database); two schedule workflow runs with different workflow IDs drive the same scheduleId with
the same spec and the same simulated clock, so each materializes, releases and starts children
for the same occurrences at the same moments. They race only through the ledger (unique keys,
CAS) and Temporal's workflow-ID uniqueness (child ID = occurrenceId).

Expected: one fact per occurrence (the rule's instants in the window, each once), one live owner
per logical slot, one attempt and one effect per occurrence at the sink.
"""

from __future__ import annotations

from collections import Counter
from datetime import UTC, datetime, timedelta
from pathlib import Path

import pytest
from faultkit import await_until, in_process_worker, running_sink, server_address, spec_data
from temporal_env import start_time_skipping
from temporalio.client import Client

import ledger
from almanac.gates.simulation import SimulatedScheduleInput, SimulatedScheduleWorkflow
from ledger import Ledger, OccurrenceState
from workflows import schedule_workflow_id

pytestmark = [pytest.mark.anyio, pytest.mark.temporal, pytest.mark.fault, pytest.mark.slow]

START = datetime(2027, 1, 10, 8, 55, tzinfo=UTC)
STOP = datetime(2027, 1, 10, 14, 55, tzinfo=UTC)
PERIOD = timedelta(minutes=10)


async def test_two_workers_and_two_schedule_runs_give_one_fact_and_one_effect_each(
    tmp_path: Path, database_url: str
) -> None:
    sid = "twin-materializers"
    env = await start_time_skipping()
    store = Ledger.from_url(database_url)
    try:
        with running_sink() as sink:
            data = spec_data(sid, sink, rule="FREQ=MINUTELY;INTERVAL=10", misfirePolicy="SKIP")
            # A worker per client connection, as two worker processes would have.
            other = await Client.connect(server_address(env.client))
            async with (
                in_process_worker(env.client, "twins", database_url, tmp_path, "worker-A"),
                in_process_worker(other, "twins", database_url, tmp_path, "worker-B"),
            ):
                offset = (START - await env.get_current_time()).total_seconds()
                params = SimulatedScheduleInput(
                    schedule_id=sid,
                    initial_spec=data,
                    clock_offset_seconds=offset,
                    stop_after_utc=STOP,
                    horizon_seconds=timedelta(hours=2).total_seconds(),
                    refresh_seconds=timedelta(minutes=30).total_seconds(),
                )
                handles = [
                    await env.client.start_workflow(
                        SimulatedScheduleWorkflow.run, params, id=workflow_id, task_queue="twins"
                    )
                    for workflow_id in (
                        schedule_workflow_id(sid),
                        schedule_workflow_id(sid) + "-twin",
                    )
                ]
                statuses = [await h.result() for h in handles]
                expected = [START + timedelta(minutes=5) + PERIOD * n for n in range(36)]
                rows = await await_until(
                    lambda: ledger.list_occurrences(store, sid, from_utc=START, to_utc=STOP),
                    lambda rs: (
                        len(rs) >= len(expected)
                        and all(r.state is OccurrenceState.SUCCEEDED for r in rs)
                    ),
                    timeout=60,
                    what="every occurrence in the window succeeds",
                )
            effects = sink.effects()
            attempts = {
                r.occurrence_id: ledger.show_occurrence(store, r.occurrence_id).attempts
                for r in rows
            }
    finally:
        await env.shutdown()
        store.dispose()

    # One fact per occurrence: exactly the rule's instants, each once.
    assert [r.instant_utc for r in rows] == expected
    assert len({r.occurrence_id for r in rows}) == len(rows)
    assert all(n == 1 for n in Counter(r.logical_slot_id for r in rows).values())
    # One attempt and one effect each.
    assert all(len(a) == 1 for a in attempts.values()), attempts
    keys = Counter(e.idempotency_key for e in effects)
    assert set(keys) == {r.occurrence_id for r in rows}
    assert all(n == 1 for n in keys.values())
    assert all(e.delivery_count == 1 for e in effects)
    # Both runs drove the schedule: the losers of the child-start race were refused as duplicates.
    assert sum(s.duplicate_starts for s in statuses) > 0, statuses
