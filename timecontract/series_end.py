"""Where a spec's series stops: whether a window starts after its ``end`` or its rule's ``UNTIL``.

A tool that shows an empty window says why (``almanac preview``). Both answers are safe: a bound
is named only if no record the spec owns can be placed at or after the window's start.
"""

from __future__ import annotations

from datetime import datetime, timedelta
from pathlib import Path

from timecontract import zones
from timecontract.calendars import MAX_ROLL_DAYS
from timecontract.iso8601 import format_instant
from timecontract.recurrence import uses_calendar
from timecontract.resolve import offsets_between
from timecontract.spec import ScheduleSpecV1

_LATER_PLACEMENTS = timedelta(days=2)
"""A record placed this long or longer after ``from`` has a nominal time later than ``from`` +
33 hours (UTC offsets lie within ±15 hours), so later than ``from`` read with any offset."""


def ended_before(
    spec: ScheduleSpecV1, from_utc: datetime, *, tzdb_store: Path | None = None
) -> str | None:
    """Name the bound (``end`` or the rule's ``UNTIL``) that ends the series before ``from_utc``.

    Args:
        spec: a validated spec.
        from_utc: a window start, aware, inclusive.
        tzdb_store: the local tz release store (``None``: only the installed release).

    Returns:
        ``"end 2026-06-30T23:00:00 (Europe/Berlin)"`` when every nominal time at or before the
        spec's ``end`` (inclusive, local) is placed before ``from_utc``; else
        ``"UNTIL 2026-06-30T21:00:00Z"`` when the rule's ``UNTIL`` (inclusive, UTC) lies before
        it and no ``rdates`` (which UNTIL does not bound, RFC 5545 §3.8.5) are given; else
        ``None``. COUNT is not looked at.

    A record placed at ``t`` has a nominal time of ``t`` read with an offset in force near ``t``
    (the offset before a gap for a gap time), less a holiday move's reach; so ``end`` is compared
    with ``from_utc`` read with the smallest offset in force from a day before it to
    :data:`_LATER_PLACEMENTS` after. Near a transition the answer may be ``None`` for an hour or
    so past the last record; it never names a bound before a record.

    Raises:
        TzdbReleaseNotFound, ZoneNotFound: the pinned release or zone is not available.

    """
    reach = timedelta(days=MAX_ROLL_DAYS + 1) if uses_calendar(spec) else timedelta(0)
    if spec.end is not None:
        zone = zones.load(spec.time_zone, spec.tzdb_version, tzdb_store)
        table = zones.transitions(spec.time_zone, spec.tzdb_version, tzdb_store)
        near = offsets_between(
            zone, table, from_utc - timedelta(days=1), from_utc + _LATER_PLACEMENTS
        )
        if spec.end < from_utc.replace(tzinfo=None) + min(near) - reach:
            return f"end {spec.end:%Y-%m-%dT%H:%M:%S} ({spec.time_zone})"
    if spec.rule is not None and not spec.rdates:
        until = spec.parsed_rule.until_utc
        if until is not None and until < from_utc - reach:
            return f"UNTIL {format_instant(until)}"
    return None
