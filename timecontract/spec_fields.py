"""The rules of ``scheduleSpec.v1``'s fields one by one: the rule, local date-times, durations.

Pure functions the model's field validators (``timecontract.spec``) delegate to. Each takes a
field's value, and where a rule reads an earlier field the fields validated before it (pydantic's
``info.data``, by Python name; a field that failed is absent), and returns the value or raises
``ValueError`` with the problem in words; ``spec_problems`` then names the camelCase field and the
value. The rules between fields found after validation are ``spec_problems`` (``rule`` and
``interval``) and ``calendar_spec`` (the calendar fields).
"""

from __future__ import annotations

import re
from collections.abc import Callable, Mapping
from datetime import datetime, timedelta
from typing import Any

from timecontract.calendar_spec import parse_exdate
from timecontract.iso8601 import format_duration, parse_instant, parse_local
from timecontract.rscale import parse_rscale_rule

MAX_LATENESS = timedelta(days=366)
MIN_YEAR, MAX_YEAR = 1900, 9000
"""Years accepted in ``start`` and ``end`` (IDs carry four-digit years; the tz database's data
before 1900 is local mean time guesswork)."""
MAX_INTERVAL = timedelta(days=3660)
"""Longest ``interval`` (ten 366-day years)."""
MAX_JITTER = timedelta(days=1)
"""Longest ``jitter``."""
MAX_CATCH_UP_SPACING = timedelta(days=1)
"""Longest ``catchUpSpacing``."""
DATE_FIELDS = ("start", "end", "cutover_at", "rdates", "exdates")
"""The fields read from ISO 8601 dates and date-times (Python names): :func:`read_date_text`."""
DURATION_FIELDS = ("interval", "phase", "jitter", "deadline", "catch_up_spacing", "lateness")
"""The ISO 8601 duration fields (Python names): each of a fixed length, each with its range."""


def satisfiable_rule(value: str | None, data: Mapping[str, Any]) -> str | None:
    """``rule``: an RRULE (RFC 5545 §3.3.10, RFC 7529) that yields an instance from ``start``.

    Raises:
        ValueError: a ``RuleError`` naming the part, or the rule can never occur.

    """
    if value is None:
        return None
    rule = parse_rscale_rule(value)  # raises RuleError (a ValueError) naming the part
    if "start" in data:  # else start itself is invalid and reported
        rule.check_satisfiable(data["start"])
    return value


def read_date_text(field: str | None, value: Any) -> Any:
    """A field of :data:`DATE_FIELDS`'s raw value, before pydantic reads it.

    ``start`` and ``end`` are local date-times (``iso8601.parse_local``), ``cutoverAt`` an instant
    (``iso8601.parse_instant``); ``rdates`` lists local date-times and ``exdates`` dates or local
    date-times (``calendar_spec.parse_exdate``), and pydantic refuses a value that is no list.

    Raises:
        ValueError: the text (or an entry's) is not of its field's form.

    """
    if field == "cutover_at":
        return parse_instant(value)
    if field in ("rdates", "exdates"):
        read = parse_local if field == "rdates" else parse_exdate
        return [read(item) for item in value] if isinstance(value, list) else value
    return parse_local(value)


def local_date_time_range(
    field: str | None, value: datetime | None, data: Mapping[str, Any]
) -> datetime | None:
    """``start`` and ``end``: whole seconds, a year in :data:`MIN_YEAR`..:data:`MAX_YEAR`.

    ``end`` is not before ``start``.

    Raises:
        ValueError: the value breaks one of these.

    """
    if value is None:
        return value
    if value.microsecond:
        raise ValueError("fractional seconds are not supported")
    if not MIN_YEAR <= value.year <= MAX_YEAR:
        raise ValueError(f"the year must be within {MIN_YEAR}..{MAX_YEAR}")
    start = data.get("start")
    if field == "end" and start is not None and value < start:
        raise ValueError(f"is before start {start.isoformat()}")
    return value


def fixed_length(value: Any) -> Any:
    """A duration field's raw value, before pydantic reads it: no bare number, no years or months.

    Raises:
        ValueError: a number (whose unit would be a guess), or ISO 8601 years or months (they
            have no fixed length).

    """
    if isinstance(value, int | float):
        raise ValueError("must be an ISO 8601 duration (e.g. PT30S), not a bare number")
    if isinstance(value, str) and re.match(r"^-?P[^T]*[YM]", value.strip().upper()):
        raise ValueError("years and months have no fixed length; give days (P30D) or use a rule")
    return value


def duration_range(
    field: str | None, value: timedelta | None, data: Mapping[str, Any]
) -> timedelta | None:
    """Check one of the :data:`DURATION_FIELDS` against its range and resolution.

    ``None`` (an optional duration left out) passes. ``phase`` reads ``interval`` from ``data``.

    Raises:
        ValueError: the value is out of its field's range or finer than its resolution.

    """
    if value is None:
        return None
    if field == "phase":
        return _phase_range(value, data)
    return _RANGES[field](value)


def _whole_seconds_up_to(most: timedelta) -> Callable[[timedelta], timedelta]:
    """The range check of a duration of whole seconds from ``PT1S`` to ``most``, inclusive."""

    def check(value: timedelta) -> timedelta:
        if value.microseconds:
            raise ValueError("must be whole seconds")
        if not timedelta(seconds=1) <= value <= most:
            raise ValueError(f"must be a duration between PT1S and {format_duration(most)}")
        return value

    return check


def _phase_range(value: timedelta, data: Mapping[str, Any]) -> timedelta:
    if value.microseconds:
        raise ValueError("must be whole seconds")
    interval = data.get("interval")
    if value and interval is None and "interval" in data:
        raise ValueError("phase needs interval (a rule's phase is its start)")
    if value < timedelta(0) or (interval is not None and value >= interval):
        raise ValueError("must be at least PT0S and shorter than interval")
    return value


def _jitter_range(value: timedelta) -> timedelta:
    if value.microseconds % 1000:
        raise ValueError("must be whole milliseconds")
    if not timedelta(0) <= value <= MAX_JITTER:
        raise ValueError("must be a duration between PT0S and P1D")
    return value


def _deadline_range(value: timedelta) -> timedelta:
    if value.microseconds:
        raise ValueError("must be whole seconds")
    if value <= timedelta(0):
        raise ValueError("must be longer than PT0S")
    return value


def _lateness_range(value: timedelta) -> timedelta:
    if value < timedelta(0) or value > MAX_LATENESS:
        raise ValueError("must be a duration between PT0S and P366D")
    return value


_RANGES: dict[str | None, Callable[[timedelta], timedelta]] = {
    "interval": _whole_seconds_up_to(MAX_INTERVAL),
    "jitter": _jitter_range,
    "deadline": _deadline_range,
    "catch_up_spacing": _whole_seconds_up_to(MAX_CATCH_UP_SPACING),
    "lateness": _lateness_range,
}
"""The range of each duration field but ``phase`` (which also reads ``interval``)."""
