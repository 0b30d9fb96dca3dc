"""``almanac ledger``: the occurrence ledger (list, show, materialize, unknown, events, resolve).

Exit codes as in ``almanac.cli.output``: 0 success; 2 invalid input (a bad spec, option, state
name or an unknown ID: the message names it); 1 an operational failure (the database unreachable,
the schema not migrated).
"""

from __future__ import annotations

from datetime import UTC, datetime
from pathlib import Path
from typing import TYPE_CHECKING, Annotated, Any

import typer

from almanac.cli.ledger_access import UrlOption, open_ledger
from almanac.cli.output import (
    JsonOption,
    check_text,
    command_group,
    escape,
    fail,
    out,
    parse_instant,
    plural,
    print_json,
    say,
    terminal_table,
    tzdb_store,
)

if TYPE_CHECKING:
    from rich.table import Table

    from ledger import AttemptView, OccurrenceDetail, OccurrenceState, OccurrenceView

ledger_app, mount = command_group(
    "ledger",
    "Read the occurrence ledger: list a schedule's occurrences, show one with its trail.",
)

LIST_LIMIT = 100
"""``ledger list`` shows at most this many occurrences unless ``--limit`` says otherwise."""


def _instant(name: str, value: str | None) -> datetime | None:
    return None if value is None else parse_instant(name, value)


def occurrence_json(row: OccurrenceView) -> dict[str, Any]:
    """An occurrence as JSON (camelCase; instants ISO 8601 UTC with ``Z``)."""
    from timecontract import format_duration, format_offset

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
        "jitter": None if row.jitter is None else format_duration(row.jitter),
        "state": row.state.value,
        "stateReason": row.state_reason,
        "claimGeneration": row.claim_generation,
        "nextAttemptAt": _z(row.next_attempt_at_utc),
        "updatedAt": _z(row.updated_at_utc),
    } | ({} if row.holiday is None else {"holiday": row.holiday, "calendar": row.calendar_release})


def _z(value: datetime | None) -> str | None:
    from timecontract import format_instant

    return None if value is None else format_instant(value)


def _recorded(value: datetime | None) -> str:
    """A time read from a clock, to the second, for a table (JSON keeps the exact instant)."""
    from timecontract import format_recorded

    return "" if value is None else format_recorded(value)


def _finished(attempt: AttemptView) -> str:
    """The attempt's finish as a person reads it: a LOST attempt has none, only its finding."""
    if attempt.lost_detected_at_utc is not None:
        found = _recorded(attempt.lost_detected_at_utc)
        return f"lost (found {found} by {attempt.lost_detected_by})"
    return _recorded(attempt.finished_at_utc)


def detail_json(detail: OccurrenceDetail) -> dict[str, Any]:
    """An occurrence with its attempts, events and case as JSON."""
    case = detail.case
    return {
        "occurrence": occurrence_json(detail.occurrence),
        "attempts": [
            {
                "claimGeneration": a.claim_generation,
                "workerIdentity": a.worker_identity,
                "implementationAlias": a.implementation_alias,
                "executionEpoch": a.execution_epoch,
                "disableGeneration": a.disable_generation,
                "inputDigest": a.input_digest,
                "startedAt": _z(a.started_at_utc),
                "finishedAt": _z(a.finished_at_utc),
                "lostDetectedAt": _z(a.lost_detected_at_utc),
                "lostDetectedBy": a.lost_detected_by,
                "outcome": a.outcome,
                "errorClass": a.error_class,
                "errorMessage": a.error_message,
            }
            for a in detail.attempts
        ],
        "events": [
            {
                "sequence": e.sequence,
                "from": e.from_state,
                "to": e.to_state,
                "at": _z(e.at_utc),
                "by": e.by,
                "why": e.why,
            }
            for e in detail.events  # in sequence order, as the ledger numbered them
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
    from timecontract import format_offset

    table = terminal_table(title)
    columns = ("instant (UTC)", "nominal local", "fold", "offset", "rev", "state")
    for column in (*columns, "reason (resolution)", "state reason"):
        table.add_column(column)
    # An occurrenceId is copied into other commands: never wrapped or cut (the others give way).
    width = max((len(r.occurrence_id) for r in rows), default=12)
    table.add_column("occurrenceId", no_wrap=True, min_width=width)
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
            r.reason if r.holiday is None else f'{r.reason} "{r.holiday}" ({r.calendar_release})',
            r.state_reason or "—",
            r.occurrence_id,
        )
    table.caption = plural(len(rows), "occurrence")
    return table


def _states(values: list[str] | None) -> list[OccurrenceState] | None:
    from ledger import OccurrenceState

    if not values:
        return None
    known = {s.value: s for s in OccurrenceState}
    for value in values:
        if value.upper() not in known:
            fail(f"--state={value!r}: unknown state (one of {', '.join(known)})")
    return [known[v.upper()] for v in values]


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
    limit: Annotated[
        int, typer.Option("--limit", min=0, help="The earliest N occurrences (0: all).")
    ] = LIST_LIMIT,
    as_json: JsonOption = False,
    url: UrlOption = None,
) -> None:
    """List a schedule's occurrences by instant (gapAt for skipped ones), all revisions.

    At most --limit (default 100), the earliest; a last line says how many more there are.
    """
    from ledger import count_occurrences, get_gate, list_occurrences

    low, high = _instant("--from", from_), _instant("--to", to)
    states = _states(state)
    with open_ledger(url) as handle:
        rows = list_occurrences(handle, schedule, low, high, states, limit or None)
        if not rows:
            get_gate(handle, schedule)  # an unknown scheduleId is exit 2, as `show` does
        more = 0
        if limit and len(rows) == limit:
            more = count_occurrences(handle, schedule, low, high, states) - limit
    rest = f"… {more} more (use --limit 0 for all, or narrow with --from/--to/--state)"
    if as_json:
        print_json([occurrence_json(r) for r in rows])
        if more:
            say(rest, stderr=True)  # stdout stays the array
        return
    out().print(_table(f"{schedule}", rows))
    if more:
        out().print(escape(rest), soft_wrap=True)


