"""``almanac rollout`` and ``almanac rollback``: move schedules between implementation aliases.

    almanac rollout v2 --schedule internal-noop --reason "canary"      # one schedule
    almanac rollout v2 --percent 5 --reason "5 %" [--dry-run]          # a deterministic 5 %
    almanac rollback --to v1 --all --reason "v2 drops folds"           # every schedule back

Each selected schedule is switched in one ledger transaction (``ledger.switch_implementation``:
alias flipped, execution epoch bumped, not-started occurrences requeued, the rest listed with
why); then the requeued occurrences are started on the target alias's task queue
(``almanac.rollout.start_requeued``; ``--no-start`` leaves that to the operator). Both commands
print the schedules they select, and are idempotent: a schedule already on the alias is listed
as unchanged. Exit codes as in ``almanac.cli.output``.
"""

from __future__ import annotations

from datetime import UTC, datetime
from typing import TYPE_CHECKING, Annotated, Any

import typer

from almanac.cli.ledger_access import UrlOption, open_ledger
from almanac.cli.output import (
    JsonOption,
    almanac_settings,
    check_text,
    escape,
    fail,
    out,
    plural,
    print_json,
    run_async,
)

if TYPE_CHECKING:
    from almanac.rollout import Selection
    from ledger import Ledger, SwitchKind, SwitchResult

ScheduleOption = Annotated[
    list[str] | None,
    typer.Option("--schedule", help="A scheduleId to move (repeatable).", show_default=False),
]
ReasonOption = Annotated[
    str,
    typer.Option(
        "--reason",
        help="Why (recorded on the switch and every requeue event).",
        callback=check_text,
    ),
]
DryRunOption = Annotated[
    bool, typer.Option("--dry-run", help="Print what would move; change nothing.")
]
NoStartOption = Annotated[
    bool,
    typer.Option(
        "--no-start",
        help="Switch and requeue in the ledger only; do not start the requeued occurrences.",
    ),
]
IdFormatsOption = Annotated[
    str | None,
    typer.Option(
        "--id-formats",
        help="Occurrence-ID formats the target alias recognises, e.g. 1,2 (default: what its "
        "workers registered).",
        show_default=False,
    ),
]


def _formats(value: str | None) -> frozenset[int] | None:
    if value is None:
        return None
    try:
        formats = frozenset(int(part) for part in value.split(",") if part.strip())
    except ValueError:
        fail(f"--id-formats={value!r}: a comma-separated list of format versions, like 1,2")
    if not formats or min(formats) < 1:
        fail(f"--id-formats={value!r}: name at least one positive format version")
    return formats


def _by() -> str:
    import getpass
    import socket

    return f"{getpass.getuser()}@{socket.gethostname()}"


def _move(
    handle: Ledger,
    selection: Selection,
    kind: SwitchKind,
    reason: str,
    id_formats: frozenset[int] | None,
    *,
    start: bool,
) -> tuple[list[SwitchResult], list[str]]:
    from almanac import rollout

    # The command line is an edge: the one place a switch reads the wall clock.
    results = rollout.switch(
        handle,
        selection,
        datetime.now(UTC),
        kind=kind,
        by=_by(),
        reason=reason,
        id_formats=id_formats,
    )
    if not start or not any(r.requeued for r in results):
        return results, []

    async def work() -> list[str]:
        from almanac.schedule_reader import connect_temporal

        settings = almanac_settings()
        temporal = await connect_temporal(settings)
        return await rollout.start_requeued(handle, temporal, settings.temporal.task_queue, results)

    return results, run_async(work())


