"""``almanac validate``, ``schema`` and ``preview``: spec files, read with ``timecontract`` only.

None of these needs a server or a database: they read the spec file and the pinned tz release.
"""

from __future__ import annotations

import json
import sys
from collections.abc import Iterable, Mapping
from datetime import datetime, timedelta
from itertools import islice
from pathlib import Path
from typing import TYPE_CHECKING, Annotated, Any, TextIO

import typer

from almanac.cli.output import (
    EXIT_INVALID,
    JsonOption,
    PlainTable,
    fail,
    parse_instant,
    plural,
    print_json,
    say,
    tzdb_store,
    warn,
)

if TYPE_CHECKING:
    from timecontract import InvalidSpec, OccurrenceRecord, ScheduleSpecV1, SpecError, SpecWarning

PREVIEW_PERIODS = 2000
PREVIEW_OCCURRENCES = 5_000
"""The default window holds about this many occurrences at most (``timecontract.density``)."""
MAX_TABLE_ROWS = 10_000
"""The most records the table shows (it is built in memory); ``--json`` streams any window."""


def validate(
    files: Annotated[list[Path], typer.Argument(help="Spec files (.yaml, .yml or .json).")],
    as_json: JsonOption = False,
) -> None:
    """Validate spec files; print every problem. Exit 0 if all are valid, 2 otherwise.

    With --json: an array, one object per file in argument order, with the keys file, valid,
    scheduleId, revision (of an invalid file: as given when that field is itself valid, else
    null), applicable (it names an action), problems (field, value, problem) and warnings (code,
    field, value, message). Warnings (a valid spec that would surprise on a DST night:
    timecontract.spec_warnings) go to stderr too and never change the exit code.
    """
    from timecontract import InvalidSpec, SpecFileUnreadable, spec_warnings

    store = tzdb_store()
    bad = 0
    results: list[dict[str, Any]] = []
    for path in files:
        try:
            spec = load_checked_spec(path, store)
        except InvalidSpec as exc:
            bad += 1
            results.append(invalid_spec_json(path, exc))
            if not as_json:
                # A file that cannot be read is no spec with problems: one error line.
                unreadable = isinstance(exc, SpecFileUnreadable)
                say(str(exc), mark="error:" if unreadable else "✗", color="red", stderr=True)
            continue
        warnings = spec_warnings(spec, tzdb_store=store) + action_warnings(spec)
        results.append(_valid_json(path, spec, [w.to_json() for w in warnings]))
        if not as_json:
            note = "" if spec.action else " (no action: can be previewed, not applied)"
            say(f"{path}: {spec.schedule_id} r{spec.revision}{note}", mark="✓")
        print_warnings(path, warnings)
    if as_json:
        print_json(results)
    if bad:
        raise typer.Exit(EXIT_INVALID)


def load_checked_spec(path: Path, store: Path) -> ScheduleSpecV1:
    """Load a spec file and check its action, as ``validate`` does (``apply`` too).

    Raises:
        InvalidSpec: every problem of the file (:class:`timecontract.SpecFileUnreadable` when it
            cannot be read at all) and of its action's parameters, together: a spec refused for
            its own fields (a literal secret, a bad rule) still reports its action's problems.
    """
    from timecontract import InvalidSpec, load_spec
    from timecontract.spec import read_spec_file

    data = read_spec_file(path)  # SpecFileUnreadable, or InvalidSpec for data that is no spec
    try:
        spec = load_spec(data, store)
    except InvalidSpec as exc:
        more = _raw_action_problems(data, {p.field for p in exc.problems})
        raise InvalidSpec(
            exc.problems + more, str(path), schedule_id=exc.schedule_id, revision=exc.revision
        ) from exc
    _check_action(spec, path)
    return spec


