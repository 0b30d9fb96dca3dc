"""``almanac sink``: run the effect-recording HTTP sink in the foreground (see :mod:`almanac.sink`).

Stops gracefully on SIGTERM or SIGINT: the listening socket closes, answers in progress finish.
Exit codes: 0 after a graceful stop; 1 when the address cannot be bound or the database opened.
"""

from __future__ import annotations

import os
import signal
import threading
from pathlib import Path
from types import FrameType
from typing import Annotated

import typer
from rich.console import Console

from almanac.settings import AlmanacSettings
from almanac.sink import EffectStore, SinkServer

sink_app = typer.Typer(
    help="Run the HTTP sink that records effects once per Idempotency-Key.",
    add_completion=False,
    pretty_exceptions_enable=False,
)
_err = Console(stderr=True)


@sink_app.callback(invoke_without_command=True)
def sink(
    host: Annotated[str, typer.Option(help="Interface to listen on.")] = "127.0.0.1",
    port: Annotated[int, typer.Option(help="TCP port (0 picks a free one).", min=0)] = 8765,
    db: Annotated[
        str | None,
        typer.Option(help="SQLite file of effects, or :memory:; default <data dir>/sink.sqlite3."),
    ] = None,
) -> None:
    """Serve POST /effects, GET /effects[/{key}], /faults and /healthz until SIGTERM/SIGINT."""
    db_path: str | Path = db or AlmanacSettings().data_dir / "sink.sqlite3"
    # The signing key comes from the environment, never the command line (visible in ps).
    signing_secret = os.environ.get("ALMANAC_SINK_SIGNING_SECRET") or None
    try:
        store = EffectStore(db_path)
        server = SinkServer((host, port), store, signing_secret)
    except (OSError, ValueError) as exc:
        _err.print(f"[red]error:[/red] cannot start the sink on {host}:{port} ({db_path}): {exc}")
        raise typer.Exit(1) from exc

    def request_stop(signum: int, frame: FrameType | None) -> None:
        # serve_forever runs on this (main) thread, and shutdown() waits for it to return:
        # calling it here would deadlock, so a helper thread calls it.
        threading.Thread(target=server.stop, name="sink-stop").start()

    signal.signal(signal.SIGTERM, request_stop)
    signal.signal(signal.SIGINT, request_stop)
    bound_host, bound_port = server.server_address[:2]
    verifying = ", verifying webhook signatures" if signing_secret else ""
    _err.print(
        f"sink listening on http://{bound_host!s}:{bound_port} (effects in {db_path}{verifying})"
    )
    try:
        server.serve_forever(poll_interval=0.2)
    finally:
        server.stopping.set()
        store.close()
    _err.print("sink stopped")
