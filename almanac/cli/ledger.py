"""``almanac db`` and ``almanac ledger``: migrate the ledger and read it from the command line.

Exit codes as in ``almanac.cli``: 0 success; 2 invalid input (a bad spec, option, state name or an
unknown ID: the message names it); 1 an operational failure (the database unreachable, the schema
not migrated).
"""

from __future__ import annotations

import json
import sys
from collections.abc import Iterator
from contextlib import contextmanager
from datetime import UTC, datetime
from pathlib import Path
from typing import Annotated, Any, NoReturn

import typer
from rich.console import Console
from rich.markup import escape
from rich.table import Table

from almanac.settings import AlmanacSettings
from ledger import (
    Ledger,
    LedgerError,
    LedgerUnavailable,
    OccurrenceDetail,
    OccurrenceState,
    OccurrenceView,
    Resolution,
    list_occurrences,
    materialize,
    open_cases,
    publish_revision,
    resolve_reconciliation,
    show_occurrence,
)
from ledger.migrate import current, head, upgrade
from timecontract import InvalidSpec, format_instant, format_offset, load_spec

EXIT_INVALID = 2
EXIT_OPERATIONAL = 1

db_app = typer.Typer(
    name="db",
    help="The ledger database: apply its migrations.",
    no_args_is_help=True,
    add_completion=False,
    pretty_exceptions_enable=False,
)
ledger_app = typer.Typer(
    name="ledger",
    help="Read the occurrence ledger: list a schedule's occurrences, show one with its trail.",
    no_args_is_help=True,
    add_completion=False,
    pretty_exceptions_enable=False,
)


def mount(app: typer.Typer) -> None:
    """Add ``db`` and ``ledger`` to the ``almanac`` app."""
    app.add_typer(db_app, name="db")
    app.add_typer(ledger_app, name="ledger")


def _fail(message: str, code: int = EXIT_INVALID) -> NoReturn:
    Console(stderr=True, highlight=False).print(
        f"[red]error:[/red] {escape(message)}", soft_wrap=True
    )
    raise typer.Exit(code)


def _out() -> Console:
    return Console(highlight=False, width=None if sys.stdout.isatty() else 160)


def _url(url: str | None) -> str:
    return url or AlmanacSettings().resolved_ledger_url


@contextmanager
def _ledger(url: str | None) -> Iterator[Ledger]:
    """Open the ledger; exit 1 if it is unreachable or not migrated to the newest schema."""
    resolved = _url(url)
    if resolved.startswith("sqlite:///"):
        path = Path(resolved.removeprefix("sqlite:///"))
        if not path.exists():
            _fail(f"no ledger at {path}: run `almanac db upgrade`", EXIT_OPERATIONAL)
    try:
        handle = Ledger.from_url(resolved)
    except LedgerError as exc:
        _fail(str(exc), EXIT_INVALID)
    try:
        try:
            at = current(handle.engine)
        except Exception as exc:  # the driver's own error: unreachable, refused, bad auth
            _fail(f"ledger unreachable: {exc}".splitlines()[0], EXIT_OPERATIONAL)
        if at != head():
            _fail(
                f"ledger schema is at {at or 'nothing'}, not {head()}: run `almanac db upgrade`",
                EXIT_OPERATIONAL,
            )
        yield handle
    except LedgerUnavailable as exc:
        _fail(f"ledger unavailable: {exc}", EXIT_OPERATIONAL)
    except LookupError as exc:
        _fail(str(exc), EXIT_INVALID)
    except LedgerError as exc:
        _fail(str(exc), EXIT_INVALID)
    finally:
        handle.dispose()


def _instant(name: str, value: str | None) -> datetime | None:
    if value is None:
        return None
    try:
        parsed = datetime.fromisoformat(value)
    except ValueError:
        _fail(f"{name}={value!r}: not an ISO 8601 instant like 2026-11-01T00:00:00Z")
    if parsed.tzinfo is None:
        _fail(f"{name}={value!r}: an instant needs a UTC offset (end it in Z)")
    return parsed.astimezone(UTC)


