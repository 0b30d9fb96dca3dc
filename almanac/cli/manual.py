"""``almanac trigger``: manual runs, outside the calendar.

Thin, like the other command modules: parse, call :mod:`almanac.client`, render with Rich or
``--json``. Exit codes and errors as in :mod:`almanac.cli.output` (a malformed request ID or an
empty reason is exit 2 with the value named).
"""

from __future__ import annotations

from typing import Annotated

import typer

from almanac.cli.output import JsonOption, escape, out, print_json, run_async

ScheduleArg = Annotated[str, typer.Argument(help="The scheduleId.", show_default=False)]


def trigger(
    schedule_id: ScheduleArg,
    reason: Annotated[
        str, typer.Option("--reason", help="Why (recorded on the occurrence's events).")
    ] = "manual trigger",
    request_id: Annotated[
        str | None,
        typer.Option(
            "--request-id",
            help="Idempotency token (a-z 0-9 -, 1-64): the same one twice runs once. Default: "
            "'m' + 16 hex digits of sha256(scheduleId, user@host, reason).",
        ),
    ] = None,
    wait: Annotated[bool, typer.Option(help="Wait for the occurrence's outcome.")] = False,
    as_json: JsonOption = False,
) -> None:
    """Run one manual occurrence now: <scheduleId>.manual.<requestId>, never a calendar slot."""

    async def work() -> None:
        from almanac.client import AlmanacClient
        from almanac.settings import AlmanacSettings

        client = await AlmanacClient.connect(AlmanacSettings())
        result = await client.trigger(schedule_id, reason=reason, request_id=request_id, wait=wait)
        outcome = result.outcome
        if as_json:
            print_json(
                {
                    "scheduleId": schedule_id,
                    "occurrenceId": result.occurrence_id,
                    "requestId": result.request_id,
                    "workflowId": result.workflow_id,
                    "started": result.started,
                    "state": outcome.state if outcome is not None else None,
                }
            )
            return
        verb = "triggered" if result.started else "already triggered (same request ID)"
        line = f"{result.occurrence_id}: {verb} (workflow {result.workflow_id})"
        if outcome is not None:
            line += f"; {outcome.state}"
        out().print(escape(line))

    run_async(work())


def mount(app: typer.Typer) -> None:
    """Add the manual-run commands to the ``almanac`` app."""
    app.command()(trigger)
