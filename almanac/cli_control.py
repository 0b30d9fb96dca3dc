"""Control commands: apply, disable, enable, status, upcoming, worker and dev.

Each is thin: parse the arguments, call :mod:`almanac.client` (or :mod:`almanac.dev`,
``worker.run``), render with Rich or ``--json``. Exit codes: 0 success; 2 invalid input (the
message names the field and the value); 1 an operational failure (Temporal unreachable, no worker
answering, a port in use) — always one line on stderr, never a traceback.

Commands that use temporalio end with ``os._exit`` after flushing: temporalio may abort at
interpreter exit (sdk-python#300), and the exit code must stay ours.
"""

from __future__ import annotations

import asyncio
import json
import os
import signal
import sys
from collections.abc import Awaitable, Callable
from dataclasses import asdict, is_dataclass
from datetime import datetime, timedelta
from pathlib import Path
from typing import Annotated, Any, NoReturn

import typer
from rich.console import Console
from rich.markup import escape
from rich.table import Table

from almanac.client import (
    AlmanacClient,
    NoWorkerAnswered,
    RevisionRejected,
    ScheduleNotRunning,
    ScheduleSummary,
    TemporalUnavailable,
    check_applicable,
)
from almanac.settings import AlmanacSettings
from timecontract import InvalidSpec, format_instant, load_spec

EXIT_OK = 0
EXIT_INVALID = 2
EXIT_OPERATIONAL = 1


def _out() -> Console:
    # Pipes and CI logs get a wide console: the tables are meant to be read whole, not wrapped.
    return Console(highlight=False, width=None if sys.stdout.isatty() else 160)


def _err(message: str) -> None:
    Console(stderr=True, highlight=False).print(
        f"[red]error:[/red] {escape(message)}", soft_wrap=True
    )


def _exit(code: int) -> NoReturn:
    """Flush and leave with ``code`` without running interpreter teardown (sdk-python#300)."""
    sys.stdout.flush()
    sys.stderr.flush()
    os._exit(code)


def _run(work: Callable[[], Awaitable[None]]) -> NoReturn:
    """Run ``work`` and exit: 0, 2 for invalid input, 1 for operational failures (one line)."""
    try:
        asyncio.run(work())  # type: ignore[arg-type]
    except typer.Exit as exc:
        _exit(exc.exit_code)
    except (InvalidSpec, RevisionRejected, ValueError) as exc:
        _err(str(exc))
        _exit(EXIT_INVALID)
    except ScheduleNotRunning as exc:
        _err(str(exc))
        _exit(EXIT_INVALID)
    except (TemporalUnavailable, NoWorkerAnswered) as exc:
        _err(str(exc))
        _exit(EXIT_OPERATIONAL)
    except KeyboardInterrupt:
        _exit(130)
    except Exception as exc:  # an operational failure we did not foresee: still one line
        first = (str(exc) or "").splitlines()[0] if str(exc) else ""
        _err(f"{type(exc).__name__}: {first}")
        _exit(EXIT_OPERATIONAL)
    _exit(EXIT_OK)


def _json(data: Any) -> None:
    sys.stdout.write(json.dumps(data, indent=2, default=_default) + "\n")


def _default(value: Any) -> Any:
    if isinstance(value, datetime):
        return format_instant(value)
    if is_dataclass(value) and not isinstance(value, type):
        return asdict(value)
    raise TypeError(f"not JSON serializable: {type(value).__name__}")


def _z(value: datetime | None) -> str:
    return format_instant(value) if value is not None else "—"


JsonOption = Annotated[bool, typer.Option("--json", help="Print JSON instead of tables.")]
ScheduleArg = Annotated[str, typer.Argument(help="The scheduleId.", show_default=False)]


def apply(
    spec_file: Annotated[Path, typer.Argument(help="A scheduleSpec.v1 file with an action.")],
    horizon_hours: Annotated[
        float | None,
        typer.Option(
            "--horizon-hours",
            min=1,
            help="Look-ahead of a new schedule's materialization (default 14 days; shortened "
            "for high-frequency rules). Ignored when the schedule runs already.",
        ),
    ] = None,
    wait: Annotated[
        float,
        typer.Option(help="Seconds to wait for the revision to become active (0: don't wait)."),
    ] = 10.0,
    as_json: JsonOption = False,
) -> None:
    """Start a schedule, or publish its next revision by signal (refused unless it increases)."""
    settings = AlmanacSettings()

    async def work() -> None:
        spec = load_spec(spec_file, settings.tzdb_store)
        check_applicable(spec)
        client = await AlmanacClient.connect(settings)
        horizon = timedelta(hours=horizon_hours) if horizon_hours else None
        result = await client.apply(spec, horizon=horizon)
        status = None
        if wait > 0:
            status = await client.wait_active(
                spec.schedule_id, spec.revision, timedelta(seconds=wait)
            )
        if as_json:
            _json({**asdict(result), "active": status is not None, "status": status})
            return
        verb = "started" if result.action == "started" else "published revision"
        line = f"{result.schedule_id}: {verb} r{result.revision} (workflow {result.workflow_id})"
        if wait > 0 and status is None:
            line += f"; not active after {wait:g}s (is a worker running? see its log)"
        elif status is not None:
            line += "; active"
        _out().print(escape(line))

    _run(work)


