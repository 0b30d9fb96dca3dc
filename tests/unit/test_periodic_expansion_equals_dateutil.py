"""``timecontract.fastpath``'s arithmetic expansion yields exactly what dateutil yields.

The oracle is dateutil's own expansion of the same rule from the same period start, with every
default DTSTART supplies made explicit (``expand._explicit_defaults``, the path every other rule
takes). Rules are drawn from the whole class :func:`fastpath.is_periodic` accepts: SECONDLY …
WEEKLY, any INTERVAL, BYSECOND / BYMINUTE / BYHOUR finer than FREQ, plain BYDAY and any WKST for
WEEKLY.
"""

from __future__ import annotations

from datetime import datetime, timedelta
from itertools import islice

from dateutil import rrule as du
from hypothesis import given, settings
from hypothesis import strategies as st

from timecontract import expand, fastpath
from timecontract.rrule import WEEKDAYS, Rule, parse_rule

FINER = {
    "SECONDLY": (),
    "MINUTELY": ("BYSECOND",),
    "HOURLY": ("BYSECOND", "BYMINUTE"),
    "DAILY": ("BYSECOND", "BYMINUTE", "BYHOUR"),
    "WEEKLY": ("BYSECOND", "BYMINUTE", "BYHOUR", "BYDAY"),
}
RANGES = {"BYSECOND": 59, "BYMINUTE": 59, "BYHOUR": 23}


@st.composite
def rules(draw: st.DrawFn) -> Rule:
    freq = draw(st.sampled_from(list(FINER)))
    parts = [f"FREQ={freq}", f"INTERVAL={draw(st.integers(1, 40))}"]
    for part in FINER[freq]:
        if not draw(st.booleans()):
            continue
        if part == "BYDAY":
            days = draw(st.lists(st.sampled_from(WEEKDAYS), min_size=1, max_size=7, unique=True))
            parts.append("BYDAY=" + ",".join(days))
        else:
            values = draw(st.lists(st.integers(0, RANGES[part]), min_size=1, max_size=4))
            parts.append(f"{part}=" + ",".join(map(str, values)))
    if draw(st.booleans()):
        parts.append(f"WKST={draw(st.sampled_from(WEEKDAYS))}")
    return parse_rule(";".join(parts))


moments = st.datetimes(datetime(1900, 1, 1), datetime(9000, 12, 31)).map(
    lambda d: d.replace(microsecond=0)
)


def dateutil_stream(rule: Rule, dtstart: datetime, restart: datetime) -> list[datetime]:
    stream = du.rrule(
        rule.frequency,
        dtstart=restart,
        interval=rule.interval,
        cache=False,
        **expand._explicit_defaults(rule, dtstart),
    )
    return list(islice(stream, 300))


@settings(max_examples=400, deadline=None, derandomize=True, database=None)
@given(rule=rules(), dtstart=moments, ahead=st.integers(0, 10**6), unit=st.sampled_from([1, 60]))
def test_periodic_expansion_equals_dateutil_from_any_period(
    rule: Rule, dtstart: datetime, ahead: int, unit: int
) -> None:
    assert fastpath.is_periodic(rule)
    moment = dtstart + timedelta(minutes=ahead * unit)
    restart = expand.period_start_at_or_before(rule, dtstart, moment)
    got = list(islice(fastpath.iterate_periodic(rule, dtstart, restart), 300))
    assert got == dateutil_stream(rule, dtstart, restart)


def test_the_stream_ends_where_datetime_ends_as_dateutil_does() -> None:
    rule = parse_rule("FREQ=DAILY;BYHOUR=1,23")
    dtstart = datetime(2001, 1, 1)
    restart = datetime(9999, 12, 29)
    got = list(fastpath.iterate_periodic(rule, dtstart, restart))
    assert got == dateutil_stream(rule, dtstart, restart)
    assert got[-1] == datetime(9999, 12, 31, 23)


def test_rules_with_filtering_parts_are_not_periodic() -> None:
    for text in (
        "FREQ=HOURLY;BYHOUR=9",
        "FREQ=DAILY;BYDAY=MO",
        "FREQ=WEEKLY;BYMONTH=1",
        "FREQ=DAILY;BYHOUR=9;BYSETPOS=1",
        "FREQ=MONTHLY;BYMONTHDAY=1",
    ):
        assert not fastpath.is_periodic(parse_rule(text)), text
