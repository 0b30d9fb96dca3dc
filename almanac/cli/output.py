"""What every ``almanac`` command shares: exit codes, the one error line, ``--json``, the exit.

Exit codes (the same for every command):

- ``0`` success;
- ``2`` invalid input: a bad spec, option or argument, an unknown ID; the message names the field
  and the value;
- ``1`` an operational failure: Temporal, the database or the network unreachable, no worker
  answering, a port in use (and, for ``almanac gates``, a gate that fails).

A failure is one line on stderr (``error: <field>=<value>: <why>``), never a traceback. A command
that prints a result takes ``--json`` and then prints JSON on stdout (instants as ISO 8601 UTC
with ``Z``).

One way to exit: a command returns (exit 0) or raises ``typer.Exit(code)``, through :func:`fail`
when there is something to say. :func:`run`, the console entry, turns that into the process's
exit code and leaves with ``os._exit`` after flushing: temporalio may abort the interpreter at
exit (sdk-python#300), and the exit code must stay the command's. Only the console entry and a
second Ctrl-C under ``almanac dev`` call :func:`exit_now`.

This module imports no heavy dependency, so ``almanac --help`` stays fast.
"""

from __future__ import annotations

import asyncio
import json
import os
import sys
from collections.abc import Coroutine
from dataclasses import asdict, is_dataclass
from datetime import UTC, datetime
from typing import Annotated, Any, NoReturn, TypeVar

import typer
from rich.console import Console
from rich.markup import escape

EXIT_OK = 0
EXIT_OPERATIONAL = 1
EXIT_INVALID = 2
EXIT_INTERRUPTED = 130
"""Ctrl-C while a command waits (128 + SIGINT, as shells report it)."""

JsonOption = Annotated[
    bool, typer.Option("--json", help="Print JSON on stdout instead of a table or text.")
]

T = TypeVar("T")


def new_app(help_text: str, **options: Any) -> typer.Typer:
    """A Typer app (or command group) with Almanac's settings: no completion, plain exceptions."""
    return typer.Typer(
        help=help_text, add_completion=False, pretty_exceptions_enable=False, **options
    )


def out(*, markup: bool = True) -> Console:
    """The stdout console; pipes and CI logs get a wide one (tables are read whole, not wrapped)."""
    return Console(highlight=False, markup=markup, width=None if sys.stdout.isatty() else 160)


def err() -> Console:
    """The stderr console (progress, summaries beside ``--json``, errors)."""
    return Console(stderr=True, highlight=False)


def fail(message: str, code: int = EXIT_INVALID) -> NoReturn:
    """Print ``error: <message>`` as one line on stderr and end the command with ``code``.

    Args:
        message: names the field and the value (``--to='x': before --from``); printed verbatim,
            never read as Rich markup.
        code: :data:`EXIT_INVALID` (default) or :data:`EXIT_OPERATIONAL`.

    Raises:
        typer.Exit: always, with ``code``.
    """
    err().print(f"[red]error:[/red] {escape(message)}", soft_wrap=True)
    raise typer.Exit(code)


def print_json(data: Any) -> None:
    """Print ``data`` as indented JSON on stdout; datetimes as UTC ``…Z``, dataclasses as dicts."""
    sys.stdout.write(json.dumps(data, indent=2, default=_json_default) + "\n")


def _json_default(value: Any) -> Any:
    if isinstance(value, datetime):
        from timecontract import format_instant

        return format_instant(value)
    if is_dataclass(value) and not isinstance(value, type):
        return asdict(value)
    raise TypeError(f"not JSON serializable: {type(value).__name__}")


def parse_instant(name: str, value: str) -> datetime:
    """Parse an instant option (``--from``, ``--to``, ``--now`` …): ISO 8601 with an offset.

    Returns:
        The instant, aware, in UTC.

    Raises:
        typer.Exit: code 2, naming the option and the value, when it does not parse or has no
            offset.
    """
    try:
        parsed = datetime.fromisoformat(value)
    except ValueError:
        fail(f"{name}={value!r}: not an ISO 8601 instant like 2026-11-01T00:00:00Z")
    if parsed.tzinfo is None:
        fail(f"{name}={value!r}: an instant needs a UTC offset (end it in Z)")
    return parsed.astimezone(UTC)


def run_async(work: Coroutine[Any, Any, T]) -> T:
    """Run a command's coroutine; turn what it raises into one error line and an exit code.

    Invalid input (a ``ValueError``: a bad spec, a refused revision; an ``AlmanacError`` that is
    a ``LookupError``: a schedule that is not running) exits 2; Temporal unreachable, no worker
    answering and anything unforeseen exit 1; an error with an ``exit_code`` attribute (the tz
    store, the dev stack) exits with it; Ctrl-C exits 130.

    Raises:
        typer.Exit: on every failure, after printing its line.
    """
    from timecontract.errors import AlmanacError

    try:
        return asyncio.run(work)
    except typer.Exit:
        raise
    except KeyboardInterrupt:
        raise typer.Exit(EXIT_INTERRUPTED) from None
    except AlmanacError as exc:
        code = getattr(exc, "exit_code", None)
        if code is None:
            code = EXIT_INVALID if isinstance(exc, ValueError | LookupError) else EXIT_OPERATIONAL
        fail(str(exc), code)
    except ValueError as exc:
        fail(str(exc))
    except Exception as exc:  # an operational failure nobody foresaw: still one line
        first = str(exc).splitlines()[0] if str(exc) else ""
        fail(f"{type(exc).__name__}: {first}", EXIT_OPERATIONAL)


def exit_now(code: int) -> NoReturn:
    """Flush stdout and stderr and end the process with ``code``, skipping interpreter teardown."""
    sys.stdout.flush()
    sys.stderr.flush()
    os._exit(code)


def run(app: typer.Typer, args: list[str] | None = None, prog_name: str | None = None) -> NoReturn:
    """Run ``app`` as the process's command line and exit with its code (see the module doc)."""
    try:
        app(args=args, prog_name=prog_name)
        code = EXIT_OK
    except SystemExit as exc:
        code = exc.code if isinstance(exc.code, int) else (0 if exc.code is None else 1)
        if isinstance(exc.code, str):
            sys.stderr.write(exc.code + "\n")
    exit_now(code)
