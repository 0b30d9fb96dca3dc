"""The control plane: ``almanac apply``, ``disable``, ``enable``, ``delete``, ``status``, etc.

Each is thin: parse the arguments, call :mod:`almanac.client` (which needs Temporal only), render
with Rich or ``--json``. Exit codes and errors as in :mod:`almanac.cli.output`: a change prints
the ledger's verdict and exits 0, or exits 2 naming the refused field and value; 1 is for an
operational failure only (Temporal unreachable, no worker to give a verdict).
"""

from __future__ import annotations

from datetime import datetime, timedelta
from pathlib import Path
from typing import TYPE_CHECKING, Annotated, Any

import typer

from almanac.cli.output import (
    JsonOption,
    ScheduleArg,
    almanac_settings,
    check_schedule_id,
    check_text,
    escape,
    json_object,
    out,
    plural,
    print_json,
    run_async,
    terminal_table,
)

if TYPE_CHECKING:
    from rich.table import Table

    from almanac.client import AlmanacClient
    from almanac.readings import FailureStreakReading
    from almanac.schedule_reader import LiveStatus, ScheduleSummary
    from almanac.settings import AlmanacSettings


async def _connect() -> AlmanacClient:
    from almanac.client import AlmanacClient

    return await AlmanacClient.connect(almanac_settings())


def _settings() -> AlmanacSettings:
    return almanac_settings()


def _verdict_json(verdict: Any) -> dict[str, Any]:
    """A disable, enable or delete verdict as its ``--json`` object; a text it leaves empty is null.

    The verdicts mark an absent text with ``""``: ``rejected`` (a refusal exits 2 before this)
    and ``misfirePolicy`` (named only by an enable that changed the gate). In JSON an absent
    value is ``null``, as everywhere else.
    """
    data = json_object(verdict)
    return {key: None if value == "" else value for key, value in data.items()}


def _caller_identity() -> str:
    """Who runs this command, recorded as a change's ``by``: ``<user>@<host>``, as trigger does."""
    from almanac.manual import caller_identity as identity

    return identity()


def _z(value: datetime | None) -> str:
    from timecontract import format_instant

    return format_instant(value) if value is not None else "—"


def _recorded(value: datetime | None) -> str:
    """A time read from a clock, to the second (``timecontract.format_recorded``); ``—`` if none."""
    from timecontract import format_recorded

    return format_recorded(value) if value is not None else "—"


def apply(
    spec_file: Annotated[Path, typer.Argument(help="A scheduleSpec.v1 file with an action.")],
    horizon_hours: Annotated[
        float | None,
        typer.Option(
            "--horizon-hours",
            min=1,
            help="Look-ahead of a new schedule's materialization (default 14 days; shortened "
            "for high-frequency rules). Ignored when the schedule runs already.",
        ),
    ] = None,
    as_json: JsonOption = False,
) -> None:
    """Publish a spec as a revision (starting the schedule if needed); print the ledger's verdict.

    Exit 0 with what changed (revision, cutover, gate generation), 2 with the refused field and
    value (an action the adapters refuse, a revision that does not increase, a cutover in the
    past …), 1 when Temporal or a worker cannot give a verdict.
    """

    async def work() -> None:
        from almanac.apply_checks import check_applicable
        from almanac.calendars import pin_spec_calendar
        from almanac.cli.spec import (
            action_warnings,
            load_checked_spec,
            print_warnings,
            validation_json,
        )
        from timecontract import spec_warnings

        store = _settings().tzdb_store
        try:
            # The check `validate` makes: every problem of the spec and of its action at once.
            spec = load_checked_spec(spec_file, store)
        except ValueError:  # InvalidSpec: invalid input, exit 2
            if as_json:  # the object `validate --json` prints for this file; the line on stderr
                print_json(validation_json(spec_file, store))
            raise
        check_applicable(spec)
        # The calendar release the spec pins goes into the store, where workers read it.
        pin_spec_calendar(spec, store)
        # Printed once the spec is applied: a failure stays the one line on stderr.
        warnings = spec_warnings(spec, tzdb_store=store) + action_warnings(spec)
        client = await _connect()
        horizon = timedelta(hours=horizon_hours) if horizon_hours else None
        result = await client.apply(spec, horizon=horizon)
        print_warnings(spec_file, warnings)
        if as_json:
            print_json({**json_object(result), "warnings": [w.to_json() for w in warnings]})
            return
        verdict = result.verdict
        generation = verdict.gate.disable_generation if verdict.gate else "?"
        sid, rev = result.schedule_id, result.revision
        if result.action == "unchanged":
            line = f"{sid}: unchanged, revision {rev} is already published (same digest)"
        else:
            verb = "started" if result.action == "started" else "published"
            line = (
                f"{sid}: {verb} revision {rev}, active from {_z(verdict.cutover_at_utc)} "
                f"(gate generation {generation}"
            )
            if verdict.superseded:
                older = plural(verdict.superseded, "occurrence")
                line += f"; {older} of older revisions superseded"
            line += f"; workflow {result.workflow_id})"
        out().print(escape(line), soft_wrap=True)

    run_async(work())