def _raw_action_problems(data: Any, reported: set[str]) -> list[SpecError]:
    """The action's parameter problems in an invalid spec's data, but for ``reported`` fields.

    A field already reported (or one inside or around it: the adapter's model refuses a literal
    secret header at ``headers``, the spec at ``headers.<name>``) is not reported twice.
    """
    from activities.actions.catalog import action_problems

    action = data.get("action") if isinstance(data, Mapping) else None
    if not isinstance(action, Mapping):
        return []
    name, parameters = action.get("name"), action.get("parameters", {})
    if not isinstance(name, str) or not isinstance(parameters, Mapping):
        return []

    def said(field: str) -> bool:  # the same field, or one inside or around a reported one
        return any(
            f == field or f.startswith(f"{field}.") or field.startswith(f"{f}.") for f in reported
        )

    return [p for p in action_problems(name, parameters) if not said(p.field)]


def validation_json(path: Path, store: Path) -> dict[str, Any]:
    """The object ``validate --json`` prints for the spec file ``path`` (without warnings).

    For a command that refuses a spec (``apply --json``): the same report, from the same check.
    """
    from timecontract import InvalidSpec

    try:
        spec = load_checked_spec(path, store)
    except InvalidSpec as exc:
        return invalid_spec_json(path, exc)
    return _valid_json(path, spec, [])


def _valid_json(path: Path, spec: ScheduleSpecV1, warnings: list[Any]) -> dict[str, Any]:
    return {
        "file": str(path),
        "valid": True,
        "scheduleId": spec.schedule_id,
        "revision": spec.revision,
        "applicable": spec.action is not None,
        "problems": [],
        "warnings": warnings,
    }


def _check_action(spec: ScheduleSpecV1, path: Path) -> None:
    """Check the spec's actions against the built-in adapters' parameter models (no worker).

    Through the catalog, not ``ActionRegistry.default()``: the same models and the same check,
    without importing the adapters (httpx, smtplib, asyncio: ``bench/cli_startup.py``).

    Raises:
        InvalidSpec: naming ``action.name`` or each ``action.parameters.<field>`` and its value
            (``failureStreak.action…`` for the streak policy's action).
    """
    if not spec.actions():
        return  # no adapter to check: the catalog (and ``activities``) stays unloaded
    from activities.actions.catalog import spec_action_problems
    from timecontract import InvalidSpec

    problems = spec_action_problems(spec)
    if problems:
        raise InvalidSpec(
            problems, source=str(path), schedule_id=spec.schedule_id, revision=spec.revision
        )


def action_warnings(spec: ScheduleSpecV1) -> list[SpecWarning]:
    """Warnings about the spec's actions: an ``http`` URL this environment's egress policy refuses.

    The policy is read as a worker started here would read it (``ALMANAC_EGRESS_ALLOW``),
    without loading the settings or the adapters; a URL of the ``almanac dev`` sink draws none
    (the dev stack's worker allows its own sink). The worker's own policy decides at apply.
    """
    if not spec.actions():
        return []
    import dataclasses
    import json

    from activities.actions.catalog import egress_warnings
    from activities.actions.egress_policy import EgressPolicy
    from almanac.paths import dev_sink_urls_from_environment, egress_allow_from_environment

    try:
        policy = EgressPolicy.allowing(egress_allow_from_environment())
    except ValueError:  # a malformed ALMANAC_EGRESS_ALLOW: the settings say so where they load
        return []
    sink = tuple(f"{base}/" for base in dev_sink_urls_from_environment())
    return [
        dataclasses.replace(w, field=field + w.field.removeprefix("action"))
        for field, action in spec.actions().items()
        for w in egress_warnings(action.name, action.parameters, policy)
        if not f"{json.loads(w.value)}/".startswith(sink)
    ]


def invalid_spec_json(path: Path, exc: InvalidSpec) -> dict[str, Any]:
    """The ``--json`` object of an invalid spec file (an element of ``validate --json``).

    Each problem's value is shown as its message shows it (``timecontract.shown_value``: JSON
    data of at most ``MAX_SHOWN`` characters); a problem of a field not given at all has no
    ``value`` key (an explicit ``null`` is ``"value": null``), as its message has no value.
    """
    from timecontract import shown_value

    return {
        "file": str(path),
        "valid": False,
        "scheduleId": exc.schedule_id,
        "revision": exc.revision,
        "applicable": False,
        "problems": [
            {"field": p.field}
            | ({"value": shown_value(p.value)} if p.given else {})
            | {"problem": p.problem}
            for p in exc.problems
        ],
        "warnings": [],
    }


