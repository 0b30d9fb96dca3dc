"""Issue 13: RFC 7529 ``RSCALE=GREGORIAN`` with ``SKIP=OMIT|BACKWARD|FORWARD``.

Golden cases: RFC 7529's own leap-day example (an anniversary on 2012-02-29 with
``RSCALE=GREGORIAN;FREQ=YEARLY;SKIP=FORWARD``: 2012-02-29, 2013-03-01, 2014-03-01, 2015-03-01,
2016-02-29, …) and hand-computed month ends from the Gregorian month lengths (30 days hath
September, April, June and November; February 28, 29 in leap years).
"""

from __future__ import annotations

import pytest
from tcsupport import utc

from timecontract import InvalidSpec, occurrences, parse_rscale_rule, parse_spec
from timecontract.rrule import RuleError

BASE = {
    "schema": "scheduleSpec.v1",
    "scheduleId": "anniversary",
    "revision": 1,
    "timeZone": "UTC",
    "tzdbVersion": "2026a",
    "cutoverAt": "2000-01-01T00:00:00Z",
}


def dates(rule: str, start: str, frm: str = "2000-01-01", to: str = "2040-01-01") -> list[str]:
    spec = parse_spec({**BASE, "rule": rule, "start": start})
    return [
        r.nominal_local.date().isoformat()
        for r in occurrences(spec, utc(f"{frm}T00:00:00"), utc(f"{to}T00:00:00"))
    ]


def test_rfc_7529_leap_day_anniversary_skip_forward() -> None:
    got = dates("RSCALE=GREGORIAN;FREQ=YEARLY;SKIP=FORWARD;COUNT=6", "2012-02-29T09:00:00")
    assert got == [
        "2012-02-29",
        "2013-03-01",
        "2014-03-01",
        "2015-03-01",
        "2016-02-29",
        "2017-03-01",
    ]


def test_leap_day_anniversary_skip_backward_and_omit() -> None:
    backward = dates("RSCALE=GREGORIAN;FREQ=YEARLY;SKIP=BACKWARD;COUNT=5", "2012-02-29T09:00:00")
    assert backward == ["2012-02-29", "2013-02-28", "2014-02-28", "2015-02-28", "2016-02-29"]
    omit = dates("RSCALE=GREGORIAN;FREQ=YEARLY;SKIP=OMIT;COUNT=3", "2012-02-29T09:00:00")
    assert omit == ["2012-02-29", "2016-02-29", "2020-02-29"]
    assert omit == dates("FREQ=YEARLY;COUNT=3", "2012-02-29T09:00:00")  # OMIT is RFC 5545's


def test_bymonthday_31_skip_backward_runs_on_the_last_day_of_short_months() -> None:
    got = dates(
        "RSCALE=GREGORIAN;FREQ=MONTHLY;BYMONTHDAY=31;SKIP=BACKWARD",
        "2026-01-01T00:00:00",
        "2026-01-01",
        "2027-01-01",
    )
    assert got == [
        "2026-01-31",
        "2026-02-28",
        "2026-03-31",
        "2026-04-30",
        "2026-05-31",
        "2026-06-30",
        "2026-07-31",
        "2026-08-31",
        "2026-09-30",
        "2026-10-31",
        "2026-11-30",
        "2026-12-31",
    ]


def test_bymonthday_31_skip_forward_runs_on_the_first_of_the_next_month() -> None:
    got = dates(
        "RSCALE=GREGORIAN;FREQ=MONTHLY;BYMONTHDAY=31;SKIP=FORWARD",
        "2026-01-01T00:00:00",
        "2026-01-01",
        "2027-01-01",
    )
    assert got == [
        "2026-01-31",
        "2026-03-01",
        "2026-03-31",
        "2026-05-01",
        "2026-05-31",
        "2026-07-01",
        "2026-07-31",
        "2026-08-31",
        "2026-10-01",
        "2026-10-31",
        "2026-12-01",
        "2026-12-31",
    ]


def test_monthly_from_the_31st_without_bymonthday_takes_the_day_from_start() -> None:
    got = dates("RSCALE=GREGORIAN;FREQ=MONTHLY;SKIP=BACKWARD;COUNT=3", "2025-01-31T10:00:00")
    assert got == ["2025-01-31", "2025-02-28", "2025-03-31"]