def disable(
    schedule_id: ScheduleArg,
    reason: Annotated[
        str, typer.Option("--reason", help="Why (recorded in the ledger).", callback=check_text)
    ],
    as_json: JsonOption = False,
) -> None:
    """Disable a schedule: nothing new is claimed until it is enabled. Prints the verdict."""

    async def work() -> None:
        if not reason.strip():
            raise ValueError(f"--reason={reason!r}: disabling needs a non-empty reason")
        client = await _connect()
        verdict = await client.disable(schedule_id, reason, by=_caller_identity())
        if as_json:
            print_json(_verdict_json(verdict))
            return
        generation = verdict.gate.disable_generation if verdict.gate else "?"
        if not verdict.changed:
            line = f"{schedule_id}: already disabled (gate generation {generation})"
        else:
            line = (
                f"{schedule_id}: disabled ({reason.strip()}), gate generation {generation}; "
                f"{plural(verdict.cancelled, 'due occurrence')} cancelled; planned ones wait for "
                "`almanac enable`, then the misfire policy decides"
            )
        out().print(escape(line), soft_wrap=True)

    run_async(work())


def enable(schedule_id: ScheduleArg, as_json: JsonOption = False) -> None:
    """Enable a disabled schedule; say what the misfire policy does with what came due."""

    async def work() -> None:
        client = await _connect()
        verdict = await client.enable(schedule_id, by=_caller_identity())
        if as_json:
            print_json(_verdict_json(verdict))
            return
        generation = verdict.gate.disable_generation if verdict.gate else "?"
        if not verdict.changed:
            line = f"{schedule_id}: already enabled (gate generation {generation})"
        else:
            line = (
                f"{schedule_id}: enabled, gate generation {generation}; "
                f"{plural(verdict.came_due, 'occurrence')} came due while disabled"
            )
            if verdict.due_before_disable:
                line += (
                    f", and {plural(verdict.due_before_disable, 'overdue one')} from before the "
                    "disable that no worker had decided"
                )
            if verdict.came_due or verdict.due_before_disable:
                line += (
                    f"; under {verdict.misfire_policy}: {verdict.released} run now, "
                    f"{verdict.expired} expire (MISFIRE_EXPIRED)"
                )
        out().print(escape(line), soft_wrap=True)

    run_async(work())


def delete(
    schedule_id: ScheduleArg,
    reason: Annotated[
        str, typer.Option("--reason", help="Why (recorded in the ledger).", callback=check_text)
    ],
    as_json: JsonOption = False,
) -> None:
    """Delete a schedule: its workflow completes, nothing new is claimed, the ledger keeps all.

    Occurrences not yet dispatched are cancelled (reason 'deleted: …'); dispatched ones finish.
    Re-applying the scheduleId later needs a higher revision.
    """

    async def work() -> None:
        if not reason.strip():
            raise ValueError(f"--reason={reason!r}: deleting needs a non-empty reason")
        client = await _connect()
        verdict = await client.delete(schedule_id, reason, by=_caller_identity())
        if as_json:
            print_json(_verdict_json(verdict))
            return
        revision = verdict.gate.active_revision if verdict.gate else 0
        if not verdict.deleted:
            line = f"{schedule_id}: already deleted"
        else:
            line = (
                f"{schedule_id}: deleted ({reason.strip()}); "
                f"{plural(verdict.cancelled, 'undispatched occurrence')} cancelled, every fact kept"
            )
        line += f"; re-applying it needs revision {revision + 1} or higher"
        out().print(escape(line), soft_wrap=True)

    run_async(work())


