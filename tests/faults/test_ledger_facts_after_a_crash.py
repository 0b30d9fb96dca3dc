"""Issue 15: after a SIGKILL mid-call, the ledger's times and identities are what happened.

Real processes on the real clock: a Temporal dev server, the *production* worker (``python -m
worker``: the host's clock, its default identity ``almanac-worker@<host>:<pid>``) as a subprocess,
a SQLite ledger file shared with the test, and the sink as a slow downstream (it records the first
delivery, then holds the answer far longer than the test lasts). The schedule workflow is the
production one, with a short action timeout so Temporal retries the lost call within seconds.

While occurrence 1's call is held, the worker is SIGKILLed. The test waits until Temporal has
timed the call out and scheduled its retry (so the retry was *scheduled* while no worker ran), and
only then starts a second worker. Then:

- attempt 2 of occurrence 1 started at or after the restart (not at the instant the workflow
  scheduled the call, which Temporal hands back unchanged), and its worker identity is the
  second process's; attempt 1's is the first's;
- every occurrence's event trail is numbered 1, 2, 3, … and its times never go backwards;
- the second worker's ``almanac_dispatch_lag_seconds`` (count and sum) equals the recorded call
  starts (RUNNING events) minus the occurrences' instants;
- the sink holds one effect per occurrence, occurrence 1's delivered twice (the retry re-sent the
  same idempotency key).

Two crashes, one procedure (:func:`crash_mid_call`): the worker alone, on the session's dev
server; and, as issue 15 reproduced it, the worker *and* the Temporal server — a dev server of
the test's own (``chaoskit.DevServer``: a persistent ``--db-filename``, free ports) SIGKILLed
during the held call and started again on its state before the retry is scheduled; the second
worker starts only after that.
"""

from __future__ import annotations

import socket
import subprocess
import sys
import urllib.request
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import anyio
import pytest
from chaoskit import DevServer
from faultkit import (
    REPO,
    WorkerProcess,
    publish,
    running_sink,
    server_address,
    spec_data,
    sqlite_ledger,
    wait_until,
    worker_env,
)
from prometheus_client.parser import text_string_to_metric_families
from temporal_env import eventually
from temporalio.client import Client
from temporalio.testing import WorkflowEnvironment

import ledger
from ledger import AttemptOutcome, Ledger, OccurrenceState
from workflows import ScheduleInput, ScheduleWorkflow, schedule_workflow_id

pytestmark = [pytest.mark.anyio, pytest.mark.temporal, pytest.mark.fault, pytest.mark.slow]

SCHEDULE = "ledger-facts"
ACTION_TIMEOUT = 6.0
PERIOD = timedelta(seconds=30)
LEAD = timedelta(seconds=10)
"""The first occurrence lies this far after the test starts (the worker is up by then)."""


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def spawn_production_worker(env: dict[str, str], log: Path, metrics_port: int) -> WorkerProcess:
    """``python -m worker --metrics-port P`` with its default identity; wait until it polls."""
    handle = log.open("ab")
    process = subprocess.Popen(
        [sys.executable, "-m", "worker", "--metrics-port", str(metrics_port)],
        cwd=REPO,
        env=env,
        stdout=handle,
        stderr=subprocess.STDOUT,
        start_new_session=True,
    )
    handle.close()
    spawned = WorkerProcess(process, log)
    identity = identity_of(process)
    try:
        wait_until(
            lambda: (process.poll(), f"worker {identity} " in log.read_text(errors="replace")),
            lambda v: v[0] is not None or v[1],
            timeout=60,
            what=f"worker {identity} starts",
        )
    except AssertionError:
        spawned.kill()
        raise
    if process.poll() is not None:
        raise AssertionError(f"worker exited {process.returncode}:\n{log.read_text()}")
    return spawned


def identity_of(process: subprocess.Popen[bytes]) -> str:
    """The production worker's default identity for that process (``almanac.worker``)."""
    return f"almanac-worker@{socket.gethostname()}:{process.pid}"


