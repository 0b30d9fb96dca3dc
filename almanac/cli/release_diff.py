"""What ``almanac tzdb diff`` and ``almanac calendar diff`` share: the window and the report.

Both list, for one spec and two releases of pinned data (a tz database or a holiday calendar),
the occurrences that would change in a window; the report has one shape for both.
"""

from __future__ import annotations

from datetime import datetime, timedelta
from pathlib import Path
from typing import TYPE_CHECKING, Annotated

import typer

from almanac.cli.output import err, fail, out, parse_instant, plural, print_json, terminal_table

if TYPE_CHECKING:
    from rich.table import Table

    from almanac.tzdb import Change
    from timecontract import ScheduleSpecV1

FromOption = Annotated[
    str | None,
    typer.Option("--from", help="Window start, UTC instant, inclusive. Default: cutoverAt."),
]
UntilOption = Annotated[
    str | None,
    typer.Option("--until", help="Window end, UTC instant, exclusive. Default: --from + 366 days."),
]
DEFAULT_WINDOW = timedelta(days=366)
"""The window after ``--from`` when ``--until`` is not given."""


def load_window(
    spec_file: Path, from_: str | None, until: str | None, store: Path
) -> tuple[ScheduleSpecV1, datetime, datetime]:
    """The spec and the diff window ``[start, end)`` (UTC); exit 2 naming a bad file or option."""
    from timecontract import InvalidSpec, load_spec

    try:
        spec = load_spec(spec_file, store)
    except InvalidSpec as exc:
        fail(str(exc))
    start = parse_instant("--from", from_) if from_ is not None else spec.cutover_at
    end = parse_instant("--until", until) if until is not None else start + DEFAULT_WINDOW
    if end < start:
        fail(f"--until={until!r}: before --from")
    return spec, start, end


def print_changes(
    spec: ScheduleSpecV1,
    from_release: str,
    to_release: str,
    changes: list[Change],
    start: datetime,
    end: datetime,
    *,
    as_json: bool,
) -> None:
    """Print a diff between two releases of pinned data (tz database or calendar).

    With ``as_json``: the changes as a JSON array on stdout, the summary line on stderr.
    """
    from timecontract import format_instant

    summary = (
        f"{plural(len(changes), 'occurrence')} of {spec.schedule_id} r{spec.revision} change from "
        f"{from_release} to {to_release} in {format_instant(start)} → {format_instant(end)}"
    )
    if as_json:
        print_json([c.to_json() for c in changes])
        err().print(summary, markup=False, soft_wrap=True)
        return
    console = out(markup=False)
    if changes:
        console.print(_diff_table(spec, from_release, to_release, changes))
    console.print(summary, soft_wrap=True)


def _diff_table(
    spec: ScheduleSpecV1, from_release: str, to_release: str, changes: list[Change]
) -> Table:
    table = terminal_table(
        f"{spec.schedule_id} r{spec.revision} · {spec.time_zone}: {from_release} → {to_release}"
    )
    for column in ("nominal local", "fold"):
        table.add_column(column, no_wrap=True)
    for column in (from_release, to_release, "changed"):
        table.add_column(column)
    for change in changes:
        table.add_row(
            change.nominal_local.isoformat(),
            str(change.fold),
            _describe(change.to_json()["from"]),
            _describe(change.to_json()["to"]),
            ", ".join(change.changed),
        )
    return table


def _describe(side: object) -> str:
    if not isinstance(side, dict):
        return "(no record)"
    if side["disposition"] == "SKIPPED_GAP":
        return f"SKIPPED_GAP (gap at {side['gapAt']})"
    holiday = f' "{side["holiday"]}"' if "holiday" in side else ""
    return f"{side['instant']} {side['utcOffset']} {side['reason']}{holiday}"
