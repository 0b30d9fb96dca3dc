"""Issue 2: every bad input is an error that names the field and the value.

Each case is one bad field on top of the seed's (valid) example; the expected field and value are
what the spec file says, so a user can find the line.
"""

from typing import Any

import pytest
from specdata import SEED_SPEC

from timecontract import InvalidSpec, load_spec

RULE_CASES = [
    "FREQ=DAILY;COUNT=3;UNTIL=20270101T000000Z",  # RFC 5545: COUNT and UNTIL MUST NOT both occur
    "FREQ=DAILY;INTERVAL=0",
    "FREQ=DAILY;INTERVAL=-1",
    "FREQ=DAILY;BYHOUR=24",
    "FREQ=DAILY;BYHOUR=-1",
    "FREQ=DAILY;BYMINUTE=60",
    "FREQ=DAILY;BYSECOND=61",
    "FREQ=MONTHLY;BYMONTHDAY=0",
    "FREQ=MONTHLY;BYMONTHDAY=32",
    "FREQ=MONTHLY;BYMONTHDAY=-32",
    "FREQ=YEARLY;BYMONTH=13",
    "FREQ=YEARLY;BYMONTH=0",
    "FREQ=YEARLY;BYYEARDAY=0",
    "FREQ=YEARLY;BYYEARDAY=367",
    "FREQ=YEARLY;BYWEEKNO=0",
    "FREQ=YEARLY;BYWEEKNO=54",
    "FREQ=MONTHLY;BYDAY=MO;BYSETPOS=0",
    "FREQ=MONTHLY;BYDAY=MO;BYSETPOS=367",
    "FREQ=MONTHLY;BYDAY=0MO",
    "FREQ=MONTHLY;BYDAY=6MO",
    "FREQ=WEEKLY;BYDAY=1MO",  # numeric BYDAY only with MONTHLY/YEARLY
    "FREQ=WEEKLY;BYDAY=XX",
    "FREQ=WEEKLY;WKST=XX",
    "FREQ=WEEKLY;BYMONTHDAY=1",  # RFC 5545: BYMONTHDAY not with WEEKLY
    "FREQ=DAILY;BYWEEKNO=1",  # RFC 5545: BYWEEKNO only with YEARLY
    "FREQ=MONTHLY;BYYEARDAY=1",  # RFC 5545: BYYEARDAY not with MONTHLY
    "FREQ=DAILY;BYSETPOS=1",  # BYSETPOS needs another BYxxx
    "FREQ=DAILY;X-NAME=1",  # unknown part
    "FREQ=DAILY;BYEASTER=0",  # dateutil extension, not RFC 5545
    "FREQ=DAILY;BYHOUR=2;BYHOUR=3",  # repeated part
    "FREQ=FORTNIGHTLY",
    "BYHOUR=2",  # FREQ missing
    "FREQ=DAILY;;BYHOUR=2",
    "",
    "DTSTART=20260101T000000;FREQ=DAILY",
    "FREQ=DAILY;DTSTART=20260101T000000Z",
    "FREQ=DAILY;TZID=America/New_York",
    "FREQ=DAILY;UNTIL=20270101T000000",  # not UTC: RFC 5545 requires Z with a zoned start
    "FREQ=DAILY;UNTIL=20270101",  # a date, not a UTC date-time
    "FREQ=DAILY;UNTIL=20271301T000000Z",  # month 13
    "FREQ=DAILY;COUNT=0",
    "FREQ=DAILY;COUNT=-5",
    "FREQ=DAILY;COUNT=10000000",  # absurd
    "FREQ=DAILY;COUNT=abc",
]

FIELD_CASES: list[tuple[str, Any]] = [
    ("cutoverAt", "2026-11-01T06:00:00"),  # no UTC offset
    ("cutoverAt", "2026-11-01"),
    ("cutoverAt", "tomorrow"),
    ("tzdbVersion", "latest"),
    ("tzdbVersion", "2026"),
    ("scheduleId", "Daily-Ops"),
    ("scheduleId", "-daily"),
    ("scheduleId", "daily-"),
    ("scheduleId", "daily ops"),
    ("scheduleId", "daily_ops"),
    ("scheduleId", "daily.ops"),
    ("scheduleId", "daily@ops"),
    ("scheduleId", "café"),
    ("scheduleId", ""),
    ("scheduleId", "a" * 64),
    ("revision", 0),
    ("revision", -1),
    ("revision", True),
    ("revision", 1.5),
    ("revision", 2**31),
    ("lateness", "-PT5M"),
    ("lateness", "P400D"),
    ("lateness", "five minutes"),
    ("maxCatchUp", -1),
    ("maxCatchUp", 1001),
    ("start", "2026-11-01"),  # date-only
    ("start", "2026-11-01T02:30:00-04:00"),  # an offset: start is local
    ("start", "2026-11-01T02:30:00.5"),  # fractional seconds
    ("end", "2026-11-01"),
    ("gapPolicy", "SHIFT_BACKWARD"),
    ("foldPolicy", "LAST"),
    ("misfirePolicy", "RUN_ALL"),
    ("schema", "scheduleSpec.v2"),
]


def problems_of(data: dict[str, Any]) -> list[tuple[str, Any]]:
    with pytest.raises(InvalidSpec) as caught:
        load_spec(data)
    return [(problem.field, problem.value) for problem in caught.value.problems]


@pytest.mark.parametrize("rule", RULE_CASES)
def test_malformed_rrule_is_one_problem_naming_rule_and_its_text(rule: str) -> None:
    assert problems_of({**SEED_SPEC, "rule": rule}) == [("rule", rule)]


