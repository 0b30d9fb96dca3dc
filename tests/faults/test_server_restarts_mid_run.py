"""A Temporal dev server restart and a PostgreSQL restart in the middle of a run.

Real processes: ``python -m worker`` as a subprocess, the sink, three schedules firing every two
simulated seconds (calendar 2027-01-10 09:00Z mapped onto the server's clock), and:

- Temporal: ``temporal server start-dev`` with a persistent ``--db-filename``, stopped (SIGTERM)
  while the schedules run and started again on the same port. The worker process is not touched:
  it must reconnect by itself, and the workflows resume from the server's persisted state.
- PostgreSQL: a cluster of the test's own holds the ledger; it is stopped (``pg_ctl stop -m
  fast``: every connection dropped) and started again. The worker must recover without operator
  action: ledger activities fail as ``LedgerUnavailable`` and Temporal retries them.

Each test waits for occurrences to succeed before the outage and after it, then until every
occurrence whose instant passed is settled. Expected: the worker process survived; nothing lost
(all SUCCEEDED, or MISFIRE_EXPIRED by the misfire policy); one effect per succeeded occurrence.
"""

from __future__ import annotations

import contextlib
import itertools
import os
import time
from collections.abc import AsyncIterator, Callable
from contextlib import asynccontextmanager
from datetime import datetime, timedelta
from pathlib import Path

import anyio
import pytest
from chaoskit import DevServer, chaos_ledger_url, start_fleet, unsettled, verdict
from faultkit import (
    WorkerProcess,
    await_until,
    day,
    running_sink,
    spawn_worker,
    worker_env,
)
from ledger_pg import PgServer, find_pg_ctl, start_server
from temporalio.client import Client, WorkflowHandle

import ledger
from almanac.stack.sink import Sink
from ledger import Ledger, OccurrenceState
from ledger.migrate import upgrade

pytestmark = [
    pytest.mark.anyio,
    pytest.mark.temporal,
    pytest.mark.fault,
    pytest.mark.slow,
    pytest.mark.timeout(300),
]

SCHEDULES = 3
RULE = "FREQ=SECONDLY;INTERVAL=2"
OUTAGE = 6.0
"""Seconds the server stays down."""


def ids() -> list[str]:
    return [f"fleet-{n:02d}" for n in range(SCHEDULES)]


def succeeded_since(store: Ledger, since: datetime) -> int:
    """SUCCEEDED occurrences of the fleet with an instant at or after ``since``."""
    try:
        return sum(
            1
            for sid in ids()
            for r in ledger.list_occurrences(
                store, sid, from_utc=since, states=[OccurrenceState.SUCCEEDED]
            )
        )
    except ledger.LedgerUnavailable:
        return 0


def simulated_now(began: float, start: datetime) -> datetime:
    """The fleet's simulated clock: ``start`` plus the real seconds since ``began``."""
    return start + timedelta(seconds=time.monotonic() - began)


async def hold(seconds: float, worker: WorkerProcess) -> None:
    """Let ``seconds`` pass; fail at once if the worker process exits."""
    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline:
        assert worker.process.poll() is None, worker.log.read_text(errors="replace")[-3000:]
        await anyio.sleep(0.1)


@asynccontextmanager
async def fleet_run(
    client: Client, task_queue: str, sink: Sink, start: datetime
) -> AsyncIterator[list[WorkflowHandle]]:  # type: ignore[type-arg]
    handles = await start_fleet(
        client,
        task_queue,
        sink,
        count=SCHEDULES,
        rule=RULE,
        simulate_from=start,
        stop_after=start + timedelta(minutes=30),
    )
    try:
        yield handles
    finally:
        for handle in handles:
            # Best effort at teardown: the server may be the thing that failed.
            with contextlib.suppress(Exception):
                await handle.terminate("the run is over")


async def outage_run(
    store: Ledger,
    sink: Sink,
    worker: WorkerProcess,
    began: float,
    start: datetime,
    stop: Callable[[], None],
    restart: Callable[[], None],
) -> tuple[datetime, datetime]:
    """Wait for progress, stop the server, hold, restart, wait for progress; return instants.

    Returns:
        the simulated instants at which the outage began and at which the run is judged.
    """
    await await_until(
        lambda: succeeded_since(store, start),
        lambda n: n >= 2 * SCHEDULES,
        timeout=60,
        what="occurrences succeed before the outage",
    )
    down_at = simulated_now(began, start)
    await anyio.to_thread.run_sync(stop)
    await hold(OUTAGE, worker)
    await anyio.to_thread.run_sync(restart)
    back_at = simulated_now(began, start)
    await await_until(
        lambda: succeeded_since(store, back_at),
        lambda n: n >= 3 * SCHEDULES,
        timeout=120,
        what="occurrences after the restart succeed (the worker recovered by itself)",
    )
    assert worker.process.poll() is None, "the worker process must survive the outage"
    judged = back_at + timedelta(seconds=4)
    return down_at, judged


