"""Bad calendar input is one clear line naming the field and the value (DESIGN §12)."""

from pathlib import Path

import pytest
from calsupport import BASE, LIBRARY, records, write_calendar_file

from timecontract import InvalidSpec, SpecError, load_spec
from timecontract.calendars import MAX_CALENDAR_FILE_BYTES, parse_calendar_file


def _problem(**fields: object) -> str:
    with pytest.raises(InvalidSpec) as caught:
        load_spec(BASE | {"rule": "FREQ=DAILY"} | fields)
    [problem] = caught.value.problems
    return str(problem)


def test_holiday_policy_without_a_calendar() -> None:
    assert _problem(holidayPolicy="FOLLOWING") == (
        "holidayPolicy='FOLLOWING': needs a calendar (give calendar: {name, release})"
    )


def test_business_days_only_without_a_calendar() -> None:
    assert _problem(businessDaysOnly=True).startswith("businessDaysOnly=true: needs a calendar")


def test_rdate_outside_the_revision_bounds() -> None:
    assert _problem(start="2027-01-01T00:00:00", rdates=["2026-12-31T09:00:00"]) == (
        "rdates='2026-12-31T09:00:00': lies outside the revision's 2027-01-01T00:00:00..…"
    )


def test_malformed_calendar_release() -> None:
    text = _problem(calendar={"name": "NYSE", "release": "latest"})
    assert text.startswith("calendar.release='latest': must be a calendar release")


@pytest.mark.parametrize(
    ("weekend", "shown", "words"),
    [
        (["SA", "FUNDAY"], "[SA, FUNDAY]", "must list distinct weekday codes (MO, TU, WE"),
        (["SA", "SA"], "[SA, SA]", "must list distinct weekday codes"),
        (["MO", "TU", "WE", "TH", "FR", "SA", "SU"], "[MO, TU, WE, TH, FR, SA, SU]", "at most six"),
        ("SA", "'SA'", "must be a list"),
        # RFC 5545's codes are upper case.
        (["sa"], "[sa]", "at most six; did you mean [SA]?"),
        (["Sa", "su"], "[Sa, su]", "at most six; did you mean [SA, SU]?"),
    ],
)
def test_a_bad_weekend_names_calendar_weekend_and_its_value(
    weekend: object, shown: str, words: str
) -> None:
    # A trial: the problem named `calendar` and showed the whole calendar mapping.
    with pytest.raises(InvalidSpec) as caught:
        load_spec(
            BASE
            | {
                "rule": "FREQ=DAILY",
                "calendar": {"name": "NYSE", "release": LIBRARY, "weekend": weekend},
            }
        )
    [problem] = caught.value.problems
    assert (problem.field, problem.value) == ("calendar.weekend", weekend)
    assert str(problem).startswith(f"calendar.weekend={shown}: ") and words in problem.problem
    assert "Input should be" not in problem.problem


def test_malformed_exdate() -> None:
    assert "not a date (2026-12-24)" in _problem(exdates=["24/12/2026"])


def test_unknown_market_or_country() -> None:
    with pytest.raises(SpecError) as caught:
        records(
            {"rule": "FREQ=DAILY", "calendar": {"name": "XNOPE", "release": LIBRARY}},
            "2027-01-01T00:00:00",
            "2027-01-02T00:00:00",
        )
    assert str(caught.value).startswith("calendar.name='XNOPE': no such market or country")


def test_release_not_in_the_store(tmp_path: Path) -> None:
    with pytest.raises(SpecError) as caught:
        records(
            {"rule": "FREQ=DAILY", "calendar": {"name": "NYSE", "release": "holidays-0.50"}},
            "2027-01-01T00:00:00",
            "2027-01-02T00:00:00",
            tmp_path,
        )
    assert str(caught.value) == (
        "calendar.release='holidays-0.50': calendar NYSE release not in the store (available: "
        f"{LIBRARY}); add it with `almanac calendar add NYSE` on a machine with that library "
        "release"
    )


def test_a_date_outside_the_calendar_files_years(tmp_path: Path) -> None:
    release = write_calendar_file(tmp_path, "name: acme\nholidays: [{date: 2027-01-04, name: X}]")
    with pytest.raises(SpecError) as caught:
        records(
            {"rule": "FREQ=DAILY", "calendar": {"name": "acme", "release": release}},
            "2028-03-01T00:00:00",
            "2028-03-02T00:00:00",
            tmp_path,
        )
    assert "calendar acme covers 2027–2027, not 2028-0" in str(caught.value)


@pytest.mark.parametrize(
    ("text", "problem"),
    [
        ("holidays: [", "not valid YAML or JSON"),
        ("name: acme", "must be a mapping with exactly the keys name and holidays"),
        ("name: acme\nholidays: [{date: 2027-02-30, name: X}]", "holidays[0] must be {date:"),
        ("name: acme\nholidays: []", "holidays lists no date"),
        ("name: ../x\nholidays: [{date: 2027-01-04, name: X}]", "name '../x' must be"),
        ("name: acme\nholidays: []\n#" + "x" * MAX_CALENDAR_FILE_BYTES, "larger than 262144"),
    ],
)
def test_malformed_or_oversized_calendar_file(text: str, problem: str) -> None:
    with pytest.raises(SpecError) as caught:
        parse_calendar_file(text.encode(), "acme.yaml")
    message = str(caught.value)
    assert message.startswith("calendar file='acme.yaml': ") and "\n" not in message
    assert problem in message


def test_load_spec_reports_an_unavailable_calendar_release_as_a_problem(tmp_path: Path) -> None:
    with pytest.raises(InvalidSpec) as caught:
        load_spec(
            BASE | {"rule": "FREQ=DAILY", "calendar": {"name": "NYSE", "release": "holidays-0.50"}},
            tmp_path,
        )
    [problem] = caught.value.problems
    assert str(problem).startswith("calendar.release='holidays-0.50': calendar NYSE release not")


def test_load_spec_reports_an_unknown_calendar_name_as_a_problem() -> None:
    with pytest.raises(InvalidSpec) as caught:
        load_spec(BASE | {"rule": "FREQ=DAILY", "calendar": {"name": "XNOPE", "release": LIBRARY}})
    [problem] = caught.value.problems
    assert str(problem).startswith("calendar.name='XNOPE': no such market or country")
