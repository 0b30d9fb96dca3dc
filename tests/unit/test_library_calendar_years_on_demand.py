"""A library calendar computes each year on first use, and answers as the library does for all.

The golden is the ``holidays`` library's own public answer over every covered year at once
(``financial_holidays`` / ``country_holidays`` with ``years=1970..2200``); ours is asked day by day
in a shuffled order, so a year computed alone, before or after its neighbours, must agree.
"""

from __future__ import annotations

import random
from datetime import date, timedelta

import holidays
import pytest
from specdata import SEED_SPEC

from timecontract import load_spec, spec_warnings
from timecontract.calendars import (
    CALENDAR_FIRST_YEAR,
    CALENDAR_LAST_YEAR,
    LibraryHolidays,
    _dates,
    installed_release,
)

YEARS = range(CALENDAR_FIRST_YEAR, CALENDAR_LAST_YEAR + 1)


def library_answer(name: str) -> dict[date, str]:
    """Every holiday of ``name`` over :data:`YEARS`, from the library's public functions."""
    if name in holidays.list_supported_financial():
        return dict(holidays.financial_holidays(name, years=YEARS))
    country, _, subdivision = name.partition("-")
    return dict(holidays.country_holidays(country, subdiv=subdivision or None, years=YEARS))


# Markets; countries whose observed days cross New Year (US, GB); lunar and Islamic calendars
# (CN, IL, SA, IN); a subdivision (DE-BY); substitute days (JP).
NAMES = ["NYSE", "XECB", "US", "US-NY", "GB", "DE-BY", "JP", "CN", "IL", "SA", "IN"]


@pytest.mark.parametrize("name", NAMES)
def test_days_asked_in_any_order_answer_as_the_library_for_every_year(name: str) -> None:
    theirs = library_answer(name)
    ours = LibraryHolidays(name)
    starts = [date(year, 1, 1) for year in (1970, 1999, 2026, 2027, 2200)]
    days = [start + timedelta(days=k) for start in starts for k in range(366)]
    days += [day for day in theirs if day.year % 7 == 0]  # every holiday of some other years
    random.Random(name).shuffle(days)
    assert {day: ours.get(day) for day in days} == {day: theirs.get(day) for day in days}
    assert dict(ours) == theirs  # then every year, after some were computed alone
    assert len(ours) == len(theirs)


def test_a_day_outside_the_covered_years_is_no_holiday_lookup() -> None:
    ours = LibraryHolidays("US")
    assert ours.get(date(CALENDAR_FIRST_YEAR - 1, 12, 25)) is None
    assert ours.get(date(CALENDAR_LAST_YEAR + 1, 1, 1)) is None
    assert ours.get(date(2026, 12, 25)) == "Christmas Day"


def test_checking_a_calendar_spec_computes_a_few_years_not_all() -> None:
    # What `almanac validate` does with a spec pinning a library calendar: load it, warn.
    name = "XLON"
    _dates.cache_clear()
    data = {**SEED_SPEC, "calendar": {"name": name, "release": installed_release()}}
    spec_warnings(load_spec(data))
    library, _, _ = _dates(name, installed_release(), None)
    assert isinstance(library, LibraryHolidays)
    assert 0 < len(library._years) <= 5
