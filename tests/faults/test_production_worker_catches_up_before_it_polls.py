"""The production worker decides missed occurrences at start-up, before it polls (real processes).

A headless dev server (the pip ``temporal`` binary), ``python -m worker`` as a subprocess on a
SQLite ledger, and the sink. Each schedule is daily from 5 days minus 1 hour ago (UTC, placed
relative to the host's clock, which the server shares), ``CATCH_UP_BOUNDED`` with ``maxCatchUp``
2 (the fleet scenario's spec), and the ledger was left as a worker leaves it, 14 days materialized
at T0 (12 hours before the first instant): 5 instants passed while nothing ran. By the rule, the
2 latest are released and run, the 3 earlier ones expire, and the next one (in 1 hour) waits.

With the catch-up (the default), the ledger holds those decisions as soon as the worker polls,
although no schedule workflow has started yet; the schedule workflow started afterwards runs the
2 released occurrences once each (2 effects at the sink, keyed by their IDs). With
``--no-catch-up`` nothing is decided when the worker polls: each schedule's workflow would do it.
"""

from __future__ import annotations

from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from datetime import UTC, datetime, timedelta
from functools import partial
from pathlib import Path
from typing import Any

import anyio
import pytest
from faultkit import (
    await_until,
    first_poll,
    running_sink,
    server_address,
    spawn_worker,
    sqlite_ledger,
    states,
    worker_env,
)
from temporal_env import start_dev_server

import ledger
from almanac.gates.fleet import spec_data
from almanac.stack.sink import Sink
from ledger import Ledger, OccurrenceState
from timecontract import load_spec
from workflows import ScheduleInput, schedule_workflow_id

pytestmark = [pytest.mark.anyio, pytest.mark.temporal, pytest.mark.fault, pytest.mark.timeout(240)]

IDS = ("missed-a", "missed-b")


def left_down(store: Ledger, sink_url: str) -> tuple[datetime, dict[str, dict[str, Any]]]:
    """Publish both schedules and materialize 14 days at T0; (first instant, spec data).

    The specs are the fleet scenario's (``almanac.gates.fleet.spec_data``: daily from T0 + 12 h,
    ``CATCH_UP_BOUNDED``, ``maxCatchUp`` 2, cutover T0), with T0 so that the first instant is
    5 days minus 1 hour ago.
    """
    t0 = datetime.now(UTC).replace(microsecond=0) - timedelta(days=5, hours=11)
    first = t0 + timedelta(hours=12)
    datas = {}
    for schedule_id in IDS:
        data = spec_data(schedule_id, sink_url, t0)
        spec = load_spec(data)
        ledger.publish_revision(store, spec, t0, by="test")
        ledger.materialize(store, spec, t0, t0 + timedelta(days=14), t0, by="test")
        datas[schedule_id] = data
    return first, datas


@asynccontextmanager
async def worker_on_a_stack(
    tmp_path: Path, task_queue: str, *args: str
) -> AsyncIterator[tuple[Ledger, Any, Sink, datetime, dict[str, dict[str, Any]]]]:
    """A dev server, the sink, the ledger left down, and ``python -m worker ARGS`` polling.

    Yields (ledger, the server's client, sink, first instant, spec data by schedule ID).
    """
    url, store = sqlite_ledger(tmp_path)
    env = await start_dev_server()
    try:
        with running_sink() as sink:
            first, datas = left_down(store, sink.url)
            wenv = worker_env(server_address(env.client), task_queue, url, tmp_path)
            spawn = partial(spawn_worker, wenv, tmp_path / "worker.log", "w", module="worker")
            worker = await anyio.to_thread.run_sync(partial(spawn, args=args))
            try:
                await first_poll(env.client, task_queue, "w")
                yield store, env.client, sink, first, datas
            finally:
                worker.stop()
    finally:
        store.dispose()
        await env.shutdown()


def by_day(store: Ledger, schedule_id: str, first: datetime) -> dict[int, OccurrenceState]:
    """Day number (0 = ``first``) → state, for the schedule's occurrences."""
    return {
        (o.instant_utc - first).days: o.state
        for o in ledger.list_occurrences(store, schedule_id)
        if o.instant_utc is not None
    }


async def test_missed_occurrences_are_decided_before_the_worker_polls_and_run_once(
    tmp_path: Path, task_queue: str
) -> None:
    async with worker_on_a_stack(tmp_path, task_queue) as (store, client, sink, first, datas):
        expected = {d: OccurrenceState.MISFIRE_EXPIRED for d in range(3)}
        expected |= {3: OccurrenceState.DUE, 4: OccurrenceState.DUE}
        for schedule_id in IDS:
            decided = by_day(store, schedule_id, first)
            assert {d: decided[d] for d in range(5)} == expected, schedule_id
            # The horizon too, as far ahead as the schedule's last materialization looked (its
            # furthest instant, day 13, was written 13.5 days ahead): now + 13.5 days = day 18.
            assert max(decided) == 18
            assert {decided[d] for d in range(5, max(decided) + 1)} == {OccurrenceState.PLANNED}
        for schedule_id in IDS:
            await client.start_workflow(
                "AlmanacSchedule",
                ScheduleInput(schedule_id=schedule_id, initial_spec=datas[schedule_id]),
                id=schedule_workflow_id(schedule_id),
                task_queue=task_queue,
            )
        ran = await await_until(
            lambda: [
                oid
                for s in IDS
                for oid, state in states(store, s).items()
                if state is OccurrenceState.SUCCEEDED
            ],
            lambda done: len(done) == 4,
            timeout=120,
            what="the 4 released occurrences succeed",
        )
        assert sorted(e.idempotency_key for e in sink.effects()) == sorted(ran)
        assert all(
            by_day(store, s, first)[d] is OccurrenceState.SUCCEEDED for s in IDS for d in (3, 4)
        )


async def test_with_no_catch_up_nothing_is_decided_when_the_worker_polls(
    tmp_path: Path, task_queue: str
) -> None:
    async with worker_on_a_stack(tmp_path, task_queue, "--no-catch-up") as (store, _, _, first, _):
        for schedule_id in IDS:
            assert set(by_day(store, schedule_id, first).values()) == {OccurrenceState.PLANNED}