UrlOption = Annotated[
    str | None,
    typer.Option("--url", help="Ledger URL (default: ALMANAC_LEDGER_URL, else the SQLite file)."),
]
JsonOption = Annotated[bool, typer.Option("--json", help="Print JSON instead of a table.")]


@db_app.command("upgrade")
def db_upgrade(url: UrlOption = None) -> None:
    """Apply the ledger's migrations (creates the SQLite file and its directory if needed)."""
    resolved = _url(url)
    if resolved.startswith("sqlite:///"):
        folder = Path(resolved.removeprefix("sqlite:///")).parent
        try:
            folder.mkdir(parents=True, exist_ok=True)
        except OSError as exc:
            _fail(f"cannot create the ledger's directory {folder}: {exc.strerror}", EXIT_INVALID)
    try:
        revision = upgrade(resolved)
    except LedgerUnavailable as exc:
        _fail(f"ledger unavailable: {exc}", EXIT_OPERATIONAL)
    except LedgerError as exc:
        _fail(str(exc), EXIT_INVALID)
    _out().print(f"ledger schema at {revision} ({_redact(resolved)})")


def _redact(url: str) -> str:
    from sqlalchemy.engine import make_url

    return make_url(url).render_as_string(hide_password=True)


def occurrence_json(row: OccurrenceView) -> dict[str, Any]:
    """An occurrence as JSON (camelCase; instants ISO 8601 UTC with ``Z``)."""
    return {
        "occurrenceId": row.occurrence_id,
        "scheduleId": row.schedule_id,
        "revision": row.revision,
        "logicalSlotId": row.logical_slot_id,
        "nominalLocal": row.nominal_local.isoformat(),
        "fold": row.fold,
        "instant": _z(row.instant_utc),
        "gapAt": _z(row.gap_at_utc),
        "utcOffset": None if row.utc_offset is None else format_offset(row.utc_offset),
        "tzdbVersion": row.tzdb_version,
        "reason": row.reason,
        "state": row.state.value,
        "stateReason": row.state_reason,
        "claimGeneration": row.claim_generation,
        "nextAttemptAt": _z(row.next_attempt_at_utc),
        "updatedAt": _z(row.updated_at_utc),
    }


def _z(value: datetime | None) -> str | None:
    return None if value is None else format_instant(value)


def detail_json(detail: OccurrenceDetail) -> dict[str, Any]:
    """An occurrence with its attempts, events and case as JSON."""
    case = detail.case
    return {
        "occurrence": occurrence_json(detail.occurrence),
        "attempts": [
            {
                "attemptNumber": a.attempt_number,
                "claimGeneration": a.claim_generation,
                "workerIdentity": a.worker_identity,
                "implementationAlias": a.implementation_alias,
                "executionEpoch": a.execution_epoch,
                "disableGeneration": a.disable_generation,
                "inputDigest": a.input_digest,
                "startedAt": _z(a.started_at_utc),
                "finishedAt": _z(a.finished_at_utc),
                "outcome": a.outcome,
                "errorClass": a.error_class,
                "errorMessage": a.error_message,
            }
            for a in detail.attempts
        ],
        "events": [
            {"from": e.from_state, "to": e.to_state, "at": _z(e.at_utc), "by": e.by, "why": e.why}
            for e in detail.events
        ],
        "reconciliationCase": None
        if case is None
        else {
            "openedAt": _z(case.opened_at_utc),
            "deadline": _z(case.deadline_utc),
            "resolution": None if case.resolution is None else case.resolution.value,
            "resolvedBy": case.resolved_by,
            "resolvedAt": _z(case.resolved_at_utc),
            "note": case.note,
        },
    }


def _table(title: str, rows: list[OccurrenceView]) -> Table:
    table = Table(title=title, title_justify="left")
    for column in ("instant (UTC)", "nominal local", "fold", "offset", "rev", "state", "reason"):
        table.add_column(column)
    table.add_column("occurrenceId", overflow="fold")
    for r in rows:
        placed = _z(r.instant_utc) or f"(gap at {_z(r.gap_at_utc)})"
        offset = format_offset(r.utc_offset) if r.utc_offset is not None else "—"
        table.add_row(
            placed,
            r.nominal_local.isoformat(),
            str(r.fold),
            offset,
            str(r.revision),
            r.state.value,
            r.state_reason or r.reason,
            r.occurrence_id,
        )
    table.caption = f"{len(rows)} occurrences"
    return table