@ledger_app.command("show")
def show_command(
    occurrence_id: Annotated[str, typer.Argument(help="The occurrenceId.")],
    as_json: JsonOption = False,
    url: UrlOption = None,
) -> None:
    """Show one occurrence: its evidence, its attempts and its event trail."""
    from ledger import show_occurrence
    from ledger.deadlines import deadline_miss

    with open_ledger(url) as handle:
        detail = show_occurrence(handle, occurrence_id)
        miss = deadline_miss(handle, occurrence_id)
    if as_json:
        print_json({**detail_json(detail), "deadlineMiss": miss})
        return
    console = out()
    console.print(_table(occurrence_id, [detail.occurrence]))
    attempts = terminal_table("attempts")
    for column in ("#", "worker", "alias", "epoch", "started", "finished", "outcome", "error"):
        attempts.add_column(column)
    for a in detail.attempts:
        attempts.add_row(
            str(a.claim_generation),
            a.worker_identity,
            a.implementation_alias,
            str(a.execution_epoch),
            _recorded(a.started_at_utc),
            _finished(a),
            a.outcome or "",
            f"{a.error_class}: {a.error_message}" if a.error_class else "",
        )
    console.print(attempts)
    events = terminal_table("events")
    for column in ("#", "at (UTC)", "from", "to", "by", "why"):
        events.add_column(column)
    for e in detail.events:  # in the ledger's sequence order, never sorted by time
        at = _recorded(e.at_utc)
        events.add_row(str(e.sequence), at, e.from_state or "—", e.to_state, e.by, e.why)
    console.print(events)
    if miss is not None:
        console.print(
            f"[yellow]deadline missed:[/yellow] {_z(miss.deadline_utc)} "
            f"({miss.state_at_deadline.value} at the deadline), "
            f"recorded {_recorded(miss.recorded_at_utc)} by {escape(miss.by)}"
        )
    if detail.case is not None:
        c = detail.case
        console.print(
            f"reconciliation case: opened {_recorded(c.opened_at_utc)}, "
            f"deadline {_z(c.deadline_utc)}, "
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
    from almanac.ledger_client import LedgerClient, WindowTooLarge
    from timecontract import InvalidSpec, load_spec

    store = tzdb_store()
    try:
        spec = load_spec(spec_file, store)
    except InvalidSpec as exc:
        fail(str(exc))
    low, high = _instant("--from", from_), _instant("--to", to)
    assert low is not None and high is not None
    if high < low:
        fail(f"--to={to!r}: before --from")
    at = _instant("--now", now)
    try:
        result = LedgerClient(lambda: open_ledger(url)).materialize(
            spec, low, high, now_utc=at, by="almanac-cli", tzdb_store=store
        )
    except WindowTooLarge as exc:
        fail(f"--to={to!r}: {exc}")
    rows = list(result.rows)
    if as_json:
        payload = {
            "windowFrom": _z(result.window_from_utc),
            "windowTo": _z(result.window_to_utc),
            "created": list(result.created),
            "occurrences": [occurrence_json(r) for r in rows],
        }
        print_json(payload)
        return
    title = (
        f"{spec.schedule_id} r{spec.revision} · {_z(result.window_from_utc)} → "
        f"{_z(result.window_to_utc)} · {len(result.created)} new"
    )
    if (result.window_from_utc, result.window_to_utc) != (low, high):
        # Say why the window written is not the one asked for: the result alone does not.
        title += (
            f" (asked {_z(low)} → {_z(high)}: clamped to what revision {spec.revision} owns, "
            "from its cutoverAt and publication on; materialization never backfills)"
        )
    out().print(_table(title, rows))


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
    from ledger import open_cases

    # The edge: without --now, what is overdue is judged by the wall clock here.
    now = _instant("--now", now_) or datetime.now(UTC)
    with open_ledger(url) as handle:
        cases = open_cases(handle)
    rows = sorted(cases, key=lambda c: (not (c.resolution or c.overdue(now)), c.opened_at_utc))
    if as_json:
        payload = [
            {
                "occurrenceId": c.occurrence_id,
                "claimGeneration": c.claim_generation,
                "openedAt": _z(c.opened_at_utc),
                "deadline": _z(c.deadline_utc),
                "humanQueue": c.resolution is not None or c.overdue(now),
                "note": c.note,
            }
            for c in rows
        ]
        print_json(payload)
        return
    table = terminal_table("UNKNOWN_EFFECT cases")
    width = max((len(c.occurrence_id) for c in rows), default=12)
    table.add_column("occurrenceId", no_wrap=True, min_width=width)
    for column in ("attempt", "opened (UTC)", "deadline (UTC)", "queue", "note"):
        table.add_column(column)
    for c in rows:
        queue = "HUMAN" if c.resolution is not None or c.overdue(now) else "reconciling"
        table.add_row(
            c.occurrence_id,
            str(c.claim_generation),
            _z(c.opened_at_utc),
            _z(c.deadline_utc),
            queue,
            c.note or "",
        )
    out().print(table)


@ledger_app.command("events")
def events_command(
    schedule: Annotated[str, typer.Argument(help="The scheduleId.")],
    kind: Annotated[
        str | None,
        typer.Option("--kind", help="Only events of this kind (e.g. DISABLED, PUBLISHED)."),
    ] = None,
    limit: Annotated[
        int, typer.Option("--limit", min=1, max=10_000, help="The newest N events, oldest first.")
    ] = 50,
    as_json: JsonOption = False,
    url: UrlOption = None,
) -> None:
    """List a schedule's own events: revisions published or rejected, disable, enable, refusals."""
    from ledger import ScheduleEventKind, get_gate, schedule_events

    chosen = None
    if kind is not None:
        known = {k.value: k for k in ScheduleEventKind}
        if kind.upper() not in known:
            fail(f"--kind={kind!r}: unknown schedule event kind (one of {', '.join(known)})")
        chosen = known[kind.upper()]
    with open_ledger(url) as handle:
        rows = schedule_events(handle, schedule, limit=limit, kind=chosen)
        if not rows and chosen is None:
            get_gate(handle, schedule)  # an unknown scheduleId is exit 2, as `list` does
    if as_json:
        payload = [
            {
                "scheduleId": e.schedule_id,
                "kind": e.kind,
                "revision": e.revision,
                "at": _z(e.at_utc),
                "by": e.by,
                "detail": e.detail,
            }
            for e in rows
        ]
        print_json(payload)
        return
    table = terminal_table(f"{schedule} events")
    for column in ("at (UTC)", "kind", "revision", "by", "detail"):
        table.add_column(column)
    for e in rows:
        revision = "" if e.revision is None else str(e.revision)
        table.add_row(_z(e.at_utc), e.kind, revision, escape(e.by), escape(e.detail))
    out().print(table)


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
    by: Annotated[
        str,
        typer.Option(
            "--by", help="Who decides (stored on the case; not blank).", callback=check_text
        ),
    ],
    note: Annotated[
        str | None, typer.Option("--note", help="Evidence.", callback=check_text)
    ] = None,
    as_json: JsonOption = False,
    url: UrlOption = None,
) -> None:
    """Resolve an UNKNOWN_EFFECT case by hand: SUCCEEDED or NOT_APPLIED (then FAILED).

    Nothing is re-sent: a NOT_APPLIED occurrence ends FAILED, and running it again is a decision
    for a person (seed: never a blind resend). With --json: an object with occurrenceId,
    resolution, resolvedBy, resolvedAt and note.
    """
    from almanac.ledger_client import LedgerClient
    from ledger import ReconciliationResolution

    try:
        resolution = ReconciliationResolution(outcome.upper())
    except ValueError:
        fail(f"--outcome={outcome!r}: one of SUCCEEDED, NOT_APPLIED")
    if resolution is ReconciliationResolution.HUMAN:
        fail(f"--outcome={outcome!r}: one of SUCCEEDED, NOT_APPLIED")
    if not by.strip():
        fail(f"--by={by!r}: name who decides (it is stored on the case as resolvedBy)")
    case = LedgerClient(lambda: open_ledger(url)).resolve(
        occurrence_id, resolution.value, by=by, note=note
    )
    if as_json:
        print_json(
            {
                "occurrenceId": occurrence_id,
                "resolution": None if case.resolution is None else case.resolution.value,
                "resolvedBy": case.resolved_by,
                "resolvedAt": _z(case.resolved_at_utc),
                "note": case.note,
            }
        )
        return
    out().print(f"{occurrence_id}: {case.resolution.value if case.resolution else 'open'}")
