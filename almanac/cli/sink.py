"""``almanac sink``: run the effect-recording HTTP sink (``almanac.stack.sink``) in the foreground.

Stops gracefully on SIGTERM or SIGINT: the listening socket closes, answers in progress finish.
Exit codes: 0 after a graceful stop; 1 when the address cannot be bound or the database opened.
"""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer

from almanac.cli.output import EXIT_OPERATIONAL, err, fail, new_app

sink_app = new_app("Run the HTTP sink that records effects once per Idempotency-Key.")


@sink_app.callback(invoke_without_command=True)
def sink(
    host: Annotated[str, typer.Option(help="Interface to listen on.")] = "127.0.0.1",
    port: Annotated[
        int, typer.Option(help="TCP port (0 picks a free one).", min=0, max=65535)
    ] = 8765,
    db: Annotated[
        str | None,
        typer.Option(help="SQLite file of effects, or :memory:; default <data dir>/sink.sqlite3."),
    ] = None,
    strict: Annotated[
        bool,
        typer.Option(
            help="Refuse repeats like the Idempotency-Key draft: 422 for another payload, "
            "409 while the key's first request is still being answered."
        ),
    ] = False,
) -> None:
    """Serve POST /effects, GET /effects[/{key}], /faults and /healthz until SIGTERM/SIGINT."""
    import os
    import signal
    import threading
    from types import FrameType

    from almanac.settings import AlmanacSettings
    from almanac.stack.sink import EffectStore, SinkServer

    db_path: str | Path = db or AlmanacSettings().data_dir / "sink.sqlite3"
    # The signing key comes from the environment, never the command line (visible in ps).
    signing_secret = os.environ.get("ALMANAC_SINK_SIGNING_SECRET") or None
    try:
        store = EffectStore(db_path, strict=strict)
        server = SinkServer((host, port), store, signing_secret)
    except (OSError, ValueError) as exc:
        fail(f"cannot start the sink on {host}:{port} ({db_path}): {exc}", EXIT_OPERATIONAL)

    def request_stop(signum: int, frame: FrameType | None) -> None:
        # serve_forever runs on this (main) thread, and shutdown() waits for it to return:
        # calling it here would deadlock, so a helper thread calls it.
        threading.Thread(target=server.stop, name="sink-stop").start()

    signal.signal(signal.SIGTERM, request_stop)
    signal.signal(signal.SIGINT, request_stop)
    bound_host, bound_port = server.server_address[:2]
    verifying = ", verifying webhook signatures" if signing_secret else ""
    verifying += ", strict about repeated keys" if strict else ""
    console = err()
    console.print(
        f"sink listening on http://{bound_host!s}:{bound_port} (effects in {db_path}{verifying})"
    )
    try:
        server.serve_forever(poll_interval=0.2)
    finally:
        server.stopping.set()
        store.close()
    console.print("sink stopped")


def mount(app: typer.Typer) -> None:
    """Add ``sink`` to the ``almanac`` app."""
    app.add_typer(sink_app, name="sink")