def status(
    schedule_id: Annotated[
        str | None,
        typer.Argument(
            help="The scheduleId (default: every running schedule).", callback=check_schedule_id
        ),
    ] = None,
    n: Annotated[int, typer.Option("-n", min=0, max=20, help="Next occurrences to show.")] = 5,
    as_json: JsonOption = False,
) -> None:
    """Show a schedule's gate, active revision, next occurrences and counts by state."""

    async def work() -> None:
        import asyncio

        from almanac.client_errors import TemporalUnavailable
        from almanac.schedule_reader import ledger_alone

        if schedule_id is None:
            summaries = await (await _connect()).list_schedules()
            if as_json:
                print_json(summaries)
            else:
                out().print(_schedules_table(summaries))
            return
        try:
            client = await _connect()
        except TemporalUnavailable as exc:
            # The ledger's reading still answers, with the workflow's part missing.
            # An ID it does not know is refused as Temporal's absence, with a close one it knows.
            state, upcoming = await asyncio.to_thread(
                ledger_alone, _settings(), schedule_id, n, exc
            )
        else:
            state = await client.status(schedule_id)
            upcoming = await client.upcoming(schedule_id, n) if n else []
        if as_json:
            print_json({"status": state, "upcoming": upcoming})
            return
        console = out()
        gate = state.gate
        if gate is None:
            console.print(f"{schedule_id}: starting (no revision published yet)")
        else:
            enabled = (
                f"[red]disabled[/red] ({escape(gate.disabled_reason or '')})"
                if gate.disabled
                else "[green]enabled[/green]"
            )
            console.print(
                f"[bold]{escape(schedule_id)}[/bold]  {enabled}  {escape(_revisions(state))}  "
                f"implementation {escape(gate.implementation_alias)}  "
                f"epoch {gate.execution_epoch}"
            )
        next_instant = _next(state)
        console.print(
            f"next instant {next_instant}  materialized through "
            f"{_recorded(state.materialized_through_utc)}"
        )
        counts = _counts(state.counts_by_state)
        console.print(f"counts: {counts or '—'}")
        miss = state.latest_deadline_miss
        if state.deadline is not None and miss is None:
            console.print(f"deadline {state.deadline} after each instant: none missed")
        if miss is not None:
            console.print(
                f"[yellow]deadlines missed: {state.deadline_misses}[/yellow] (latest "
                f"{escape(miss.occurrence_id)}: {miss.state_at_deadline.value} at its deadline "
                f"{_z(miss.deadline_utc)})"
            )
        if state.failure_streak is not None:
            console.print(escape(_streak_line(state.failure_streak)))
        for line in _holidays(state):
            console.print(escape(line))
        if state.source == "ledger":
            console.print(f"[dim]read from the ledger at {_recorded(state.read_at_utc)}[/dim]")
            if state.worker_problem:
                console.print(
                    "[yellow]the schedule workflow's part is missing[/yellow] (last error, "
                    f"rejections, high-water mark): {escape(state.worker_problem)}"
                )
        else:
            console.print(
                "[yellow]as of the schedule's last wake-up[/yellow] (the ledger was not read: "
                f"{escape(state.ledger_problem)})"
            )
        rejected_at = state.last_rejected_at_utc
        for label, value in (
            ("last error", state.last_error),
            (
                "last rejected change" + (f" (at {_recorded(rejected_at)})" if rejected_at else ""),
                state.last_rejected_signal,
            ),
        ):
            if value:
                console.print(f"[yellow]{label}:[/yellow] {escape(value)}")
        if upcoming:
            console.print(_upcoming_table(f"next {len(upcoming)}", upcoming))

    run_async(work())


def upcoming(
    schedule_id: ScheduleArg,
    n: Annotated[int, typer.Option("-n", min=1, max=20, help="How many (at most 20).")] = 10,
    as_json: JsonOption = False,
) -> None:
    """List a schedule's next occurrences: local time, UTC instant, state (from the ledger).

    Beyond the materialized horizon the rest come from the published spec, marked "not yet
    materialized" (materialized: false, state: null in --json).
    """

    async def work() -> None:
        client = await _connect()
        rows = await client.upcoming(schedule_id, n)
        if as_json:
            print_json(
                [
                    {
                        "occurrenceId": o.occurrence_id,
                        "scheduleId": o.schedule_id,
                        "revision": o.revision,
                        "nominalLocal": o.nominal_local,
                        "fold": o.fold,
                        "instant": _z(o.instant_utc),
                        "state": o.state,
                        "materialized": o.materialized,
                    }
                    | ({} if o.holiday is None else {"holiday": o.holiday, "calendar": o.calendar})
                    for o in rows
                ]
            )
            return
        out().print(_upcoming_table(schedule_id, rows))

    run_async(work())


