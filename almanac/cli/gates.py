"""``almanac gates``: run the seed's acceptance gates and print one line per gate.

A thin command over :mod:`almanac.gates` (``bench/gates.py`` is the same as a script). Exit 0 when
every gate that ran passes, 1 when one fails; 2 for an unknown gate name.
"""

from __future__ import annotations

import sys
from typing import Annotated

import typer

from devtools import gates as gates_module

EXIT_FAILED = 1
EXIT_INVALID = 2


def gates(
    only: Annotated[
        list[str] | None,
        typer.Argument(
            help="Gates to run (default: all): " + ", ".join(gates_module.NAMES) + ".",
            show_default=False,
        ),
    ] = None,
) -> None:
    """Measure the acceptance gates (about a minute): figure, limit and PASS/FAIL per gate."""
    try:
        report = gates_module.run(only or None)
    except ValueError as exc:
        typer.echo(f"error: {exc}", err=True)
        raise typer.Exit(EXIT_INVALID) from exc
    for line in report.lines():
        typer.echo(line)
    sys.stdout.flush()
    raise typer.Exit(0 if report.passed else EXIT_FAILED)


def mount(app: typer.Typer) -> None:
    """Add ``gates`` to the ``almanac`` app."""
    app.command("gates")(gates)
