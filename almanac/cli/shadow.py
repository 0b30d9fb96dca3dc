"""``almanac shadow run`` and ``almanac shadow report``: compare a candidate without dispatching.

    almanac shadow run --alias v2 [--schedule ID ...] [--since T] [--until T]
    almanac shadow report --alias v2 [--schedule ID] [--since T] [--json]

``run`` computes the selected schedules' occurrences with this build (the candidate, named by
``--alias``, default ``ALMANAC_IMPLEMENTATION_ALIAS``) into the shadow tables only
(``ledger.shadow``): no live row, slot, attempt, event or gate is written, nothing is claimed or
dispatched. The default window is the four weeks before now. ``run`` first says what it will
cost (about how many records) and refuses, writing nothing, a selection beyond ``--max-records``;
it writes 1,000 rows per transaction and yields the ledger's writer between two, so live
dispatch goes on beside it. ``report`` prints matched,
only-live, only-shadow and differing occurrences with examples; it exits 1 when there is any
mismatch, so a pipeline can gate a rollout on it.
"""

from __future__ import annotations

from datetime import UTC, datetime, timedelta
from typing import Annotated

import typer

from almanac.cli.ledger_access import UrlOption, open_ledger
from almanac.cli.output import (
    EXIT_OPERATIONAL,
    JsonOption,
    almanac_settings,
    command_group,
    fail,
    out,
    parse_instant,
    plural,
    print_json,
    say,
)

MAX_RECORDS = 100_000
"""``--max-records``' default: four weeks of a one-minute rule is 40,320 records; of a
10-second rule 241,920 (refused unless asked for)."""
YIELD_SECONDS = 0.01
"""Pause between two shadow write transactions, so a live writer waiting for the lock gets it."""

shadow_app, mount = command_group(
    "shadow",
    "Shadow mode: compute a candidate's occurrences for comparison only, and report.",
)

AliasOption = Annotated[
    str | None,
    typer.Option("--alias", help="The candidate alias (default ALMANAC_IMPLEMENTATION_ALIAS)."),
]
SinceOption = Annotated[
    str | None, typer.Option("--since", help="Window start, ISO 8601 UTC.", show_default=False)
]


def _alias(alias: str | None) -> str:

    return alias or almanac_settings().implementation_alias


@shadow_app.command("run")
def run_shadow(
    alias: AliasOption = None,
    schedule: Annotated[
        list[str] | None,
        typer.Option("--schedule", help="A scheduleId (repeatable; default: every schedule)."),
    ] = None,
    since: SinceOption = None,
    until: Annotated[
        str | None, typer.Option("--until", help="Window end, ISO 8601 UTC (default now).")
    ] = None,
    max_records: Annotated[
        int,
        typer.Option(
            "--max-records",
            min=1,
            help="Refuse (writing nothing) a run estimated to compute more records than this "
            "in all; narrow --schedule/--since/--until, or raise it.",
        ),
    ] = MAX_RECORDS,
    url: UrlOption = None,
    as_json: JsonOption = False,
) -> None:
    """Materialize the selected schedules' window into the shadow tables of --alias."""
    import contextlib
    import getpass
    import time

    import ledger
    from almanac.ledger_client import LedgerClient
    from ledger.shadow import WRITE_BATCH, estimate_records

    now = datetime.now(UTC)  # the command line is an edge: it reads the clock
    high = parse_instant("--until", until) if until is not None else now
    low = parse_instant("--since", since) if since is not None else high - timedelta(weeks=4)
    name = _alias(alias)
    with open_ledger(url) as handle:
        ids = schedule or [g.schedule_id for g in ledger.list_gates(handle)]
        estimates = {sid: estimate_records(handle, sid, low, high) for sid in ids}
        total = sum(estimates.values())
        window = f"[{low.isoformat()}, {high.isoformat()})"
        if total > max_records:
            largest = max(estimates, key=lambda sid: estimates[sid])
            fail(
                f"--max-records={max_records}: about {total} records over {window} "
                f"({largest}: about {estimates[largest]}); narrow --schedule, --since or "
                "--until, or raise --max-records (nothing was written)"
            )
        say(
            f"shadow run {name}: about {plural(total, 'record')} for "
            f"{plural(len(ids), 'schedule')} over {window}, {WRITE_BATCH} per transaction",
            stderr=True,
        )
        writer = LedgerClient(lambda: contextlib.nullcontext(handle), clock=lambda: now)
        runs = [
            writer.shadow_run(
                name,
                sid,
                low,
                high,
                by=getpass.getuser(),
                tzdb_store=almanac_settings().tzdb_store,
                # Yield the ledger's writer between two transactions: live writers go first.
                between_batches=lambda: time.sleep(YIELD_SECONDS),
            )
            for sid in ids
        ]
    if as_json:
        print_json(
            [
                {"scheduleId": r.schedule_id, "records": r.records, "mismatches": r.mismatches}
                for r in runs
            ]
        )
        return
    for r in runs:
        out(markup=False).print(
            f"{r.schedule_id}: {plural(r.records, 'record')} computed as {name}, "
            f"{plural(r.mismatches, 'mismatch', 'mismatches')}"
        )


@shadow_app.command("report")
def report(
    alias: AliasOption = None,
    schedule: Annotated[str | None, typer.Option("--schedule", help="One scheduleId.")] = None,
    since: SinceOption = None,
    examples: Annotated[int, typer.Option(help="Examples per category.", min=0)] = 5,
    url: UrlOption = None,
    as_json: JsonOption = False,
) -> None:
    """Matched / only-live / only-shadow / differing for --alias; exit 1 on any mismatch."""
    from ledger.shadow import shadow_report

    low = parse_instant("--since", since) if since is not None else None
    with open_ledger(url) as handle:
        result = shadow_report(handle, _alias(alias), schedule_id=schedule, since=low)
    if not result.schedules:
        # Nothing compared is no evidence of agreement: a mistyped alias must not read as "0".
        where = f" for schedule {schedule!r}" if schedule else ""
        fail(
            f"--alias={result.alias!r}: no shadow run{where} to compare "
            f"(run `almanac shadow run --alias {result.alias}` first)"
        )
    payload = result.to_json(examples)
    if as_json:
        print_json(payload)
    else:
        console = out(markup=False)
        console.print(
            f"shadow {result.alias} vs live over {plural(len(result.schedules), 'schedule')}: "
            f"{result.matched} matched, {len(result.only_live)} only live, "
            f"{len(result.only_shadow)} only shadow, {len(result.differing)} differing"
            f" (not compared: {result.manual_excluded} manual, "
            f"{result.not_backfilled} before publication and never backfilled)"
        )
        for label, ids in (("only live", result.only_live), ("only shadow", result.only_shadow)):
            for occurrence_id in ids[:examples]:
                console.print(f"  {label:<12} {occurrence_id}")
        for difference in result.differing[:examples]:
            shown = ", ".join(f"{k}: {a} ≠ {b}" for k, (a, b) in difference.fields.items())
            console.print(f"  differing    {difference.occurrence_id}  {shown}")
    if result.mismatches:
        raise typer.Exit(EXIT_OPERATIONAL)
