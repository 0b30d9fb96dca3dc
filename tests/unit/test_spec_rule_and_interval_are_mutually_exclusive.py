"""Issue 13: exactly one of ``rule`` and ``interval``; the new fields' bounds and defaults."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest
from specdata import SEED_SPEC

from timecontract import InvalidSpec, OverlapPolicy, parse_spec


def problems(data: dict) -> list[tuple[str, object, str]]:
    with pytest.raises(InvalidSpec) as caught:
        parse_spec(data)
    return [(p.field, p.value, p.problem) for p in caught.value.problems]


def test_rule_and_interval_together_is_one_problem_naming_both() -> None:
    ((field, value, message),) = problems({**SEED_SPEC, "interval": "PT2H"})
    assert (field, value) == ("interval", "PT2H")
    assert "rule" in message and "interval" in message and "mutually exclusive" in message


def test_neither_rule_nor_interval_names_rule_as_required() -> None:
    data = {k: v for k, v in SEED_SPEC.items() if k != "rule"}
    ((field, value, message),) = problems(data)
    assert (field, value) == ("rule", None)
    assert "required" in message and "interval" in message


def test_missing_rule_is_reported_together_with_other_problems() -> None:
    data = {k: v for k, v in SEED_SPEC.items() if k != "rule"}
    assert {p[0] for p in problems({**data, "revision": 0})} == {"rule", "revision"}


def test_phase_without_interval_is_refused() -> None:
    ((field, _, message),) = problems({**SEED_SPEC, "phase": "PT5M"})
    assert field == "phase" and "interval" in message


@pytest.mark.parametrize("jitter", ["P2D", "-PT1S", "PT0.0005S", "P1M"])
def test_bad_jitter_is_named(jitter: str) -> None:
    assert [p[0] for p in problems({**SEED_SPEC, "jitter": jitter})] == ["jitter"]


def test_overlap_policy_is_temporals_vocabulary_and_defaults_to_allow_all() -> None:
    assert {p.value for p in OverlapPolicy} == {
        "SKIP",
        "BUFFER_ONE",
        "BUFFER_ALL",
        "CANCEL_OTHER",
        "ALLOW_ALL",
    }
    assert parse_spec(SEED_SPEC).overlap_policy is OverlapPolicy.ALLOW_ALL
    assert [p[0] for p in problems({**SEED_SPEC, "overlapPolicy": "QUEUE"})] == ["overlapPolicy"]


def test_json_schema_documents_the_new_fields() -> None:
    out = subprocess.run(
        [str(Path(sys.executable).parent / "almanac"), "schema"],
        capture_output=True,
        text=True,
        check=True,
    ).stdout
    properties = json.loads(out)["properties"]
    for key in ("interval", "phase", "jitter", "overlapPolicy", "rule"):
        assert properties[key].get("description"), key
    assert "rule" not in json.loads(out).get("required", [])
