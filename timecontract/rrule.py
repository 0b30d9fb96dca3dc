"""RFC 5545 RRULE text: strict parsing into a checked :class:`Rule` (§3.3.10), no expansion.

Every part is checked against the limits of RFC 5545 §3.3.10 and Almanac's own (``COUNT`` at most
100,000, ``INTERVAL`` at most 10,000, ``UNTIL`` in UTC, no ``DTSTART``/``TZID`` inside the rule).
Expansion is :mod:`timecontract.expand`'s; the value object lives here so that the expanders
(``expand``, ``dayset``, ``countwindow``, ``rscale``) depend on it and not on each other.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from datetime import UTC, datetime
from typing import Any, Literal

from dateutil import rrule as du

Frequency = Literal[0, 1, 2, 3, 4, 5, 6]
FREQUENCIES: dict[str, Frequency] = {
    "YEARLY": du.YEARLY,
    "MONTHLY": du.MONTHLY,
    "WEEKLY": du.WEEKLY,
    "DAILY": du.DAILY,
    "HOURLY": du.HOURLY,
    "MINUTELY": du.MINUTELY,
    "SECONDLY": du.SECONDLY,
}
WEEKDAYS: tuple[str, ...] = ("MO", "TU", "WE", "TH", "FR", "SA", "SU")

MAX_COUNT = 100_000
"""Largest accepted ``COUNT`` (expansion with COUNT walks from DTSTART; this bounds its cost)."""
MAX_INTERVAL = 10_000
"""Largest accepted ``INTERVAL``."""

_INT_LIST_LIMITS: dict[str, tuple[int, int, bool]] = {
    # part: (low, high, negatives allowed) — RFC 5545 §3.3.10 ranges. BYSECOND stops at 59: the
    # tz database has no leap seconds in the zones Almanac loads.
    "BYSECOND": (0, 59, False),
    "BYMINUTE": (0, 59, False),
    "BYHOUR": (0, 23, False),
    "BYMONTHDAY": (1, 31, True),
    "BYYEARDAY": (1, 366, True),
    "BYWEEKNO": (1, 53, True),
    "BYMONTH": (1, 12, False),
    "BYSETPOS": (1, 366, True),
}
_KNOWN_PARTS = {"FREQ", "INTERVAL", "COUNT", "UNTIL", "BYDAY", "WKST", *_INT_LIST_LIMITS}
_BYDAY_ITEM = re.compile(r"^([+-]?\d{1,2})?(MO|TU|WE|TH|FR|SA|SU)$")
_UNTIL_UTC = re.compile(r"^(\d{8})T(\d{6})Z$")


class RuleError(ValueError):
    """The RRULE text breaks RFC 5545 §3.3.10 or a limit of Almanac; the message says which part."""


@dataclass(frozen=True, slots=True)
class Rule:
    """A parsed RRULE (RFC 5545 §3.3.10), every part checked.

    ``until_utc`` is an aware UTC instant (the rule's ``UNTIL``, inclusive). ``by_day`` holds
    ``(ordinal, weekday)`` pairs with weekday 0 = Monday and ordinal ``None`` for "every".
    """

    freq: str
    interval: int = 1
    count: int | None = None
    until_utc: datetime | None = None
    by_second: tuple[int, ...] = ()
    by_minute: tuple[int, ...] = ()
    by_hour: tuple[int, ...] = ()
    by_day: tuple[tuple[int | None, int], ...] = ()
    by_month_day: tuple[int, ...] = ()
    by_year_day: tuple[int, ...] = ()
    by_week_no: tuple[int, ...] = ()
    by_month: tuple[int, ...] = ()
    by_set_pos: tuple[int, ...] = ()
    wkst: int = 0

    @property
    def frequency(self) -> Frequency:
        """The dateutil frequency constant (``YEARLY`` = 0 … ``SECONDLY`` = 6)."""
        return FREQUENCIES[self.freq]


def parse_rule(text: str) -> Rule:
    """Parse and check an RRULE value such as ``FREQ=DAILY;BYHOUR=2;BYMINUTE=30``.

    Args:
        text: the RRULE value, without the ``RRULE:`` property name, without DTSTART or TZID.

    Returns:
        The parsed rule.

    Raises:
        RuleError: naming the offending part and value (unknown or repeated part, missing FREQ,
            COUNT with UNTIL, INTERVAL=0, an out-of-range BYxxx value, a non-UTC UNTIL, a BYxxx part
            RFC 5545 forbids for the FREQ, DTSTART/TZID inside the rule).

    """
    if not isinstance(text, str) or not text.strip():
        raise RuleError("empty rule")
    body = text.strip()
    if body.upper().startswith("RRULE:"):
        body = body[len("RRULE:") :]
    if "DTSTART" in body.upper() or "TZID" in body.upper():
        raise RuleError("DTSTART and TZID belong in the spec's start and timeZone, not in the rule")
    parts: dict[str, str] = {}
    for chunk in body.split(";"):
        if not chunk:
            raise RuleError("empty part (stray ';')")
        name, sep, value = chunk.partition("=")
        name = name.strip().upper()
        if not sep or not value.strip():
            raise RuleError(f"part {chunk!r} is not NAME=VALUE")
        if name not in _KNOWN_PARTS:
            raise RuleError(f"unknown part {name}")
        if name in parts:
            raise RuleError(f"part {name} given twice")
        parts[name] = value.strip().upper()
    return _build(parts)


def _build(parts: dict[str, str]) -> Rule:
    if "FREQ" not in parts:
        raise RuleError("FREQ is required")
    freq = parts["FREQ"]
    if freq not in FREQUENCIES:
        raise RuleError(f"FREQ={freq} is not one of {', '.join(FREQUENCIES)}")
    if "COUNT" in parts and "UNTIL" in parts:
        raise RuleError("COUNT and UNTIL must not occur in the same rule (RFC 5545 §3.3.10)")
    fields: dict[str, Any] = {"freq": freq}
    if "INTERVAL" in parts:
        fields["interval"] = _int_in("INTERVAL", parts["INTERVAL"], 1, MAX_INTERVAL)
    if "COUNT" in parts:
        fields["count"] = _int_in("COUNT", parts["COUNT"], 1, MAX_COUNT)
    if "UNTIL" in parts:
        fields["until_utc"] = _parse_until(parts["UNTIL"])
    names = {
        "BYSECOND": "by_second",
        "BYMINUTE": "by_minute",
        "BYHOUR": "by_hour",
        "BYMONTHDAY": "by_month_day",
        "BYYEARDAY": "by_year_day",
        "BYWEEKNO": "by_week_no",
        "BYMONTH": "by_month",
        "BYSETPOS": "by_set_pos",
    }
    for part, attribute in names.items():
        if part in parts:
            fields[attribute] = _int_list(part, parts[part])
    if "BYDAY" in parts:
        fields["by_day"] = _by_day(parts["BYDAY"], freq, "BYWEEKNO" in parts)
    if "WKST" in parts:
        if parts["WKST"] not in WEEKDAYS:
            raise RuleError(f"WKST={parts['WKST']} is not one of {', '.join(WEEKDAYS)}")
        fields["wkst"] = WEEKDAYS.index(parts["WKST"])
    _check_freq_combinations(freq, parts)
    return Rule(**fields)


def _check_freq_combinations(freq: str, parts: dict[str, str]) -> None:
    # RFC 5545 §3.3.10: BYWEEKNO only with YEARLY; BYYEARDAY not with DAILY, WEEKLY, MONTHLY;
    # BYMONTHDAY not with WEEKLY; BYSETPOS only together with another BYxxx part.
    if "BYWEEKNO" in parts and freq != "YEARLY":
        raise RuleError(f"BYWEEKNO is only valid with FREQ=YEARLY, not FREQ={freq}")
    if "BYYEARDAY" in parts and freq in {"DAILY", "WEEKLY", "MONTHLY"}:
        raise RuleError(f"BYYEARDAY is not valid with FREQ={freq}")
    if "BYMONTHDAY" in parts and freq == "WEEKLY":
        raise RuleError("BYMONTHDAY is not valid with FREQ=WEEKLY")
    if "BYSETPOS" in parts and not any(p.startswith("BY") and p != "BYSETPOS" for p in parts):
        raise RuleError("BYSETPOS needs another BYxxx part to select from")


def _int_in(part: str, value: str, low: int, high: int) -> int:
    if not re.fullmatch(r"\d+", value):
        raise RuleError(f"{part}={value} is not a positive integer")
    number = int(value)
    if not low <= number <= high:
        raise RuleError(f"{part}={value} is out of range {low}..{high}")
    return number


def _int_list(part: str, value: str) -> tuple[int, ...]:
    low, high, negatives = _INT_LIST_LIMITS[part]
    items: list[int] = []
    for item in value.split(","):
        if not re.fullmatch(r"[+-]?\d+", item):
            raise RuleError(f"{part}={value}: {item!r} is not an integer")
        number = int(item)
        magnitude = abs(number)
        if (number < 0 and not negatives) or not low <= magnitude <= high or (number == 0 and low):
            shown = f"±{low}..{high}" if negatives else f"{low}..{high}"
            raise RuleError(f"{part}={value}: {item} is out of range {shown}")
        items.append(number)
    return tuple(items)


def _by_day(value: str, freq: str, with_week_no: bool) -> tuple[tuple[int | None, int], ...]:
    items: list[tuple[int | None, int]] = []
    for item in value.split(","):
        match = _BYDAY_ITEM.fullmatch(item)
        if not match:
            raise RuleError(f"BYDAY={value}: {item!r} is not [+/-n]MO..SU")
        ordinal = int(match.group(1)) if match.group(1) else None
        if ordinal is not None:
            if ordinal == 0 or abs(ordinal) > 53:
                raise RuleError(f"BYDAY={value}: ordinal {ordinal} is out of range ±1..53")
            if freq not in {"MONTHLY", "YEARLY"} or with_week_no:
                raise RuleError(
                    f"BYDAY={value}: a numeric ordinal is only valid with FREQ=MONTHLY or "
                    "FREQ=YEARLY without BYWEEKNO (RFC 5545 §3.3.10)"
                )
            if freq == "MONTHLY" and abs(ordinal) > 5:
                raise RuleError(f"BYDAY={value}: ordinal {ordinal} is out of range ±1..5")
        items.append((ordinal, WEEKDAYS.index(match.group(2))))
    return tuple(items)


def _parse_until(value: str) -> datetime:
    match = _UNTIL_UTC.fullmatch(value)
    if not match:
        raise RuleError(
            f"UNTIL={value} must be a UTC date-time like 20271231T235959Z "
            "(RFC 5545 §3.3.10: with a zoned start, UNTIL is UTC)"
        )
    try:
        return datetime.strptime(value, "%Y%m%dT%H%M%SZ").replace(tzinfo=UTC)
    except ValueError as exc:
        raise RuleError(f"UNTIL={value} is not a valid date-time") from exc