def _render(
    selection: Selection,
    results: list[SwitchResult] | None,
    started: list[str],
    as_json: bool,
) -> None:
    from almanac.rollout import result_json

    if as_json:
        print_json(
            {
                "alias": selection.alias,
                "selected": [g.schedule_id for g in selection.selected],
                "moving": [g.schedule_id for g in selection.moving],
                "dryRun": results is None,
                "switches": [result_json(r) for r in results or []],
                "started": started,
            }
        )
        return
    console = out(markup=False)
    verb = "would move" if results is None else "moved"
    moving = {g.schedule_id for g in selection.moving}
    colon = ":" if selection.selected else ""
    console.print(
        f"{plural(len(selection.selected), 'schedule')} selected; {len(moving)} {verb} to "
        f"{selection.alias}{colon}"
    )
    for gate in selection.selected:
        mark = (
            f"{gate.implementation_alias} → {selection.alias}"
            if gate.schedule_id in moving
            else (f"already on {selection.alias} (unchanged)")
        )
        console.print(f"  {gate.schedule_id}  {mark}")
    for result in results or []:
        if not result.changed:
            continue
        console.print(
            f"{result.schedule_id}: {result.kind.value.lower()} #{result.switch_id}, epoch "
            f"{result.epoch_before} → {result.epoch_after}; requeued {len(result.requeued)}"
        )
        for occurrence_id in result.requeued:
            console.print(f"  requeued      {occurrence_id}")
        for item in result.not_requeued:
            why = escape(item.why)
            console.print(f"  not requeued  {item.occurrence_id} ({item.state.value}): {why}")
    if started:
        console.print(f"started {plural(len(started), 'requeued occurrence')} on {selection.alias}")


def _switch(
    kind: SwitchKind,
    alias: str,
    reason: str,
    which: dict[str, Any],
    *,
    dry_run: bool,
    start: bool,
    id_formats: str | None,
    url: str | None,
    as_json: bool,
) -> None:
    """Select schedules and move them to ``alias``, or print the plan only (``dry_run``).

    ``which`` holds ``almanac.rollout.select``'s selection keywords (schedule_ids, percent, every).
    """
    from almanac import rollout as plan

    formats = _formats(id_formats)
    with open_ledger(url) as handle:
        try:
            selection = plan.select(handle, alias, **which)
        except ValueError as exc:
            fail(str(exc))
        if dry_run:
            _render(selection, None, [], as_json)
            return
        results, started = _move(handle, selection, kind, reason, formats, start=start)
        _render(selection, results, started, as_json)


def rollout(
    alias: Annotated[str, typer.Argument(help="The implementation alias to move schedules to.")],
    schedule: ScheduleOption = None,
    percent: Annotated[
        float | None,
        typer.Option(
            "--percent",
            min=0,
            max=100,
            help="Move this percentage (0 to 100) of all schedules, picked by a stable hash of "
            "the scheduleId.",
            show_default=False,
        ),
    ] = None,
    reason: ReasonOption = "rollout",
    dry_run: DryRunOption = False,
    no_start: NoStartOption = False,
    id_formats: IdFormatsOption = None,
    url: UrlOption = None,
    as_json: JsonOption = False,
) -> None:
    """Move schedules to ALIAS (canary): their occurrences run on ALIAS's workers from now on."""
    from ledger import SwitchKind

    _switch(
        SwitchKind.ROLLOUT,
        alias,
        reason,
        {"schedule_ids": schedule or (), "percent": percent},
        dry_run=dry_run,
        start=not no_start,
        id_formats=id_formats,
        url=url,
        as_json=as_json,
    )


def rollback(
    to: Annotated[str, typer.Option("--to", help="The implementation alias to return to.")],
    reason: Annotated[
        str, typer.Option("--reason", help="Why (required; recorded).", callback=check_text)
    ],
    schedule: ScheduleOption = None,
    every: Annotated[bool, typer.Option("--all", help="Every schedule.")] = False,
    dry_run: DryRunOption = False,
    no_start: NoStartOption = False,
    id_formats: IdFormatsOption = None,
    url: UrlOption = None,
    as_json: JsonOption = False,
) -> None:
    """Move schedules back to --to: stop new claims at once, requeue what had not started.

    Per schedule, one transaction flips the alias and bumps the execution epoch: from its commit
    no claim that read the old epoch or runs another alias succeeds. Attempts that already won
    dispatch finish (or go to UNKNOWN_EFFECT); SUCCEEDED occurrences are never touched.
    """
    from ledger import SwitchKind

    if not reason.strip():
        fail("--reason='': a rollback needs a reason")
    _switch(
        SwitchKind.ROLLBACK,
        to,
        reason,
        {"schedule_ids": schedule or (), "every": every},
        dry_run=dry_run,
        start=not no_start,
        id_formats=id_formats,
        url=url,
        as_json=as_json,
    )


def mount(app: typer.Typer) -> None:
    """Add ``rollout`` and ``rollback`` to the ``almanac`` app."""
    app.command()(rollout)
    app.command()(rollback)
