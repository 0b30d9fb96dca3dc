"""COUNT rules in a window: count the instances before the window arithmetically, not by walking.

RFC 5545 §3.3.10's COUNT is counted from DTSTART, so a naive window of ``FREQ=MINUTELY;
COUNT=100000`` resolves every instance from the start (seconds of work for a 5-minute preview).
For rules whose every period yields the same instants — :func:`constant_per_period` — the number
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

from datetime import UTC, datetime, timedelta, tzinfo

from timecontract.expand import expand
from timecontract.rrule import Rule

_UNITS = {
    "SECONDLY": timedelta(seconds=1),
    "MINUTELY": timedelta(minutes=1),
    "HOURLY": timedelta(hours=1),
    "DAILY": timedelta(days=1),
    "WEEKLY": timedelta(weeks=1),
}
# BYxxx parts that only *expand* inside a period of each FREQ (never filter periods out).
_EXPANDING = {
    "SECONDLY": set(),
    "MINUTELY": {"by_second"},
    "HOURLY": {"by_second", "by_minute"},
    "DAILY": {"by_second", "by_minute", "by_hour"},
    "WEEKLY": {"by_second", "by_minute", "by_hour", "by_day"},
}
_BY_PARTS = (
    "by_second",
    "by_minute",
    "by_hour",
    "by_day",
    "by_month_day",
    "by_year_day",
    "by_week_no",
    "by_month",
    "by_set_pos",
)


def constant_per_period(rule: Rule) -> bool:
    """Whether every FREQ × INTERVAL period of ``rule`` yields the same instants (in its period).

    True for SECONDLY … WEEKLY rules whose BYxxx parts only expand within a period (BYSECOND,
    BYMINUTE, BYHOUR below the FREQ; BYDAY without ordinals for WEEKLY).
    """
    if rule.freq not in _UNITS:
        return False
    used = {part for part in _BY_PARTS if getattr(rule, part)}
    if not used <= _EXPANDING[rule.freq]:
        return False
    return all(ordinal is None for ordinal, _ in rule.by_day)


def _origin(rule: Rule, dtstart: datetime) -> datetime:
    day = datetime(dtstart.year, dtstart.month, dtstart.day)
    if rule.freq == "WEEKLY":
        return day - timedelta(days=(dtstart.weekday() - rule.wkst) % 7)
    if rule.freq == "DAILY":
        return day
    if rule.freq == "HOURLY":
        return dtstart.replace(minute=0, second=0)
    if rule.freq == "MINUTELY":
        return dtstart.replace(second=0)
    return dtstart


def nominal_count_before(rule: Rule, dtstart: datetime, moment: datetime) -> int:
    """How many nominal times the rule yields in ``[dtstart, moment)`` (floating local).

    Requires :func:`constant_per_period`; cost is one period's expansion, whatever the distance.
    """
    if moment <= dtstart:
        return 0
    origin = _origin(rule, dtstart)
    period = _UNITS[rule.freq] * rule.interval
    second = origin + period  # a whole period, entirely after dtstart
    offsets = [t - second for t in expand(rule, dtstart, second, second + period)]
    offsets = [o for o in offsets if o < period]

    def from_origin(x: datetime) -> int:
        whole, into = divmod(x - origin, period)
        return whole * len(offsets) + sum(1 for o in offsets if o < into)

    return from_origin(moment) - from_origin(dtstart)


def gap_nominals_before(rule: Rule, dtstart: datetime, moment: datetime, zone: tzinfo) -> int:
    """How many of the rule's nominal times in ``[dtstart, moment)`` fall in a gap of ``zone``."""
    if moment <= dtstart:
        return 0
    count = 0
    for gap_start, gap_end in _gaps(zone, dtstart, moment):
        low, high = max(gap_start, dtstart), min(gap_end, moment)
        if low < high:
            count += sum(1 for t in expand(rule, dtstart, low, high) if t < high)
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
            at = _first_change(zone, moment, following, previous)
            gaps.append(((at + previous).replace(tzinfo=None), (at + offset).replace(tzinfo=None)))
        previous, moment = offset, following
    return gaps


def _first_change(zone: tzinfo, low: datetime, high: datetime, before: timedelta) -> datetime:
    lo, hi = 0, int((high - low).total_seconds())
    while hi - lo > 1:
        middle = (lo + hi) // 2
        if (low + timedelta(seconds=middle)).astimezone(zone).utcoffset() == before:
            lo = middle
        else:
            hi = middle
    return low + timedelta(seconds=hi)
