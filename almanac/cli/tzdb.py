"""``almanac tzdb``: the pinned tz database releases (list, add, diff).

Exit codes as in ``almanac.cli``: 0 success; 2 invalid input (a malformed release name, a bad spec
or option, a release that is not available); 1 an operational failure (download or verification).
"""

from __future__ import annotations

import json
import sys
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Annotated, NoReturn

import typer
from rich.console import Console
from rich.markup import escape
from rich.table import Table

from almanac import tzdb
from almanac.settings import AlmanacSettings
from timecontract import InvalidSpec, ScheduleSpecV1, SpecError, format_instant, load_spec
from timecontract.zones import INSTALLED_RELEASE

EXIT_INVALID = 2
EXIT_OPERATIONAL = 1

tzdb_app = typer.Typer(
    name="tzdb",
    help="Pinned tz database releases: list them, add one from the package index, diff a spec.",
    no_args_is_help=True,
    add_completion=False,
    pretty_exceptions_enable=False,
)


def _out() -> Console:
    # Pipes and CI logs get a wide console: the tables are meant to be read whole, not wrapped.
    return Console(highlight=False, markup=False, width=None if sys.stdout.isatty() else 160)


def _fail(message: str, code: int = EXIT_INVALID) -> NoReturn:
    Console(stderr=True, highlight=False).print(
        f"[red]error:[/red] {escape(message)}", soft_wrap=True
    )
    raise typer.Exit(code)


def _store() -> Path:
    return AlmanacSettings().tzdb_store


@tzdb_app.command("list")
def list_releases(
    as_json: Annotated[bool, typer.Option("--json", help="Print a JSON array.")] = False,
) -> None:
    """List the releases specs can pin: the installed tzdata's and the local store's."""
    store = _store()
    entries = tzdb.list_releases(store)
    if as_json:
        sys.stdout.write(json.dumps([e.to_json() for e in entries], indent=2) + "\n")
        return
    table = Table(title=f"tz database releases (store: {store})", title_justify="left")
    for column in ("release", "source", "tzdata version", "path"):
        table.add_column(column, overflow="fold")
    for entry in entries:
        source = "installed tzdata" if entry.source == "installed" else "store"
        if entry.problem:
            source = f"store — ignored: {entry.problem}"
        table.add_row(
            entry.release,
            source,
            entry.distribution_version or "?",
            str(entry.path),
            style="dim" if entry.problem else "",
        )
    _out().print(table)


@tzdb_app.command("add")
def add(
    release: Annotated[str, typer.Argument(help="IANA release, e.g. 2022b.")],
    from_wheel: Annotated[
        Path | None,
        typer.Option(
            "--from-wheel",
            help="Take this local tzdata wheel instead of downloading (offline).",
            dir_okay=False,
        ),
    ] = None,
) -> None:
    """Download a release's tzdata wheel, verify the release inside it and store it.

    IANA release YYYYx is tzdata YYYY.n on the package index (a → 1: 2022b → 2022.2). Adding a
    release that is already available does nothing and exits 0.
    """
    store = _store()
    try:
        if release != INSTALLED_RELEASE:  # the installed release needs no store
            store.mkdir(parents=True, exist_ok=True)
    except OSError as exc:
        _fail(f"cannot create the tz release store {store}: {exc.strerror}", 2)
    try:
        result = tzdb.add_release(release, store, wheel=from_wheel)
    except tzdb.TzdbError as exc:
        _fail(str(exc), exc.exit_code)
    out = _out()
    if result.status is tzdb.AddStatus.INSTALLED:
        out.print(
            f"{release}: already available (the installed tzdata "
            f"{result.distribution_version}); nothing to add"
        )
    elif result.status is tzdb.AddStatus.ALREADY_PRESENT:
        out.print(f"{release}: already in the store at {result.path}; nothing to add")
    else:
        version = result.distribution_version or "?"
        out.print(f"{release}: added from tzdata {version} (verified) at {result.path}")


@tzdb_app.command("diff")
def diff(
    spec_file: Annotated[Path, typer.Argument(help="A scheduleSpec.v1 file.")],
    to_release: Annotated[
        str, typer.Option("--to", help="The release to compare with, e.g. 2026b.")
    ],
    from_: Annotated[
        str | None,
        typer.Option("--from", help="Window start, UTC instant, inclusive. Default: cutoverAt."),
    ] = None,
    until: Annotated[
        str | None,
        typer.Option(
            "--until", help="Window end, UTC instant, exclusive. Default: --from + 366 days."
        ),
    ] = None,
    as_json: Annotated[bool, typer.Option("--json", help="Print a JSON array.")] = False,
) -> None:
    """List the occurrences whose instant, offset or disposition would change under --to.

    Records of the spec in the window, resolved with its pinned release and with --to, are matched
    by nominal local time and fold. Exits 0 whether or not there are differences.
    """
    store = _store()
    try:
        tzdb.check_release(to_release)
    except tzdb.MalformedRelease as exc:
        _fail(f"--to: {exc}")
    try:
        spec = load_spec(spec_file, store)
    except InvalidSpec as exc:
        _fail(str(exc))
    start = _instant("--from", from_) if from_ else spec.cutover_at
    end = _instant("--until", until) if until else start + timedelta(days=366)
    if end < start:
        _fail(f"--until={until!r}: before --from")
    try:
        changes = tzdb.diff_releases(spec, to_release, start, end, store=store)
    except SpecError as exc:  # the --to release or the zone in it is not available
        _fail(f"--to {to_release}: {exc}")
    summary = (
        f"{len(changes)} occurrence(s) of {spec.schedule_id} r{spec.revision} change from "
        f"{spec.tzdb_version} to {to_release} in {format_instant(start)} → {format_instant(end)}"
    )
    if as_json:
        sys.stdout.write(json.dumps([c.to_json() for c in changes], indent=2) + "\n")
        Console(stderr=True, highlight=False, markup=False).print(summary, soft_wrap=True)
        return
    out = _out()
    if changes:
        out.print(_diff_table(spec, to_release, changes))
    out.print(summary, soft_wrap=True)


def _diff_table(spec: ScheduleSpecV1, to_release: str, changes: list[tzdb.Change]) -> Table:
    table = Table(
        title=f"{spec.schedule_id} r{spec.revision} · {spec.time_zone}: "
        f"{spec.tzdb_version} → {to_release}",
        title_justify="left",
    )
    for column in ("nominal local", "fold"):
        table.add_column(column, no_wrap=True)
    for column in (spec.tzdb_version, to_release, "changed"):
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
    return f"{side['instant']} {side['utcOffset']} {side['reason']}"


def _instant(name: str, value: str) -> datetime:
    try:
        parsed = datetime.fromisoformat(value)
    except ValueError:
        _fail(f"{name}={value!r}: not an ISO 8601 instant like 2026-11-01T00:00:00Z")
    if parsed.tzinfo is None:
        _fail(f"{name}={value!r}: an instant needs a UTC offset (end it in Z)")
    return parsed.astimezone(UTC)
