"""``almanac console``: serve the operator console (``almanac.console``) over the ledger."""

from __future__ import annotations

from typing import Annotated

import typer

from almanac.cli.ledger_access import UrlOption, open_ledger
from almanac.cli.output import EXIT_OPERATIONAL, almanac_settings, fail, out, setting_problem


def console(
    host: Annotated[
        str | None,
        typer.Option(
            help="Interface to listen on (default ALMANAC_CONSOLE_HOST, else 127.0.0.1); reading "
            "needs no sign-in, so widen it only behind a proxy you trust."
        ),
    ] = None,
    port: Annotated[
        int | None,
        typer.Option(min=1, max=65535, help="Port (default ALMANAC_CONSOLE_PORT, else 8240)."),
    ] = None,
    url: UrlOption = None,
) -> None:
    """Serve the console: schedules, occurrences, the human queue, spec preview.

    Web pages over the ledger the CLI reads (--url, else ALMANAC_LEDGER_URL, else the SQLite
    file): each schedule with a month or list of its occurrences, each occurrence's trail. Writes
    (resolving an UNKNOWN_EFFECT case; disabling, enabling or triggering a schedule, through
    Temporal: ALMANAC_TEMPORAL_*) need an operator (ALMANAC_CONSOLE_OPERATORS). See
    docs/console.md.
    """
    import ipaddress

    from pydantic import ValidationError

    from almanac.console import ConsoleSettings, create_app

    try:
        settings = ConsoleSettings()
    except ValidationError as exc:
        fail(setting_problem(exc, ConsoleSettings))
    chosen_host = host or settings.host
    try:
        ipaddress.ip_address(chosen_host)
    except ValueError:
        fail(f"--host={chosen_host!r}: not an IP address (e.g. 127.0.0.1)")
    chosen_port = port or settings.port
    with open_ledger(url) as handle:
        _check_port(chosen_host, chosen_port, _port_source(port))
        import uvicorn

        app = create_app(handle, almanac_settings(), settings)
        out().print(f"almanac console: http://{chosen_host}:{chosen_port}/", soft_wrap=True)
        uvicorn.run(app, host=chosen_host, port=chosen_port, log_level="warning")


def _port_source(option: int | None) -> str | None:
    """Where the port came from: ``--port``, ``ALMANAC_CONSOLE_PORT``, or ``None`` (the default)."""
    import os

    if option:
        return "--port"
    return "ALMANAC_CONSOLE_PORT" if os.environ.get("ALMANAC_CONSOLE_PORT") else None


def _check_port(host: str, port: int, option: str | None) -> None:
    """Fail with one line unless ``host``:``port`` can be bound (probed as ``almanac dev`` does).

    ``option``: what set the port, named in the line (``None``: the default, and the line says
    to choose another with ``--port``).

    The probe binds with ``SO_REUSEADDR``, as uvicorn does, so a port whose old connections
    linger in TIME_WAIT is free; a listener makes the bind fail.

    Raises:
        typer.Exit: 2 for a ``host`` this machine does not have; 1 for a port in use.
    """
    import errno
    import socket

    family = socket.AF_INET6 if ":" in host else socket.AF_INET
    with socket.socket(family, socket.SOCK_STREAM) as probe:
        probe.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        try:
            probe.bind((host, port))
        except OSError as exc:
            reason = exc.strerror or str(exc)
            if exc.errno == errno.EADDRNOTAVAIL:
                fail(f"--host={host!r}: not an address of this machine ({reason})")
            line = (
                f"{option or 'port'}{'=' if option else ' '}{port}: cannot listen on {host}:{port}"
            )
            advice = "" if option else "; it is the default: choose another with --port"
            fail(f"{line} ({reason}){advice}", EXIT_OPERATIONAL)


def mount(app: typer.Typer) -> None:
    """Add ``console`` to the ``almanac`` app."""
    app.command()(console)
