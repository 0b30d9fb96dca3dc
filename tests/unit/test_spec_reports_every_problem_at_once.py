"""Issue 2: `almanac validate` prints every problem — one pass reports all of them."""

import pytest
from specdata import SEED_SPEC

from timecontract import InvalidSpec, load_spec


def fields_reported(data: dict[str, object]) -> set[str]:
    with pytest.raises(InvalidSpec) as caught:
        load_spec(data)
    return {problem.field for problem in caught.value.problems}


def test_five_bad_fields_are_five_problems() -> None:
    data = {
        **SEED_SPEC,
        "scheduleId": "Bad Id",
        "revision": 0,
        "rule": "FREQ=DAILY;INTERVAL=0",
        "cutoverAt": "2026-11-01T06:00:00",
        "colour": "blue",
    }
    assert fields_reported(data) == {"scheduleId", "revision", "rule", "cutoverAt", "colour"}


def test_unknown_zone_is_reported_together_with_other_problems() -> None:
    data = {**SEED_SPEC, "timeZone": "Mars/Olympus_Mons", "rule": "FREQ=DAILY;INTERVAL=0"}
    assert fields_reported(data) == {"timeZone", "rule"}


def test_unavailable_release_is_reported_together_with_other_problems() -> None:
    data = {**SEED_SPEC, "tzdbVersion": "1999z", "revision": -1}
    assert fields_reported(data) == {"tzdbVersion", "revision"}


def test_invalid_spec_message_lists_every_problem() -> None:
    data = {**SEED_SPEC, "revision": 0, "maxCatchUp": -1}
    with pytest.raises(InvalidSpec) as caught:
        load_spec(data)
    message = str(caught.value)
    assert "revision=0" in message
    assert "maxCatchUp=-1" in message
