"""The day sets of YEARLY and MONTHLY rules that python-dateutil expands wrongly (2.9 and 4.0).

``timecontract.expand`` hands a rule to dateutil unless :func:`applies` says dateutil gets it
wrong; then :func:`iterate` expands it here, period by period, with the same defaults and the same
windowing (the caller restarts at the period containing the window). Two kinds of rule come here:

- **BYDAY mixing plain and ordinal weekdays** (``BYDAY=MO,1MO``, ``BYDAY=MO,-1WE``). dateutil keeps
  a day only if it passes *both* its plain-weekday filter and its ordinal-weekday filter (two
  separate conditions in ``rrule._iter``), the intersection. RFC 5545 §3.3.10, BYDAY: "If an
  integer modifier is not present, it means all days of this type within the specified
  frequency. For example, within a MONTHLY rule, MO represents all Mondays within the month";
  each value adds its days, so the set is the union.
- **YEARLY with BYWEEKNO**. dateutil numbers weeks inside each *calendar* year of the iteration:
  with ``INTERVAL=2`` from 2024 it emits 2024-12-30 (week 1 of 2025, an off year) and loses
  2025-12-29 (week 1 of 2026), BYSETPOS counts over calendar years, and days of a negative or
  53rd week that fall in the neighbouring calendar year are missed (its own "TODO: Check
  -numweeks for next year"). RFC 5545 §3.3.10, BYWEEKNO: "This corresponds to weeks according to
  week numbering as defined in [ISO.8601.2004]. A week is defined as a seven day period, starting
  on the day of the week defined to be the week start (see WKST). Week number one of the calendar
  year is the first week that contains at least four (4) days in that calendar year." Here the
  YEARLY period of such a rule is the *week-numbering year* (week 1 to its last week, 52 or 53),
  and INTERVAL counts week-numbering years from the one containing DTSTART. BYMONTH, BYYEARDAY
  and BYMONTHDAY then limit by the day's own calendar month, year-day and month-day.

BYSETPOS is applied here too, to the whole sorted set of each period (RFC 5545 §3.3.10: "BYSETPOS
operates on a set of recurrence instances in one interval of the recurrence rule").

All values are floating local date-times; nothing here knows zones.
"""

from __future__ import annotations

import calendar
from collections.abc import Iterator
from datetime import date, datetime, time, timedelta
from itertools import product
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from timecontract.rrule import Rule

LAST_YEAR = 9998
"""Last (calendar or week-numbering) year expanded here; dateutil's calendar ends in 9999 too, and
week-numbering year 9999 may end in the year 10000, which ``date`` cannot hold."""


def applies(rule: Rule) -> bool:
    """True when dateutil expands ``rule`` wrongly and :func:`iterate` must be used instead."""
    ordinals = {ordinal is None for ordinal, _ in rule.by_day}
    return len(ordinals) == 2 or (rule.freq == "YEARLY" and bool(rule.by_week_no))


def week_one_start(year: int, wkst: int) -> date:
    """First day of week 1 of ``year`` with weeks starting on ``wkst`` (0 = Monday).

    Week 1 is "the first week that contains at least four (4) days in that calendar year" (RFC
    5545 §3.3.10): the week holding January 1 qualifies exactly when January 1 is among its
    first four days, i.e. when it holds January 4; otherwise the next week does, and holds it.
    So week 1 is the week containing January 4, whatever WKST.
    """
    january_4 = date(year, 1, 4)
    return january_4 - timedelta(days=(january_4.weekday() - wkst) % 7)


def week_year_of(day: date, wkst: int) -> int:
    """The week-numbering year (see :func:`week_one_start`) whose weeks contain ``day``."""
    if day.year < date.max.year and day >= week_one_start(day.year + 1, wkst):
        return day.year + 1
    if day < week_one_start(day.year, wkst):
        return day.year - 1
    return day.year


def iterate(rule: Rule, dtstart: datetime, restart: datetime, end: datetime) -> Iterator[datetime]:
    """Yield the rule's date-times from the period starting at ``restart``, in order, to ``end``.

    Args:
        rule: a YEARLY or MONTHLY rule for which :func:`applies` is true.
        dtstart: the floating DTSTART; supplies the time of day parts the rule leaves out.
        restart: the start of a period of the rule (``expand.period_start_at_or_before``).
        end: stop after the last period that starts at or before this floating date-time.

    Values before DTSTART (in its own period) are yielded too: the caller drops them, after
    BYSETPOS has counted them (RFC 5545 §3.3.10: "A set of recurrence instances starts at the
    beginning of the interval defined by the FREQ rule part"). COUNT and UNTIL are the caller's.
    """
    times = sorted(
        time(hour, minute, second)
        for hour, minute, second in product(
            rule.by_hour or (dtstart.hour,),
            rule.by_minute or (dtstart.minute,),
            rule.by_second or (dtstart.second,),
        )
    )
    for days in _periods(rule, restart.date()):
        if datetime.combine(days[0], time()) > end:
            return
        moments = [datetime.combine(day, at) for day in _select_days(rule, days) for at in times]
        if rule.by_set_pos:
            moments = _set_positions(moments, rule.by_set_pos)
        yield from moments