def disable(
    schedule_id: ScheduleArg,
    reason: Annotated[str, typer.Option("--reason", help="Why (recorded in the ledger).")],
) -> None:
    """Disable a schedule: nothing new is claimed until it is enabled (by signal)."""
    settings = AlmanacSettings()

    async def work() -> None:
        if not reason.strip():
            raise ValueError(f"--reason={reason!r}: disabling needs a non-empty reason")
        client = await AlmanacClient.connect(settings)
        await client.disable(schedule_id, reason)
        _out().print(f"{escape(schedule_id)}: disable sent ({escape(reason.strip())})")

    _run(work)


def enable(schedule_id: ScheduleArg) -> None:
    """Enable a disabled schedule (by signal)."""
    settings = AlmanacSettings()

    async def work() -> None:
        client = await AlmanacClient.connect(settings)
        await client.enable(schedule_id)
        _out().print(f"{escape(schedule_id)}: enable sent")

    _run(work)


def status(
    schedule_id: Annotated[
        str | None, typer.Argument(help="The scheduleId (default: every running schedule).")
    ] = None,
    n: Annotated[int, typer.Option("-n", min=0, max=20, help="Next occurrences to show.")] = 5,
    as_json: JsonOption = False,
) -> None:
    """Show a schedule's gate, active revision, next occurrences and counts by state."""
    settings = AlmanacSettings()

    async def work() -> None:
        client = await AlmanacClient.connect(settings)
        if schedule_id is None:
            summaries = await client.list_schedules()
            if as_json:
                _json([asdict(s) for s in summaries])
            else:
                _out().print(_schedules_table(summaries))
            return
        state = await client.status(schedule_id)
        upcoming = await client.upcoming(schedule_id, n) if n else []
        if as_json:
            _json({"status": state, "upcoming": upcoming})
            return
        console = _out()
        gate = state.gate
        if gate is None:
            console.print(f"{schedule_id}: starting (no revision published yet)")
        else:
            enabled = (
                f"[red]disabled[/red] ({escape(gate.disabled_reason or '')})"
                if gate.disabled
                else "[green]enabled[/green]"
            )
            console.print(
                f"[bold]{escape(schedule_id)}[/bold]  {enabled}  active revision "
                f"r{gate.active_revision}  implementation {escape(gate.implementation_alias)}  "
                f"epoch {gate.execution_epoch}"
            )
        console.print(
            f"next instant {_z(state.next_instant_utc)}  materialized through "
            f"{_z(state.materialized_through_utc)}"
        )
        counts = _counts(state.counts_by_state)
        console.print(f"counts: {counts or '—'}")
        for label, value in (
            ("last error", state.last_error),
            ("last rejected signal", state.last_rejected_signal),
        ):
            if value:
                console.print(f"[yellow]{label}:[/yellow] {escape(value)}")
        if upcoming:
            console.print(_upcoming_table(f"next {len(upcoming)}", upcoming))

    _run(work)


def upcoming(
    schedule_id: ScheduleArg,
    n: Annotated[int, typer.Option("-n", min=1, max=20, help="How many (at most 20).")] = 10,
    as_json: JsonOption = False,
) -> None:
    """List a schedule's next occurrences: local time, UTC instant, state."""
    settings = AlmanacSettings()

    async def work() -> None:
        client = await AlmanacClient.connect(settings)
        rows = await client.upcoming(schedule_id, n)
        if as_json:
            _json(
                [
                    {
                        "occurrenceId": o.occurrence_id,
                        "scheduleId": o.schedule_id,
                        "revision": o.revision,
                        "nominalLocal": o.nominal_local,
                        "fold": o.fold,
                        "instant": format_instant(o.instant_utc),
                        "state": o.state,
                    }
                    for o in rows
                ]
            )
            return
        _out().print(_upcoming_table(schedule_id, rows))

    _run(work)


def _counts(counts: dict[str, int]) -> str:
    return "  ".join(f"{k} {v}" for k, v in sorted(counts.items()) if v)


def _upcoming_table(title: str, rows: list[Any]) -> Table:
    table = Table(title=title, title_justify="left")
    for column in ("nominal local", "fold", "instant (UTC)", "rev", "state", "occurrenceId"):
        table.add_column(column, no_wrap=True)
    for o in rows:
        table.add_row(
            o.nominal_local,
            str(o.fold),
            format_instant(o.instant_utc),
            str(o.revision),
            o.state,
            o.occurrence_id,
        )
    return table