def dispatch_lag(metrics_port: int) -> tuple[float, float]:
    """``(count, sum)`` of the worker's ``almanac_dispatch_lag_seconds`` for the schedule."""
    url = f"http://127.0.0.1:{metrics_port}/metrics"
    with urllib.request.urlopen(url, timeout=5) as response:
        text = response.read().decode()
    values: dict[str, float] = {}
    for family in text_string_to_metric_families(text):
        for sample in family.samples:
            if sample.labels.get("schedule_id") == SCHEDULE:
                values[sample.name] = sample.value
    return (
        values.get("almanac_dispatch_lag_seconds_count", 0.0),
        values.get("almanac_dispatch_lag_seconds_sum", 0.0),
    )


def spec(sink_url: str, first: datetime) -> dict[str, Any]:
    """Two occurrences, ``PERIOD`` apart from ``first`` (UTC), http to the slow sink."""
    data = spec_data(SCHEDULE, None)
    data.update(
        rule=f"FREQ=SECONDLY;INTERVAL={int(PERIOD.total_seconds())};COUNT=2",
        start=first.replace(tzinfo=None).isoformat(),
        misfirePolicy="SKIP",
        cutoverAt=(first - timedelta(hours=1)).strftime("%Y-%m-%dT%H:%M:%SZ"),
        action={
            "name": "http",
            "parameters": {
                "url": f"{sink_url}/effects",
                "resultUrl": f"{sink_url}/effects/{{idempotencyKey}}",
                "timeoutSeconds": 120,
            },
        },
    )
    return data


async def retry_scheduled(client: Client, occurrence_id: str) -> bool:
    """Whether Temporal has timed out the occurrence's running call and scheduled attempt 2."""
    description = await client.get_workflow_handle(occurrence_id).describe()
    pending = description.raw_description.pending_activities
    return any(a.attempt >= 2 for a in pending)


def trail_is_monotonic(ledger_: Ledger, occurrence_id: str) -> None:
    events = ledger.show_occurrence(ledger_, occurrence_id).events
    assert [e.sequence for e in events] == list(range(1, len(events) + 1)), occurrence_id
    times = [e.at_utc for e in events]
    assert times == sorted(times), (
        occurrence_id,
        [(e.sequence, e.to_state, e.at_utc) for e in events],
    )