def test_days_moved_onto_one_date_are_one_instance_and_count_once() -> None:
    got = dates(
        "RSCALE=GREGORIAN;FREQ=MONTHLY;BYMONTHDAY=29,30,31;SKIP=BACKWARD;COUNT=5",
        "2026-01-01T00:00:00",
    )
    assert got == ["2026-01-29", "2026-01-30", "2026-01-31", "2026-02-28", "2026-03-29"]
    forward = dates(
        "RSCALE=GREGORIAN;FREQ=MONTHLY;BYMONTHDAY=1,30;SKIP=FORWARD;COUNT=5",
        "2026-02-01T00:00:00",
    )
    assert forward == ["2026-02-01", "2026-03-01", "2026-03-30", "2026-04-01", "2026-04-30"]


def test_yearly_bymonth_and_times_are_kept() -> None:
    spec = parse_spec(
        {
            **BASE,
            "rule": "RSCALE=GREGORIAN;FREQ=YEARLY;BYMONTH=2,4;BYMONTHDAY=30;BYHOUR=8,20;"
            "SKIP=BACKWARD",
            "start": "2026-01-01T00:00:00",
        }
    )
    got = [
        r.nominal_local.isoformat()
        for r in occurrences(spec, utc("2026-01-01T00:00:00"), utc("2027-01-01T00:00:00"))
    ]
    assert got == [
        "2026-02-28T08:00:00",
        "2026-02-28T20:00:00",
        "2026-04-30T08:00:00",
        "2026-04-30T20:00:00",
    ]


def test_a_window_gives_the_slice_of_the_whole_series() -> None:
    rule = "RSCALE=GREGORIAN;FREQ=MONTHLY;INTERVAL=2;BYMONTHDAY=31;SKIP=FORWARD"
    whole = dates(rule, "2025-11-15T00:00:00", "2025-01-01", "2030-01-01")
    part = dates(rule, "2025-11-15T00:00:00", "2027-03-01", "2028-07-02")
    assert part == [d for d in whole if "2027-03-01" <= d < "2028-07-02"]
    assert whole[:4] == ["2025-12-01", "2026-01-31", "2026-03-31", "2026-05-31"]


@pytest.mark.parametrize(
    ("rule", "words"),
    [
        ("RSCALE=HEBREW;FREQ=YEARLY", "GREGORIAN"),
        ("FREQ=MONTHLY;SKIP=BACKWARD", "RSCALE"),
        ("RSCALE=GREGORIAN;FREQ=MONTHLY;SKIP=SIDEWAYS", "SKIP"),
        ("RSCALE=GREGORIAN;RSCALE=GREGORIAN;FREQ=MONTHLY", "twice"),
        ("RSCALE=GREGORIAN;FREQ=DAILY;BYMONTHDAY=31;SKIP=BACKWARD", "FREQ=DAILY"),
        ("RSCALE=GREGORIAN;FREQ=MONTHLY;BYDAY=MO;SKIP=BACKWARD", "BYDAY"),
        ("RSCALE=GREGORIAN;FREQ=MONTHLY;BYMONTHDAY=-31;SKIP=FORWARD", "negative"),
    ],
)
def test_unsupported_rscale_forms_are_clear_rule_errors(rule: str, words: str) -> None:
    with pytest.raises(RuleError, match=words):
        parse_rscale_rule(rule)
    with pytest.raises(InvalidSpec) as caught:
        parse_spec({**BASE, "rule": rule})
    assert [p.field for p in caught.value.problems] == ["rule"]


def test_february_30_is_satisfiable_only_when_it_moves() -> None:
    with pytest.raises(InvalidSpec):
        parse_spec({**BASE, "rule": "FREQ=YEARLY;BYMONTH=2;BYMONTHDAY=30"})
    got = dates(
        "RSCALE=GREGORIAN;FREQ=YEARLY;BYMONTH=2;BYMONTHDAY=30;SKIP=BACKWARD;COUNT=2",
        "2027-01-01T00:00:00",
    )
    assert got == ["2027-02-28", "2028-02-29"]
