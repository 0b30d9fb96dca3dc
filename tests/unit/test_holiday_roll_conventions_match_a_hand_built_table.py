"""Holiday policies against a hand-built table (ISDA 2006 §4.12 conventions; US federal calendar,
Saturday and Sunday weekend): month ends, year ends, and holidays that fall on a weekend.

Each case is one ``rdates`` time, 09:00 New York (EST = 14:00Z, EDT = 13:00Z); the expected
instant of each policy was worked out by hand from a printed calendar and the OPM holiday list.
"""

import pytest
from calsupport import LIBRARY, records, row

US = {"name": "US", "release": LIBRARY}
# nominal date: (FOLLOWING, PRECEDING, MODIFIED_FOLLOWING) instants, and why the date is closed
TABLE = [
    # A Saturday month end: MODIFIED_FOLLOWING stays in July.
    (
        "2027-07-31",
        "2027-08-02T13:00:00Z",
        "2027-07-30T13:00:00Z",
        "2027-07-30T13:00:00Z",
        "Saturday (weekend)",
    ),
    # A Sunday month end.
    (
        "2026-05-31",
        "2026-06-01T13:00:00Z",
        "2026-05-29T13:00:00Z",
        "2026-05-29T13:00:00Z",
        "Sunday (weekend)",
    ),
    # Year end on a holiday (New Year's Day 2028 observed on Friday 31 December 2027).
    (
        "2027-12-31",
        "2028-01-03T14:00:00Z",
        "2027-12-30T14:00:00Z",
        "2027-12-30T14:00:00Z",
        "New Year's Day (observed)",
    ),
    # New Year's Day 2028 itself, a Saturday: the previous business day is in the previous year.
    (
        "2028-01-01",
        "2028-01-03T14:00:00Z",
        "2027-12-30T14:00:00Z",
        "2028-01-03T14:00:00Z",
        "New Year's Day",
    ),
    # Year start on a holiday: PRECEDING crosses into the previous year.
    (
        "2027-01-01",
        "2027-01-04T14:00:00Z",
        "2026-12-31T14:00:00Z",
        "2027-01-04T14:00:00Z",
        "New Year's Day",
    ),
    # Holidays on a weekend with a weekday observance: both days are closed.
    (
        "2026-07-04",
        "2026-07-06T13:00:00Z",
        "2026-07-02T13:00:00Z",
        "2026-07-06T13:00:00Z",
        "Independence Day",
    ),
    (
        "2027-12-25",
        "2027-12-27T14:00:00Z",
        "2027-12-23T14:00:00Z",
        "2027-12-27T14:00:00Z",
        "Christmas Day",
    ),
    # A weekday holiday.
    (
        "2026-11-26",
        "2026-11-27T14:00:00Z",
        "2026-11-25T14:00:00Z",
        "2026-11-27T14:00:00Z",
        "Thanksgiving Day",
    ),
]
POLICIES = ["FOLLOWING", "PRECEDING", "MODIFIED_FOLLOWING"]


@pytest.mark.parametrize(("day", "following", "preceding", "modified", "holiday"), TABLE)
@pytest.mark.parametrize("policy", POLICIES)
def test_a_closed_day_moves_as_the_convention_says_and_keeps_its_identity(
    day: str, following: str, preceding: str, modified: str, holiday: str, policy: str
) -> None:
    expected = dict(zip(POLICIES, (following, preceding, modified), strict=True))[policy]
    found = records(
        {"rdates": [f"{day}T09:00:00"], "calendar": US, "holidayPolicy": policy},
        "2026-01-01T00:00:00",
        "2029-01-01T00:00:00",
    )
    assert [row(r) for r in found] == [
        (f"{day}T09:00:00", expected, "PLANNED", f"HOLIDAY_{policy}", holiday)
    ]
    assert found[0].occurrence_id == f"cal.r1.{day.replace('-', '')}T090000.f0"
    assert found[0].calendar_release == f"US@{LIBRARY}"


@pytest.mark.parametrize(("day", "holiday"), [(case[0], case[4]) for case in TABLE])
def test_skip_records_a_skipped_holiday_fact_naming_the_holiday(day: str, holiday: str) -> None:
    found = records(
        {"rdates": [f"{day}T09:00:00"], "calendar": US},
        "2026-01-01T00:00:00",
        "2029-01-01T00:00:00",
    )
    assert [(r.disposition.value, r.reason.value, r.holiday, r.logical_slot_id) for r in found] == [
        ("SKIPPED_HOLIDAY", "HOLIDAY_SKIPPED", holiday, None)
    ]


def test_a_business_day_is_not_moved() -> None:
    found = records(
        {"rdates": ["2027-03-15T09:00:00"], "calendar": US, "holidayPolicy": "FOLLOWING"},
        "2027-01-01T00:00:00",
        "2028-01-01T00:00:00",
    )
    assert [row(r) for r in found] == [
        ("2027-03-15T09:00:00", "2027-03-15T13:00:00Z", "PLANNED", "UNAMBIGUOUS", None)
    ]


def test_a_move_onto_an_owned_slot_is_a_recorded_collision_never_a_second_run() -> None:
    # Daily at 09:00: Saturday and Sunday both move to Monday, whose own 09:00 holds the slot.
    found = records(
        {"rule": "FREQ=DAILY;BYHOUR=9", "calendar": US, "holidayPolicy": "FOLLOWING"},
        "2027-03-13T00:00:00",
        "2027-03-16T00:00:00",
    )
    rows = [row(r) for r in found]
    assert rows == [
        (
            "2027-03-13T09:00:00",
            "2027-03-15T13:00:00Z",
            "SKIPPED_HOLIDAY",
            "HOLIDAY_MOVE_COLLISION",
            "Saturday (weekend)",
        ),
        (
            "2027-03-14T09:00:00",
            "2027-03-15T13:00:00Z",
            "SKIPPED_HOLIDAY",
            "HOLIDAY_MOVE_COLLISION",
            "Sunday (weekend)",
        ),
        ("2027-03-15T09:00:00", "2027-03-15T13:00:00Z", "PLANNED", "UNAMBIGUOUS", None),
    ]
    assert [r.logical_slot_id for r in found] == [None, None, "cal@20270315T130000Z"]


def test_a_window_holding_only_the_moved_to_day_finds_the_moved_occurrence() -> None:
    # Saturday 31 July 2027 moves (FOLLOWING) to Monday 2 August: a window of that Monday alone
    # must hold it, though its nominal time lies two days before the window.
    fields = {"rdates": ["2027-07-31T09:00:00"], "calendar": US, "holidayPolicy": "FOLLOWING"}
    monday = records(fields, "2027-08-02T00:00:00", "2027-08-03T00:00:00")
    saturday = records(fields, "2027-07-31T00:00:00", "2027-08-01T00:00:00")
    assert [row(r) for r in monday] == [
        (
            "2027-07-31T09:00:00",
            "2027-08-02T13:00:00Z",
            "PLANNED",
            "HOLIDAY_FOLLOWING",
            "Saturday (weekend)",
        )
    ]
    assert saturday == []
