"""The ``almanac`` command line: a thin Typer app over the Python API.

Exit codes: 0 success; 2 invalid input (a bad spec or argument — the message names the field and the
value); 1 an operational failure (a database, Temporal or the network unreachable).
"""

from __future__ import annotations

import json
import os
import sys
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Annotated, NoReturn

import typer
from rich.console import Console
from rich.markup import escape
from rich.table import Table

from almanac.cli.control import mount as mount_control
from almanac.cli.gates import mount as mount_gates
from almanac.cli.ledger import mount as mount_ledger
from almanac.cli.sink import sink_app
from almanac.cli.tzdb import tzdb_app
from almanac.settings import AlmanacSettings
from timecontract import (
    InvalidSpec,
    OccurrenceRecord,
    Reason,
    ScheduleSpecV1,
    format_instant,
    format_offset,
    load_spec,
    nominal_period,
    occurrences,
)

EXIT_INVALID = 2
EXIT_OPERATIONAL = 1

app = typer.Typer(
    name="almanac",
    help="Almanac: scheduled automations as unique, recorded occurrences, run at most once.",
    no_args_is_help=True,
    add_completion=False,
    pretty_exceptions_enable=False,
)
# Pipes and CI logs get a wide console: the tables are meant to be read whole, not wrapped.
console = Console(width=None if sys.stdout.isatty() else 160)
err_console = Console(stderr=True)
app.add_typer(sink_app, name="sink")
app.add_typer(tzdb_app, name="tzdb")
mount_ledger(app)
mount_control(app)
mount_gates(app)


def fail(message: str, code: int = EXIT_INVALID) -> NoReturn:
    """Print ``message`` on stderr and exit with ``code`` (2 invalid input, 1 operational)."""
    err_console.print(f"[red]error:[/red] {escape(message)}", highlight=False, soft_wrap=True)
    raise typer.Exit(code)


def settings() -> AlmanacSettings:
    """The settings from the environment (``ALMANAC_*``)."""
    return AlmanacSettings()


def parse_instant_option(name: str, value: str) -> datetime:
    """Parse a ``--from``/``--to`` option: an ISO 8601 instant with an offset (``…Z``).

    Exits with code 2 naming the option and the value when it has no offset or does not parse.
    """
    try:
        parsed = datetime.fromisoformat(value)
    except ValueError:
        fail(f"{name}={value!r}: not an ISO 8601 instant like 2026-11-01T00:00:00Z")
    if parsed.tzinfo is None:
        fail(f"{name}={value!r}: an instant needs a UTC offset (end it in Z)")
    return parsed.astimezone(UTC)


def load_or_exit(path: Path) -> ScheduleSpecV1:
    """Load and check a spec file, or exit 2 printing every problem."""
    try:
        return load_spec(path, settings().tzdb_store)
    except InvalidSpec as exc:
        fail(str(exc))


@app.command()
def validate(
    files: Annotated[list[Path], typer.Argument(help="Spec files (.yaml, .yml or .json).")],
) -> None:
    """Validate spec files; print every problem. Exit 0 if all are valid, 2 otherwise."""
    store = settings().tzdb_store
    bad = 0
    for path in files:
        try:
            spec = load_spec(path, store)
        except InvalidSpec as exc:
            bad += 1
            err_console.print(f"[red]✗[/red] {escape(str(exc))}", highlight=False, soft_wrap=True)
            continue
        note = "" if spec.action else " (no action: can be previewed, not applied)"
        line = escape(f"{path}: {spec.schedule_id} r{spec.revision}{note}")
        console.print(f"[green]✓[/green] {line}", highlight=False)
    if bad:
        raise typer.Exit(EXIT_INVALID)


@app.command()
def schema() -> None:
    """Print the JSON Schema of scheduleSpec.v1 (for editors and CI validation of spec files)."""
    document = ScheduleSpecV1.model_json_schema(by_alias=True, mode="validation")
    document["$schema"] = "https://json-schema.org/draft/2020-12/schema"
    sys.stdout.write(json.dumps(document, indent=2) + "\n")


