"""A spec problem speaks the spec's language, not Python's or pydantic's.

A value is shown as YAML and JSON spell it (``null``, ``true``, ``false``; YAML 1.2 §10.2.1.1–2,
RFC 8259 §3), a field the spec does not give has no value to show (``rule: is required``), a
type problem says what the field must be in words, a choice in other case is told its spelling,
a file that is not UTF-8 (the encoding YAML and JSON files are read in) or holds nothing says so,
and an unknown key is told a known one only when that is a near miss.
"""

from __future__ import annotations

import codecs
import json
from pathlib import Path
from typing import Any

import pytest
from specdata import SEED_SPEC

from almanac.apply_checks import check_applicable
from almanac.client_errors import ApplyRefused
from timecontract import InvalidSpec, SpecError, load_spec
from timecontract.errors import shown_value
from timecontract.spec import parse_spec, read_spec_file


def problems(data: dict[str, Any]) -> list[str]:
    with pytest.raises(InvalidSpec) as caught:
        load_spec(data)
    return [str(problem) for problem in caught.value.problems]


def without(field: str, **fields: Any) -> dict[str, Any]:
    return {k: v for k, v in SEED_SPEC.items() if k != field} | fields


@pytest.mark.parametrize(
    ("value", "shown"),
    [(None, "null"), (True, "true"), (False, "false"), ([None, True, "SA"], "[null, true, SA]")],
)
def test_a_value_is_shown_as_the_spec_spells_it(value: Any, shown: str) -> None:
    assert str(SpecError("field", value, "problem")) == f"field={shown}: problem"


def test_a_missing_field_shows_no_value() -> None:
    assert problems(without("cutoverAt")) == ["cutoverAt: is required"]
    assert problems(without("rule")) == ["rule: is required (or give interval or rdates instead)"]
    calendar = {"calendar": {"name": "NYSE"}}
    assert problems(SEED_SPEC | calendar) == ["calendar.release: is required"]


def test_an_explicit_null_is_shown_as_null() -> None:
    assert problems(without("rule", rule=None)) == [
        "rule=null: is required (or give interval or rdates instead)"
    ]
    calendar = {"name": "NYSE", "release": "holidays-0.108", "weekend": None}
    assert problems(SEED_SPEC | {"calendar": calendar}) == ["calendar.weekend=null: must be a list"]


@pytest.mark.parametrize(
    ("field", "value", "message"),
    [
        (
            "calendar",
            "NYSE",
            "calendar='NYSE': must be a mapping of fields, "
            "e.g. calendar: {name: NYSE, release: holidays-0.108}",
        ),
        ("action", "http", "action='http': must be a mapping of fields"),
        (
            "tzdbVersion",
            2026,
            "tzdbVersion=2026: must be a string such as '2026a' (quote it in YAML)",
        ),
        ("rule", 5, "rule=5: must be a string"),
        ("revision", 0, "revision=0: must be at least 1"),
        ("maxCatchUp", True, "maxCatchUp=true: must be a whole number"),
        (
            "gapPolicy",
            "skip",
            "gapPolicy='skip': must be one of SKIP, SHIFT_FORWARD, NEXT_VALID; did you mean SKIP?",
        ),
        (
            "foldPolicy",
            "second-only",
            "foldPolicy='second-only': must be one of FIRST_ONLY, SECOND_ONLY, BOTH; "
            "did you mean SECOND_ONLY?",
        ),
        ("foldPolicy", "LAST", "foldPolicy='LAST': must be one of FIRST_ONLY, SECOND_ONLY, BOTH"),
        ("schema", "scheduleSpec.v2", "schema='scheduleSpec.v2': must be scheduleSpec.v1"),
    ],
)
def test_a_type_problem_says_what_the_field_must_be(field: str, value: Any, message: str) -> None:
    assert problems(SEED_SPEC | {field: value}) == [message]


def test_each_list_entry_of_the_wrong_type_is_named() -> None:
    # A weekend entry says what it must be: a day code, not a number (ISO and cron number the
    # days differently, so none is guessed).
    calendar = {"name": "NYSE", "release": "holidays-0.108", "weekend": [6, 7]}
    assert problems(SEED_SPEC | {"calendar": calendar}) == [
        "calendar.weekend.0=6: must be a weekday code: MO, TU, WE, TH, FR, SA or SU",
        "calendar.weekend.1=7: must be a weekday code: MO, TU, WE, TH, FR, SA or SU",
    ]


