"""``almanac gates``: run the seed's acceptance gates and print one line per gate.

A thin command over :mod:`almanac.gates.harness` (``bench/gates.py`` is the same as a script). Exit
0 when every gate that ran passes, 1 when one fails; 2 for an unknown gate name.
"""

from __future__ import annotations

from typing import Annotated

import typer

from almanac.cli.output import (
    EXIT_OK,
    EXIT_OPERATIONAL,
    JsonOption,
    fail,
    json_object,
    print_json,
)

GATE_NAMES = (
    "golden",
    "duplicates",
    "id-determinism",
    "recovery",
    "catch-up",
    "deliveries",
    "unknown-effect",
    "acceptance-points",
    "rollback",
    "fleet-recovery",
)
"""``almanac.gates.harness.NAMES``, spelled out so that ``almanac --help`` need not import the
harness (a test keeps the two equal)."""


def gates(
    only: Annotated[
        list[str] | None,
        typer.Argument(
            help="Gates to run (default: all but fleet-recovery): " + ", ".join(GATE_NAMES) + ".",
            show_default=False,
        ),
    ] = None,
    as_json: JsonOption = False,
    fleet_schedules: Annotated[
        int,
        typer.Option(min=1, help="Schedules of the opt-in fleet-recovery gate (minutes)."),
    ] = 1000,
) -> None:
    """Measure the acceptance gates (about a minute): figure, limit and PASS/FAIL per gate.

    fleet-recovery (1,000 schedules after a 7-day outage, end to end: about 3-5 minutes on
    2 cores) runs only when named: almanac gates fleet-recovery.

    With --json: an object with passed, gates (name, figure, unit, limit, passed, and error
    for a check that crashed), notes and seconds. A crashed check is its gate's FAIL line.
    """
    from almanac.gates import harness

    try:
        report = harness.run(only or None, fleet_schedules=fleet_schedules)
    except ValueError as exc:
        fail(str(exc))
    if as_json:
        print_json(
            {
                "passed": report.passed,
                "gates": [_gate_json(json_object(g)) for g in report.gates],
                "notes": report.notes,
                "seconds": report.seconds,
            }
        )
    else:
        for line in report.lines():
            typer.echo(line)
    raise typer.Exit(EXIT_OK if report.passed else EXIT_OPERATIONAL)


def _gate_json(gate: dict[str, object]) -> dict[str, object]:
    """One gate without its notes; a crashed check's figure is ``null`` and its error shown."""
    shown = {k: v for k, v in gate.items() if k not in ("notes", "error")}
    if gate.get("error") is not None:
        shown |= {"figure": None, "error": gate["error"]}
    return shown


def mount(app: typer.Typer) -> None:
    """Add ``gates`` to the ``almanac`` app."""
    app.command()(gates)
