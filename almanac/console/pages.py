"""What each page shows: read through the ledger's read API, shaped for the templates.

Every function takes the ledger and ``now_utc`` (read once per request at the console's edge)
and returns the template's context; none writes.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime, timedelta
from pathlib import Path
from typing import Any
from urllib.parse import quote
from zoneinfo import ZoneInfo

import ledger
from almanac import readings
from almanac.console import forms
from almanac.console.calendar import local_text, month_bounds, month_grid
from ledger import CaseView, GateView, Ledger, OccurrenceState, OccurrenceView
from ledger.browse import RevisionCutover, ScheduleFacts
from timecontract import zones
from timecontract.calendars import CalendarYearsNotCovered

SCHEDULES_PER_PAGE = 50
MONTH_LIMIT = 2000
"""Occurrences a month view reads at most (4 ledger pages); the list view pages through more."""
UPCOMING = 5
OPEN_STATES = (
    OccurrenceState.PLANNED,
    OccurrenceState.DUE,
    OccurrenceState.DISPATCHING,
    OccurrenceState.RUNNING,
    OccurrenceState.RETRY_WAIT,
)
PROJECTED_SHOWN = 100
"""Projected (not yet materialized) occurrences a month view lists at most."""
QUEUE_SHOWN = 200
"""Open cases the queue page lists (oldest first); a count says how many more there are."""


def owning(revisions: tuple[RevisionCutover, ...], at_utc: datetime) -> RevisionCutover | None:
    """The revision that owns ``at_utc``: the latest whose cutover has passed (DESIGN §3)."""
    passed = [r for r in revisions if r.cutover_at_utc <= at_utc]
    return passed[-1] if passed else None


def zone_for(
    revisions: tuple[RevisionCutover, ...], at_utc: datetime, store: Path | None
) -> ZoneInfo:
    """The zone of the revision owning ``at_utc`` (else the first), from its pinned release."""
    revision = owning(revisions, at_utc) or revisions[0]
    return zones.load(revision.time_zone, revision.tzdb_version, store)


def gate_status(gate: GateView) -> str:
    """``enabled``, ``disabled`` or ``deleted``: the gate in one word (shown as text)."""
    if gate.deleted:
        return "deleted"
    return "disabled" if gate.disabled else "enabled"


@dataclass(frozen=True)
class ScheduleRow:
    """One schedule on the overview."""

    gate: GateView
    facts: ScheduleFacts
    status: str
    revision_now: RevisionCutover | None
    pending: list[RevisionCutover]
    next_local: str
    next_utc: datetime | None
    next_materialized: bool = True
    """``False``: ``next_utc`` lies beyond the horizon, projected from the published specs."""


def schedule_row(
    gate: GateView, facts: ScheduleFacts, now_utc: datetime, store: Path | None
) -> ScheduleRow:
    """Shape one gate and its facts for the overview (next run in local time and in UTC).

    The next run is the ledger's next ``PLANNED`` one; without one (it lies beyond the
    materialized horizon), the one ``almanac status`` projects from the published specs
    (:func:`almanac.readings.project_next`, here from the specs and horizon end ``facts``
    holds), marked not materialized. A deleted schedule has none (``facts`` holds no specs).
    """
    now_revision = owning(facts.revisions, now_utc)
    next_utc, materialized = facts.next_planned_utc, True
    if next_utc is None and not gate.deleted:
        after = readings.after_horizon(now_utc, facts.last_placed_utc)
        projected = readings.first_projected(facts.specs, after, store)
        if projected is not None:
            next_utc, materialized = projected.instant_utc, False
    next_local = "—"
    if next_utc is not None and facts.revisions:
        next_local = local_text(next_utc, zone_for(facts.revisions, next_utc, store))
    return ScheduleRow(
        gate,
        facts,
        gate_status(gate),
        now_revision,
        [r for r in facts.revisions if r.cutover_at_utc > now_utc],
        next_local,
        next_utc,
        materialized,
    )


def schedules(
    handle: Ledger, now_utc: datetime, after: str | None, store: Path | None
) -> dict[str, Any]:
    """The schedules overview: a page of gates with their facts, and the next page's start.

    Raises:
        FormError: on ``after`` when it names no schedule (the console's cursor is the last
            shown schedule's ID, deleted ones included).
    """
    if after is not None:
        try:
            ledger.get_gate(handle, after)
        except ledger.ScheduleNotFound:
            raise forms.FormError("after", after, "not a page cursor of this console") from None
    gates = ledger.gates_page(handle, after=after, limit=SCHEDULES_PER_PAGE + 1)
    more = len(gates) > SCHEDULES_PER_PAGE
    gates = gates[:SCHEDULES_PER_PAGE]
    facts = ledger.schedule_facts(handle, [g.schedule_id for g in gates], now_utc)
    rows = [schedule_row(g, facts[g.schedule_id], now_utc, store) for g in gates]
    return {
        "rows": rows,
        "next_after": gates[-1].schedule_id if more else None,
        "states": list(OccurrenceState),
    }


def schedule(
    handle: Ledger,
    schedule_id: str,
    now_utc: datetime,
    query: dict[str, list[str]],
    store: Path | None,
) -> dict[str, Any]:
    """A schedule's page: its facts, next occurrences and a month or list of its occurrences.

    Raises:
        ScheduleNotFound: no such schedule.
        FormError: a bad filter, month, cursor or page size.
    """
    gate = ledger.get_gate(handle, schedule_id)
    facts = ledger.schedule_facts(handle, [schedule_id], now_utc)[schedule_id]
    row = schedule_row(gate, facts, now_utc, store)
    states = forms.states(query.get("state", []))
    revisions = forms.revisions(query.get("revision", []))
    view = (query.get("view") or ["month"])[0]
    if view not in ("month", "list"):
        raise forms.FormError("view", view, "month or list")
    now_zone = zone_for(facts.revisions, now_utc, store)
    now_local = now_utc.astimezone(now_zone)
    year, month = forms.month(_first(query, "month"), (now_local.year, now_local.month))
    probe_start, _ = month_bounds(year, month, now_zone)
    zone = zone_for(facts.revisions, probe_start, store)
    start, end = month_bounds(year, month, zone)
    upcoming = ledger.occurrence_page(
        handle, schedule_id, from_utc=now_utc, states=OPEN_STATES, limit=UPCOMING
    ).rows
    context: dict[str, Any] = {
        "row": row,
        "zone": zone,
        "view": view,
        "year": year,
        "month": month,
        "month_label": f"{year:04d}-{month:02d}",
        "previous_month": f"{year - (month == 1):04d}-{(month - 2) % 12 + 1:02d}",
        "next_month": f"{year + (month == 12):04d}-{month % 12 + 1:02d}",
        "states": states or [],
        "revisions": revisions or [],
        "upcoming": upcoming,
        "all_states": list(OccurrenceState),
        "error": row.facts.last_error,
        "projected_shown": PROJECTED_SHOWN,
        **_beyond_horizon(handle, gate, facts, now_utc, start, end, store),
    }
    if view == "month":
        rows, truncated = _month_rows(handle, schedule_id, start, end, states, revisions)
        context["weeks"] = month_grid(year, month, zone, rows, facts.revisions)
        context["truncated"] = truncated
        context["month_count"] = len(rows)
    else:
        after = forms.CursorCodec.load(_first(query, "after"))
        page = ledger.occurrence_page(
            handle,
            schedule_id,
            from_utc=start,
            to_utc=end,
            states=states,
            revisions=revisions,
            after=after,
            limit=forms.limit(_first(query, "limit")),
        )
        context["page"] = page
        low = after.placed_at_utc if after else start - timedelta(microseconds=1)
        high = end if page.next is None else None
        context["rows"] = with_cutovers(page.rows, facts.revisions, low, high)
        context["next_after"] = None if page.next is None else forms.CursorCodec.dump(page.next)
    return context


def _beyond_horizon(
    handle: Ledger,
    gate: GateView,
    facts: ScheduleFacts,
    now_utc: datetime,
    start: datetime,
    end: datetime,
    store: Path | None,
) -> dict[str, Any]:
    """Where the month ``[start, end)`` leaves what the ledger has materialized, if it does.

    Returns:
        ``unmaterialized_from``: the month's start, or the horizon's end when it lies in the month
        (:func:`almanac.readings.after_horizon`: the last placed instant, itself materialized;
        ``horizon_in_month`` says which), or ``None`` when the ledger holds all of the month or
        the schedule is deleted; ``projected``: the
        occurrences the published specs would run in that part, at most
        :data:`PROJECTED_SHOWN` (``almanac.readings.project``, as ``almanac status`` projects
        its next one); ``projection_problem``: why they cannot be projected (a month past the
        years the pinned calendar covers), when so.
    """
    nothing: dict[str, Any] = {"unmaterialized_from": None, "projected": []}
    if end <= now_utc or gate.deleted:
        return nothing
    frontier = readings.after_horizon(now_utc, facts.last_placed_utc)
    if frontier >= end:
        return nothing
    # ``facts`` holds the specs when the next run is projected; else they are read here.
    specs = facts.specs or ledger.published_specs(handle, gate.schedule_id)
    if not specs:
        return nothing
    after = max(frontier, start - timedelta(microseconds=1))
    beyond: dict[str, Any] = {
        "unmaterialized_from": max(frontier, start),
        "horizon_in_month": frontier >= start,  # the frontier itself is materialized
        "projected": [],
    }
    try:
        beyond["projected"] = readings.project(
            specs, after, PROJECTED_SHOWN, before_utc=end, tzdb_store=store
        )
    except CalendarYearsNotCovered as exc:  # past the pinned calendar's data: said, not a 500
        beyond["projection_problem"] = str(exc)
    return beyond


def _first(query: dict[str, list[str]], name: str) -> str | None:
    values = query.get(name)
    return values[0] if values else None


def _month_rows(
    handle: Ledger,
    schedule_id: str,
    start: datetime,
    end: datetime,
    states: list[OccurrenceState] | None,
    revisions: list[int] | None,
) -> tuple[list[OccurrenceView], bool]:
    rows: list[OccurrenceView] = []
    after = None
    while len(rows) < MONTH_LIMIT:
        page = ledger.occurrence_page(
            handle,
            schedule_id,
            from_utc=start,
            to_utc=end,
            states=states,
            revisions=revisions,
            after=after,
            limit=ledger.browse.MAX_PAGE,
        )
        rows += page.rows
        if page.next is None:
            return rows, False
        after = page.next
    return rows[:MONTH_LIMIT], True


@dataclass(frozen=True)
class ListRow:
    """A row of the list view: an occurrence, or a revision's cutover between two rows."""

    occurrence: OccurrenceView | None
    cutover: RevisionCutover | None = None


def with_cutovers(
    rows: tuple[OccurrenceView, ...],
    revisions: tuple[RevisionCutover, ...],
    low_utc: datetime,
    high_utc: datetime | None,
) -> list[ListRow]:
    """Rows with a cutover row wherever a revision's ownership starts in ``(low, high]``.

    ``low_utc``: where the page starts (exclusive); ``high_utc``: where it ends when it is the
    last page (a cutover after its last row is shown last), ``None`` when more pages follow.
    """
    shaped: list[ListRow] = []
    previous = low_utc

    def boundaries(upto: datetime) -> None:
        shaped.extend(ListRow(None, r) for r in revisions if previous < r.cutover_at_utc <= upto)

    for row in rows:
        boundaries(row.placed_at_utc)
        shaped.append(ListRow(row))
        previous = row.placed_at_utc
    if high_utc is not None:
        boundaries(high_utc)
    return shaped


def occurrence(
    handle: Ledger,
    occurrence_id: str,
    now_utc: datetime,
    ui_url: str | None,
    namespace: str,
    store: Path | None,
) -> dict[str, Any]:
    """An occurrence's identity, attempts, event trail, case and Temporal link.

    Raises:
        OccurrenceNotFound: no such occurrence.
    """
    detail = ledger.show_occurrence(handle, occurrence_id)
    o = detail.occurrence
    revisions = ledger.revision_cutovers(handle, o.schedule_id)
    revision = next((r for r in revisions if r.revision == o.revision), None)
    link = None
    if ui_url and detail.attempts:
        link = (
            f"{ui_url.rstrip('/')}/namespaces/{quote(namespace)}/workflows/{quote(o.occurrence_id)}"
        )
    return {
        "detail": detail,
        "o": o,
        "revision": revision,
        "temporal_link": link,
        "case_human": _human(detail.case, now_utc) if detail.case else False,
    }


def _human(case: CaseView, now_utc: datetime) -> bool:
    return case.resolution is not None or case.overdue(now_utc)


@dataclass(frozen=True)
class QueueEntry:
    """An open UNKNOWN_EFFECT case with its occurrence's attempts and trail."""

    case: CaseView
    detail: ledger.OccurrenceDetail
    human: bool
    age_minutes: int
    deadline_minutes: int
    """Minutes until the 30-minute deadline (negative: past it by that many)."""


def queue(handle: Ledger, now_utc: datetime, resolved: str | None = None) -> dict[str, Any]:
    """Open UNKNOWN_EFFECT cases, oldest first, with age against the 30-minute deadline.

    ``resolved``: an occurrence whose case was just resolved; its case, as the ledger holds it
    now, is shown as the outcome (never text from the URL).
    """
    cases = ledger.open_cases(handle)
    done = None
    if resolved is not None:
        try:
            done = ledger.show_occurrence(handle, resolved).case
        except ledger.OccurrenceNotFound:
            done = None
    entries = [
        QueueEntry(
            case,
            ledger.show_occurrence(handle, case.occurrence_id),
            _human(case, now_utc),
            int((now_utc - case.opened_at_utc).total_seconds() // 60),
            int((case.deadline_utc - now_utc).total_seconds() // 60),
        )
        for case in cases[:QUEUE_SHOWN]
    ]
    closed = done if done is not None and done.resolved_at_utc is not None else None
    return {"entries": entries, "more": max(0, len(cases) - QUEUE_SHOWN), "done": closed}