def _states(values: list[str] | None) -> list[OccurrenceState] | None:
    if not values:
        return None
    try:
        return [OccurrenceState(v.upper()) for v in values]
    except ValueError:
        known = ", ".join(s.value for s in OccurrenceState)
        _fail(f"--state={values!r}: unknown state (one of {known})")


@ledger_app.command("list")
def list_command(
    schedule: Annotated[str, typer.Argument(help="The scheduleId.")],
    from_: Annotated[
        str | None, typer.Option("--from", help="UTC instant, inclusive (e.g. 2026-11-01T00:00Z).")
    ] = None,
    to: Annotated[str | None, typer.Option("--to", help="UTC instant, exclusive.")] = None,
    state: Annotated[
        list[str] | None, typer.Option("--state", help="Only this state (repeatable).")
    ] = None,
    as_json: JsonOption = False,
    url: UrlOption = None,
) -> None:
    """List a schedule's occurrences by instant (gapAt for skipped ones), all revisions."""
    low, high = _instant("--from", from_), _instant("--to", to)
    states = _states(state)
    with _ledger(url) as handle:
        rows = list_occurrences(handle, schedule, low, high, states)
    if as_json:
        sys.stdout.write(json.dumps([occurrence_json(r) for r in rows], indent=2) + "\n")
        return
    _out().print(_table(f"{schedule}", rows))


@ledger_app.command("show")
def show_command(
    occurrence_id: Annotated[str, typer.Argument(help="The occurrenceId.")],
    as_json: JsonOption = False,
    url: UrlOption = None,
) -> None:
    """Show one occurrence: its evidence, its attempts and its event trail."""
    with _ledger(url) as handle:
        detail = show_occurrence(handle, occurrence_id)
    if as_json:
        sys.stdout.write(json.dumps(detail_json(detail), indent=2) + "\n")
        return
    console = _out()
    console.print(_table(occurrence_id, [detail.occurrence]))
    attempts = Table(title="attempts", title_justify="left")
    for column in ("#", "worker", "alias", "epoch", "started", "finished", "outcome", "error"):
        attempts.add_column(column)
    for a in detail.attempts:
        attempts.add_row(
            str(a.attempt_number),
            a.worker_identity,
            a.implementation_alias,
            str(a.execution_epoch),
            _z(a.started_at_utc),
            _z(a.finished_at_utc) or "",
            a.outcome or "",
            f"{a.error_class}: {a.error_message}" if a.error_class else "",
        )
    console.print(attempts)
    events = Table(title="events", title_justify="left")
    for column in ("at (UTC)", "from", "to", "by", "why"):
        events.add_column(column)
    for e in detail.events:
        events.add_row(_z(e.at_utc), e.from_state or "—", e.to_state, e.by, e.why)
    console.print(events)
    if detail.case is not None:
        c = detail.case
        console.print(
            f"reconciliation case: opened {_z(c.opened_at_utc)}, deadline {_z(c.deadline_utc)}, "
            f"resolution {c.resolution.value if c.resolution else 'open'}"
        )


@ledger_app.command("materialize")
def materialize_command(
    spec_file: Annotated[Path, typer.Argument(help="A scheduleSpec.v1 file.")],
    from_: Annotated[str, typer.Option("--from", help="Window start, UTC instant, inclusive.")],
    to: Annotated[str, typer.Option("--to", help="Window end, UTC instant, exclusive.")],
    now: Annotated[
        str | None,
        typer.Option(
            "--now",
            help="The decision instant (UTC); default: the current time. Materialization never "
            "backfills before the revision's publication, which is this instant if it is new.",
        ),
    ] = None,
    as_json: JsonOption = False,
    url: UrlOption = None,
) -> None:
    """Record a spec's occurrences for a window (publishing its revision if new) and list them."""
    try:
        spec = load_spec(spec_file, AlmanacSettings().tzdb_store)
    except InvalidSpec as exc:
        _fail(str(exc))
    low, high = _instant("--from", from_), _instant("--to", to)
    assert low is not None and high is not None
    if high < low:
        _fail(f"--to={to!r}: before --from")
    at = _instant("--now", now) or _clock()
    with _ledger(url) as handle:
        publish_revision(handle, spec, at, by="almanac-cli")
        result = materialize(
            handle, spec, low, high, at, by="almanac-cli", tzdb_store=AlmanacSettings().tzdb_store
        )
    rows = list(result.rows)
    if as_json:
        payload = {
            "windowFrom": _z(result.window_from_utc),
            "windowTo": _z(result.window_to_utc),
            "created": list(result.created),
            "occurrences": [occurrence_json(r) for r in rows],
        }
        sys.stdout.write(json.dumps(payload, indent=2) + "\n")
        return
    title = (
        f"{spec.schedule_id} r{spec.revision} · {_z(result.window_from_utc)} → "
        f"{_z(result.window_to_utc)} · {len(result.created)} new"
    )
    _out().print(_table(title, rows))


