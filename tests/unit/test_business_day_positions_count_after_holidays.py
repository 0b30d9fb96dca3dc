"""Business-day positions (``businessDaysOnly``): holidays and weekend days leave each period's set
before BYSETPOS selects (timecontract.calendar_spec). Dates checked on a printed calendar and the
NYSE holiday list: Memorial Day 2027 is Monday 31 May; New Year's Day 2027 a Friday."""

from calsupport import LIBRARY, records, row

NYSE = {"name": "NYSE", "release": LIBRARY}
LAST_WEEKDAY = "FREQ=MONTHLY;BYDAY=MO,TU,WE,TH,FR;BYSETPOS=-1;BYHOUR=16;BYMINUTE=30"


def test_last_weekday_of_may_2027_is_memorial_day_and_skip_records_it() -> None:
    found = records(
        {"rule": LAST_WEEKDAY, "calendar": NYSE}, "2027-05-01T00:00:00", "2027-06-02T00:00:00"
    )
    assert [row(r) for r in found] == [
        (
            "2027-05-31T16:30:00",
            "2027-05-31T20:30:00Z",
            "SKIPPED_HOLIDAY",
            "HOLIDAY_SKIPPED",
            "Memorial Day",
        )
    ]


def test_last_nyse_business_day_of_may_2027_is_the_28th() -> None:
    found = records(
        {"rule": LAST_WEEKDAY, "calendar": NYSE, "businessDaysOnly": True},
        "2027-05-01T00:00:00",
        "2027-06-02T00:00:00",
    )
    assert [row(r) for r in found] == [
        ("2027-05-28T16:30:00", "2027-05-28T20:30:00Z", "PLANNED", "UNAMBIGUOUS", None)
    ]


def test_third_business_day_of_january_2027_skips_new_years_day() -> None:
    # Fri 1 Jan is a holiday, the weekend follows: Mon 4 (1st), Tue 5 (2nd), Wed 6 (3rd).
    found = records(
        {
            "rule": "FREQ=MONTHLY;BYDAY=MO,TU,WE,TH,FR;BYSETPOS=3;BYHOUR=9",
            "calendar": NYSE,
            "businessDaysOnly": True,
        },
        "2027-01-01T00:00:00",
        "2027-03-01T00:00:00",
    )
    # February 2027: Mon 1, Tue 2, Wed 3 (no holiday).
    assert [r.nominal_local.isoformat() for r in found] == [
        "2027-01-06T09:00:00",
        "2027-02-03T09:00:00",
    ]


def test_without_bysetpos_business_days_only_drops_closed_days_without_a_record() -> None:
    found = records(
        {"rule": "FREQ=DAILY;BYHOUR=9", "calendar": NYSE, "businessDaysOnly": True},
        "2027-11-24T00:00:00",
        "2027-11-30T00:00:00",
    )
    # Thanksgiving (Thu 25) and the weekend are not nominal times at all.
    assert [r.nominal_local.date().isoformat() for r in found] == [
        "2027-11-24",
        "2027-11-26",
        "2027-11-29",
    ]


def test_a_window_far_from_start_gives_the_same_month_end_as_one_from_start() -> None:
    fields = {"rule": LAST_WEEKDAY, "calendar": NYSE, "businessDaysOnly": True}
    near = records(fields, "2027-05-20T00:00:00", "2027-06-01T00:00:00")
    whole = records(fields, "2027-01-01T00:00:00", "2027-06-01T00:00:00")
    assert [row(r) for r in near] == [row(r) for r in whole if r.nominal_local.month == 5]
