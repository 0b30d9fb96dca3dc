"""Where a spec's series starts and stops: an empty window before ``start`` or after the end.

The end is the series' last nominal time: ``end``, the rule's ``UNTIL``, the last of ``rdates``
alone. A tool that shows an empty window says why (``almanac preview``, :func:`window_outside`).
Every answer is safe: a bound is named only if no record the spec owns can be placed in the window.
"""

from __future__ import annotations

from datetime import datetime, timedelta
from pathlib import Path

from timecontract import zones
from timecontract.calendars import MAX_ROLL_DAYS
from timecontract.iso8601 import format_instant
from timecontract.resolve import offsets_between
from timecontract.spec import ScheduleSpecV1

_EARLIER_PLACEMENTS = timedelta(days=1)
"""A nominal time this long or longer after ``to`` (read as UTC) is placed after ``to``: no UTC
offset reaches a day (they lie within -12 and +14 hours)."""
_LATER_PLACEMENTS = timedelta(days=2)
"""A record placed this long or longer after ``from`` has a nominal time later than ``from`` +
33 hours (UTC offsets lie within ±15 hours), so later than ``from`` read with any offset."""


def window_outside(
    spec: ScheduleSpecV1, from_utc: datetime, to_utc: datetime, *, tzdb_store: Path | None = None
) -> str | None:
    """Why the spec's revision owns no record in the window ``[from_utc, to_utc)``, if a bound says.

    Returns:
        ``"the window ends before cutoverAt 2026-06-01T00:00:00Z"`` (a revision owns what is placed
        at or after its cutover), ``"the window ends before start …"`` (:func:`starts_after`),
        ``"the window starts after end …"`` / ``"… after UNTIL …"`` / ``"… after the last rdate
        …"`` (:func:`ended_before`), the first that holds; else ``None``.

    Raises:
        TzdbReleaseNotFound, ZoneNotFound: the pinned release or zone is not available.
    """
    if to_utc <= spec.cutover_at:
        return f"the window ends before cutoverAt {format_instant(spec.cutover_at)}"
    if (begins := starts_after(spec, to_utc)) is not None:
        return f"the window ends before {begins}"
    if (ended := ended_before(spec, from_utc, tzdb_store=tzdb_store)) is not None:
        return f"the window starts after {ended}"
    return None


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
        spec's ``end`` (inclusive, local) is placed before ``from_utc``; for a spec of ``rdates``
        alone, ``"the last rdate 2026-06-30T09:00:00 (Europe/Berlin)"`` likewise; else
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
    reach = _holiday_reach(spec)
    last_local = [("end", spec.end)] if spec.end is not None else []
    if spec.rule is None and spec.interval is None:
        last_local.append(("the last rdate", max(spec.rdates)))
    if last_local:
        zone = zones.load(spec.time_zone, spec.tzdb_version, tzdb_store)
        table = zones.transitions(spec.time_zone, spec.tzdb_version, tzdb_store)
        near = offsets_between(
            zone, table, from_utc - timedelta(days=1), from_utc + _LATER_PLACEMENTS
        )
        for name, last in last_local:
            if last < from_utc.replace(tzinfo=None) + min(near) - reach:
                return f"{name} {last:%Y-%m-%dT%H:%M:%S} ({spec.time_zone})"
    if spec.rule is not None and not spec.rdates:
        until = spec.parsed_rule.until_utc
        if until is not None and until < from_utc - reach:
            return f"UNTIL {format_instant(until)}"
    return None


def starts_after(spec: ScheduleSpecV1, to_utc: datetime) -> str | None:
    """Name the spec's ``start`` when the series begins after a window that ends at ``to_utc``.

    Args:
        spec: a validated spec.
        to_utc: a window end, aware, exclusive.

    Returns:
        ``"start 2030-01-01T00:00:00 (Europe/Berlin)"`` when ``start`` (local, the first nominal
        time the spec may have) lies at least a day after ``to_utc`` read as a local time (no
        offset reaches a day, so its first record is placed after ``to_utc``), more a holiday
        move's reach for a calendar spec; else ``None`` (within that day it says nothing).
    """
    margin = _EARLIER_PLACEMENTS + _holiday_reach(spec)
    if spec.start >= to_utc.replace(tzinfo=None) + margin:
        return f"start {spec.start:%Y-%m-%dT%H:%M:%S} ({spec.time_zone})"
    return None


def _holiday_reach(spec: ScheduleSpecV1) -> timedelta:
    """How far a holiday move can place a record from its nominal day; none without a calendar.

    ``rdates`` and ``exdates`` alone add or remove nominal times; they move none.
    """
    return timedelta(days=MAX_ROLL_DAYS + 1) if spec.calendar is not None else timedelta(0)
