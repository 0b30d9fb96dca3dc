"""The expansion fast path: rules whose every period holds the same date-times.

A SECONDLY … WEEKLY rule whose BYxxx parts only *expand* within a period (BYSECOND, BYMINUTE,
BYHOUR finer than FREQ; plain BYDAY for WEEKLY) yields, in floating local time, the same offsets
from the start of every FREQ × INTERVAL period (RFC 5545 §3.3.10: the parts finer than FREQ
expand, and a period of these frequencies has a fixed length in floating time). Such a rule is
expanded here by arithmetic, period start plus offset, instead of by dateutil, which builds each
period's sets anew; ``timecontract.countwindow`` counts its instances the same way.

The offsets are the RFC's expansion written out: each listed (or DTSTART-supplied) weekday,
hour, minute and second of one period. ``tests/unit/test_periodic_expansion_equals_dateutil.py``
checks, with random rules, starts and windows, that :func:`iterate` yields exactly what
``timecontract.expand``'s dateutil path yields.

One of the time contract's two fast paths, one per stage; the other, for resolution, is
:mod:`timecontract.fastpath`. They cannot share a module: this one sits below the spec
(``spec`` → ``expand`` → ``periodic``), the resolution one above it (it builds records).
"""

from __future__ import annotations

from collections.abc import Iterator
from datetime import datetime, timedelta
from itertools import product

from timecontract.rrule import Rule

UNITS = {
    "SECONDLY": timedelta(seconds=1),
    "MINUTELY": timedelta(minutes=1),
    "HOURLY": timedelta(hours=1),
    "DAILY": timedelta(days=1),
    "WEEKLY": timedelta(weeks=1),
}
"""One FREQ unit of the frequencies whose periods have a fixed length in floating time."""
_EXPANDING = {
    "SECONDLY": set(),
    "MINUTELY": {"by_second"},
    "HOURLY": {"by_second", "by_minute"},
    "DAILY": {"by_second", "by_minute", "by_hour"},
    "WEEKLY": {"by_second", "by_minute", "by_hour", "by_day"},
}
"""The BYxxx parts that only expand inside a period of each FREQ (never filter periods out)."""
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


def applies(rule: Rule) -> bool:
    """Whether every FREQ × INTERVAL period of ``rule`` yields the same offsets from its start.

    True for SECONDLY … WEEKLY rules whose BYxxx parts only expand within a period (BYSECOND,
    BYMINUTE, BYHOUR below the FREQ; BYDAY without ordinals for WEEKLY).
    """
    if rule.freq not in UNITS:
        return False
    used = {part for part in _BY_PARTS if getattr(rule, part)}
    if not used <= _EXPANDING[rule.freq]:
        return False
    return all(ordinal is None for ordinal, _ in rule.by_day)


def period_origin(rule: Rule, dtstart: datetime) -> tuple[datetime, timedelta]:
    """The start of the period containing ``dtstart`` and the length of one period.

    Weeks begin on WKST; the other periods at their unit's natural boundary (RFC 5545 §3.3.10,
    BYSETPOS: "A set of recurrence instances starts at the beginning of the interval defined by
    the FREQ rule part"). ``rule.freq`` must be one of :data:`UNITS`.
    """
    day_start = datetime(dtstart.year, dtstart.month, dtstart.day)
    period = UNITS[rule.freq] * rule.interval
    if rule.freq == "WEEKLY":
        return day_start - timedelta(days=(dtstart.weekday() - rule.wkst) % 7), period
    if rule.freq == "DAILY":
        return day_start, period
    if rule.freq == "HOURLY":
        return dtstart.replace(minute=0, second=0, microsecond=0), period
    if rule.freq == "MINUTELY":
        return dtstart.replace(second=0, microsecond=0), period
    return dtstart.replace(microsecond=0), period


def offsets(rule: Rule, dtstart: datetime) -> list[timedelta]:
    """The offsets of one period's date-times from the period's start, ascending.

    Each part finer than FREQ takes its listed values, or DTSTART's one (RFC 5545 §3.3.10:
    information not in the rule comes from DTSTART); a part at or above FREQ contributes 0.
    Requires :func:`applies`.
    """
    coarser = list(UNITS).index(rule.freq)  # SECONDLY 0 … WEEKLY 4
    days = [0]
    if rule.freq == "WEEKLY":
        weekdays = [day for _, day in rule.by_day] or [dtstart.weekday()]
        days = [(day - rule.wkst) % 7 for day in weekdays]
    hours = (rule.by_hour or (dtstart.hour,)) if coarser > 2 else (0,)
    minutes = (rule.by_minute or (dtstart.minute,)) if coarser > 1 else (0,)
    seconds = (rule.by_second or (dtstart.second,)) if coarser > 0 else (0,)
    return sorted(
        {
            timedelta(days=d, hours=h, minutes=m, seconds=s)
            for d, h, m, s in product(days, hours, minutes, seconds)
        }
    )


def iterate(rule: Rule, dtstart: datetime, restart: datetime) -> Iterator[datetime]:
    """Yield the rule's floating date-times from the period starting at ``restart``, in order.

    Args:
        rule: a rule for which :func:`applies` is true.
        dtstart: the floating DTSTART; supplies the parts the rule leaves out.
        restart: the start of one of the rule's periods (``expand.period_start_at_or_before``).

    Values before DTSTART in its own period are yielded too (the caller drops them); the stream
    ends at the last date-time ``datetime`` can hold, as dateutil's does.
    """
    within, (_, period) = offsets(rule, dtstart), period_origin(rule, dtstart)
    start = restart
    try:
        while True:
            for offset in within:
                yield start + offset
            start += period
    except OverflowError:
        return