@pytest.mark.parametrize(("field", "value"), FIELD_CASES)
def test_bad_field_is_one_problem_naming_that_field_and_value(field: str, value: Any) -> None:
    assert problems_of({**SEED_SPEC, field: value}) == [(field, value)]


def test_unknown_key_is_named_with_its_value() -> None:
    assert problems_of({**SEED_SPEC, "colour": "blue"}) == [("colour", "blue")]


def test_camel_case_typo_is_an_unknown_key_not_silently_ignored() -> None:
    data = {k: v for k, v in SEED_SPEC.items() if k != "gapPolicy"}
    problems = problems_of({**data, "gap_policy": "SKIP"})
    assert ("gap_policy", "SKIP") in problems


@pytest.mark.parametrize(
    ("typo", "meant"),
    [
        ("timezone", "timeZone"),
        ("time_zone", "timeZone"),
        ("timeZon", "timeZone"),
        ("gap_policy", "gapPolicy"),
        ("cutover", "cutoverAt"),
        ("action.paramters", "parameters"),
    ],
)
def test_a_misspelled_key_is_told_the_key_it_resembles(typo: str, meant: str) -> None:
    data = {k: v for k, v in SEED_SPEC.items() if k != meant}
    if typo.startswith("action."):
        data["action"] = {"name": "http", typo.split(".")[1]: {}}
    else:
        data[typo] = SEED_SPEC.get(meant, "x")
    with pytest.raises(InvalidSpec) as caught:
        load_spec(data)
    (message,) = [str(p) for p in caught.value.problems if p.field == typo]
    assert message.endswith(f"did you mean `{meant}`?"), message


def test_an_unknown_key_like_no_key_gets_no_suggestion() -> None:
    with pytest.raises(InvalidSpec) as caught:
        load_spec({**SEED_SPEC, "colour": "blue"})
    assert "did you mean" not in str(caught.value)


@pytest.mark.parametrize("field", ["schema", "scheduleId", "revision", "timeZone", "rule"])
def test_missing_required_field_is_named(field: str) -> None:
    data = {k: v for k, v in SEED_SPEC.items() if k != field}
    assert problems_of(data) == [(field, None)]


def test_missing_cutover_is_named() -> None:
    data = {k: v for k, v in SEED_SPEC.items() if k != "cutoverAt"}
    assert problems_of(data) == [("cutoverAt", None)]


@pytest.mark.parametrize("zone", ["Mars/Olympus_Mons", "America/New_york", "EST5EDT_", ""])
def test_unknown_zone_names_time_zone_and_value(zone: str) -> None:
    assert problems_of({**SEED_SPEC, "timeZone": zone}) == [("timeZone", zone)]


@pytest.mark.parametrize("release", ["1999z", "2022b", "2099a"])
def test_unavailable_tzdb_release_names_tzdb_version_and_value(release: str) -> None:
    assert problems_of({**SEED_SPEC, "tzdbVersion": release}) == [("tzdbVersion", release)]


def test_end_before_start_names_end_and_its_value() -> None:
    data = {**SEED_SPEC, "start": "2026-02-01T00:00:00", "end": "2026-01-01T00:00:00"}
    problems = problems_of(data)
    assert len(problems) == 1
    field, value = problems[0]
    assert field == "end"
    assert "2026-01-01" in str(value)


def test_spec_that_is_not_a_mapping_is_invalid() -> None:
    with pytest.raises(InvalidSpec):
        load_spec(["not", "a", "mapping"])  # type: ignore[arg-type]


@pytest.mark.parametrize(
    ("field", "value", "words"),
    [
        ("scheduleId", "Bad_ID", "must be 1–63 characters of a-z, 0-9 and '-'"),
        ("scheduleId", "-lead", "not starting or ending with '-'"),
        ("tzdbVersion", "26a", "must be an IANA tz database release"),
    ],
)
def test_a_patterned_field_says_what_it_must_be_not_its_regex(
    field: str, value: str, words: str
) -> None:
    # A trial: "scheduleId='Bad_ID': String should match pattern '^[a-z0-9](?:…)$'".
    with pytest.raises(InvalidSpec) as caught:
        load_spec({**SEED_SPEC, field: value})
    message = str(caught.value)
    assert f"{field}={value!r}" in message and words in message
    assert "should match pattern" not in message


@pytest.mark.parametrize(
    ("field", "value", "hint"),
    [
        ("lateness", "5m", "; did you mean PT5M?"),
        ("lateness", "five minutes", ""),
        ("interval", "2h", "; did you mean PT2H?"),
        ("deadline", "30 S", "; did you mean PT30S?"),
        ("catchUpSpacing", "10s", "; did you mean PT10S?"),
        ("jitter", ["PT5S"], ""),
    ],
)
def test_a_duration_that_is_no_iso_8601_says_the_form_it_takes(
    field: str, value: Any, hint: str
) -> None:
    # A trial: "lateness='5m': Input should be a valid timedelta, "day" identifier in duration
    # not correctly formatted". ISO 8601 §4.4.3.2: PnDTnHnMnS, so 5 minutes is PT5M.
    data = {**SEED_SPEC, field: value} | ({"rule": None} if field == "interval" else {})
    with pytest.raises(InvalidSpec) as caught:
        load_spec({k: v for k, v in data.items() if v is not None})
    [problem] = caught.value.problems
    assert (problem.field, problem.value) == (field, value)
    assert problem.problem == f"must be an ISO 8601 duration, e.g. PT30S, PT5M, PT2H or P1D{hint}"
