"""Golden RRULE expansions from issue 16, each computed by hand from RFC 5545 §3.3.10.

The rules are the issue's examples; the expected date-times are the issue's "Right:" lists, or
(for the rules the issue describes without a list) worked out below from the calendar alone. No
expectation was produced by running timecontract, dateutil or any other RRULE engine.

Calendar facts used: 2024-01-01 is a Monday; 2024 is a leap year, so 2024-03-01 is a Friday and
2025-03-01 a Saturday; 2026-01-01 is a Thursday, 2027-01-01 a Friday, 2028-01-01 a Saturday.
All specs are in Etc/UTC, so every nominal time exists once and is its own instant.
"""

from __future__ import annotations

from datetime import UTC, datetime, timedelta
from typing import NamedTuple

import pytest

from timecontract import Disposition, occurrences, parse_spec

CASES = [
    pytest.param(
        # Issue 16, item 1: "without an integer modifier it means all days of that type within
        # the frequency; each BYDAY value adds its days" — every Monday; 1MO adds nothing new.
        "FREQ=MONTHLY;BYDAY=MO,1MO;COUNT=6",
        "2024-01-01T09:00:00",
        ["2024-01-01", "2024-01-08", "2024-01-15", "2024-01-22", "2024-01-29", "2024-02-05"],
        id="monthly-every-monday-plus-first-monday",
    ),
    pytest.param(
        # Every Monday, plus the last Wednesday of each month (2024-01-31 is a Wednesday).
        "FREQ=MONTHLY;BYDAY=MO,-1WE;COUNT=8",
        "2024-01-01T09:00:00",
        [
            "2024-01-01",
            "2024-01-08",
            "2024-01-15",
            "2024-01-22",
            "2024-01-29",
            "2024-01-31",
            "2024-02-05",
            "2024-02-12",
        ],
        id="monthly-every-monday-plus-last-wednesday",
    ),
    pytest.param(
        # Every Friday of March (the -1FR is one of them): March 2024 starts on a Friday
        # (1, 8, 15, 22, 29); March 2025 on a Saturday (7, 14, 21, 28).
        "FREQ=YEARLY;BYMONTH=3;BYDAY=FR,-1FR;COUNT=9",
        "2024-01-01T09:00:00",
        [
            "2024-03-01",
            "2024-03-08",
            "2024-03-15",
            "2024-03-22",
            "2024-03-29",
            "2025-03-07",
            "2025-03-14",
            "2025-03-21",
            "2025-03-28",
        ],
        id="yearly-march-every-friday-plus-last-friday",
    ),
    pytest.param(
        # Issue 16, item 2: the first week's set is {Mon 01-01, Thu 01-04} (weeks start on MO);
        # its 2nd is 01-04, the start itself. "A set of recurrence instances starts at the
        # beginning of the interval defined by the FREQ rule part."
        "FREQ=WEEKLY;BYDAY=MO,TH;BYSETPOS=2;COUNT=3",
        "2024-01-04T09:00:00",
        ["2024-01-04", "2024-01-11", "2024-01-18"],
        id="weekly-bysetpos-counts-the-first-week-from-wkst",
    ),
]


CASES_WINDOW = ("2024-01-01T00:00:00Z", "2030-01-01T00:00:00Z")
"""The UTC window, ``[from, to)``, every case of ``CASES`` is expanded in."""


class WindowedExample(NamedTuple):
    """A rule from ``start`` (floating, in Etc/UTC) and its nominal times in the UTC window.

    The window is ``[window_from, window_to)``, as ``timecontract.occurrences`` takes it.
    """

    rule: str
    start: str
    window_from: str
    window_to: str
    expected: list[datetime]


# Derived in the docstrings of the two tests below.
BYWEEKNO_INTERVAL = WindowedExample(
    "FREQ=YEARLY;INTERVAL=2;BYWEEKNO=1;BYDAY=MO,SU",
    "2024-01-01T00:00:00",
    "2024-01-01T00:00:00Z",
    "2029-01-01T00:00:00Z",
    [
        datetime(2024, 1, 1),
        datetime(2024, 1, 7),
        datetime(2025, 12, 29),
        datetime(2026, 1, 4),
        datetime(2028, 1, 3),
        datetime(2028, 1, 9),
    ],
)
BYWEEKNO_MINUS_53 = WindowedExample(
    "FREQ=YEARLY;BYWEEKNO=-53",
    "2019-01-01T00:00:00",
    "2019-01-01T00:00:00Z",
    "2022-01-01T00:00:00Z",
    [datetime(2019, 12, 30) + timedelta(days=i) for i in range(7)],
)


@pytest.mark.parametrize(("rule", "start", "dates"), CASES)
def test_issue16_example(rule: str, start: str, dates: list[str]) -> None:
    nominal = [datetime.fromisoformat(f"{day}T{start[11:]}") for day in dates]
    assert _nominal_times(rule, start, *CASES_WINDOW) == nominal


def test_issue16_byweekno_with_interval_counts_week_numbering_years() -> None:
    """Issue 16, item 3: week 1 of the years the INTERVAL counts (2024, 2026, 2028).

    Week 1 is "the first week that contains at least four (4) days in that calendar year"
    (Monday weeks): 2024-01-01..07; 2025-12-29..2026-01-04 (2026-01-01 is a Thursday);
    2028-01-03..09 (2028-01-01 is a Saturday, so its week holds only two days of 2028).
    2024-12-30 (week 1 of 2025, an off year) is not an instance.
    """
    example = BYWEEKNO_INTERVAL
    assert _nominal_times(*example[:4]) == example.expected


def test_negative_week_number_reaches_into_the_previous_calendar_year() -> None:
    """``BYWEEKNO=-53`` of 2020 is its week 1, which starts in 2019 (dateutil lost those days).

    2020-01-01 is a Wednesday, so week 1 of 2020 (Monday weeks) is 2019-12-30..2020-01-05; 2020
    has 53 weeks (its last, week 53, is 2020-12-28..2021-01-03, holding four days of 2020), so
    week -53 is week 1. 2019 and 2021 have 52 weeks and no week -53.
    """
    example = BYWEEKNO_MINUS_53
    assert _nominal_times(*example[:4]) == example.expected


def _nominal_times(rule: str, start: str, window_from: str, window_to: str) -> list[datetime]:
    spec = parse_spec(
        {
            "schema": "scheduleSpec.v1",
            "scheduleId": "issue16",
            "revision": 1,
            "timeZone": "Etc/UTC",
            "tzdbVersion": "2026a",
            "rule": rule,
            "start": start,
            "cutoverAt": "2000-01-01T00:00:00Z",
        }
    )
    records = occurrences(
        spec, datetime.fromisoformat(window_from), datetime.fromisoformat(window_to)
    )
    for record in records:  # in UTC every nominal time exists once and is its own instant
        assert record.disposition is Disposition.PLANNED
        assert record.instant_utc == record.nominal_local.replace(tzinfo=UTC)
    return [record.nominal_local for record in records]
