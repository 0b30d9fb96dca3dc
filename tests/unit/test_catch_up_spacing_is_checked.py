"""``catchUpSpacing``: whole seconds from PT1S to P1D; anything else is one problem naming it.

The bounds are the spec reference's (docs/reference/spec.md); the field is additive, so a spec
without it keeps the digest it had before the field existed.
"""

from __future__ import annotations

from datetime import timedelta

import pytest
from specdata import SEED_SPEC

from timecontract import InvalidSpec, parse_spec


@pytest.mark.parametrize(
    ("value", "problem"),
    [
        ("PT0S", "between PT1S and P1D"),
        ("-PT10S", "between PT1S and P1D"),
        ("P2D", "between PT1S and P1D"),
        ("PT0.5S", "whole seconds"),
        ("P1M", "no fixed length"),
    ],
)
def test_bad_spacing_is_one_problem_naming_field_and_value(value: str, problem: str) -> None:
    with pytest.raises(InvalidSpec) as caught:
        parse_spec({**SEED_SPEC, "catchUpSpacing": value})
    [error] = caught.value.problems
    assert (error.field, error.value) == ("catchUpSpacing", value)
    assert problem in error.problem
    assert f"catchUpSpacing={value!r}" in str(caught.value)


def test_spacing_is_stored_only_when_given() -> None:
    spec = parse_spec({**SEED_SPEC, "catchUpSpacing": "PT10S"})
    assert spec.catch_up_spacing == timedelta(seconds=10)
    assert spec.resolved()["catchUpSpacing"] == "PT10S"
    assert "catchUpSpacing" not in parse_spec(SEED_SPEC).resolved()
    assert parse_spec(SEED_SPEC).digest() == parse_spec({**SEED_SPEC}).digest()
