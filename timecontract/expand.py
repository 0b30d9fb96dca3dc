"""RFC 5545 RRULE: strict parsing, and expansion in floating local time.

The rule text is parsed here, part by part, with the limits of RFC 5545 §3.3.10, and then handed
to python-dateutil as explicit keyword arguments (never through ``rrulestr``, which can read the
clock and the OS zone files). Expansion happens in *floating* local time: the naive wall-clock
date-times the rule names, before any zone is applied. Zones, gaps and folds are
``timecontract.resolve``'s business.

Choices this module makes (each documented where a user would look for it, in the README):

- ``UNTIL`` must be a UTC date-time (``YYYYMMDDTHHMMSSZ``): the start is a zoned local time, and
  RFC 5545 §3.3.10 then requires UTC. It is compared with resolved instants, inclusively, by
  ``resolve``; here it only bounds the floating expansion (with a day of margin).
- ``COUNT`` and ``UNTIL`` together are an error (RFC 5545 §3.3.10: "MUST NOT occur in the same
  rule"). ``COUNT`` is limited to 100,000.
- ``DTSTART``/``TZID`` inside the rule are errors: the start and zone are spec fields.
- A start that does not match the rule is not an occurrence (dateutil's and RFC 5545's reading:
  the set is what the rule generates at or after DTSTART).
- Cost is proportional to the window, not to the distance from DTSTART: for rules without
  ``COUNT`` the expansion restarts at the beginning of the rule's period that contains the window
  start, with every default DTSTART would have supplied made explicit, which yields exactly the same
  set. Rules with ``COUNT`` are expanded from DTSTART (at most ``COUNT`` existing instances).
- Every expansion starts at the natural beginning of a period, also the first one (a WEEKLY rule's
  first week begins on WKST, before DTSTART if need be), so that BYSETPOS counts whole sets; what
  falls before DTSTART is then dropped (issue 16; see :func:`_from_period`).
- Where dateutil 2.9 is wrong for a whole kind of rule (BYDAY mixing plain and ordinal weekdays;
  YEARLY with BYWEEKNO), ``timecontract.dayset`` expands it instead.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Iterator
from dataclasses import dataclass
from datetime import UTC, datetime, time, timedelta
from itertools import dropwhile
from typing import Any, Literal

from dateutil import rrule as du

from timecontract import dayset

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


def _explicit_defaults(rule: Rule, dtstart: datetime) -> dict[str, Any]:
    kwargs: dict[str, Any] = {
        "bysecond": rule.by_second or None,
        "byminute": rule.by_minute or None,
        "byhour": rule.by_hour or None,
        "bymonthday": rule.by_month_day or None,
        "byyearday": rule.by_year_day or None,
        "byweekno": rule.by_week_no or None,
        "bymonth": rule.by_month or None,
        "bysetpos": rule.by_set_pos or None,
        "wkst": rule.wkst,
        "byweekday": tuple(du.weekday(day, ordinal) for ordinal, day in rule.by_day) or None,
    }
    # Mirrors dateutil's rrule.__init__ (and RFC 5545 §3.3.10's "information, not contained in the
    # rule, necessary to determine the various recurrence instance start time and dates are
    # derived from the Start Time").
    if not (rule.by_week_no or rule.by_year_day or rule.by_month_day or rule.by_day):
        if rule.freq == "YEARLY":
            kwargs["bymonth"] = kwargs["bymonth"] or (dtstart.month,)
            kwargs["bymonthday"] = (dtstart.day,)
        elif rule.freq == "MONTHLY":
            kwargs["bymonthday"] = (dtstart.day,)
        elif rule.freq == "WEEKLY":
            kwargs["byweekday"] = (du.weekday(dtstart.weekday()),)
    if rule.frequency < du.HOURLY and not rule.by_hour:
        kwargs["byhour"] = (dtstart.hour,)
    if rule.frequency < du.MINUTELY and not rule.by_minute:
        kwargs["byminute"] = (dtstart.minute,)
    if rule.frequency < du.SECONDLY and not rule.by_second:
        kwargs["bysecond"] = (dtstart.second,)
    return kwargs


def period_start_at_or_before(rule: Rule, dtstart: datetime, moment: datetime) -> datetime:
    """Return the start of the rule's period containing ``moment``, or of the last one before it.

    A period is one FREQ unit (RFC 5545 §3.3.10, BYSETPOS: "in a WEEKLY rule, the interval would
    be one week"); periods repeat every INTERVAL units counted from the one containing
    ``dtstart``. Weeks begin on WKST; the years of a YEARLY rule with BYWEEKNO are week-numbering
    years (``timecontract.dayset``). The first period begins at its natural start, which may be
    before ``dtstart``: "A set of recurrence instances starts at the beginning of the interval
    defined by the FREQ rule part" (see :func:`expand`). All values are floating local.
    """
    step = rule.interval
    if rule.freq == "YEARLY" and rule.by_week_no:
        first = dayset.week_year_of(dtstart.date(), rule.wkst)
        year = first + (dayset.week_year_of(moment.date(), rule.wkst) - first) // step * step
        return datetime.combine(dayset.week_one_start(year, rule.wkst), time())
    if rule.freq == "YEARLY":
        k = (moment.year - dtstart.year) // step * step
        return datetime(dtstart.year + k, 1, 1)
    if rule.freq == "MONTHLY":
        months = (moment.year - dtstart.year) * 12 + moment.month - dtstart.month
        index = dtstart.year * 12 + dtstart.month - 1 + months // step * step
        return datetime(index // 12, index % 12 + 1, 1)
    origin, unit = _fixed_period_origin(rule, dtstart)
    return origin + unit * step * ((moment - origin) // (unit * step))


def _fixed_period_origin(rule: Rule, dtstart: datetime) -> tuple[datetime, timedelta]:
    day_start = datetime(dtstart.year, dtstart.month, dtstart.day)
    if rule.freq == "WEEKLY":
        return day_start - timedelta(days=(dtstart.weekday() - rule.wkst) % 7), timedelta(weeks=1)
    if rule.freq == "DAILY":
        return day_start, timedelta(days=1)
    if rule.freq == "HOURLY":
        return dtstart.replace(minute=0, second=0, microsecond=0), timedelta(hours=1)
    if rule.freq == "MINUTELY":
        return dtstart.replace(second=0, microsecond=0), timedelta(minutes=1)
    return dtstart.replace(microsecond=0), timedelta(seconds=1)


def expand(
    rule: Rule, dtstart: datetime, window_start: datetime, window_end: datetime
) -> Iterator[datetime]:
    """Yield the rule's floating local date-times in ``[window_start, window_end]``, in order.

    Ignores COUNT (the caller counts existing instances, see ``resolve``) and applies UNTIL only
    loosely (one day of margin; the exact, instant-based test is the caller's).

    Args:
        rule: the parsed rule.
        dtstart: the floating local DTSTART (the spec's ``start``).
        window_start: first floating local date-time of interest, inclusive.
        window_end: last floating local date-time of interest, inclusive.

    Cost: proportional to the window (the expansion restarts at the period containing
    ``window_start``), not to the distance from ``dtstart``.

    """
    if rule.until_utc is not None:
        window_end = min(window_end, rule.until_utc.replace(tzinfo=None) + timedelta(days=1))
    if window_end < window_start or window_end < dtstart:
        return
    for nominal_local in _from_period(rule, dtstart, max(window_start, dtstart), window_end):
        if nominal_local > window_end:
            return
        yield nominal_local


def iterate_from_start(rule: Rule, dtstart: datetime) -> Iterator[datetime]:
    """Yield the rule's floating local date-times from ``dtstart`` on, unbounded and in order.

    Used for rules with COUNT, which must be counted from DTSTART (RFC 5545 §3.3.10).
    """
    return _from_period(rule, dtstart, dtstart, datetime.max)


def _from_period(
    rule: Rule, dtstart: datetime, moment: datetime, end: datetime
) -> Iterator[datetime]:
    """The rule's date-times at or after ``moment`` (not before ``dtstart``), in order.

    The expansion starts at the beginning of the period containing ``moment``, never at
    ``moment`` or ``dtstart`` themselves, and drops what comes before ``moment`` afterwards. This
    corrects dateutil, whose first WEEKLY set begins on DTSTART's day instead of WKST (its
    ``wdayset`` starts at DTSTART): ``FREQ=WEEKLY;BYDAY=MO,TH;BYSETPOS=2`` from a Thursday took
    the Thursday as the *first* of its week and skipped it. RFC 5545 §3.3.10, BYSETPOS: "A set of
    recurrence instances starts at the beginning of the interval defined by the FREQ rule part."
    Every default DTSTART supplies is made explicit from the true ``dtstart``, so restarting
    yields the same set as walking from DTSTART. Rules dateutil expands wrongly altogether go to
    ``timecontract.dayset``. ``end`` bounds only that own expansion (dateutil stops by itself in
    the year 9999); the caller stops reading at its own end.
    """
    restart = period_start_at_or_before(rule, dtstart, moment)
    stream: Iterable[datetime]
    if dayset.applies(rule):
        stream = dayset.iterate(rule, dtstart, restart, end)
    else:
        stream = du.rrule(
            rule.frequency,
            dtstart=restart,
            interval=rule.interval,
            cache=False,
            **_explicit_defaults(rule, dtstart),
        )
    return dropwhile(moment.__gt__, stream)


SATISFIABILITY_HORIZON_YEARS = 60
"""A rule must produce a date-time within this many years (see :func:`check_satisfiable`)."""


def check_satisfiable(rule: Rule, dtstart: datetime) -> None:
    """Refuse a rule that can never produce a date-time (``BYMONTH=2;BYMONTHDAY=30``).

    dateutil searches such a rule to the year 9999 before giving up, so every expansion would
    cost seconds. The probe runs the rule, phase-aligned with ``dtstart``, over the last
    :data:`SATISFIABILITY_HORIZON_YEARS` years of dateutil's calendar, which bounds its cost; the
    calendar repeats (weekdays every 28 years in that range), so a rule that matches nothing there
    matches nothing ever — or less than once in 60 years, which no schedule means.

    A BYSETPOS that no period's set is large enough to reach (``FREQ=SECONDLY;BYSETPOS=2``: one
    instance per second) is refused first, without a probe: dateutil would walk those 60 years
    one empty period at a time.

    Raises:
        RuleError: the rule produces nothing, or dateutil finds its BYxxx parts unreachable from
            ``dtstart`` with its INTERVAL (``FREQ=HOURLY;INTERVAL=2;BYHOUR=1`` from 00:00).
    """
    largest = _largest_set(rule)
    if rule.by_set_pos and all(abs(position) > largest for position in rule.by_set_pos):
        raise RuleError(
            f"BYSETPOS={','.join(map(str, rule.by_set_pos))} is beyond the {largest} instance(s) "
            f"one FREQ={rule.freq} period can hold, so the rule never produces a date-time"
        )
    probe_from = datetime(datetime.max.year - SATISFIABILITY_HORIZON_YEARS, 1, 1)
    try:
        first = next(_from_period(rule, dtstart, probe_from, datetime.max), None)
    except ValueError as exc:  # dateutil: "Invalid rrule byxxx generates an empty set."
        raise RuleError(
            f"its BYxxx parts are unreachable from start with this INTERVAL ({exc})"
        ) from exc
    if first is None:
        raise RuleError(
            "the rule never produces a date-time (e.g. February 30, or BYxxx parts that "
            "INTERVAL never reaches from start)"
        )


def _largest_set(rule: Rule) -> int:
    """The most instances one period of ``rule`` can hold (the bound BYSETPOS can reach)."""
    times = 1
    for values, unit in (
        (rule.by_second, du.SECONDLY),
        (rule.by_minute, du.MINUTELY),
        (rule.by_hour, du.HOURLY),
    ):
        # A unit finer than FREQ expands to its listed values (or DTSTART's one); one at FREQ
        # or coarser only limits, so it keeps one value per period.
        times *= (len(values) or 1) if rule.frequency < unit else 1
    days = {"YEARLY": 371, "MONTHLY": 31, "WEEKLY": 7}.get(rule.freq, 1)
    return days * times


def nominal_period(rule: Rule) -> timedelta:
    """The length of one FREQ × INTERVAL period; months and years count as 28 and 365 days.

    Used to size look-ahead windows (a horizon of a few thousand periods), never for instants.
    """
    unit = {
        "YEARLY": timedelta(days=365),
        "MONTHLY": timedelta(days=28),
        "WEEKLY": timedelta(weeks=1),
        "DAILY": timedelta(days=1),
        "HOURLY": timedelta(hours=1),
        "MINUTELY": timedelta(minutes=1),
        "SECONDLY": timedelta(seconds=1),
    }[rule.freq]
    return unit * rule.interval