def _periods(rule: Rule, first: date) -> Iterator[list[date]]:
    """The days of each period, from the one starting on ``first``, every INTERVAL periods."""
    step = rule.interval
    if rule.freq == "YEARLY" and rule.by_week_no:
        year = week_year_of(first, rule.wkst)
        while year <= LAST_YEAR:
            start = week_one_start(year, rule.wkst)
            yield _days(start, week_one_start(year + 1, rule.wkst))
            year += step
    elif rule.freq == "YEARLY":
        year = first.year
        while year <= LAST_YEAR:
            yield _days(date(year, 1, 1), date(year + 1, 1, 1))
            year += step
    else:
        index = first.year * 12 + first.month - 1
        while index // 12 <= LAST_YEAR:
            year, month = divmod(index, 12)
            start = date(year, month + 1, 1)
            yield _days(start, start + timedelta(days=calendar.monthrange(year, month + 1)[1]))
            index += step


def _days(first: date, stop: date) -> list[date]:
    return [first + timedelta(days=i) for i in range((stop - first).days)]


def _select_days(rule: Rule, days: list[date]) -> list[date]:
    """The period's days that every date-level part keeps (RFC 5545 §3.3.10's order)."""
    if rule.by_week_no:
        weeks = len(days) // 7
        wanted = {n if n > 0 else weeks + 1 + n for n in rule.by_week_no}
        days = [day for i, day in enumerate(days) if i // 7 + 1 in wanted]
    if rule.by_month:
        days = [day for day in days if day.month in rule.by_month]
    if rule.by_year_day:
        days = [day for day in days if _in_year_days(day, rule.by_year_day)]
    if rule.by_month_day:
        days = [day for day in days if _in_month_days(day, rule.by_month_day)]
    if rule.by_day:
        plain = {weekday for ordinal, weekday in rule.by_day if ordinal is None}
        # Ordinals count within the month for MONTHLY, and for YEARLY with BYMONTH; else within
        # the year (RFC 5545 §3.3.10, BYDAY: "an offset within the month when the BYMONTH rule
        # part is present, and ... an offset within the year when the BYWEEKNO or BYMONTH rule
        # parts are present" — "not present" is meant, as every implementation reads it).
        by_month = rule.freq == "MONTHLY" or bool(rule.by_month)
        nth = _nth_weekdays(rule, {(day.year, day.month if by_month else 0) for day in days})
        days = [day for day in days if day.weekday() in plain or day in nth]
    return days


def _in_year_days(day: date, wanted: tuple[int, ...]) -> bool:
    number = day.timetuple().tm_yday
    length = 366 if calendar.isleap(day.year) else 365
    return number in wanted or number - length - 1 in wanted


def _in_month_days(day: date, wanted: tuple[int, ...]) -> bool:
    length = calendar.monthrange(day.year, day.month)[1]
    return day.day in wanted or day.day - length - 1 in wanted


def _nth_weekdays(rule: Rule, scopes: set[tuple[int, int]]) -> set[date]:
    """The days named by ordinal BYDAY values in each scope: (year, month), or (year, 0)."""
    found: set[date] = set()
    for year, month in scopes:
        first = date(year, month or 1, 1)
        last = date(year, month or 12, calendar.monthrange(year, month or 12)[1])
        for ordinal, weekday in rule.by_day:
            if ordinal is None:
                continue
            if ordinal > 0:
                day = first + timedelta(days=(weekday - first.weekday()) % 7 + 7 * (ordinal - 1))
            else:
                day = last - timedelta(days=(last.weekday() - weekday) % 7 + 7 * (-ordinal - 1))
            if first <= day <= last:
                found.add(day)
    return found


def _set_positions(moments: list[datetime], positions: tuple[int, ...]) -> list[datetime]:
    """BYSETPOS: the ``n``-th (from 1) or ``-n``-th (from the end) of the period's sorted set."""
    chosen = set()
    for position in positions:
        index = position - 1 if position > 0 else len(moments) + position
        if 0 <= index < len(moments):
            chosen.add(moments[index])
    return sorted(chosen)
