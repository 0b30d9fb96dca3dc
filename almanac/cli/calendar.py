"""``almanac calendar``: pinned holiday-calendar releases (list, add, add-file, diff).

Exit codes as in ``almanac.cli.output``: 0 success; 2 invalid input (an unknown calendar, a
malformed or oversized calendar file, a bad spec or option, a release not in the store).
"""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer

from almanac.cli.output import (
    JsonOption,
    command_group,
    fail,
    out,
    print_json,
    tzdb_store,
)
from almanac.cli.release_diff import FromOption, UntilOption, load_window, print_changes

calendar_app, mount = command_group(
    "calendar",
    "Pinned holiday calendars: list the store, add a library calendar or a file, diff a spec.",
)


@calendar_app.command("list")
def list_calendars(as_json: JsonOption = False) -> None:
    """List the stored calendar releases (and the installed holidays library's release)."""
    from almanac import calendars
    from timecontract.calendars import installed_release

    entries = calendars.list_releases(tzdb_store())
    if as_json:
        print_json(
            {
                "installed": installed_release(),
                "stored": [{"name": n, "release": r} for n, r in entries],
            }
        )
        return
    console = out(markup=False)
    console.print(f"installed library release: {installed_release()}")
    for name, release in entries:
        console.print(f"{name}  {release}")


@calendar_app.command("add")
def add(
    name: Annotated[str, typer.Argument(help="A market (NYSE, XECB) or country (US, US-NY).")],
    as_json: JsonOption = False,
) -> None:
    """Store the installed holidays library's dates for NAME (1970–2200) in the calendar store."""
    from almanac import calendars
    from timecontract import SpecError

    try:
        release, path = calendars.add_library(tzdb_store(), name)
    except SpecError as exc:
        fail(str(exc))
    _print_added(name, release, path, as_json=as_json)


@calendar_app.command("add-file")
def add_file(
    file: Annotated[
        Path, typer.Argument(help="A calendar file: {name, holidays: [{date, name}]}.")
    ],
    as_json: JsonOption = False,
) -> None:
    """Store a user calendar file; prints the release (its sha256) a spec pins."""
    from almanac import calendars
    from timecontract import SpecError

    try:
        name, release, path = calendars.add_file(tzdb_store(), file)
    except SpecError as exc:
        fail(str(exc))
    _print_added(name, release, path, as_json=as_json)


def _print_added(name: str, release: str, path: Path, *, as_json: bool) -> None:
    if as_json:
        print_json({"name": name, "release": release, "path": str(path)})
    else:
        out(markup=False).print(f"{name}: release {release} stored in {path}", soft_wrap=True)


@calendar_app.command("diff")
def diff(
    spec_file: Annotated[Path, typer.Argument(help="A scheduleSpec.v1 file with a calendar.")],
    to_release: Annotated[
        str, typer.Option("--to", help="The calendar release to compare with (in the store).")
    ],
    from_: FromOption = None,
    until: UntilOption = None,
    as_json: JsonOption = False,
) -> None:
    """List the occurrences whose instant, disposition, reason or holiday change under --to.

    The same shape as almanac tzdb diff: records resolved with the spec's pinned calendar
    release and with --to, matched by nominal local time and fold. Publish a new revision pinned
    to --to with a cutover to adopt it; materialized history is never recomputed.
    """
    from almanac import calendars
    from timecontract import SpecError

    store = tzdb_store()
    spec, start, end = load_window(spec_file, from_, until, store)
    try:
        changes = calendars.diff_calendar_releases(spec, to_release, start, end, store)
    except SpecError as exc:
        fail(f"--to {to_release}: {exc}")
    assert spec.calendar is not None  # diff_calendar_releases refuses a spec without one
    print_changes(spec, spec.calendar.release, to_release, changes, start, end, as_json=as_json)
