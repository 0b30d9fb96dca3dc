"""COUNT rules in a window: count the instances before the window arithmetically, not by walking.

RFC 5545 §3.3.10's COUNT is counted from DTSTART, so a naive window of ``FREQ=MINUTELY;
COUNT=100000`` resolves every instance from the start (seconds of work for a 5-minute preview).
For rules whose every period yields the same instants — ``fastpath.is_periodic`` — the number
of nominal times in ``[start, t)`` is arithmetic::

    before(t) = k × whole periods + (offsets of one period earlier than t's position in its own)

counted from the rule's period origin (the period containing ``start``; weeks begin on WKST),
minus the same count at ``start``. Under ``gapPolicy: SKIP`` a gap time is not counted
(``timecontract.resolve``), so the nominal times inside each DST gap between ``start`` and ``t``
are subtracted: the zone's gaps are found by sampling offsets daily (a transition's exact instant
by bisection) and each gap's local hour is expanded on its own. The window then resolves only its
own nominal times, with the COUNT that is left. Every other rule (BYMONTH, BYMONTHDAY, BYDAY
ordinals, BYSETPOS, HOURLY with BYHOUR, RFC 7529 SKIP moves, …) keeps the walk from DTSTART.
"""

from __future__ import annotations

from bisect import bisect_left
from collections.abc import Callable
from datetime import UTC, date, datetime, time, timedelta, tzinfo
from math import lcm

from timecontract import fastpath
from timecontract.calendars import BusinessCalendar
from timecontract.expand import expand
from timecontract.rrule import Rule
from timecontract.transitions import first_change

_DAY = timedelta(days=1)
_WEEK = timedelta(weeks=1)


def nominal_count_before(rule: Rule, dtstart: datetime, moment: datetime) -> int:
    """How many nominal times the rule yields in ``[dtstart, moment)`` (floating local).

    Requires ``fastpath.is_periodic(rule)``; cost is one period's offsets, whatever the distance.
    """
    return _counter(rule, dtstart)(moment)


def _counter(rule: Rule, dtstart: datetime) -> Callable[[datetime], int]:
    """``moment`` → the number of the rule's nominal times in ``[dtstart, moment)``."""
    origin, period = fastpath.period_origin(rule, dtstart)
    offsets = fastpath.period_offsets(rule, dtstart)

    def from_origin(x: datetime) -> int:
        whole, into = divmod(x - origin, period)
        return whole * len(offsets) + bisect_left(offsets, into)

    at_start = from_origin(dtstart)
    return lambda moment: max(from_origin(moment) - at_start, 0)


def business_count_before(
    rule: Rule, dtstart: datetime, moment: datetime, calendar: BusinessCalendar
) -> int:
    """How many nominal times the rule yields in ``[dtstart, moment)`` on business days.

    The count of :func:`nominal_count_before`, less the times on closed days: the holidays in
    the range (found by bisection in the calendar's sorted dates) that are not weekend days, and
    the weekend days. The weekend part repeats every ``lcm(period, 1 week)`` (an instance shifted
    by that much is an instance on the same weekday), so it is one cycle's count times the whole
    cycles plus the remainder, each day's times counted arithmetically. A rule with fewer times
    in the range than a cycle (or the range) has days is simply enumerated. Requires
    ``fastpath.is_periodic(rule)``.

    Cost: at most ``min(times, cycle days, days)`` steps and the holidays of the range (at most
    ``sqrt(7 × days)`` steps, since a cycle is at most 7 periods and times × period ≈ days);
    never a walk of every time from DTSTART or a calendar look-up per day.

    Raises:
        SpecError: the rule's first time lies outside the calendar data's years (as a walk from
            DTSTART would find).

    """
    count = _counter(rule, dtstart)
    first = next(expand(rule, dtstart, dtstart, moment), None)
    if first is None or first >= moment:
        return 0
    calendar.closed(first.date())  # the data's years, as a walk would check them
    last = (moment - timedelta(microseconds=1)).date()
    _, period = fastpath.period_origin(rule, dtstart)
    cycle = lcm(period // timedelta(seconds=1), _WEEK // timedelta(seconds=1)) // 86_400
    if count(moment) < min(cycle, (last - first.date()).days):
        times = expand(rule, dtstart, first, moment)
        return sum(1 for t in times if t < moment and calendar.is_business_day(t.date()))

    def on_day(day: date) -> int:
        midnight = datetime.combine(day, time())
        return count(min(midnight + _DAY, moment)) - count(max(midnight, dtstart))

    holidays = _sorted_holidays(calendar)
    listed = holidays[bisect_left(holidays, first.date()) : bisect_left(holidays, last + _DAY)]
    closed = sum(on_day(day) for day in listed if day.weekday() not in calendar.weekend)
    closed += _weekend_times(first.date(), last, cycle, calendar.weekend, on_day)
    return count(moment) - closed


def _weekend_times(
    first: date, last: date, cycle: int, weekend: frozenset[int], on_day: Callable[[date], int]
) -> int:
    """The times on ``weekend`` days from ``first`` to ``last`` inclusive (``cycle``: in days).

    The first and last days may be partial (DTSTART, the moment), so they are counted on their
    own; the whole days between repeat every ``cycle`` days.
    """

    def weekend_times(start: date, days: int) -> int:
        stepped = (start + timedelta(days=k) for k in range(days))
        return sum(on_day(day) for day in stepped if day.weekday() in weekend)

    if last <= first:
        return weekend_times(first, 1) if last == first else 0
    total = weekend_times(first, 1) + weekend_times(last, 1)
    whole, remainder = divmod((last - first).days - 1, cycle)
    start = first + _DAY
    if whole:
        total += whole * weekend_times(start, cycle)
    return total + weekend_times(start + timedelta(days=whole * cycle), remainder)


def _sorted_holidays(calendar: BusinessCalendar) -> list[date]:
    return sorted(calendar.holidays)


def gap_nominals_before(
    rule: Rule,
    dtstart: datetime,
    moment: datetime,
    zone: tzinfo,
    counted: Callable[[datetime], bool] | None = None,
) -> int:
    """How many of the rule's nominal times in ``[dtstart, moment)`` fall in a gap of ``zone``.

    Only the times ``counted`` accepts are counted (``None``: all; a calendar's business days).
    """
    if moment <= dtstart:
        return 0
    count = 0
    for gap_start, gap_end in _gaps(zone, dtstart, moment):
        low, high = max(gap_start, dtstart), min(gap_end, moment)
        if low < high:
            count += sum(
                1
                for t in expand(rule, dtstart, low, high)
                if t < high and (counted is None or counted(t))
            )
    return count


def _gaps(
    zone: tzinfo, low_local: datetime, high_local: datetime
) -> list[tuple[datetime, datetime]]:
    """The zone's gaps as floating local intervals ``[before-offset time, after-offset time)``."""
    gaps: list[tuple[datetime, datetime]] = []
    moment = (low_local - timedelta(days=2)).replace(tzinfo=UTC)
    last = (high_local + timedelta(days=2)).replace(tzinfo=UTC)
    previous = moment.astimezone(zone).utcoffset()
    while moment < last:
        following = moment + timedelta(days=1)
        offset = following.astimezone(zone).utcoffset()
        assert previous is not None and offset is not None
        if offset > previous:
            at = first_change(zone, moment, following)
            gaps.append(((at + previous).replace(tzinfo=None), (at + offset).replace(tzinfo=None)))
        previous, moment = offset, following
    return gaps
