"""A brute-force RRULE expander written from RFC 5545 §3.3.10 alone (a test oracle, not a test).

It shares no code with ``timecontract`` or dateutil and makes no attempt to be fast. It walks the
rule's periods ("intervals") from the one that contains DTSTART and, in each, tests every candidate
date-time against every rule part: a filter over the candidates, which is what the RFC's table of
"Expand"/"Limit" amounts to once the period is fixed. Each step quotes the sentence it implements.

The period of a rule (RFC 5545 §3.3.10, BYSETPOS: "BYSETPOS operates on a set of recurrence
instances in one interval of the recurrence rule. For example, in a WEEKLY rule, the interval would
be one week"; "A set of recurrence instances starts at the beginning of the interval defined by
the FREQ rule part"):

- SECONDLY, MINUTELY, HOURLY, DAILY: one clock second, minute, hour or day;
- WEEKLY: seven days starting on WKST ("A week is defined as a seven day period, starting on the
  day of the week defined to be the week start (see WKST)");
- MONTHLY: a calendar month; YEARLY: a calendar year, or, when BYWEEKNO is given, the year of the
  week numbering (week 1 to the last week; see :func:`week_year_start`). Issue 16's reading:
  "Week numbers belong to the ISO week-numbering year the INTERVAL counts".

INTERVAL: "The INTERVAL rule part contains a positive integer representing at which intervals the
recurrence rule repeats": periods 0, INTERVAL, 2 × INTERVAL, … counted from DTSTART's period.

Two readings are Almanac's documented choices, not the RFC's letter (both are dateutil's too):

- A DTSTART that does not match the rule is not an instance. RFC 5545 §3.3.10 says "The DTSTART
  property value always counts as the first occurrence", but §3.8.5.3 also says DTSTART "SHOULD be
  synchronized with the recurrence rule, if specified"; Almanac (README, "RRULE details") never
  invents an occurrence the rule does not describe.
- Defaults taken from DTSTART ("Information, not contained in the rule, necessary to determine the
  various recurrence instance start time and dates are derived from the Start Time"): the time
  parts coarser than FREQ always; the day only when the rule names no day at all (none of
  BYWEEKNO, BYYEARDAY, BYMONTHDAY, BYDAY): then YEARLY takes DTSTART's month (unless BYMONTH)
  and day of month, MONTHLY its day of month, WEEKLY its weekday. So ``FREQ=YEARLY;BYWEEKNO=20``
  is every day of week 20.
"""

from __future__ import annotations

import calendar
from collections.abc import Iterator
from dataclasses import dataclass, field
from datetime import date, datetime, time, timedelta
from functools import cache

FREQS = ("SECONDLY", "MINUTELY", "HOURLY", "DAILY", "WEEKLY", "MONTHLY", "YEARLY")
DAYS = ("MO", "TU", "WE", "TH", "FR", "SA", "SU")


@dataclass
class RefRule:
    """The rule's parts, read from the text without checks (the product's parser checks)."""

    freq: str
    interval: int = 1
    count: int | None = None
    until: datetime | None = None  # floating, compared directly (the tests use UTC)
    wkst: int = 0
    ints: dict[str, list[int]] = field(default_factory=dict)  # BYMONTH … BYSETPOS
    byday: list[tuple[int | None, int]] = field(default_factory=list)  # (ordinal, weekday)


def parse(text: str) -> RefRule:
    """``FREQ=…;…`` → :class:`RefRule` (UNTIL as ``YYYYMMDDTHHMMSSZ``, read as floating)."""
    parts = dict(chunk.split("=", 1) for chunk in text.split(";"))
    rule = RefRule(freq=parts.pop("FREQ"))
    for name, value in parts.items():
        if name == "INTERVAL":
            rule.interval = int(value)
        elif name == "COUNT":
            rule.count = int(value)
        elif name == "UNTIL":
            rule.until = datetime.strptime(value, "%Y%m%dT%H%M%SZ")
        elif name == "WKST":
            rule.wkst = DAYS.index(value)
        elif name == "BYDAY":
            for item in value.split(","):
                number = item[:-2]
                rule.byday.append((int(number) if number else None, DAYS.index(item[-2:])))
        else:
            rule.ints[name] = [int(v) for v in value.split(",")]
    return rule


def coarser(freq: str, than: str) -> bool:
    """FREQ is a longer unit than ``than`` (YEARLY is coarser than HOURLY)."""
    return FREQS.index(freq) > FREQS.index(than)


@cache
def week_year_start(year: int, wkst: int) -> date:
    """First day of week 1 of ``year``.

    RFC 5545 §3.3.10, BYWEEKNO: "Week number one of the calendar year is the first week that
    contains at least four (4) days in that calendar year." Found by trying weeks in turn.
    """
    first = date(year, 1, 1)
    week = first - timedelta(days=(first.weekday() - wkst) % 7)  # the week holding January 1
    while sum((week + timedelta(days=i)).year == year for i in range(7)) < 4:
        week += timedelta(days=7)
    return week


