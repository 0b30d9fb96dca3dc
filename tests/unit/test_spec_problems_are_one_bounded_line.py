"""A spec problem is one readable line naming the field and the value, however large the value.

The rule (STYLE "Errors"): a problem names the field and the value. A value may be a list of a
thousand entries or a name twenty thousand characters long; a problem shows at most
``MAX_SHOWN`` characters of each (cut, ending in ``…``), a list in flow style with its length,
never a Python ``repr`` (``datetime.datetime(2027, 1, 1, 9, 0)``) or pydantic's own words.
"""

from __future__ import annotations

from datetime import date, timedelta

import pytest
from specdata import SEED_SPEC

from timecontract import InvalidSpec, SpecError, load_spec
from timecontract.calendar_spec import MAX_DATES
from timecontract.errors import MAX_SHOWN

LINE = 2 * MAX_SHOWN + 100
"""Longer than any problem line may be: the field and the value, each bounded, and the words."""


def _problems(**fields: object) -> list[SpecError]:
    with pytest.raises(InvalidSpec) as caught:
        load_spec(SEED_SPEC | fields)
    return caught.value.problems


def test_too_many_rdates_names_the_field_the_count_and_the_bound_in_one_short_line() -> None:
    days = [date(2027, 1, 1) + timedelta(days=n) for n in range(MAX_DATES + 1)]
    [problem] = _problems(rdates=[f"{day.isoformat()}T09:00:00" for day in days])
    assert problem.field == "rdates"
    assert problem.problem == f"has {MAX_DATES + 1} entries; at most {MAX_DATES} are allowed"
    assert str(problem).startswith("rdates=[2027-01-01T09:00:00, 2027-01-02T09:00:00, ")
    assert f"… ({MAX_DATES + 1} entries): " in str(problem)
    assert "datetime" not in str(problem) and len(str(problem)) < LINE


def test_a_long_text_value_is_cut_with_an_ellipsis() -> None:
    [problem] = _problems(timeZone="Europe/" + "x" * 5000)
    assert problem.field == "timeZone"
    assert str(problem).startswith("timeZone='Europe/xxx")
    assert f"{'x' * (MAX_SHOWN - len('Europe/') - 1)}…': " in str(problem)
    assert len(str(problem)) < LINE


def test_a_long_field_name_is_cut_with_an_ellipsis() -> None:
    problem = SpecError("a." * 10_000 + "b", 1, "is wrong")
    assert problem.field == "a." * (MAX_SHOWN // 2 - 1) + "a…"
    assert str(problem) == f"{problem.field}=1: is wrong"


def test_a_short_value_is_shown_whole() -> None:
    assert str(SpecError("calendar.weekend", ["SA", "FUNDAY"], "x")) == (
        "calendar.weekend=[SA, FUNDAY]: x"
    )
    assert str(SpecError("lateness", timedelta(minutes=5), "x")) == "lateness='PT5M': x"