@app.command()
def preview(
    spec_file: Annotated[Path, typer.Argument(help="A scheduleSpec.v1 file.")],
    from_: Annotated[
        str | None,
        typer.Option("--from", help="Window start, UTC instant, inclusive. Default: cutoverAt."),
    ] = None,
    to: Annotated[
        str | None,
        typer.Option(
            "--to",
            help="Window end, UTC instant, exclusive. Default: --from + 366 days, or 2,000 "
            "periods of a high-frequency rule.",
        ),
    ] = None,
    as_json: Annotated[bool, typer.Option("--json", help="Print the JSON array contract.")] = False,
    ids: Annotated[bool, typer.Option("--ids", help="Add the occurrenceId column.")] = False,
) -> None:
    """Show the occurrences a spec's revision owns in a window, with their DST reasons.

    The JSON output is a contract: an array sorted by instant (gapAt for skipped records) of
    objects with exactly the keys occurrenceId, logicalSlotId, scheduleId, revision, nominalLocal,
    fold, instant, gapAt, utcOffset, tzdbVersion, disposition and reason.
    """
    spec = load_or_exit(spec_file)
    start = parse_instant_option("--from", from_) if from_ else spec.cutover_at
    end = parse_instant_option("--to", to) if to else start + default_window(spec)
    if end < start:
        fail(f"--to={to!r}: before --from")
    records = occurrences(spec, start, end, tzdb_store=settings().tzdb_store)
    if as_json:
        sys.stdout.write(json.dumps([r.to_json() for r in records], indent=2) + "\n")
        return
    console.print(preview_table(spec, records, start, end, ids=ids))


PREVIEW_PERIODS = 2000


def default_window(spec: ScheduleSpecV1) -> timedelta:
    """The preview's default window: 366 days, or 2,000 periods of a high-frequency rule."""
    return min(timedelta(days=366), nominal_period(spec.parsed_rule) * PREVIEW_PERIODS)


def preview_table(
    spec: ScheduleSpecV1,
    records: list[OccurrenceRecord],
    start: datetime,
    end: datetime,
    *,
    ids: bool = False,
) -> Table:
    """A Rich table: local time, offset, UTC instant, disposition, reason; DST rows in color."""
    title = (
        f"{spec.schedule_id} r{spec.revision} · {spec.rule} · {spec.time_zone} "
        f"(tzdb {spec.tzdb_version}) · {format_instant(start)} → {format_instant(end)}"
    )
    table = Table(title=title, title_justify="left")
    for column in ("nominal local", "fold", "offset", "instant (UTC)", "disposition", "reason"):
        table.add_column(column, no_wrap=True)
    if ids:
        table.add_column("occurrenceId", no_wrap=True)
    for r in records:
        style = "" if r.reason is Reason.UNAMBIGUOUS else "bold yellow"
        if r.disposition.value == "SKIPPED_GAP":
            style = "bold red"
        instant = format_instant(r.instant_utc) if r.instant_utc else f"(gap at {_gap(r)})"
        offset = format_offset(r.utc_offset) if r.utc_offset is not None else "—"
        cells = [r.nominal_local.isoformat(), str(r.fold), offset, instant]
        cells += [r.disposition.value, r.reason.value] + ([r.occurrence_id] if ids else [])
        table.add_row(*cells, style=style)
    dst = sum(1 for r in records if r.reason is not Reason.UNAMBIGUOUS)
    table.caption = f"{len(records)} records, {dst} decided by a DST policy (highlighted)"
    return table


def _gap(record: OccurrenceRecord) -> str:
    return format_instant(record.gap_at_utc) if record.gap_at_utc else "?"


def main() -> None:
    """Console entry point (``almanac``).

    Ends with ``os._exit`` after flushing: temporalio may abort the interpreter at exit
    (sdk-python#300), and the exit code must stay the command's.
    """
    try:
        app()
        code = 0
    except SystemExit as exc:
        code = exc.code if isinstance(exc.code, int) else (0 if exc.code is None else 1)
        if isinstance(exc.code, str):
            sys.stderr.write(exc.code + "\n")
    sys.stdout.flush()
    sys.stderr.flush()
    os._exit(code)
