"""RFC 5545 RRULE: strict parsing, and expansion in floating local time.

The rule text is parsed by :mod:`timecontract.rrule` with the limits of RFC 5545 §3.3.10, and handed
to python-dateutil as explicit keyword arguments (never through ``rrulestr``, which can read the
clock and the OS zone files). Expansion happens in *floating* local time: the naive wall-clock
date-times the rule names, before any zone is applied. Zones, gaps and folds are
``timecontract.resolve``'s business.

Choices this module makes (each also stated for users in ``docs/reference/spec.md``):

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
  set. ``COUNT`` is the caller's: counted up to the window where every period is alike
  (``timecontract.countwindow``), else walked from DTSTART (at most ``COUNT`` instances).
- Every expansion starts at the natural beginning of a period, also the first one (a WEEKLY rule's
  first week begins on WKST, before DTSTART if need be), so that BYSETPOS counts whole sets; what
  falls before DTSTART is then dropped (see :func:`_from_period`).
- Where dateutil (2.9 and 4.0 alike) is wrong for a whole kind of rule (BYDAY mixing plain and
  ordinal weekdays; YEARLY with BYWEEKNO), ``timecontract.dayset`` expands it instead; a rule
  whose periods all hold the same times is expanded by arithmetic (``timecontract.fastpath``).
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator
from datetime import datetime, time, timedelta
from itertools import dropwhile, takewhile
from typing import Any

from dateutil import rrule as du

from timecontract import dayset, fastpath
from timecontract.rrule import (
    Rule,
    RuleError,
)


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
    origin, period = fastpath.period_origin(rule, dtstart)
    return origin + period * ((moment - origin) // period)


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
        return iter(())
    # Iterator adaptors, not a generator: one Python frame less per date-time.
    return takewhile(
        window_end.__ge__, _from_period(rule, dtstart, max(window_start, dtstart), window_end)
    )


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
    yields the same set as walking from DTSTART. A rule whose periods all hold the same
    date-times is expanded by arithmetic (``timecontract.fastpath``), rules dateutil expands
    wrongly altogether by ``timecontract.dayset``, the others by dateutil. ``end`` bounds only
    that own expansion (dateutil stops by itself in the year 9999); the caller stops reading at
    its own end.
    """
    restart = period_start_at_or_before(rule, dtstart, moment)
    stream: Iterable[datetime]
    if fastpath.is_periodic(rule):
        stream = fastpath.iterate_periodic(rule, dtstart, restart)
    elif dayset.applies(rule):
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
        **fastpath.PERIOD_UNITS,
    }[rule.freq]
    return unit * rule.interval