async def crash_mid_call(
    client: Client, task_queue: str, tmp_path: Path, server: DevServer | None
) -> None:
    """Run the procedure of the module docstring on ``client`` and assert its facts.

    ``server``: also SIGKILL this Temporal server (``client``'s) with the first worker, and start
    it again at once on its persisted state; ``None`` kills the worker alone.
    """
    url, ledger_ = sqlite_ledger(tmp_path)
    env = worker_env(server_address(client), task_queue, url, tmp_path)
    log = tmp_path / "workers.log"
    ports = free_port(), free_port()
    first_instant = (datetime.now(UTC) + LEAD).replace(microsecond=0)
    with running_sink() as sink:
        # Occurrence 1's first delivery is recorded, then its answer held (the slow endpoint).
        first = f"{SCHEDULE}.r1.{first_instant:%Y%m%dT%H%M%S}.f0"
        sink.add_fault(match=first, delay=600, delayTimes=1)
        data = spec(sink.url, first_instant)
        # Published now, so both occurrences are materialized however long the worker takes to
        # start (the workflow's own publication of the same spec is then a no-op).
        publish(ledger_, data, datetime.now(UTC))
        worker_a = spawn_production_worker(env, log, ports[0])
        worker_b: WorkerProcess | None = None
        try:
            await client.start_workflow(
                ScheduleWorkflow.run,
                ScheduleInput(
                    schedule_id=SCHEDULE,
                    initial_spec=data,
                    occurrence_action_timeout_seconds=ACTION_TIMEOUT,
                ),
                id=schedule_workflow_id(SCHEDULE),
                task_queue=task_queue,
            )
            await anyio.to_thread.run_sync(
                lambda: wait_until(
                    lambda: sink.effect(first),
                    lambda effect: effect is not None,
                    timeout=90,
                    what="the sink records occurrence 1's first delivery",
                )
            )
            running = ledger.show_occurrence(ledger_, first)
            assert running.occurrence.state is OccurrenceState.RUNNING
            worker_a.kill()
            if server is not None:
                await anyio.to_thread.run_sync(server.kill)
                await anyio.to_thread.run_sync(server.start)  # same port, the state it persisted
            # Later: Temporal times the lost call out and schedules attempt 2 with no worker up.
            await eventually(lambda: retry_scheduled(client, first), bool, timeout=60)
            restart = datetime.now(UTC)
            worker_b = await anyio.to_thread.run_sync(spawn_production_worker, env, log, ports[1])
            await anyio.to_thread.run_sync(
                lambda: wait_until(
                    lambda: [
                        (o.occurrence_id, o.state.value, o.state_reason)
                        for o in ledger.list_occurrences(ledger_, SCHEDULE)
                    ],
                    lambda s: [state for _, state, _ in s] == ["SUCCEEDED"] * 2,
                    timeout=180,
                    what=f"both occurrences succeed (first instant {first_instant})\n"
                    + log.read_text(errors="replace")[-4000:],
                )
            )
            lag_count, lag_sum = dispatch_lag(ports[1])
            deliveries = [(e.idempotency_key, e.delivery_count) for e in sink.effects()]
        finally:
            if worker_a.process.poll() is None:
                worker_a.kill()
            if worker_b is not None:
                worker_b.stop()

    occurrences = ledger.list_occurrences(ledger_, SCHEDULE)
    assert [o.instant_utc for o in occurrences] == [first_instant, first_instant + PERIOD]
    # One effect per occurrence: the retry re-sent occurrence 1's key, the sink kept one effect.
    second = occurrences[1].occurrence_id
    assert sorted(deliveries) == sorted([(first, 2), (second, 1)]), deliveries
    detail = ledger.show_occurrence(ledger_, first)
    attempts = detail.attempts
    assert [(a.claim_generation, a.outcome) for a in attempts] == [
        (1, AttemptOutcome.LOST.value),
        (2, AttemptOutcome.SUCCEEDED.value),
    ]
    assert attempts[0].worker_identity == identity_of(worker_a.process)
    assert attempts[1].worker_identity == identity_of(worker_b.process)
    assert attempts[0].started_at_utc < restart
    # The retry's own time: at or after the process that ran it started, not the instant the
    # workflow scheduled the call (before the crash).
    assert attempts[1].started_at_utc >= restart, (attempts[1].started_at_utc, restart)
    # Nobody saw attempt 1 end: it has no finish time; worker B found it lost, after its start.
    assert attempts[0].finished_at_utc is None
    assert attempts[0].lost_detected_by == identity_of(worker_b.process)
    assert attempts[0].lost_detected_at_utc is not None
    assert attempts[0].lost_detected_at_utc >= restart
    for occurrence in occurrences:
        trail_is_monotonic(ledger_, occurrence.occurrence_id)
    # Every call start worker B recorded (RUNNING events by B) is one dispatch-lag observation.
    starts = [
        (o.instant_utc, e.at_utc)
        for o in occurrences
        for e in ledger.show_occurrence(ledger_, o.occurrence_id).events
        if e.to_state == "RUNNING" and e.by == identity_of(worker_b.process)
    ]
    assert len(starts) == 2  # occurrence 1's retry and occurrence 2's first call
    assert lag_count == len(starts)
    recorded = sum((at - instant).total_seconds() for instant, at in starts if instant)
    assert lag_sum == pytest.approx(recorded, abs=1e-3)
    ledger_.dispose()


async def test_after_a_sigkill_mid_call_the_ledger_records_the_retry_s_own_time_and_worker(
    dev_env: WorkflowEnvironment, task_queue: str, tmp_path: Path
) -> None:
    await crash_mid_call(dev_env.client, task_queue, tmp_path, server=None)


async def test_after_a_sigkill_of_worker_and_temporal_server_mid_call_the_facts_hold(
    task_queue: str, tmp_path: Path
) -> None:
    server = DevServer(db=tmp_path / "temporal.sqlite", log=tmp_path / "temporal.log")
    try:
        await anyio.to_thread.run_sync(server.start)
        client = await Client.connect(server.address)
        await crash_mid_call(client, task_queue, tmp_path, server=server)
    finally:
        await anyio.to_thread.run_sync(server.stop)
