"""A rule that generates no occurrence at all must be an invalid spec naming the rule (or, at
the least, an empty result) — never a raw dateutil ValueError from occurrences(), nor a walk of
the calendar to year 9999 for a one-day window."""

import pytest
from specdata import SEED_SPEC
from tcsupport import utc

from timecontract import InvalidSpec, occurrences, parse_spec


def test_hourly_interval_that_never_reaches_byhour_is_rejected_or_empty() -> None:
    # From 00:00 every 2 hours reaches only even hours; BYHOUR=1 is never reached.
    data = {
        **SEED_SPEC,
        "rule": "FREQ=HOURLY;INTERVAL=2;BYHOUR=1",
        "start": "2026-01-01T00:00:00",
        "cutoverAt": "2020-01-01T00:00:00Z",
    }
    try:
        spec = parse_spec(data)
    except InvalidSpec as invalid:
        assert [p.field for p in invalid.problems] == ["rule"]
        return
    assert occurrences(spec, utc("2026-01-02T00:00:00"), utc("2026-01-03T00:00:00")) == []


@pytest.mark.parametrize(
    "rule",
    [
        "FREQ=YEARLY;BYMONTH=2;BYMONTHDAY=30",
        "FREQ=DAILY;BYMONTH=4;BYMONTHDAY=31",
        "FREQ=MONTHLY;BYMONTH=2,4,6,9,11;BYMONTHDAY=31",
        # BYSETPOS beyond the largest set a period can hold: one instance per second; two per
        # minute; 7 days x 2 hours a week. dateutil would walk empty sets one period at a time.
        "FREQ=SECONDLY;BYSECOND=1,2;BYSETPOS=2",
        "FREQ=MINUTELY;BYSECOND=1,2;BYSETPOS=-3",
        "FREQ=WEEKLY;BYHOUR=1,2;BYSETPOS=15,-15",
        # A mixed BYDAY that no month holds (issue 16: the union is still empty).
        "FREQ=MONTHLY;BYMONTHDAY=1,2;BYDAY=5FR,-1SA",
    ],
)
def test_rule_whose_by_parts_contradict_is_rejected_naming_the_rule(rule: str) -> None:
    # Each of these is a valid RFC 5545 grammar with an empty set; occurrences() over a one-day
    # window currently walks dateutil to year 9999 (seconds of CPU per call).
    with pytest.raises(InvalidSpec) as caught:
        parse_spec({**SEED_SPEC, "rule": rule})
    assert [(p.field, p.value) for p in caught.value.problems] == [("rule", rule)]


@pytest.mark.parametrize(
    "rule",
    [
        # Issue 16: dateutil intersected plain and ordinal BYDAY values and called this empty.
        "FREQ=MONTHLY;BYDAY=MO,-1WE",
        # The largest set a period can hold is reachable: 7 days x 2 hours in a week.
        "FREQ=WEEKLY;BYDAY=MO,TU,WE,TH,FR,SA,SU;BYHOUR=1,2;BYSETPOS=14",
        "FREQ=MINUTELY;BYSECOND=1,2;BYSETPOS=-2",
    ],
)
def test_rule_that_occurs_is_accepted(rule: str) -> None:
    parse_spec({**SEED_SPEC, "rule": rule})
