"""NYSE business days 2020–2030 from Almanac's pinned calendar equal exchange-calendars' XNYS
sessions (an independent implementation, with its own holiday rules and ad hoc closures such as
the national days of mourning of 2025-01-09)."""

from datetime import date

import exchange_calendars
from calsupport import LIBRARY, records


def test_business_days_only_daily_rule_yields_exactly_the_xnys_sessions_2020_to_2030() -> None:
    calendar = exchange_calendars.get_calendar("XNYS", start="2020-01-01", end="2030-12-31")
    sessions = {session.date() for session in calendar.sessions}
    found = records(
        {
            "rule": "FREQ=DAILY;BYHOUR=12",
            "calendar": {"name": "NYSE", "release": LIBRARY},
            "businessDaysOnly": True,
        },
        "2020-01-01T00:00:00",
        "2031-01-01T00:00:00",
    )
    days = {r.nominal_local.date() for r in found}
    assert len(sessions) == 2763
    assert days == sessions
    assert date(2025, 1, 9) not in days  # President Carter's national day of mourning


def test_last_nyse_session_of_each_month_2020_to_2030_is_the_month_end_rule() -> None:
    calendar = exchange_calendars.get_calendar("XNYS", start="2020-01-01", end="2030-12-31")
    last: dict[tuple[int, int], date] = {}
    for session in calendar.sessions:
        day = session.date()
        last[(day.year, day.month)] = max(day, last.get((day.year, day.month), day))
    found = records(
        {
            "rule": "FREQ=MONTHLY;BYDAY=MO,TU,WE,TH,FR;BYSETPOS=-1;BYHOUR=16;BYMINUTE=30",
            "calendar": {"name": "NYSE", "release": LIBRARY},
            "businessDaysOnly": True,
        },
        "2020-01-01T00:00:00",
        "2031-01-01T00:00:00",
    )
    assert [r.nominal_local.date() for r in found] == sorted(last.values())
