"""A COUNT rule with calendar fields: the window costs the window, and yields what the walk yields.

RFC 5545 §3.3.10 counts COUNT from DTSTART; with ``businessDaysOnly`` only the business days'
times are instances. The references are the walk from DTSTART (forced by turning the arithmetic
off), over windows that straddle a DST gap, NYSE holidays, weekends and the COUNT's end, and a
plain enumeration of the rule's business-day times for the count itself. The cost
is measured as work, not time: the calendar look-ups and the resolutions a window far from
DTSTART makes, against the same window's near DTSTART.
"""

from __future__ import annotations

from datetime import datetime, timedelta
from typing import Any

import pytest
from calsupport import LIBRARY, records, row
from hypothesis import given, settings
from hypothesis import strategies as st

import timecontract.recurrence as recurrence
import timecontract.resolve as resolve
from timecontract.calendars import WEEKDAYS, BusinessCalendar, load_calendar
from timecontract.countwindow import business_count_before
from timecontract.expand import expand
from timecontract.rrule import parse_rule

NYSE = {"name": "NYSE", "release": LIBRARY}
CASES: list[dict[str, Any]] = [
    # businessDaysOnly: COUNT counts business days only.
    {"rule": "FREQ=DAILY;BYHOUR=2,9;BYMINUTE=30;COUNT=3000", "businessDaysOnly": True},
    {"rule": "FREQ=HOURLY;INTERVAL=5;BYMINUTE=0,30;COUNT=8000", "businessDaysOnly": True},
    {"rule": "FREQ=WEEKLY;BYDAY=MO,FR,SA;BYHOUR=16;COUNT=900", "businessDaysOnly": True},
    {"rule": "FREQ=MINUTELY;INTERVAL=13;COUNT=30000", "businessDaysOnly": True},  # 91-day cycle
    {"rule": "FREQ=DAILY;INTERVAL=9;BYHOUR=9;COUNT=40", "businessDaysOnly": True},  # enumerated
    # A holiday policy after the rule: COUNT counts the rule's times.
    {"rule": "FREQ=DAILY;BYHOUR=2;BYMINUTE=30;COUNT=4000", "holidayPolicy": "FOLLOWING"},
    {"rule": "FREQ=HOURLY;COUNT=20000", "holidayPolicy": "SKIP", "exdates": ["2026-07-06"]},
]
WINDOWS = [
    ("2026-03-08T05:00:00", "2026-03-08T09:00:00"),  # New York spring forward (07:00Z)
    ("2026-07-02T00:00:00", "2026-07-08T00:00:00"),  # Independence Day, observed Friday 3rd
    ("2026-12-23T00:00:00", "2027-01-05T00:00:00"),  # Christmas, New Year, weekends
    ("2031-05-30T00:00:00", "2031-06-03T00:00:00"),
]


def _case(fields: dict[str, Any], gap_policy: str) -> dict[str, Any]:
    return {**fields, "calendar": NYSE, "start": "2025-11-01T00:00:00", "gapPolicy": gap_policy}