def print_warnings(source: object, warnings: list[SpecWarning]) -> None:
    """Print each warning as one ``warning: <source>: field=value: … [CODE]`` line on stderr.

    Warnings never change the exit code; with ``--json`` they are also in the JSON output
    (except ``preview``'s, whose JSON array is a contract: there they are on stderr only).
    """
    for warning in warnings:
        warn(f"{source}: {warning}")


def schema(
    as_json: Annotated[
        bool, typer.Option("--json", help="Accepted for uniformity: the schema is JSON already.")
    ] = False,
) -> None:
    """Print the JSON Schema of scheduleSpec.v1 (for editors and CI validation of spec files)."""
    from timecontract import ScheduleSpecV1

    document = ScheduleSpecV1.model_json_schema(by_alias=True, mode="validation")
    document["$schema"] = "https://json-schema.org/draft/2020-12/schema"
    print_json(document)


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
            help="Window end, UTC instant, exclusive. Default: --from + 366 days, 2,000 "
            "periods of a high-frequency rule, or about 5,000 occurrences of a dense one.",
        ),
    ] = None,
    as_json: Annotated[bool, typer.Option("--json", help="Print the JSON array contract.")] = False,
    ids: Annotated[bool, typer.Option("--ids", help="Add the occurrenceId column.")] = False,
) -> None:
    """Show the occurrences a spec's revision owns in a window, with their DST reasons.

    The JSON output is a contract: an array sorted by instant (gapAt for skipped records) of
    objects with exactly the keys occurrenceId, logicalSlotId, scheduleId, revision, nominalLocal,
    fold, instant, gapAt, utcOffset, tzdbVersion, disposition, reason and jitter, and on a
    calendar decision also holiday and calendar.
    """
    from timecontract import (
        LAST_WINDOW_END,
        InvalidSpec,
        SpecError,
        format_instant,
        iter_occurrences,
        load_spec,
        spec_warnings,
        window_outside,
    )

    store = tzdb_store()
    try:
        spec = load_spec(spec_file, store)
    except InvalidSpec as exc:
        fail(str(exc))
    print_warnings(spec_file, spec_warnings(spec, tzdb_store=store))
    start = parse_instant("--from", from_) if from_ is not None else spec.cutover_at
    last = LAST_WINDOW_END
    if start >= last:
        fail(f"--from={from_!r}: not before {last:%Y-%m-%dT%H:%M:%SZ}, the last instant resolved")
    # The default window stops at the last instant resolved; a --to after it is refused below.
    end = (
        parse_instant("--to", to)
        if to is not None
        else min(start + min(default_window(spec), last - start), last)
    )
    if end < start:
        since = (
            "--from"
            if from_ is not None
            else f"the default --from, cutoverAt {start:%Y-%m-%dT%H:%M:%SZ}"
        )
        fail(f"--to={to!r}: before {since}")
    if end > last:
        fail(f"--to={to!r}: after {last:%Y-%m-%dT%H:%M:%SZ}, the last instant resolved")
    records = iter_occurrences(spec, start, end, tzdb_store=store)
    try:
        if as_json:
            # A calendar spec's window is resolved whole before its first record (recurrence's
            # iter_occurrences), so a day outside the calendar's years fails before any output.
            # Streamed: a 34-year minutely window is ~300,000 records, written as resolved.
            write_json_array((r.to_json() for r in records), sys.stdout)
            return
        shown = list(islice(records, MAX_TABLE_ROWS + 1))
    except SpecError as exc:  # the pinned calendar does not cover a day of the window
        fail(str(exc))
    if len(shown) > MAX_TABLE_ROWS:
        fail(
            f"--to={format_instant(end)}: the window holds more than {MAX_TABLE_ROWS} records, "
            "the most the table shows: narrow the window, or use --json (streamed)"
        )
    table = preview_table(spec, shown, start, end, ids=ids)
    if not shown and (outside := window_outside(spec, start, end, tzdb_store=store)) is not None:
        table.caption += f"\n{outside}: revision r{spec.revision} owns nothing there"
    table.print()


