"""The Almanac worker: runs the schedule and occurrence workflows and their activities.

    almanac worker [--identity NAME] [--metrics-port 9464] [--sdk-metrics-port 9465]
    python -m worker   (the same command: ``almanac.cli.worker``)

Configuration comes from the environment (``ALMANAC_*``, see ``almanac.settings``): the Temporal
address, namespace, TLS and API key; the ledger URL (a SQLite file in the data directory by
default, migrated on start; PostgreSQL is migrated with ``almanac db upgrade``); the
implementation alias this worker runs (claims check it against the schedule gate). On SIGTERM or
SIGINT the worker stops polling, lets running activities finish (up to the grace period) and
returns; the command then exits 0.
"""

from __future__ import annotations

import asyncio
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
from activities.ledger_activities import AlmanacActivities
from activities.metrics import DEFAULT_REGISTRY, LedgerCollector, start_metrics_server
from activities.snapshot import ledger_snapshot
from almanac.registration import register_search_attributes
from almanac.settings import AlmanacSettings
from ledger import migrate
from workflows import OccurrenceWorkflow, ScheduleWorkflow

log = logging.getLogger("almanac.worker")
GRACEFUL_SHUTDOWN = timedelta(seconds=20)
WORKFLOWS: Sequence[type] = (ScheduleWorkflow, OccurrenceWorkflow)


@dataclass(frozen=True)
class WorkerOptions:
    """How to run one worker process (the command line's flags)."""

    identity: str
    metrics_port: int | None = None
    sdk_metrics_port: int | None = None
    max_concurrent_activities: int = 32


def default_identity() -> str:
    """``almanac-worker@<host>:<pid>``: unique per process, readable in the ledger and UI."""
    return f"almanac-worker@{socket.gethostname()}:{os.getpid()}"


async def connect(settings: AlmanacSettings, sdk_metrics_port: int | None = None) -> Client:
    """Connect to Temporal; with ``sdk_metrics_port``, export the SDK's metrics there."""
    runtime = None
    if sdk_metrics_port is not None:
        telemetry = TelemetryConfig(
            metrics=PrometheusConfig(bind_address=f"0.0.0.0:{sdk_metrics_port}")
        )
        runtime = Runtime(telemetry=telemetry)
    temporal = settings.temporal
    return await Client.connect(
        temporal.address,
        namespace=temporal.namespace,
        tls=temporal.tls,
        api_key=temporal.api_key,
        runtime=runtime,
    )


def open_ledger(settings: AlmanacSettings) -> ledger.Ledger:
    """Open the ledger; the embedded SQLite default is created and migrated on the spot."""
    url = settings.resolved_ledger_url
    if url.startswith("sqlite"):
        settings.data_dir.mkdir(parents=True, exist_ok=True)
        migrate.upgrade(url)
    return ledger.Ledger.from_url(url)


def build_worker(
    client: Client,
    settings: AlmanacSettings,
    ledger_: ledger.Ledger,
    options: WorkerOptions,
    executor: ThreadPoolExecutor,
    *,
    workflows: Sequence[type] = WORKFLOWS,
    clock: Clock | None = None,
    interceptors: Sequence[Interceptor] = (),
) -> Worker:
    """Register both workflows and every activity on the settings' task queue.

    ``workflows``: the production ones; a simulation passes its own (``devtools.simulation``).
    ``clock``: the activities' clock of work (default: the host's, :class:`SystemClock` — the
    edge where production reads the time); ``interceptors``: worker interceptors. A simulation
    passes ``devtools.simulated_clock.SimulatedClock`` as both (``activities.clock`` says why).
    """
    activities = AlmanacActivities(
        ledger_,
        ActionRegistry.default(temporal_client=client),
        identity=options.identity,
        clock=SystemClock() if clock is None else clock,
        implementation_alias=settings.implementation_alias,
        tzdb_store=settings.tzdb_store,
    )
    return Worker(
        client,
        task_queue=settings.temporal.task_queue,
        workflows=workflows,
        activities=activities.all(),
        activity_executor=executor,
        max_concurrent_activities=options.max_concurrent_activities,
        identity=options.identity,
        interceptors=interceptors,
        graceful_shutdown_timeout=GRACEFUL_SHUTDOWN,
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
        start_metrics_server(options.metrics_port, DEFAULT_REGISTRY)
    client = await connect(settings, options.sdk_metrics_port)
    added = await register_search_attributes(client)
    if added:
        log.info("registered search attributes %s", ", ".join(added))
    log.info(
        "worker %s (implementation alias %s) on %s/%s, task queue %s, ledger %s",
        options.identity,
        settings.implementation_alias,
        settings.temporal.address,
        settings.temporal.namespace,
        settings.temporal.task_queue,
        ledger_.dialect,
    )
    try:
        with ThreadPoolExecutor(max_workers=options.max_concurrent_activities) as executor:
            async with build_worker(
                client,
                settings,
                ledger_,
                options,
                executor,
                workflows=workflows,
                clock=clock,
                interceptors=interceptors,
            ):
                await stop.wait()
                log.info("stopping: letting running activities finish")
    finally:
        ledger_.dispose()