@pytest.mark.parametrize("gap_policy", ["SKIP", "SHIFT_FORWARD"])
@pytest.mark.parametrize("fields", CASES)
def test_window_equals_the_walk_from_dtstart(
    fields: dict[str, Any], gap_policy: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    spec_fields = _case(fields, gap_policy)
    with monkeypatch.context() as walking:
        walking.setattr(recurrence, "counts_arithmetically", lambda _rule: False)
        every = records(spec_fields, "2025-11-01T00:00:00", "2045-01-01T00:00:00")
    # The COUNT's last instance, where a wrong count before the window shows.
    last = every[-1].placed_at_utc
    assert last.year < 2044
    windows = [*WINDOWS, (_text(last - timedelta(days=3)), _text(last + timedelta(days=3)))]
    counted = [[row(r) for r in records(spec_fields, *w)] for w in windows]
    monkeypatch.setattr(recurrence, "counts_arithmetically", lambda _rule: False)
    walked = [[row(r) for r in records(spec_fields, *w)] for w in windows]
    assert counted == walked
    assert counted[-1]


def _text(instant: datetime) -> str:
    return instant.replace(tzinfo=None, microsecond=0).isoformat()


class Work:
    """Counts calendar look-ups (``BusinessCalendar.closed``) and resolutions."""

    def __init__(self, monkeypatch: pytest.MonkeyPatch) -> None:
        self.closed = self.resolved = 0
        closed, resolve_local = BusinessCalendar.closed, resolve.resolve_local

        def counting_closed(calendar: BusinessCalendar, day: Any) -> str | None:
            self.closed += 1
            return closed(calendar, day)

        def counting_resolve(*args: Any) -> Any:
            self.resolved += 1
            return resolve_local(*args)

        monkeypatch.setattr(BusinessCalendar, "closed", counting_closed)
        monkeypatch.setattr(resolve, "resolve_local", counting_resolve)
        monkeypatch.setattr(recurrence, "resolve_local", counting_resolve)

    def of(self, fields: dict[str, Any], start: str, end: str) -> tuple[int, int]:
        self.closed = self.resolved = 0
        assert records(fields, start, end)
        return self.closed, self.resolved


@pytest.mark.parametrize(
    "fields",
    [
        {"rule": "FREQ=DAILY;BYHOUR=9;COUNT=50000", "businessDaysOnly": True},
        {"rule": "FREQ=HOURLY;BYMINUTE=0,30;COUNT=100000", "holidayPolicy": "SKIP"},
    ],
)
def test_a_week_far_from_dtstart_costs_what_a_week_near_it_costs(
    fields: dict[str, Any], monkeypatch: pytest.MonkeyPatch
) -> None:
    spec_fields = {**fields, "calendar": NYSE, "start": "2020-01-06T00:00:00"}
    work = Work(monkeypatch)
    near = work.of(spec_fields, "2020-02-03T00:00:00", "2020-02-10T00:00:00")
    # 50,000 business days from 2020 end in the 2210s; 100,000 half hours in 2025.
    far = work.of(spec_fields, "2025-09-01T00:00:00", "2025-09-08T00:00:00")
    assert far[0] <= near[0] + 60, (near, far)
    assert far[1] <= near[1] + 60, (near, far)


weekday_codes = st.lists(st.sampled_from(WEEKDAYS), min_size=1, max_size=7, unique=True)


@settings(max_examples=150, deadline=None, derandomize=True, database=None)
@given(
    rule=st.sampled_from(
        [
            "FREQ=DAILY;BYHOUR=9,17",
            "FREQ=DAILY;INTERVAL=3;BYHOUR=9",
            "FREQ=DAILY;INTERVAL=11",
            "FREQ=HOURLY;INTERVAL=7;BYMINUTE=5",
            "FREQ=MINUTELY;INTERVAL=331",
            "FREQ=WEEKLY;BYDAY=MO,SA,SU;BYHOUR=10",
            "FREQ=WEEKLY;INTERVAL=3;BYDAY=FR",
        ]
    ),
    start=st.datetimes(datetime(1990, 1, 1), datetime(2030, 1, 1)).map(
        lambda d: d.replace(microsecond=0)
    ),
    span=st.timedeltas(timedelta(0), timedelta(days=900)),
    weekend=st.lists(st.sampled_from(WEEKDAYS[4:] + WEEKDAYS[:1]), max_size=3, unique=True),
)
def test_business_count_equals_an_enumeration_of_the_business_day_times(
    rule: str, start: datetime, span: timedelta, weekend: list[str]
) -> None:
    parsed = parse_rule(rule)
    calendar = load_calendar("NYSE", LIBRARY, weekend, None)
    moment = start + span
    times = expand(parsed, start, start, moment)
    expected = sum(1 for t in times if t < moment and calendar.is_business_day(t.date()))
    assert business_count_before(parsed, start, moment, calendar) == expected