def _clock() -> datetime:
    """The current time: read only here, at the CLI edge, when ``--now`` is not given."""
    return datetime.now(UTC)


@ledger_app.command("unknown")
def unknown_command(
    now_: Annotated[
        str | None,
        typer.Option("--now", help="Judge deadlines at this UTC instant (default: now)."),
    ] = None,
    as_json: JsonOption = False,
    url: UrlOption = None,
) -> None:
    """List open UNKNOWN_EFFECT cases, the human queue first (queued or past their deadline)."""
    # The edge: without --now, what is overdue is judged by the wall clock here.
    now = _instant("--now", now_) or datetime.now(UTC)
    with _ledger(url) as handle:
        cases = open_cases(handle)
    rows = sorted(cases, key=lambda c: (not (c.resolution or c.overdue(now)), c.opened_at_utc))
    if as_json:
        payload = [
            {
                "occurrenceId": c.occurrence_id,
                "attempt": c.attempt_number,
                "openedAt": _z(c.opened_at_utc),
                "deadline": _z(c.deadline_utc),
                "humanQueue": c.resolution is not None or c.overdue(now),
                "note": c.note,
            }
            for c in rows
        ]
        sys.stdout.write(json.dumps(payload, indent=2) + "\n")
        return
    table = Table(title="UNKNOWN_EFFECT cases", title_justify="left")
    for column in ("occurrenceId", "attempt", "opened (UTC)", "deadline (UTC)", "queue", "note"):
        table.add_column(column)
    for c in rows:
        queue = "HUMAN" if c.resolution is not None or c.overdue(now) else "reconciling"
        table.add_row(
            c.occurrence_id,
            str(c.attempt_number),
            _z(c.opened_at_utc),
            _z(c.deadline_utc),
            queue,
            c.note or "",
        )
    _out().print(table)


@ledger_app.command("resolve")
def resolve_command(
    occurrence_id: Annotated[str, typer.Argument(help="An UNKNOWN_EFFECT occurrenceId.")],
    outcome: Annotated[
        str,
        typer.Option(
            "--outcome",
            help="SUCCEEDED (the downstream has the effect) or NOT_APPLIED (it has not).",
        ),
    ],
    by: Annotated[str, typer.Option("--by", help="Who decides (stored on the case).")],
    note: Annotated[str | None, typer.Option("--note", help="Evidence.")] = None,
    url: UrlOption = None,
) -> None:
    """Resolve an UNKNOWN_EFFECT case by hand: SUCCEEDED or NOT_APPLIED (then FAILED).

    Nothing is re-sent: a NOT_APPLIED occurrence ends FAILED, and running it again is a decision
    for a person (seed: never a blind resend).
    """
    try:
        resolution = Resolution(outcome.upper())
    except ValueError:
        _fail(f"--outcome={outcome!r}: one of SUCCEEDED, NOT_APPLIED")
    if resolution is Resolution.HUMAN:
        _fail(f"--outcome={outcome!r}: one of SUCCEEDED, NOT_APPLIED")
    with _ledger(url) as handle:
        case = resolve_reconciliation(
            handle, occurrence_id, resolution, datetime.now(UTC), by=by, note=note
        )
    _out().print(f"{occurrence_id}: {case.resolution.value if case.resolution else 'open'}")