def _revisions(status: LiveStatus) -> str:
    """Which revision is active (owns now) and which are pending, as one phrase.

    ``active revision r1, r2 pending from 2026-11-01T06:00:00Z``: a revision is active only once
    its cutover has passed (DESIGN §3). Without the ledger's reading, only the latest published
    revision is known, and it is called that.
    """
    if status.source != "ledger" or status.gate is None:
        latest = status.gate.active_revision if status.gate else "?"
        return f"latest published revision r{latest}"
    now = (
        "no active revision"
        if status.revision_now is None
        else f"active revision r{status.revision_now}"
    )
    pending = [f"r{p.revision} pending from {_z(p.cutover_at_utc)}" for p in status.pending]
    return ", ".join([now, *pending])


def _next(status: LiveStatus) -> str:
    """The next instant, marked when it lies beyond the horizon (projected, not materialized)."""
    if status.next_instant_utc is None or status.next_materialized:
        return _z(status.next_instant_utc)
    return f"{_z(status.next_instant_utc)} (beyond the horizon, not yet materialized)"


def _holidays(status: LiveStatus) -> list[str]:
    """The holiday decisions ahead, one line each, named as ``preview`` and ``ledger show`` do.

    ``2026-11-26T14:00:00Z SKIPPED_HOLIDAY "Thanksgiving Day" (NYSE@holidays-0.108)``; a moved
    occurrence also gives its nominal local time and state.
    """
    if not status.holidays:
        return []
    lines = ["holiday decisions ahead:"]
    for h in status.holidays:
        moved = "" if h.state == "SKIPPED_HOLIDAY" else f" {h.state}, nominal {h.nominal_local}"
        lines.append(f'  {_z(h.instant_utc)} {h.reason} "{h.holiday}" ({h.calendar}){moved}')
    return lines


def _counts(counts: dict[str, int]) -> str:
    return "  ".join(f"{k} {v}" for k, v in sorted(counts.items()) if v)


def _upcoming_table(title: str, rows: list[Any]) -> Table:
    table = terminal_table(title)
    for column in ("nominal local", "fold", "instant (UTC)", "rev", "state", "occurrenceId"):
        table.add_column(column, no_wrap=True)
    for o in rows:
        table.add_row(
            o.nominal_local,
            str(o.fold),
            _z(o.instant_utc),
            str(o.revision),
            (o.state if o.materialized else "[dim]not yet materialized[/dim]")
            + ("" if o.holiday is None else escape(f' (moved: "{o.holiday}", {o.calendar})')),
            o.occurrence_id,
        )
    if not rows:
        table.caption = "no upcoming occurrence (the rule has ended, or the schedule has none)"
    return table


def _schedules_table(summaries: list[ScheduleSummary]) -> Table:
    table = terminal_table("schedules")
    for column in ("scheduleId", "gate", "revision", "next instant (UTC)", "counts by state"):
        table.add_column(column)
    for s in summaries:
        if s.status is None:
            table.add_row(s.schedule_id, "?", "?", "?", escape(s.problem))
            continue
        gate = s.status.gate
        table.add_row(
            s.schedule_id,
            "—" if gate is None else ("disabled" if gate.disabled else "enabled"),
            "—" if gate is None else escape(_revisions(s.status)),
            escape(_next(s.status)),
            _counts(s.status.counts_by_state),
        )
    table.caption = plural(len(summaries), "running schedule workflow")
    return table


def mount(app: typer.Typer) -> None:
    """Add the control commands to the ``almanac`` app."""
    app.command()(apply)
    app.command()(disable)
    app.command()(enable)
    app.command()(delete)
    app.command()(status)
    app.command()(upcoming)


def _streak_line(reading: FailureStreakReading) -> str:
    """``failure streak 2 (notify after 3 via http, pause; recover after 1); last: …``."""
    pause = ", pause" if reading.pause else ""
    line = (
        f"failure streak {reading.streak} (notify after {reading.notify_after} via "
        f"{reading.action}{pause}; recover after {reading.recover_after})"
    )
    facts = [
        f"{f.kind.value} since {f.streak_start_occurrence_id} at {_recorded(f.recorded_at_utc)}, "
        f"notification {f.notify_state.value} ({plural(f.notify_attempts, 'attempt')})"
        for f in reading.latest
    ]
    return line + (f"; last: {'; '.join(facts)}" if facts else "")
