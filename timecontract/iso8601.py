"""ISO 8601 text of the time contract's values: UTC instants, local date-times and durations.

One writer and one reader for each form, so the spec's fields, the stored resolved form and the
records all spell them alike: an instant ends in ``Z``, a local date-time has no offset, a
duration has no years or months (they have no fixed length).
"""

from __future__ import annotations

import re
from datetime import UTC, datetime, timedelta
from typing import Any

_DATE_ONLY = re.compile(r"(\d{4}-\d{2}-\d{2})(Z|[+-]\d{2}:\d{2})?", re.IGNORECASE)
"""A calendar date, with or without a UTC offset: a date is no instant, its midnight is."""

NOT_AN_INSTANT = "not an ISO 8601 instant like 2026-11-01T00:00:00Z"


def format_instant(instant_utc: datetime) -> str:
    """Format an aware instant as ISO 8601 UTC with a ``Z`` suffix (``2026-11-01T06:00:00Z``)."""
    text = instant_utc.astimezone(UTC).isoformat()
    return text.removesuffix("+00:00") + "Z"


def format_recorded(instant_utc: datetime) -> str:
    """Format a time read from a clock (a fact's, a reading's) to the whole second.

    As :func:`format_instant` writes it, its fraction cut: the fraction is the clock's, not the
    schedule's, and only clutters a line (JSON outputs keep the exact instant).
    """
    return format_instant(instant_utc.replace(microsecond=0))


def format_duration(duration: timedelta) -> str:
    """Format a duration as ISO 8601 (``PT5S``, ``PT1H30M``, ``P1DT2H``, ``PT0.5S``, ``-PT5S``).

    Days are whole days (``P1D`` is 24 hours here, as in the spec's ``lateness``); no months or
    years, which have no fixed length.
    """
    sign = "-" if duration < timedelta(0) else ""
    duration = abs(duration)
    days, seconds, micros = duration.days, duration.seconds, duration.microseconds
    hours, rest = divmod(seconds, 3600)
    minutes, secs = divmod(rest, 60)
    text = f"{sign}P" + (f"{days}D" if days else "")
    clock = (f"{hours}H" if hours else "") + (f"{minutes}M" if minutes else "")
    if secs or micros:
        clock += f"{secs}.{micros:06d}".rstrip("0") + "S" if micros else f"{secs}S"
    if clock:
        text += "T" + clock
    return text if text not in {"P", "-P"} else "PT0S"


def parse_local(value: Any) -> Any:
    """Read a local date-time (``2026-11-01T02:30:00``, no offset) into a naive ``datetime``.

    ``None`` and a naive ``datetime`` pass unchanged.

    Raises:
        ValueError: not such text, a date without a time, or a value with an offset or zone.

    """
    if value is None or isinstance(value, datetime):
        if isinstance(value, datetime) and value.tzinfo is not None:
            raise ValueError("must be a local date-time without a UTC offset or zone")
        return value
    if not isinstance(value, str):
        raise ValueError("must be a local date-time like 2026-11-01T02:30:00")
    try:
        parsed = datetime.fromisoformat(value)
    except ValueError as exc:
        raise ValueError("must be a local date-time like 2026-11-01T02:30:00") from exc
    if "T" not in value.upper():
        raise ValueError("must be a date-time, not a date (e.g. 2026-11-01T00:00:00)")
    if parsed.tzinfo is not None:
        raise ValueError("must be a local date-time without a UTC offset or zone")
    return parsed


def parse_instant(value: Any) -> Any:
    """Read an instant (``2026-11-01T06:00:00Z``, with an offset) into an aware UTC ``datetime``.

    Raises:
        ValueError: not ISO 8601 instant text or an aware ``datetime``, or without an offset.

    """
    if isinstance(value, str):
        try:
            value = datetime.fromisoformat(value)
        except ValueError as exc:
            raise ValueError("must be an ISO 8601 instant like 2026-11-01T06:00:00Z") from exc
    if not isinstance(value, datetime):
        raise ValueError("must be an ISO 8601 instant like 2026-11-01T06:00:00Z")
    if value.tzinfo is None or value.utcoffset() is None:
        raise ValueError("must carry a UTC offset (end it in Z), e.g. 2026-11-01T06:00:00Z")
    return value.astimezone(UTC)


def read_instant(value: str) -> datetime:
    """Read an instant a person typed (a command-line option, a form field) into aware UTC.

    ISO 8601 with a UTC offset; RFC 3339's lower-case ``t`` and ``z`` are accepted (§5.6).

    Raises:
        ValueError: its message is the problem alone, for the caller to put after the field's
            name and value: :data:`NOT_AN_INSTANT`; for a date (``2037-01-01`` or
            ``2037-01-01Z``: ISO 8601 has no instant without a time) with ``; did you mean
            2037-01-01T00:00:00Z?`` (its midnight, in its offset or UTC); or that an instant
            needs a UTC offset.
    """
    # Checked first: Python 3.11 reads 2037-01-01+01:00 as 01:00 on that date, without an offset.
    dated = _DATE_ONLY.fullmatch(value.strip())
    if dated:
        midnight = f"{dated[1]}T00:00:00{(dated[2] or 'Z').upper()}"
        raise ValueError(f"{NOT_AN_INSTANT}; did you mean {midnight}?")
    try:
        parsed = datetime.fromisoformat(value.strip().upper())
    except ValueError:
        raise ValueError(NOT_AN_INSTANT) from None
    if parsed.tzinfo is None:
        raise ValueError("an instant needs a UTC offset (end it in Z)")
    return parsed.astimezone(UTC)
