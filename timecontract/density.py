"""Density: how many occurrences a spec can produce, bounded from its parts without expanding it.

The densest schedule Almanac supports is :data:`MAX_PER_MINUTE` occurrences in any clock minute
(one every 2 seconds on average: ``FREQ=SECONDLY;INTERVAL=2``, ``interval: PT2S``,
``FREQ=MINUTELY;BYSECOND=0,2,…,58``). A denser spec is refused at validation, so ``validate``,
``apply`` and every other place a spec enters say so before anything is written. Why this bound:
one occurrence costs a child workflow, its activities and ledger rows, so a schedule at the bound
takes a small share of one worker, and a burst of a whole minute's occurrences stays well below
what one worker dispatches.

The bounds are computed from the rule's parts alone (FREQ, INTERVAL and the cardinality of
BYSECOND, BYMINUTE, BYHOUR and BYSETPOS), in constant time: the check never expands the rule.
They are upper bounds — a part this module does not count (BYDAY, BYMONTH, …) only removes
occurrences — and they are exact for rules that fire in every minute they can
(``FREQ=DAILY;BYHOUR=0,…,23;BYMINUTE=0,…,59;BYSECOND=0,…,59`` is 60 a minute: refused).

:func:`span_for` turns the per-day bound into a window length that holds about a given number of
occurrences; the horizon, a preview's default window and the pieces a stream is resolved in are
sized with it, so work follows occurrences, not rule periods.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Sequence
from datetime import datetime, timedelta

from dateutil import rrule as du

from timecontract.rrule import Rule

MAX_PER_MINUTE = 30
"""The densest supported schedule: at most this many occurrences in any clock minute."""
MIN_INTERVAL = timedelta(seconds=60 // MAX_PER_MINUTE)
"""The shortest ``interval`` (elapsed-time spacing): the same bound, ``PT2S``."""

_DAY = timedelta(days=1)


def _count(values: Sequence[int], default: int) -> int:
    return len(set(values)) or default


def _ceil_div(a: int, b: int) -> int:
    return -(-a // b)


def per_minute_bound(rule: Rule) -> int:
    """The most date-times ``rule`` can produce in one clock minute (an upper bound).

    FREQ=SECONDLY: the BYSECOND values (all 60 when absent) one progression of step INTERVAL can
    hit in a minute, i.e. the most of them sharing one residue modulo INTERVAL; coarser: the
    BYSECOND values (DTSTART's one second when absent), at most the BYSETPOS positions (each
    selects one date-time of a period of at least a minute).
    """
    if rule.frequency == du.SECONDLY:
        listed = set(rule.by_second) or set(range(60))
        return max(Counter(second % rule.interval for second in listed).values())
    seconds = _count(rule.by_second, 1)
    return min(seconds, len(set(rule.by_set_pos))) if rule.by_set_pos else seconds


def per_day_bound(rule: Rule) -> int:
    """The most date-times ``rule`` can produce in one calendar day (an upper bound, ≥ 1).

    Each unit finer than FREQ multiplies by its BY list's cardinality (or its whole range when
    absent); the FREQ unit itself fires at most once per INTERVAL units, in a day and in each
    coarser unit; a BYSETPOS caps a period at its number of positions.
    """
    freq = rule.frequency
    hours, minutes, seconds = (
        _count(rule.by_hour, 24 if freq >= du.HOURLY else 1),
        _count(rule.by_minute, 60 if freq >= du.MINUTELY else 1),
        _count(rule.by_second, 60 if freq >= du.SECONDLY else 1),
    )
    if freq == du.SECONDLY:
        per_hour = min(minutes * per_minute_bound(rule), _ceil_div(3_600, rule.interval))
        return min(_ceil_div(86_400, rule.interval), hours * per_hour)
    positions = len(set(rule.by_set_pos)) or None
    if freq == du.MINUTELY:
        per_hour = min(minutes, _ceil_div(60, rule.interval))
        return min(_ceil_div(1_440, rule.interval), hours * per_hour) * per_minute_bound(rule)
    if freq == du.HOURLY:
        per_hour = min(minutes * seconds, positions or minutes * seconds)
        return min(_ceil_div(24, rule.interval), hours) * per_hour
    per_day = hours * minutes * seconds
    return min(per_day, positions or per_day)


def interval_per_day(interval: timedelta) -> int:
    """Occurrences an elapsed-time ``interval`` grid places in one day (at least 1)."""
    return max(1, _ceil_div(86_400, int(interval.total_seconds())))


def span_for(occurrences: int, per_day: int) -> timedelta:
    """A window length holding about ``occurrences`` at ``per_day`` a day (at least one second).

    Sizing only (horizons, default windows, stream pieces): a window may hold up to a day's
    bound more, since a day's occurrences can come in one burst. Hard limits are counted.
    """
    return max(_DAY * occurrences / per_day, timedelta(seconds=1))


def density_problem(rule: Rule) -> str | None:
    """Why ``rule`` is denser than Almanac supports, or ``None``: one line naming the bound."""
    peak = per_minute_bound(rule)
    if peak <= MAX_PER_MINUTE:
        return None
    return (
        f"yields up to {peak} occurrences in one minute; the densest supported schedule is "
        f"{MAX_PER_MINUTE} a minute (one every {MIN_INTERVAL.seconds} seconds, e.g. "
        "FREQ=SECONDLY;INTERVAL=2)"
    )


def most_per_day(moments: list[datetime]) -> int:
    """The most of ``moments`` on one calendar date (0 for none)."""
    return max(Counter(m.date() for m in moments).values(), default=0)


def most_within(moments: list[datetime], span: timedelta) -> int:
    """The most of ``moments`` inside any half-open window ``[t, t + span)`` (0 for none)."""
    ordered = sorted(moments)
    most, low = 0, 0
    for high, moment in enumerate(ordered):
        while ordered[low] + span <= moment:
            low += 1
        most = max(most, high - low + 1)
    return most