def check(store: Ledger, sink: Sink, down_at: datetime, judged: datetime) -> None:
    result = verdict(store, sink, ids(), judged)
    summary = f"{result.passed} passed, {dict(result.states)}, redelivered {result.redelivered}"
    assert result.unsettled == [], summary
    assert set(result.states) <= {"SUCCEEDED", "MISFIRE_EXPIRED"}, summary
    # Occurrences during the outage were released late but within the lateness: they ran.
    during = [
        r
        for sid in ids()
        for r in ledger.list_occurrences(store, sid, from_utc=down_at, to_utc=judged)
    ]
    assert during and all(r.state is OccurrenceState.SUCCEEDED for r in during), summary
    assert set(result.effects) == result.succeeded, summary
    assert all(n == 1 for n in result.effects.values()), summary


async def test_temporal_dev_server_restart_mid_run_loses_nothing(
    request: pytest.FixtureRequest, tmp_path: Path, task_queue: str
) -> None:
    url = chaos_ledger_url(request, tmp_path)
    store = Ledger.from_url(url)
    server = DevServer(db=tmp_path / "temporal.sqlite", log=tmp_path / "temporal.log")
    server.start()
    worker: WorkerProcess | None = None
    start = day(10, 9)
    try:
        with running_sink() as sink:
            env = worker_env(server.address, task_queue, url, tmp_path)
            worker = await anyio.to_thread.run_sync(
                spawn_worker, env, tmp_path / "worker.log", "restart-temporal"
            )
            client = await Client.connect(server.address)
            began = time.monotonic()
            async with fleet_run(client, task_queue, sink, start):
                down_at, judged = await outage_run(
                    store, sink, worker, began, start, server.stop, server.start
                )
                await await_until(
                    lambda: unsettled(store, sink, ids(), judged),
                    lambda left: not left,
                    timeout=150,
                    what="every passed occurrence is settled",
                )
                check(store, sink, down_at, judged)
    finally:
        if worker is not None:
            worker.stop()
        server.stop()
        store.dispose()


@pytest.fixture
def own_pg_cluster() -> PgServer:
    """A PostgreSQL cluster for this test alone (it gets stopped and started mid-run)."""
    pg_ctl = find_pg_ctl()
    if pg_ctl is None:
        message = "PostgreSQL server binaries (pg_ctl) not found; set ALMANAC_PG_CTL"
        if os.environ.get("ALMANAC_REQUIRE_POSTGRES") == "1":
            pytest.fail(message + " (ALMANAC_REQUIRE_POSTGRES=1)", pytrace=False)
        pytest.skip(message)
    server = start_server(pg_ctl)
    try:
        server.admin("CREATE DATABASE almanac_restart")
        upgrade(server.url("almanac_restart"))
        yield server  # type: ignore[misc]
    finally:
        server.stop()


@pytest.mark.postgres
async def test_postgresql_restart_mid_run_loses_nothing(
    own_pg_cluster: PgServer, tmp_path: Path, task_queue: str
) -> None:
    from temporal_env import start_dev_server

    url = own_pg_cluster.url("almanac_restart")
    store = Ledger.from_url(url)
    temporal = await start_dev_server()
    worker: WorkerProcess | None = None
    start = day(10, 9)

    def stop_pg() -> None:
        own_pg_cluster.executor.stop()

    def start_pg() -> None:
        own_pg_cluster.executor.start()
        own_pg_cluster.executor.wait_for_postgres()

    try:
        with running_sink() as sink:
            address = temporal.client.service_client.config.target_host
            env = worker_env(address, task_queue, url, tmp_path)
            worker = await anyio.to_thread.run_sync(
                spawn_worker, env, tmp_path / "worker.log", "restart-postgres"
            )
            began = time.monotonic()
            async with fleet_run(temporal.client, task_queue, sink, start):
                down_at, judged = await outage_run(
                    store, sink, worker, began, start, stop_pg, start_pg
                )
                await await_until(
                    lambda: unsettled(store, sink, ids(), judged),
                    lambda left: not left,
                    timeout=150,
                    what="every passed occurrence is settled",
                )
                check(store, sink, down_at, judged)
                # No fact lost: every instant of every schedule from its first one to `judged`.
                for sid in ids():
                    rows = ledger.list_occurrences(store, sid, to_utc=judged)
                    instants = [r.instant_utc for r in rows]
                    assert instants == sorted(set(instants))
                    assert all(
                        b - a == timedelta(seconds=2) for a, b in itertools.pairwise(instants)
                    ), sid
    finally:
        if worker is not None:
            worker.stop()
        await temporal.shutdown()
        store.dispose()
