"""US federal holidays (days off) in 2026 and 2027 from the pinned calendar equal the list the
U.S. Office of Personnel Management publishes (opm.gov, "Federal Holidays", written out here by
hand), observed dates included: 2026-07-03 for Saturday 4 July, 2027-06-18, 2027-07-05,
2027-12-24, and 2027-12-31 for New Year's Day 2028 (a Saturday)."""

from datetime import date, timedelta

from calsupport import LIBRARY

from timecontract.calendars import load_calendar

OPM = {
    date(2026, 1, 1): "New Year's Day",
    date(2026, 1, 19): "Martin Luther King Jr. Day",
    date(2026, 2, 16): "Washington's Birthday",
    date(2026, 5, 25): "Memorial Day",
    date(2026, 6, 19): "Juneteenth National Independence Day",
    date(2026, 7, 3): "Independence Day",
    date(2026, 9, 7): "Labor Day",
    date(2026, 10, 12): "Columbus Day",
    date(2026, 11, 11): "Veterans Day",
    date(2026, 11, 26): "Thanksgiving Day",
    date(2026, 12, 25): "Christmas Day",
    date(2027, 1, 1): "New Year's Day",
    date(2027, 1, 18): "Martin Luther King Jr. Day",
    date(2027, 2, 15): "Washington's Birthday",
    date(2027, 5, 31): "Memorial Day",
    date(2027, 6, 18): "Juneteenth National Independence Day",
    date(2027, 7, 5): "Independence Day",
    date(2027, 9, 6): "Labor Day",
    date(2027, 10, 11): "Columbus Day",
    date(2027, 11, 11): "Veterans Day",
    date(2027, 11, 25): "Thanksgiving Day",
    date(2027, 12, 24): "Christmas Day",
    date(2027, 12, 31): "New Year's Day",
}


def test_weekday_holidays_of_2026_and_2027_are_the_opm_list_with_their_names() -> None:
    calendar = load_calendar("US", LIBRARY, ["SA", "SU"], None)
    found = {}
    day = date(2026, 1, 1)
    while day <= date(2027, 12, 31):
        if day.weekday() < 5 and not calendar.is_business_day(day):
            found[day] = calendar.closed(day)
        day += timedelta(days=1)
    assert set(found) == set(OPM)
    for day, name in OPM.items():
        assert (found[day] or "").startswith(name), day