def write_json_array(items: Iterable[Any], out: TextIO) -> None:
    """Write ``items`` as one JSON array, item by item: the bytes of ``print_json(list(items))``.

    ``json.dumps(list, indent=2)`` puts each item on its own lines indented by two spaces, with
    ``,`` between items and ``[]`` for none; a dumped item's own newlines only ever separate its
    lines (newlines inside strings are escaped), so indenting them gives the same text.
    """
    first = True
    for item in items:
        out.write(
            ("[\n  " if first else ",\n  ") + json.dumps(item, indent=2).replace("\n", "\n  ")
        )
        first = False
    out.write("[]\n" if first else "\n]\n")


def default_window(spec: ScheduleSpecV1) -> timedelta:
    """The preview's default window: 366 days, 2,000 periods, or ~5,000 occurrences if shorter.

    The occurrence bound uses the spec's per-day bound (``timecontract.density``), so a rule that
    is dense through BYxxx lists (every 2 seconds from ``FREQ=DAILY``) previews hours, not a year.
    """
    from timecontract import span_for

    return min(
        timedelta(days=366),
        spec.nominal_period * PREVIEW_PERIODS,
        span_for(PREVIEW_OCCURRENCES, spec.per_day_bound),
    )


def preview_table(
    spec: ScheduleSpecV1,
    records: list[OccurrenceRecord],
    start: datetime,
    end: datetime,
    *,
    ids: bool = False,
) -> PlainTable:
    """A table: local time, offset, UTC instant, disposition, reason; DST rows in color.

    A plain table, not Rich's: ``preview`` is one of the commands whose start-up is measured
    (``bench/cli_startup.py``), and importing Rich would spend much of its budget.
    """
    from timecontract import Reason, format_duration, format_instant, format_offset

    recurrence = spec.rule if spec.interval is None else f"every {spec.resolved()['interval']}"
    if recurrence is None:
        recurrence = f"{plural(len(spec.rdates), 'date')} (rdates)"
    calendar = ""
    if spec.calendar is not None:
        only = ", business days only" if spec.business_days_only else ""
        policy = spec.holiday_policy or "SKIP"
        calendar = f" · calendar {spec.calendar.name}@{spec.calendar.release} ({policy}{only})"
    title = (
        f"{spec.schedule_id} r{spec.revision} · {recurrence} · {spec.time_zone} "
        f"(tzdb {spec.tzdb_version}){calendar} · {format_instant(start)} → {format_instant(end)}"
    )
    columns = ["nominal local", "fold", "offset", "instant (UTC)", "disposition", "reason"]
    columns += (["jitter"] if spec.jitter else []) + (["occurrenceId"] if ids else [])
    table = PlainTable(title, columns)
    plain = {Reason.UNAMBIGUOUS, Reason.ELAPSED_INTERVAL}
    for r in records:
        color = "" if r.reason in plain else "yellow"
        if r.disposition.value != "PLANNED":
            color = "red"
        if r.instant_utc:
            instant = format_instant(r.instant_utc)
        else:
            instant = f"(gap at {format_instant(r.gap_at_utc) if r.gap_at_utc else '?'})"
        offset = format_offset(r.utc_offset) if r.utc_offset is not None else "—"
        cells = [r.nominal_local.isoformat(), str(r.fold), offset, instant]
        reason = r.reason.value if r.holiday is None else f'{r.reason.value} "{r.holiday}"'
        cells += [r.disposition.value, reason]
        cells += [format_duration(r.jitter_delay)] if spec.jitter else []
        cells += [r.occurrence_id] if ids else []
        table.add_row(*cells, color=color)
    decided = sum(1 for r in records if r.reason not in plain)
    what = (
        "a DST policy" if spec.calendar is None and not spec.exdates else "a DST or calendar policy"
    )
    table.caption = f"{plural(len(records), 'record')}, {decided} decided by {what} (highlighted)"
    return table


def mount(app: typer.Typer) -> None:
    """Add ``validate``, ``schema`` and ``preview`` to the ``almanac`` app."""
    app.command()(validate)
    app.command()(schema)
    app.command()(preview)
