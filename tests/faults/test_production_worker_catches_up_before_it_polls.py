"""The production worker decides missed occurrences at start-up, before it polls (real processes).

A headless dev server (the pip ``temporal`` binary), ``python -m worker`` as a subprocess on a
SQLite ledger, and the sink. Each schedule is daily from 5 days minus 1 hour ago (UTC, placed
relative to the host's clock, which the server shares), ``CATCH_UP_BOUNDED`` with ``maxCatchUp``
2, and the ledger was left with only its first day materialized: 5 instants passed while nothing
ran. By the rule, the 2 latest are released and run, the 3 earlier ones expire, and the next one
(in 1 hour) waits.

With the catch-up (the default), the ledger holds those decisions as soon as the worker polls,
although no schedule workflow has started yet; the schedule workflow started afterwards runs the
2 released occurrences once each (2 effects at the sink, keyed by their IDs). With
``--no-catch-up`` nothing is decided when the worker polls: each schedule's workflow would do it.
"""

from __future__ import annotations

from datetime import UTC, datetime, timedelta
from functools import partial
from pathlib import Path
from typing import Any

import anyio
import pytest
from faultkit import (
    TZDB,
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
from ledger import Ledger, OccurrenceState
from timecontract import load_spec
from workflows import ScheduleInput, schedule_workflow_id

pytestmark = [pytest.mark.anyio, pytest.mark.temporal, pytest.mark.fault, pytest.mark.timeout(240)]

IDS = ("missed-a", "missed-b")


def daily_spec(schedule_id: str, sink_url: str, first: datetime) -> dict[str, Any]:
    return {
        "schema": "scheduleSpec.v1",
        "scheduleId": schedule_id,
        "revision": 1,
        "timeZone": "UTC",
        "tzdbVersion": TZDB,
        "rule": "FREQ=DAILY",
        "start": first.replace(tzinfo=None).isoformat(),
        "misfirePolicy": "CATCH_UP_BOUNDED",
        "maxCatchUp": 2,
        "cutoverAt": first.isoformat().replace("+00:00", "Z"),
        "action": {
            "name": "http",
            "parameters": {
                "url": f"{sink_url}/effects",
                "resultUrl": f"{sink_url}/effects/{{idempotencyKey}}",
                "timeoutSeconds": 10,
            },
        },
    }


def left_down(store: Ledger, sink_url: str) -> tuple[datetime, dict[str, dict[str, Any]]]:
    """Publish both schedules and materialize their first day; (first instant, spec data)."""
    first = datetime.now(UTC).replace(microsecond=0) - timedelta(days=5) + timedelta(hours=1)
    datas = {}
    for schedule_id in IDS:
        data = daily_spec(schedule_id, sink_url, first)
        spec = load_spec(data)
        ledger.publish_revision(store, spec, first, by="test")
        ledger.materialize(store, spec, first, first + timedelta(days=1), first, by="test")
        datas[schedule_id] = data
    return first, datas


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
    url, store = sqlite_ledger(tmp_path)
    env = await start_dev_server()
    try:
        with running_sink() as sink:
            first, datas = left_down(store, sink.url)
            wenv = worker_env(server_address(env.client), task_queue, url, tmp_path)
            worker = await anyio.to_thread.run_sync(
                partial(spawn_worker, wenv, tmp_path / "worker.log", "w", module="worker")
            )
            try:
                await first_poll(env.client, task_queue, "w")
                expected = {d: OccurrenceState.MISFIRE_EXPIRED for d in range(3)}
                expected |= {3: OccurrenceState.DUE, 4: OccurrenceState.DUE}
                for schedule_id in IDS:
                    decided = by_day(store, schedule_id, first)
                    assert {d: decided[d] for d in range(5)} == expected, schedule_id
                    # The horizon too: 14 days ahead of now, every day after the 5th PLANNED.
                    assert max(decided) >= 5 + 13
                    assert {decided[d] for d in range(5, max(decided) + 1)} == {
                        OccurrenceState.PLANNED
                    }
                for schedule_id in IDS:
                    await env.client.start_workflow(
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
                keys = sorted(e.idempotency_key for e in sink.effects())
                assert keys == sorted(ran)
                assert all(
                    by_day(store, s, first)[d] is OccurrenceState.SUCCEEDED
                    for s in IDS
                    for d in (3, 4)
                )
            finally:
                worker.stop()
    finally:
        store.dispose()
        await env.shutdown()


async def test_with_no_catch_up_nothing_is_decided_when_the_worker_polls(
    tmp_path: Path, task_queue: str
) -> None:
    url, store = sqlite_ledger(tmp_path)
    env = await start_dev_server()
    try:
        with running_sink() as sink:
            first, _ = left_down(store, sink.url)
            wenv = worker_env(server_address(env.client), task_queue, url, tmp_path)
            worker = await anyio.to_thread.run_sync(
                partial(
                    spawn_worker,
                    wenv,
                    tmp_path / "worker.log",
                    "w",
                    module="worker",
                    args=("--no-catch-up",),
                )
            )
            try:
                await first_poll(env.client, task_queue, "w")
                for schedule_id in IDS:
                    assert set(by_day(store, schedule_id, first).values()) == {
                        OccurrenceState.PLANNED
                    }
            finally:
                worker.stop()
    finally:
        store.dispose()
        await env.shutdown()