def week_year_of(day: date, wkst: int) -> int:
    """The week-numbering year whose weeks 1..last contain ``day``."""
    for year in (day.year + 1, day.year, day.year - 1):
        if week_year_start(year, wkst) <= day:
            return year
    raise AssertionError(day)


@dataclass(frozen=True)
class Period:
    """One interval of the rule: ``[start, end)`` in floating time; ``week_year`` for BYWEEKNO."""

    start: datetime
    end: datetime
    week_year: int | None = None


def periods(rule: RefRule, dtstart: datetime) -> Iterator[Period]:
    """Periods 0, INTERVAL, 2 × INTERVAL, … from the one containing DTSTART, unbounded."""
    k = 0
    while True:
        yield period(rule, dtstart, k)
        k += rule.interval


def period(rule: RefRule, dtstart: datetime, k: int) -> Period:
    """The ``k``-th period after the one containing DTSTART."""
    if rule.freq == "YEARLY" and "BYWEEKNO" in rule.ints:
        year = week_year_of(dtstart.date(), rule.wkst) + k
        return Period(
            _midnight(week_year_start(year, rule.wkst)),
            _midnight(week_year_start(year + 1, rule.wkst)),
            year,
        )
    if rule.freq == "YEARLY":
        return Period(datetime(dtstart.year + k, 1, 1), datetime(dtstart.year + k + 1, 1, 1))
    if rule.freq == "MONTHLY":
        index = dtstart.year * 12 + dtstart.month - 1 + k
        return Period(
            datetime(index // 12, index % 12 + 1, 1),
            datetime((index + 1) // 12, (index + 1) % 12 + 1, 1),
        )
    if rule.freq == "WEEKLY":
        first = dtstart.date() - timedelta(days=(dtstart.weekday() - rule.wkst) % 7)
        start = _midnight(first) + timedelta(weeks=k)
        return Period(start, start + timedelta(weeks=1))
    unit, truncated = {
        "DAILY": (timedelta(days=1), dtstart.replace(hour=0, minute=0, second=0)),
        "HOURLY": (timedelta(hours=1), dtstart.replace(minute=0, second=0)),
        "MINUTELY": (timedelta(minutes=1), dtstart.replace(second=0)),
        "SECONDLY": (timedelta(seconds=1), dtstart),
    }[rule.freq]
    return Period(truncated + unit * k, truncated + unit * (k + 1))


def _midnight(day: date) -> datetime:
    return datetime(day.year, day.month, day.day)


def effective_parts(rule: RefRule, dtstart: datetime) -> tuple[dict[str, list[int]], list]:
    """The rule's BYxxx values with the defaults DTSTART supplies (see the module docstring)."""
    ints = {name: list(values) for name, values in rule.ints.items()}
    byday = list(rule.byday)
    names_a_day = byday or any(p in ints for p in ("BYWEEKNO", "BYYEARDAY", "BYMONTHDAY"))
    if not names_a_day:
        if rule.freq == "YEARLY":
            ints.setdefault("BYMONTH", [dtstart.month])
            ints["BYMONTHDAY"] = [dtstart.day]
        elif rule.freq == "MONTHLY":
            ints["BYMONTHDAY"] = [dtstart.day]
        elif rule.freq == "WEEKLY":
            byday = [(None, dtstart.weekday())]
    for part, unit, value in (
        ("BYHOUR", "HOURLY", dtstart.hour),
        ("BYMINUTE", "MINUTELY", dtstart.minute),
        ("BYSECOND", "SECONDLY", dtstart.second),
    ):
        if part not in ints and coarser(rule.freq, unit):
            ints[part] = [value]
    return ints, byday


def day_matches(
    rule: RefRule, ints: dict[str, list[int]], byday: list, day: date, week_year: int | None
) -> bool:
    """Every date-level part holds for ``day`` (each part narrows the set: RFC order)."""
    if "BYMONTH" in ints and day.month not in ints["BYMONTH"]:
        return False
    if "BYWEEKNO" in ints:
        # "The BYWEEKNO rule part specifies a COMMA-separated list of ordinals specifying weeks
        # of the year. Valid values are 1 to 53 or -53 to -1."
        assert week_year is not None
        start = week_year_start(week_year, rule.wkst)
        weeks = (week_year_start(week_year + 1, rule.wkst) - start).days // 7
        number = (day - start).days // 7 + 1
        if number not in ints["BYWEEKNO"] and number - weeks - 1 not in ints["BYWEEKNO"]:
            return False
    if "BYYEARDAY" in ints:
        # "-1 represents the last day of the year (December 31st)"
        length = 366 if calendar.isleap(day.year) else 365
        number = day.timetuple().tm_yday
        if number not in ints["BYYEARDAY"] and number - length - 1 not in ints["BYYEARDAY"]:
            return False
    if "BYMONTHDAY" in ints:
        # "-10 represents the tenth to the last day of the month"
        length = calendar.monthrange(day.year, day.month)[1]
        if day.day not in ints["BYMONTHDAY"] and day.day - length - 1 not in ints["BYMONTHDAY"]:
            return False
    # Each BYDAY value adds its days: "If an integer modifier is not present, it means all days
    # of this type within the specified frequency."
    return not byday or any(_byday_item_matches(rule, ints, item, day) for item in byday)


def _byday_item_matches(rule: RefRule, ints: dict[str, list[int]], item: tuple, day: date) -> bool:
    ordinal, weekday = item
    if day.weekday() != weekday:
        return False
    if ordinal is None:
        return True
    # "this indicates the nth occurrence of a specific day within the MONTHLY or YEARLY RRULE
    # … The numeric value in a BYDAY rule part with the FREQ set to YEARLY corresponds to an
    # offset within the month when the BYMONTH rule part is present, and corresponds to an
    # offset within the year when the BYWEEKNO or BYMONTH rule parts are [not] present."
    in_month = rule.freq == "MONTHLY" or "BYMONTH" in ints
    same = _weekdays_in(day.year, day.month if in_month else 0, weekday)
    position = same.index(day)
    return position + 1 == ordinal or position - len(same) == ordinal


@cache
def _weekdays_in(year: int, month: int, weekday: int) -> list[date]:
    """Every ``weekday`` of the month (``month`` 1–12) or of the whole year (``month`` 0)."""
    day = date(year, month or 1, 1)
    found = []
    while day.year == year and (month == 0 or day.month == month):
        if day.weekday() == weekday:
            found.append(day)
        day += timedelta(days=1)
    return found


def instances_of(
    rule: RefRule, ints: dict[str, list[int]], byday: list, span: Period
) -> list[datetime]:
    """The sorted set of one period: every candidate date-time in it that satisfies every part.

    ``ints`` and ``byday`` are the rule's parts with DTSTART's defaults (:func:`effective_parts`).
    """
    hours = ints.get("BYHOUR", range(24))
    minutes = ints.get("BYMINUTE", range(60))
    seconds = ints.get("BYSECOND", range(60))
    # A period of an HOURLY or finer rule lies within one clock hour, so its hour is the
    # period's, kept only if BYHOUR allows it ("Limit"); likewise minutes and seconds.
    if not coarser(rule.freq, "HOURLY"):
        hours = [span.start.hour] if span.start.hour in hours else []
    if not coarser(rule.freq, "MINUTELY"):
        minutes = [span.start.minute] if span.start.minute in minutes else []
    if rule.freq == "SECONDLY":
        seconds = [span.start.second] if span.start.second in seconds else []
    found: set[datetime] = set()
    day = span.start.date()
    while _midnight(day) < span.end:
        if day_matches(rule, ints, byday, day, span.week_year):
            for h in hours:
                for m in minutes:
                    for s in seconds:
                        moment = datetime.combine(day, time(h, m, s))
                        if span.start <= moment < span.end:
                            found.add(moment)
        day += timedelta(days=1)
    ordered = sorted(found)
    if "BYSETPOS" not in rule.ints:
        return ordered
    # "BYSETPOS … corresponds to the nth occurrence within the set of recurrence instances
    # specified by the rule"; negative values count from the end of the set.
    chosen = set()
    for position in rule.ints["BYSETPOS"]:
        index = position - 1 if position > 0 else len(ordered) + position
        if 0 <= index < len(ordered):
            chosen.add(ordered[index])
    return sorted(chosen)


def expand(text: str, dtstart: datetime, until: datetime) -> list[datetime]:
    """Every instance of the rule from ``dtstart`` through ``until`` (inclusive), in order.

    Applies COUNT ("The COUNT rule part defines the number of occurrences at which to
    range-bound the recurrence") and UNTIL ("bounds the recurrence rule in an inclusive manner"),
    after BYSETPOS ("then COUNT and UNTIL are evaluated").
    """
    rule = parse(text)
    ints, byday = effective_parts(rule, dtstart)
    found: list[datetime] = []
    for span in periods(rule, dtstart):
        if span.start > until or span.start.year > 9000:
            return found
        for moment in instances_of(rule, ints, byday, span):
            if moment < dtstart:  # instances start at DTSTART (see the module docstring)
                continue
            if moment > until or (rule.until is not None and moment > rule.until):
                return found
            found.append(moment)
            if rule.count is not None and len(found) == rule.count:
                return found
    return found
