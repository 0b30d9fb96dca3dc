"""``almanac dev``: the whole stack on this machine (the supervisor is ``almanac.stack.dev``)."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer

from almanac.cli.output import (
    EXIT_OPERATIONAL,
    almanac_settings,
    err,
    exit_now,
    fail,
    out,
    run_async,
)


def dev(
    data_dir: Annotated[
        Path | None,
        typer.Option(help="Data directory (default: ALMANAC_DATA_DIR, else the user's)."),
    ] = None,
    examples: Annotated[Path, typer.Option(help="Spec files to apply.")] = Path("examples"),
    port: Annotated[
        int, typer.Option(envvar="ALMANAC_DEV_PORT", min=1, max=65535, help="Temporal frontend.")
    ] = 7233,
    ui_port: Annotated[
        int, typer.Option(envvar="ALMANAC_DEV_UI_PORT", min=1, max=65535, help="Temporal Web UI.")
    ] = 8233,
    sink_port: Annotated[
        int, typer.Option(envvar="ALMANAC_DEV_SINK_PORT", min=1, max=65535, help="The effect sink.")
    ] = 8765,
    metrics_port: Annotated[
        int,
        typer.Option(
            envvar="ALMANAC_DEV_METRICS_PORT", min=1, max=65535, help="Almanac's metrics."
        ),
    ] = 9464,
    server_metrics_port: Annotated[
        int,
        typer.Option(
            envvar="ALMANAC_DEV_SERVER_METRICS_PORT",
            min=1,
            max=65535,
            help="Temporal server metrics.",
        ),
    ] = 9466,
    console_port: Annotated[
        int,
        typer.Option(
            envvar="ALMANAC_DEV_CONSOLE_PORT", min=1, max=65535, help="The operator console."
        ),
    ] = 8240,
    ui: Annotated[bool, typer.Option("--ui/--no-ui", help="Serve the Temporal Web UI.")] = True,
    host: Annotated[
        str,
        typer.Option(
            envvar="ALMANAC_DEV_HOST",
            help="IPv4 interface every service listens on; 0.0.0.0 for all (no authentication!).",
        ),
    ] = "127.0.0.1",
    reset: Annotated[
        bool,
        typer.Option(
            "--reset",
            help="Start from empty state: move the previous Temporal, ledger and sink state to "
            "<data dir>/reset-N/ first (nothing is deleted).",
        ),
    ] = False,
) -> None:
    """Run everything on this machine: Temporal dev server, sink, worker; apply the examples.

    Shows occurrences live as they become due, run, retry or are skipped. Ctrl-C stops what it
    started; run it again to resume from the same durable state (in the data directory).
    """
    import asyncio
    import ipaddress
    import signal

    from almanac.stack.dev import DevOptions, run_dev

    try:
        ipaddress.IPv4Address(host)
    except ValueError:
        fail(
            f"--host (ALMANAC_DEV_HOST)={host!r}: not an IPv4 address (e.g. 127.0.0.1, or 0.0.0.0 "
            "for every interface)"
        )
    settings = almanac_settings()
    options = DevOptions(
        data_dir=(data_dir or settings.data_dir).expanduser().absolute(),
        examples=examples,
        port=port,
        ui_port=ui_port,
        sink_port=sink_port,
        metrics_port=metrics_port,
        server_metrics_port=server_metrics_port,
        console_port=console_port,
        ui=ui,
        host=host,
        reset=reset,
        settings=settings,
    )

    async def work() -> None:
        stop = asyncio.Event()
        loop = asyncio.get_running_loop()
        requests = StopRequests()

        def on_signal(signum: int) -> None:
            if requests.forced(signum):
                # A second Ctrl-C gives up waiting (the server dies with us): a signal handler
                # cannot raise into the command, so this is the one place that exits directly.
                err().print("[red]error:[/red] interrupted again: exiting now", soft_wrap=True)
                exit_now(EXIT_OPERATIONAL)
            stop.set()

        for signum in (signal.SIGINT, signal.SIGTERM):
            loop.add_signal_handler(signum, on_signal, signum)
        await run_dev(options, out(), stop)  # a DevError carries its exit code (2 or 1)

    run_async(work())


class StopRequests:
    """Which stop signal gives up the graceful stop: a Ctrl-C (SIGINT) after any earlier one.

    A repeated SIGTERM only asks again: ``make run`` stopped by ``kill -TERM -- -<group>`` or a
    supervisor delivers it twice (to the group, and make passes it on to its child), and
    neither means "exit now".
    """

    def __init__(self) -> None:
        self.received = 0

    def forced(self, signum: int) -> bool:
        """Record ``signum``; True when it should end the process at once."""
        import signal

        self.received += 1
        return self.received > 1 and signum == signal.SIGINT


def mount(app: typer.Typer) -> None:
    """Add ``dev`` to the ``almanac`` app."""
    app.command()(dev)