def test_applying_a_spec_without_an_action_names_the_field_without_a_value() -> None:
    for data, field in [(SEED_SPEC, "action"), (SEED_SPEC | {"action": None}, "action=null")]:
        with pytest.raises(ApplyRefused) as caught:
            check_applicable(parse_spec(data))
        assert str(caught.value).startswith(f"{field}: daily-ops-summary r7 has no action; ")


@pytest.mark.parametrize(
    ("raw", "why"),
    [
        (codecs.BOM_UTF16_LE + "schema: x\n".encode("utf-16-le"), "UTF-16 byte-order mark found"),
        (codecs.BOM_UTF16_BE + "schema: x\n".encode("utf-16-be"), "UTF-16 byte-order mark found"),
        (codecs.BOM_UTF32_LE + "schema: x\n".encode("utf-32-le"), "UTF-32 byte-order mark found"),
        ("schema: café\n".encode("latin-1"), "byte 0xe9 at offset 11"),
    ],
)
def test_a_file_that_is_not_utf_8_says_so(tmp_path: Path, raw: bytes, why: str) -> None:
    path = tmp_path / "spec.yaml"
    path.write_bytes(raw)
    with pytest.raises(InvalidSpec) as caught:
        read_spec_file(path)
    assert [str(p) for p in caught.value.problems] == [
        f"file={str(path)!r}: not UTF-8 ({why}); save it as UTF-8"
    ]


@pytest.mark.parametrize(
    ("name", "text"), [("a.yaml", ""), ("b.yaml", "# a comment\n\n"), ("c.json", " \n")]
)
def test_an_empty_file_says_it_is_empty(tmp_path: Path, name: str, text: str) -> None:
    path = tmp_path / name
    path.write_text(text, encoding="utf-8")
    with pytest.raises(InvalidSpec) as caught:
        read_spec_file(path)
    [problem] = caught.value.problems
    assert (problem.field, problem.value) == ("file", str(path))
    assert problem.problem.startswith("is empty: a spec is a mapping of fields")


@pytest.mark.parametrize("key", ["base", "rate", "sand", "colour"])
def test_a_short_unknown_key_two_edits_from_a_known_one_gets_no_suggestion(key: str) -> None:
    # base→phase, rate→rule, sand→end: two edits (Levenshtein) in four or five letters.
    assert problems(SEED_SPEC | {key: "x"}) == [
        f"{key}='x': unknown field (scheduleSpec.v1 has no such key)"
    ]


@pytest.mark.parametrize(
    ("typo", "meant"),
    [("latenes", "lateness"), ("latness", "lateness"), ("ends", "end"), ("calender", "calendar")],
)
def test_a_near_miss_is_told_the_key(typo: str, meant: str) -> None:
    # One edit each (a letter dropped, added or replaced).
    [message] = [m for m in problems(SEED_SPEC | {typo: "x"}) if m.startswith(f"{typo}=")]
    assert message.endswith(f"; did you mean `{meant}`?")


@pytest.mark.parametrize(
    ("value", "shown"), [(float("inf"), ".inf"), (float("-inf"), "-.inf"), (float("nan"), ".nan")]
)
def test_a_number_json_cannot_hold_is_shown_in_yamls_spelling(value: float, shown: str) -> None:
    # RFC 8259 §6: "Numeric values that cannot be represented … (such as Infinity and NaN) are
    # not permitted"; YAML 1.2 §10.2.1.4 spells them .inf, -.inf, .nan.
    error = SpecError("maxCatchUp", value, "must be a whole number")
    assert str(error) == f"maxCatchUp={shown}: must be a whole number"
    assert json.loads(json.dumps(shown_value(value), allow_nan=False)) == shown
    assert shown_value([value]) == f"[{shown}]"


def test_an_unknown_key_in_the_calendar_is_told_its_holder_and_a_near_miss() -> None:
    calendar = {"name": "NYSE", "relase": "holidays-0.108"}
    assert problems(SEED_SPEC | {"calendar": calendar}) == [
        "calendar.release: is required",
        "calendar.relase='holidays-0.108': unknown field (calendar has no such key); "
        "did you mean `release`?",
    ]


def test_a_date_time_of_the_wrong_type_says_what_it_must_be() -> None:
    assert problems(SEED_SPEC | {"rdates": ["2027-01-04T08:00:00", None]}) == [
        "rdates.1=null: must be an ISO 8601 date-time such as 2027-01-04T08:00:00"
    ]