def _schedules_table(summaries: list[ScheduleSummary]) -> Table:
    table = Table(title="schedules", title_justify="left")
    for column in ("scheduleId", "gate", "revision", "next instant (UTC)", "counts by state"):
        table.add_column(column)
    for s in summaries:
        if s.status is None:
            table.add_row(s.schedule_id, "?", "?", "?", escape(s.problem))
            continue
        gate = s.status.gate
        table.add_row(
            s.schedule_id,
            "—" if gate is None else ("disabled" if gate.disabled else "enabled"),
            "—" if gate is None else f"r{gate.active_revision}",
            _z(s.status.next_instant_utc),
            _counts(s.status.counts_by_state),
        )
    table.caption = f"{len(summaries)} running schedule workflows"
    return table


def worker_command(
    identity: Annotated[
        str | None, typer.Option(help="Worker identity (default: almanac-worker@host:pid).")
    ] = None,
    metrics_port: Annotated[
        int | None, typer.Option(help="Serve Almanac's ledger metrics on this port.")
    ] = None,
    sdk_metrics_port: Annotated[
        int | None, typer.Option(help="Serve the Temporal SDK's metrics on this port.")
    ] = None,
    metrics_host: Annotated[
        str | None,
        typer.Option(help="Interface of the metrics endpoints (default ALMANAC_METRICS_HOST)."),
    ] = None,
) -> None:
    """Run a worker (schedule and occurrence workflows, activities) until SIGTERM or SIGINT."""
    import logging

    import worker

    logging.basicConfig(level=logging.INFO, format="%(asctime)s %(levelname)s %(name)s %(message)s")
    options = worker.WorkerOptions(
        identity=identity or worker.default_identity(),
        metrics_port=metrics_port,
        sdk_metrics_port=sdk_metrics_port,
        metrics_host=metrics_host,
    )
    settings = AlmanacSettings()

    async def work() -> None:
        await worker.run(settings, options)

    _run(work)


def dev(
    data_dir: Annotated[
        Path | None,
        typer.Option(help="Data directory (default: ALMANAC_DATA_DIR, else the user's)."),
    ] = None,
    examples: Annotated[Path, typer.Option(help="Spec files to apply.")] = Path("examples"),
    port: Annotated[int, typer.Option(envvar="ALMANAC_DEV_PORT", help="Temporal frontend.")] = 7233,
    ui_port: Annotated[
        int, typer.Option(envvar="ALMANAC_DEV_UI_PORT", help="Temporal Web UI.")
    ] = 8233,
    sink_port: Annotated[
        int, typer.Option(envvar="ALMANAC_DEV_SINK_PORT", help="The effect sink.")
    ] = 8765,
    metrics_port: Annotated[
        int, typer.Option(envvar="ALMANAC_DEV_METRICS_PORT", help="Almanac's metrics.")
    ] = 9464,
    server_metrics_port: Annotated[
        int,
        typer.Option(envvar="ALMANAC_DEV_SERVER_METRICS_PORT", help="Temporal server metrics."),
    ] = 9466,
    ui: Annotated[bool, typer.Option("--ui/--no-ui", help="Serve the Temporal Web UI.")] = True,
) -> None:
    """Run everything on this machine: Temporal dev server, sink, worker; apply the examples.

    Shows occurrences live as they become due, run, retry or are skipped. Ctrl-C stops what it
    started; run it again to resume from the same durable state (in the data directory).
    """
    from almanac.dev import DevError, DevOptions, run_dev

    settings = AlmanacSettings()
    options = DevOptions(
        data_dir=(data_dir or settings.data_dir).expanduser().absolute(),
        examples=examples,
        port=port,
        ui_port=ui_port,
        sink_port=sink_port,
        metrics_port=metrics_port,
        server_metrics_port=server_metrics_port,
        ui=ui,
        settings=settings,
    )
    console = _out()

    async def work() -> None:
        stop = asyncio.Event()
        loop = asyncio.get_running_loop()
        signals = 0

        def on_signal() -> None:
            nonlocal signals
            signals += 1
            if signals > 1:  # a second Ctrl-C: give up waiting (the server dies with us)
                _err("interrupted again: exiting now")
                _exit(EXIT_OPERATIONAL)
            stop.set()

        for signum in (signal.SIGINT, signal.SIGTERM):
            loop.add_signal_handler(signum, on_signal)
        try:
            await run_dev(options, console, stop)
        except DevError as exc:
            _err(str(exc))
            raise typer.Exit(exc.exit_code) from exc

    _run(work)


def mount(app: typer.Typer) -> None:
    """Add the control commands to the ``almanac`` app."""
    app.command()(apply)
    app.command()(disable)
    app.command()(enable)
    app.command()(status)
    app.command()(upcoming)
    app.command("worker")(worker_command)
    app.command()(dev)
