"""``almanac trigger`` and ``almanac backfill``: runs an operator asks for, outside the calendar.

Thin, like the other command modules: parse, call :mod:`almanac.client`, render as text or
``--json``. Exit codes and errors as in :mod:`almanac.cli.output` (a malformed request ID, an
empty reason, a naive instant or a refused backfill window or bound is exit 2 with the field and
value named; Temporal or no worker is exit 1).
"""

from __future__ import annotations

from typing import Annotated

import typer

from almanac.cli.output import (
    EXIT_OPERATIONAL,
    JsonOption,
    PlainTable,
    ScheduleArg,
    almanac_settings,
    check_text,
    escape,
    fail,
    out,
    parse_instant,
    plural,
    print_json,
    run_async,
)


def trigger(
    schedule_id: ScheduleArg,
    reason: Annotated[
        str,
        typer.Option(
            "--reason", help="Why (recorded on the occurrence's events).", callback=check_text
        ),
    ] = "manual trigger",
    request_id: Annotated[
        str | None,
        typer.Option(
            "--request-id",
            help="Idempotency token (a-z 0-9 -, 1-64): the same one twice runs once. Default: "
            "'m' + 16 hex digits of sha256(scheduleId, user@host, reason).",
        ),
    ] = None,
    wait: Annotated[
        bool,
        typer.Option(help="Wait for the occurrence's outcome (exit 1 if it ends FAILED)."),
    ] = False,
    as_json: JsonOption = False,
) -> None:
    """Run one manual occurrence now: <scheduleId>.manual.<requestId>, never a calendar slot."""
    from almanac.manual import check_request

    try:  # bad input is exit 2 before anything connects, even with Temporal down
        check_request(schedule_id, reason, request_id)
    except ValueError as exc:
        fail(str(exc))

    async def work() -> None:
        from almanac.client import AlmanacClient

        client = await AlmanacClient.connect(almanac_settings())
        result = await client.trigger(schedule_id, reason=reason, request_id=request_id, wait=wait)
        if as_json:
            print_json(
                {
                    "scheduleId": schedule_id,
                    "occurrenceId": result.occurrence_id,
                    "requestId": result.request_id,
                    "workflowId": result.workflow_id,
                    "started": result.started,
                    "state": result.state,
                }
            )
        else:
            verb = "triggered" if result.started else "already triggered (same request ID)"
            line = f"{result.occurrence_id}: {verb} (workflow {result.workflow_id})"
            if result.state is not None:
                line += f"; {result.state}"
            out().print(escape(line), soft_wrap=True)
        if wait and result.state == "FAILED":
            raise typer.Exit(EXIT_OPERATIONAL)

    run_async(work())


BACKFILL_MAX = 1000
"""``--max``'s default (``almanac.client.DEFAULT_BACKFILL_MAX``)."""
BACKFILL_MAX_BOUND = 2000
"""``--max``'s largest value (the schedule's update validator refuses more:
``workflows.schedule_validation.MAX_BACKFILL_BOUND``), checked here before anything connects."""


def backfill(
    schedule_id: ScheduleArg,
    from_: Annotated[
        str,
        typer.Option(
            "--from", help="Window start, inclusive: an ISO 8601 instant with an offset (…Z)."
        ),
    ],
    to: Annotated[
        str,
        typer.Option(
            "--to",
            help="Window end, exclusive: an ISO 8601 instant with an offset, not after the "
            "schedule's now.",
        ),
    ],
    dry_run: Annotated[
        bool, typer.Option("--dry-run", help="Print the plan; write and run nothing.")
    ] = False,
    include_expired: Annotated[
        bool,
        typer.Option(
            "--include-expired",
            help="Also run MISFIRE_EXPIRED occurrences (a recorded MISFIRE_EXPIRED → DUE).",
        ),
    ] = False,
    max_occurrences: Annotated[
        int,
        typer.Option(
            "--max",
            help="Refuse (whole, never truncated) a plan creating or requeuing more than this "
            "(1-2000; a window holds at most 2000).",
            min=1,
            max=BACKFILL_MAX_BOUND,
        ),
    ] = BACKFILL_MAX,
    reason: Annotated[
        str,
        typer.Option(
            "--reason",
            help="Why (recorded on every event the backfill writes).",
            callback=check_text,
        ),
    ] = "operator backfill",
    as_json: JsonOption = False,
) -> None:
    """Run a past window [--from, --to) on purpose: create what was never materialized.

    Occurrences the revision in force owns in the window and that were never materialized are
    created with their normal IDs and run once; MISFIRE_EXPIRED ones run only with
    --include-expired; the rest (SUCCEEDED, UNKNOWN_EFFECT, FAILED, CANCELLED, SKIPPED_*, in
    flight) are reported and left alone. Lateness does not apply to a backfill.
    """
    start = parse_instant("--from", from_)
    end = parse_instant("--to", to)
    if end <= start:
        fail(f"--to={to!r}: must lie after --from={from_!r} (the window is [--from, --to))")
    if not reason.strip():
        fail(f"--reason={reason!r}: a backfill needs a non-empty reason")

    async def work() -> None:
        from almanac.client import AlmanacClient

        client = await AlmanacClient.connect(almanac_settings())
        result = await client.backfill(
            schedule_id,
            start,
            end,
            reason=reason,
            include_expired=include_expired,
            max_occurrences=max_occurrences,
            dry_run=dry_run,
        )
        if as_json:
            print_json(result)
            return
        render_backfill(result)

    run_async(work())


def render_backfill(result: object) -> None:
    """Print a backfill's plan as a table and one summary line (``io.BackfillResult``)."""
    from activities.io import BackfillResult
    from timecontract import format_instant

    assert isinstance(result, BackfillResult)
    window = f"[{format_instant(result.from_utc)}, {format_instant(result.to_utc)})"
    title = f"{result.schedule_id} r{result.revision} backfill {window}" + (
        " — dry run, nothing written" if result.dry_run else ""
    )
    table = PlainTable(title, ["action", "instant (UTC)", "nominal local", "state", "occurrenceId"])
    colors = {"CREATE": "green", "REQUEUE": "yellow", "SKIP": ""}
    for e in result.entries:
        table.add_row(
            e.action,
            format_instant(e.instant_utc),
            e.nominal_local,
            e.state or "—",
            f"{e.occurrence_id}  ({e.note})" if e.note else e.occurrence_id,
            color=colors.get(e.action, ""),
        )
    table.print()
    counts = {a: sum(1 for e in result.entries if e.action == a) for a in colors}
    summary = (
        f"{plural(counts['CREATE'], 'create')}, {plural(counts['REQUEUE'], 'requeue')}, "
        f"{plural(counts['SKIP'], 'skip')} (bound {result.max_occurrences})"
    )
    if result.dry_run:
        summary += "; dry run: run again without --dry-run to apply"
    else:
        summary += f"; {plural(len(result.released), 'occurrence')} released to run now"
    out().print(escape(summary), soft_wrap=True)


def mount(app: typer.Typer) -> None:
    """Add the manual-run commands to the ``almanac`` app."""
    app.command()(trigger)
    app.command()(backfill)
