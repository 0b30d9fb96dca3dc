"""The Almanac worker: runs the schedule and occurrence workflows and their activities.

    almanac worker [--identity NAME] [--metrics-port 9464] [--sdk-metrics-port 9465]
                   [--metrics-host 127.0.0.1] [--no-catch-up]
    python -m worker   (the same command: ``almanac.cli.worker``)

Configuration comes from the environment (``ALMANAC_*``, see ``almanac.settings``): the Temporal
address, namespace, TLS (mTLS certificate, key, CA) and API key; the egress allowance
(``ALMANAC_EGRESS_ALLOW``) and where secret references resolve; the ledger URL (a SQLite file in
the data directory by default, migrated on start; PostgreSQL is migrated with ``almanac db
upgrade``); the implementation alias this worker runs (claims check it against the schedule gate).
Before it polls, a worker that serves schedules decides every missed occurrence in the ledger
(``almanac.catch_up``: after downtime, fleet-wide, without waiting for each schedule's workflow;
``--no-catch-up`` turns it off). On SIGTERM or SIGINT the worker stops polling, lets running
activities finish (up to the grace period) and returns; the command then exits 0. Its metrics
endpoints listen on 127.0.0.1 unless ``--metrics-host`` (or ``ALMANAC_METRICS_HOST``) says
otherwise.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import os
import signal
import socket
from collections.abc import Sequence
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta

from temporalio.client import Client
from temporalio.runtime import PrometheusConfig, Runtime, TelemetryConfig
from temporalio.worker import Interceptor, Worker

import ledger
from activities.actions import ActionRegistry
from activities.clock import Clock, SystemClock
from activities.clock_skew import ClockGuard
from activities.deadlines import DeadlineActivities
from activities.heartbeat import HEARTBEAT_THROTTLE
from activities.io import alias_task_queue
from activities.ledger_activities import AlmanacActivities
from activities.metrics import (
    DEFAULT_REGISTRY,
    LedgerCollector,
    default_metrics,
    start_metrics_server,
)
from activities.snapshot import ledger_snapshot
from almanac import shared_code
from almanac.catch_up import catch_up
from almanac.registration import register_search_attributes
from almanac.settings import AlmanacSettings
from ledger import migrate
from timecontract.ids import ID_FORMAT_VERSION
from workflows import ManualRunWorkflow, OccurrenceWorkflow, ScheduleWorkflow

log = logging.getLogger("almanac.worker")
GRACEFUL_SHUTDOWN = timedelta(seconds=20)
WORKFLOWS: Sequence[type] = (ScheduleWorkflow, OccurrenceWorkflow, ManualRunWorkflow)


@dataclass(frozen=True)
class WorkerOptions:
    """How to run one worker process (the command line's flags)."""

    identity: str
    metrics_port: int | None = None
    sdk_metrics_port: int | None = None
    max_concurrent_activities: int = 32
    max_cached_workflows: int = 1000
    """Workflow instances kept in memory per task queue (the SDK's default, 1,000). The bound of
    the worker's memory: past it, the least recently used instance is evicted and replayed from
    its history at its next wake-up. The activities keep as many parsed specs."""
    metrics_host: str | None = None
    """Interface of both metrics endpoints (default: the settings' ``metrics_host``, loopback)."""
    serve_schedules: bool = True
    """Poll the settings' task queue (schedule workflows: materialize, release, publish) as well
    as this alias's occurrence queue. A candidate pool (canary) runs with ``False``: it claims and
    dispatches only the occurrences of the schedules rolled out to its alias."""
    catch_up: bool = True
    """Before polling, decide every schedule's missed occurrences in the ledger
    (``almanac.catch_up``); only a worker that serves schedules does."""


def task_queues(settings: AlmanacSettings, options: WorkerOptions) -> list[str]:
    """The task queues a worker polls: the schedule queue (unless told not to) and its alias's.

    For the default alias the two are one (``activities.io.alias_task_queue``).
    """
    base = settings.temporal.task_queue
    own = alias_task_queue(base, settings.implementation_alias)
    queues = [base] if options.serve_schedules else []
    return queues if own in queues else [*queues, own]


def default_identity() -> str:
    """``almanac-worker@<host>:<pid>``: unique per process, readable in the ledger and UI."""
    return f"almanac-worker@{socket.gethostname()}:{os.getpid()}"


async def connect(
    settings: AlmanacSettings, sdk_metrics_port: int | None = None, metrics_host: str | None = None
) -> Client:
    """Connect to Temporal; with ``sdk_metrics_port``, export the SDK's metrics there.

    The SDK's endpoint listens on ``metrics_host`` (default: the settings', loopback).
    """
    runtime = None
    if sdk_metrics_port is not None:
        host = metrics_host or settings.metrics_host
        shown = f"[{host}]" if ":" in host else host
        telemetry = TelemetryConfig(
            metrics=PrometheusConfig(bind_address=f"{shown}:{sdk_metrics_port}")
        )
        runtime = Runtime(telemetry=telemetry)
    temporal = settings.temporal
    return await Client.connect(
        temporal.address,
        namespace=temporal.namespace,
        tls=temporal.tls_config(),
        api_key=temporal.api_key_value(),
        runtime=runtime,
    )


def open_ledger(settings: AlmanacSettings) -> ledger.Ledger:
    """Open the ledger; the embedded SQLite default is created and migrated on the spot."""
    url = settings.resolved_ledger_url
    if url.startswith("sqlite"):
        settings.data_dir.mkdir(parents=True, exist_ok=True)
        migrate.upgrade(url)
    return ledger.Ledger.from_url(url)


def new_activities(
    client: Client,
    settings: AlmanacSettings,
    ledger_: ledger.Ledger,
    options: WorkerOptions,
    clock: Clock | None = None,
) -> AlmanacActivities:
    """The worker's activities: its ledger, action adapters, identity, alias and clock.

    They keep as many parsed specs as the worker caches workflow instances
    (``options.max_cached_workflows``; :mod:`activities.spec_cache`).

    The host's clock (``clock`` ``None``) is guarded: its skew against the ledger and Temporal is
    measured, exported and bounded by ``settings.max_clock_skew_seconds``
    (:mod:`activities.clock_skew`). A clock passed in (a simulated one) is not.
    """
    guard = None
    if clock is None:
        clock = SystemClock()
        guard = ClockGuard(
            ledger_,
            clock,
            default_metrics().observe_clock_skew,
            bound=timedelta(seconds=settings.max_clock_skew_seconds),
        )
    return AlmanacActivities(
        ledger_,
        ActionRegistry.default(
            temporal_client=client,
            egress=settings.egress_policy,
            secrets=settings.secret_resolver,
        ),
        identity=options.identity,
        clock=clock,
        implementation_alias=settings.implementation_alias,
        tzdb_store=settings.tzdb_store,
        clock_guard=guard,
        spec_cache_size=options.max_cached_workflows,
    )


def build_worker(
    client: Client,
    settings: AlmanacSettings,
    ledger_: ledger.Ledger,
    options: WorkerOptions,
    executor: ThreadPoolExecutor,
    *,
    workflows: Sequence[type] = WORKFLOWS,
    task_queue: str | None = None,
    clock: Clock | None = None,
    interceptors: Sequence[Interceptor] = (),
) -> Worker:
    """Register both workflows and every activity on ``task_queue`` (default: the settings').

    ``workflows``: the production ones; a simulation passes its own (``almanac.gates.simulation``).
    ``clock``: the activities' clock of work (default: the host's, :class:`SystemClock` — the
    edge where production reads the time); ``interceptors``: worker interceptors. A simulation
    passes ``almanac.gates.simulated_clock.SimulatedClock`` as both (``activities.clock`` says why).
    """
    # Each sandboxed workflow instance re-imports its module: share the compiled code.
    shared_code.install(w.__module__.partition(".")[0] for w in workflows)
    activities = new_activities(client, settings, ledger_, options, clock)
    deadlines = DeadlineActivities(ledger_, identity=options.identity, clock=clock or SystemClock())
    rate = settings.max_activity_starts_per_second
    return Worker(
        client,
        task_queue=task_queue or settings.temporal.task_queue,
        workflows=workflows,
        activities=[*activities.all(), *deadlines.all()],
        activity_executor=executor,
        max_concurrent_activities=options.max_concurrent_activities,
        max_cached_workflows=options.max_cached_workflows,
        identity=options.identity,
        interceptors=interceptors,
        graceful_shutdown_timeout=GRACEFUL_SHUTDOWN,
        # Attempts heartbeat every second; send one at least this often, so the server's
        # heartbeat timeout (10 s) keeps most of its span as slack under load.
        max_heartbeat_throttle_interval=HEARTBEAT_THROTTLE,
        # The task queue's start rate (catch-up pacing). An eager activity starts in this worker
        # without passing the server's task-queue limit, so with a limit none is eager.
        max_task_queue_activities_per_second=rate,
        disable_eager_activity_execution=rate is not None,
    )


async def run(
    settings: AlmanacSettings,
    options: WorkerOptions,
    stop: asyncio.Event | None = None,
    *,
    workflows: Sequence[type] = WORKFLOWS,
    clock: Clock | None = None,
    interceptors: Sequence[Interceptor] = (),
) -> None:
    """Run a worker until ``stop`` is set (default: until SIGTERM or SIGINT).

    ``workflows``, ``clock``, ``interceptors``: as :func:`build_worker`.
    """
    if stop is None:
        stop = asyncio.Event()
        loop = asyncio.get_running_loop()
        for signum in (signal.SIGTERM, signal.SIGINT):
            loop.add_signal_handler(signum, stop.set)
    ledger_ = open_ledger(settings)
    if options.metrics_port is not None:
        # The scrape is an edge: the one place the metrics read the wall clock.
        snapshot = lambda: ledger_snapshot(ledger_, datetime.now(UTC))  # noqa: E731
        DEFAULT_REGISTRY.register(LedgerCollector(snapshot))
        host = options.metrics_host or settings.metrics_host
        try:
            start_metrics_server(options.metrics_port, DEFAULT_REGISTRY, addr=host)
        except OSError as exc:  # name the port: "Address already in use" alone does not
            raise OSError(
                exc.errno, f"metrics on {host}:{options.metrics_port}: {exc.strerror}"
            ) from exc
    work_clock = SystemClock() if clock is None else clock
    # The worker's start registers the ID formats its alias recognises (an instant of work).
    ledger.register_implementation(
        ledger_,
        settings.implementation_alias,
        [ID_FORMAT_VERSION],
        work_clock.now(),
        by=options.identity,
    )
    client = await connect(settings, options.sdk_metrics_port, options.metrics_host)
    added = await register_search_attributes(client)
    if added:
        log.info("registered search attributes %s", ", ".join(added))
    queues = task_queues(settings, options)
    log.info(
        "worker %s (implementation alias %s) on %s/%s, task queues %s, ledger %s",
        options.identity,
        settings.implementation_alias,
        settings.temporal.address,
        settings.temporal.namespace,
        ", ".join(queues),
        ledger_.dialect,
    )
    try:
        if options.serve_schedules and options.catch_up:
            await asyncio.to_thread(
                catch_up,
                new_activities(client, settings, ledger_, options, work_clock),
                ledger_,
                work_clock,
                should_stop=stop.is_set,
            )
            if stop.is_set():
                return
        elif options.serve_schedules:
            log.info(
                "catch-up off (--no-catch-up): each schedule's workflow decides what it missed"
            )
        with ThreadPoolExecutor(max_workers=options.max_concurrent_activities) as executor:
            async with contextlib.AsyncExitStack() as running:
                for queue in queues:
                    await running.enter_async_context(
                        build_worker(
                            client,
                            settings,
                            ledger_,
                            options,
                            executor,
                            workflows=workflows,
                            task_queue=queue,
                            clock=clock,
                            interceptors=interceptors,
                        )
                    )
                await stop.wait()
                log.info("stopping: letting running activities finish")
    finally:
        ledger_.dispose()
