"""Issue 10: an invalid spec still names its schedule, from the fields that are themselves valid.

``InvalidSpec.schedule_id``/``revision`` are the data's ``scheduleId``/``revision`` when each obeys
its own rule (a 1–63 character slug of ``a-z``, ``0-9`` and ``-``, not starting or ending with
``-``; an int — not a bool or a string — from 1 to ``MAX_REVISION``), else ``None``, whatever else
is wrong with the spec.
"""

from __future__ import annotations

from typing import Any

import pytest
from specdata import SEED_SPEC

from timecontract import InvalidSpec, load_spec
from timecontract.spec import MAX_REVISION
from timecontract.spec_file import MAX_SPEC_VALUES

SEED_ID, SEED_REVISION = "daily-ops-summary", 7


def identity(data: Any) -> tuple[str | None, int | None]:
    with pytest.raises(InvalidSpec) as raised:
        load_spec(data)
    return raised.value.schedule_id, raised.value.revision


@pytest.mark.parametrize(
    "other_problem",
    [
        {"gapPolicy": "SOMETIMES"},  # the model refuses it
        {"rule": "FREQ=DAILY", "interval": "PT1H"},  # refused from the raw data
        {"timeZone": "Mars/Olympus_Mons"},  # the zone check, after the model
        {"action": {"name": "http", "parameters": {"password": "hunter2"}}},  # a literal secret
    ],
)
def test_valid_id_and_revision_are_kept_when_another_field_is_wrong(
    other_problem: dict[str, Any],
) -> None:
    assert identity({**SEED_SPEC, **other_problem}) == (SEED_ID, SEED_REVISION)


@pytest.mark.parametrize("schedule_id", ["Daily", "-daily", "daily-", "a" * 64, "", 7, None])
def test_an_invalid_schedule_id_is_none_and_the_revision_still_named(schedule_id: Any) -> None:
    assert identity({**SEED_SPEC, "scheduleId": schedule_id}) == (None, SEED_REVISION)


@pytest.mark.parametrize("revision", [0, -1, MAX_REVISION + 1, True, "7", 7.0, None])
def test_an_invalid_revision_is_none_and_the_schedule_still_named(revision: Any) -> None:
    assert identity({**SEED_SPEC, "revision": revision}) == (SEED_ID, None)


def test_the_bounds_of_a_valid_id_and_revision_are_kept() -> None:
    data = {**SEED_SPEC, "scheduleId": "a" * 63, "revision": MAX_REVISION, "gapPolicy": "NO"}
    assert identity(data) == ("a" * 63, MAX_REVISION)
    data = {**SEED_SPEC, "scheduleId": "a", "revision": 1, "gapPolicy": "NO"}
    assert identity(data) == ("a", 1)


def test_missing_fields_and_data_that_is_not_a_mapping_name_nothing() -> None:
    missing = {k: v for k, v in SEED_SPEC.items() if k not in ("scheduleId", "revision")}
    assert identity(missing) == (None, None)
    assert identity([SEED_SPEC]) == (None, None)


def test_data_too_large_to_check_names_nothing() -> None:
    data = {**SEED_SPEC, "action": {"name": "noop", "parameters": {"x": [0] * MAX_SPEC_VALUES}}}
    assert identity(data) == (None, None)
