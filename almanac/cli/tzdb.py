"""``almanac tzdb``: the pinned tz database releases (list, add, diff).

Exit codes as in ``almanac.cli.output``: 0 success; 2 invalid input (a malformed release name, a
bad spec or option, a release that is not available or not published on the package index); 1 an
operational failure (the index unreachable, a download or verification failed).
"""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING, Annotated

import typer

from almanac.cli.output import (
    JsonOption,
    command_group,
    fail,
    out,
    print_json,
    terminal_table,
    tzdb_store,
)
from almanac.cli.release_diff import FromOption, UntilOption, load_window, print_changes

if TYPE_CHECKING:
    pass

tzdb_app, mount = command_group(
    "tzdb",
    "Pinned tz database releases: list them, add one from the package index, diff a spec.",
)


@tzdb_app.command("list")
def list_releases(as_json: JsonOption = False) -> None:
    """List the releases specs can pin: the installed tzdata's and the local store's."""
    from almanac import tzdb

    store = tzdb_store()
    entries = tzdb.list_releases(store)
    if as_json:
        print_json([e.to_json() for e in entries])
        return
    table = terminal_table(f"tz database releases (store: {store})")
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
    out(markup=False).print(table)


@tzdb_app.command("add")
def add(
    release: Annotated[
        str | None,
        typer.Argument(help="IANA release, e.g. 2022b (optional with --from-tarball)."),
    ] = None,
    from_wheel: Annotated[
        Path | None,
        typer.Option(
            "--from-wheel",
            help="Take this local tzdata wheel instead of downloading (offline).",
            dir_okay=False,
        ),
    ] = None,
    from_tarball: Annotated[
        Path | None,
        typer.Option(
            "--from-tarball",
            help="Compile this IANA source tarball (tzdataYYYYx.tar.gz) with zic instead: for "
            "releases before 2020a, which the package index does not carry.",
            dir_okay=False,
        ),
    ] = None,
    as_json: JsonOption = False,
) -> None:
    """Download a release's tzdata wheel, verify the release inside it and store it.

    IANA release YYYYx is tzdata YYYY.n on the package index (a → 1: 2022b → 2022.2). With
    --from-tarball nothing is downloaded: the tarball's version file names the release (it
    must equal RELEASE when given), zic compiles it, and it is stored like the others. Adding a
    release that is already available does nothing and exits 0. With --json: an object with
    release, status (INSTALLED, ALREADY_PRESENT or ADDED), distributionVersion and path.
    """
    from almanac import tzdb
    from timecontract.zones import INSTALLED_RELEASE

    if from_wheel is not None and from_tarball is not None:
        fail("--from-wheel and --from-tarball are mutually exclusive: give one of them")
    if release is None and from_tarball is None:
        fail("RELEASE is required (or give --from-tarball, whose version file names it)")
    store = tzdb_store()
    try:
        if release != INSTALLED_RELEASE:  # the installed release needs no store
            store.mkdir(parents=True, exist_ok=True)
    except OSError as exc:
        fail(f"cannot create the tz release store {store}: {exc.strerror}")
    try:
        if from_tarball is not None:
            from almanac.tzdb_tarball import add_release_from_tarball

            result = add_release_from_tarball(from_tarball, store, release=release)
        else:
            assert release is not None
            result = tzdb.add_release(release, store, wheel=from_wheel)
    except tzdb.TzdbError as exc:
        fail(str(exc), exc.exit_code)
    release = result.release
    if as_json:
        print_json(
            {
                "release": release,
                "status": result.status.name,
                "distributionVersion": result.distribution_version,
                "path": str(result.path),
            }
        )
        return
    console = out(markup=False)
    if result.status is tzdb.AddStatus.INSTALLED:
        console.print(
            f"{release}: already available (the installed tzdata "
            f"{result.distribution_version}); nothing to add"
        )
    elif result.status is tzdb.AddStatus.ALREADY_PRESENT:
        console.print(f"{release}: already in the store at {result.path}; nothing to add")
    elif from_tarball is not None:
        console.print(f"{release}: compiled from {from_tarball.name} with zic at {result.path}")
    else:
        version = result.distribution_version or "?"
        console.print(f"{release}: added from tzdata {version} (verified) at {result.path}")


@tzdb_app.command("diff")
def diff(
    spec_file: Annotated[Path, typer.Argument(help="A scheduleSpec.v1 file.")],
    to_release: Annotated[
        str, typer.Option("--to", help="The release to compare with, e.g. 2026b.")
    ],
    from_: FromOption = None,
    until: UntilOption = None,
    as_json: JsonOption = False,
) -> None:
    """List the occurrences whose instant, offset or disposition would change under --to.

    Records of the spec in the window, resolved with its pinned release and with --to, are matched
    by nominal local time and fold. Exits 0 whether or not there are differences. With --json:
    the changes as a JSON array on stdout, the summary line on stderr.
    """
    from almanac import tzdb
    from timecontract import SpecError

    store = tzdb_store()
    try:
        tzdb.check_release(to_release)
    except tzdb.MalformedRelease as exc:
        fail(f"--to: {exc}")
    spec, start, end = load_window(spec_file, from_, until, store)
    try:
        changes = tzdb.diff_releases(spec, to_release, start, end, store=store)
    except SpecError as exc:  # the --to release or the zone in it is not available
        fail(f"--to {to_release}: {exc}")
    print_changes(spec, spec.tzdb_version, to_release, changes, start, end, as_json=as_json)
