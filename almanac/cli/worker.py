"""``almanac worker`` (and ``python -m worker``, the same command): run a worker process."""

from __future__ import annotations

from typing import Annotated, NoReturn

import typer

from almanac.cli.output import new_app, run, run_async


def worker(
    identity: Annotated[
        str | None, typer.Option(help="Worker identity (default: almanac-worker@host:pid).")
    ] = None,
    metrics_port: Annotated[
        int | None,
        typer.Option(min=1, max=65535, help="Serve Almanac's ledger metrics on this port."),
    ] = None,
    sdk_metrics_port: Annotated[
        int | None,
        typer.Option(min=1, max=65535, help="Serve the Temporal SDK's metrics on this port."),
    ] = None,
    metrics_host: Annotated[
        str | None,
        typer.Option(help="Interface of the metrics endpoints (default ALMANAC_METRICS_HOST)."),
    ] = None,
    max_cached_workflows: Annotated[
        int,
        typer.Option(
            min=0,
            help="Workflow instances kept in memory per task queue (bounds the worker's memory; "
            "an evicted one is replayed at its next wake-up).",
        ),
    ] = 1000,
    schedules: Annotated[
        bool,
        typer.Option(
            help="Also serve schedule workflows (the base task queue). A canary pool of another "
            "implementation alias runs with --no-schedules: it serves only its alias's queue."
        ),
    ] = True,
    catch_up: Annotated[
        bool,
        typer.Option(
            help="Before polling, decide every enabled schedule's missed occurrences in the "
            "ledger by its misfire policy and materialize its horizon (a fast fleet-wide catch-up "
            "after downtime; the schedule workflows then start what is DUE). A change sent while "
            "no worker ran is applied after it. --no-catch-up leaves it all to each schedule's "
            "workflow; a --no-schedules worker never catches up."
        ),
    ] = True,
) -> None:
    """Run a worker (schedule and occurrence workflows, activities) until SIGTERM or SIGINT."""
    import logging

    from almanac import worker as worker_process
    from almanac.settings import AlmanacSettings

    logging.basicConfig(level=logging.INFO, format="%(asctime)s %(levelname)s %(name)s %(message)s")
    options = worker_process.WorkerOptions(
        identity=identity or worker_process.default_identity(),
        metrics_port=metrics_port,
        sdk_metrics_port=sdk_metrics_port,
        metrics_host=metrics_host,
        max_cached_workflows=max_cached_workflows,
        serve_schedules=schedules,
        catch_up=catch_up,
    )
    run_async(worker_process.run(AlmanacSettings(), options))


def mount(app: typer.Typer) -> None:
    """Add ``worker`` to the ``almanac`` app."""
    app.command()(worker)


def main() -> NoReturn:
    """``python -m worker`` (top-level ``worker.py``): this one command as the command line."""
    single = new_app("Run an Almanac worker.")
    single.command()(worker)
    run(single, prog_name="python -m worker")
