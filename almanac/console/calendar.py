"""A schedule's month as a grid of local days: occurrences, DST nights and revision cutovers.

Days are the schedule's own calendar days: an occurrence sits on the date of its nominal local
time (a skipped gap record too, though it has no instant), and a month is ``[first local
midnight, next first local midnight)`` read in the schedule's zone. A DST night is a day whose
local midnights are not 24 hours apart; the day says which way the clocks went and by how much.
"""

from __future__ import annotations

import calendar as _calendar
from dataclasses import dataclass, field
from datetime import UTC, date, datetime, timedelta
from zoneinfo import ZoneInfo

from ledger import OccurrenceView
from ledger.browse import RevisionCutover
from timecontract import format_offset

DAY_SHOWN = 8
"""Occurrences listed in one day's cell; the rest are counted and linked to the list view."""

GAP_REASONS = {"GAP_SKIPPED", "GAP_SHIFTED_FORWARD", "GAP_SHIFT_COLLISION", "GAP_NEXT_VALID"}
FOLD_REASONS = {"FOLD_FIRST", "FOLD_SECOND"}


@dataclass
class Day:
    """One local day of the grid."""

    day: date
    in_month: bool
    occurrences: list[OccurrenceView] = field(default_factory=list)
    dst: str = ""
    """``clocks forward 1h`` / ``clocks back 1h`` on a DST night, else empty."""
    cutovers: list[RevisionCutover] = field(default_factory=list)

    @property
    def shown(self) -> list[OccurrenceView]:
        """The occurrences listed in the cell (the first :data:`DAY_SHOWN`)."""
        return self.occurrences[:DAY_SHOWN]

    @property
    def hidden(self) -> int:
        """How many more the cell only counts."""
        return max(0, len(self.occurrences) - DAY_SHOWN)

    @property
    def marks(self) -> list[str]:
        """What the day's DST decisions were (gap skipped/shifted, fold occurrences)."""
        found = []
        if any(o.reason in GAP_REASONS for o in self.occurrences):
            found.append("DST gap")
        if any(o.reason in FOLD_REASONS for o in self.occurrences):
            found.append("DST fold")
        return found


def month_bounds(year: int, month: int, zone: ZoneInfo) -> tuple[datetime, datetime]:
    """The month's first and next month's first local midnight, as aware UTC instants."""
    following = (year + month // 12, month % 12 + 1)
    start = datetime(year, month, 1, tzinfo=zone).astimezone(UTC)
    end = datetime(*following, 1, tzinfo=zone).astimezone(UTC)
    return start, end


def dst_change(day: date, zone: ZoneInfo) -> str:
    """``clocks forward 1h``/``clocks back 1h`` (or 30m, …) when the day is not 24 hours long."""
    start = datetime(day.year, day.month, day.day, tzinfo=zone)
    after = start + timedelta(days=1)
    change = (after.utcoffset() or timedelta()) - (start.utcoffset() or timedelta())
    if not change:
        return ""
    minutes = abs(int(change.total_seconds())) // 60
    size = f"{minutes // 60}h" if minutes % 60 == 0 else f"{minutes}m"
    return f"clocks {'forward' if change > timedelta() else 'back'} {size}"


def month_grid(
    year: int,
    month: int,
    zone: ZoneInfo,
    occurrences: list[OccurrenceView],
    revisions: tuple[RevisionCutover, ...],
) -> list[list[Day]]:
    """Weeks (Monday first) of :class:`Day`, each holding its occurrences in placed order."""
    weeks = _calendar.Calendar(firstweekday=0).monthdatescalendar(year, month)
    days = {d: Day(d, d.month == month, dst=dst_change(d, zone)) for week in weeks for d in week}
    for occurrence in occurrences:
        cell = days.get(occurrence.nominal_local.date())
        if cell is not None:
            cell.occurrences.append(occurrence)
    for revision in revisions:
        local = revision.cutover_at_utc.astimezone(zone).date()
        if local in days:
            days[local].cutovers.append(revision)
    return [[days[d] for d in week] for week in weeks]


def local_text(instant_utc: datetime | None, zone: ZoneInfo) -> str:
    """``2026-11-01 01:30:00 -04:00``: an instant as local time with its offset (``—`` for none).

    Seconds always, and the offset as ``timecontract.format_offset`` writes it: the CLI's local
    times (``2026-11-01T01:30:00``, ``utcOffset -04:00``), so a ``15:33:10Z`` run never reads
    ``15:33``. Sub-second parts are cut (the UTC instant beside it keeps them).
    """
    if instant_utc is None:
        return "—"
    local = instant_utc.astimezone(zone)
    return f"{local:%Y-%m-%d %H:%M:%S} {format_offset(local.utcoffset() or timedelta())}"
