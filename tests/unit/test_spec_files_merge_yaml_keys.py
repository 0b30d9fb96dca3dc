"""YAML merge keys (``<<: *base``) in a spec file merge, as YAML's merge type says.

Found by a fresh-user trial: ``<<: *base`` was refused with the parser's own words ("could not
determine a constructor for the tag 'tag:yaml.org,2002:merge'"). The rule and the golden example
are yaml.org/type/merge's: the merged mappings' keys are inserted unless the mapping has the key
itself, and "keys in mapping nodes earlier in the sequence override keys specified in later
mapping nodes" (which PyYAML 6.0.4's own loader gets wrong for keys longer than one character,
its issue 953). A key written twice in one mapping is still refused.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
import yaml
from specdata import SEED_SPEC

from timecontract import InvalidSpec, load_spec
from timecontract.spec_file import read_spec_data

SEED_YAML = yaml.safe_dump(SEED_SPEC, sort_keys=False)
SHARED = """\
action:
  name: http
  parameters: &hook
    url: https://a.example.test/effects
    timeoutSeconds: 5
failureStreak:
  notifyAfter: 3
  action:
    name: http
    parameters:
"""


def _write(tmp_path: Path, text: str) -> Path:
    path = tmp_path / "spec.yaml"
    path.write_text(SEED_YAML + text, encoding="utf-8")
    return path


def _merged(tmp_path: Path, parameters: str) -> dict[str, Any]:
    data = read_spec_data(_write(tmp_path, SHARED + parameters))
    return dict(data["failureStreak"]["action"]["parameters"])


MERGE_TYPE_EXAMPLE = """\
- &CENTER { x: 1, y: 2 }
- &LEFT { x: 0, y: 2 }
- &BIG { r: 10 }
- &SMALL { r: 1 }

# All the following maps are equal:

- # Explicit keys
  x: 1
  y: 2
  r: 10
  label: center/big

- # Merge one map
  << : *CENTER
  r: 10
  label: center/big

- # Merge multiple maps
  << : [ *CENTER, *BIG ]
  label: center/big

- # Override
  << : [ *BIG, *LEFT, *SMALL ]
  x: 1
  label: center/big
"""
"""The example of yaml.org/type/merge, as published."""


@pytest.mark.parametrize("longer", [False, True], ids=["as-published", "longer-keys"])
def test_the_merge_type_example_reads_as_published(tmp_path: Path, longer: bool) -> None:
    # Longer keys too: one-character strings are shared objects in CPython, which hid issue 953.
    text = MERGE_TYPE_EXAMPLE.replace("r:", "radius:") if longer else MERGE_TYPE_EXAMPLE
    path = tmp_path / "merge.yaml"
    path.write_text(text, encoding="utf-8")
    *_, explicit, one, multiple, override = read_spec_data(path)
    assert explicit == {"x": 1, "y": 2, "radius" if longer else "r": 10, "label": "center/big"}
    assert one == explicit and multiple == explicit and override == explicit


def test_a_merged_mapping_gives_its_keys(tmp_path: Path) -> None:
    assert _merged(tmp_path, "      <<: *hook\n") == {
        "url": "https://a.example.test/effects",
        "timeoutSeconds": 5,
    }


def test_a_key_of_the_mapping_itself_overrides_a_merged_one(tmp_path: Path) -> None:
    merged = _merged(tmp_path, "      <<: *hook\n      url: https://b.example.test/alerts\n")
    assert merged == {"url": "https://b.example.test/alerts", "timeoutSeconds": 5}
    # Written before the merge key, the own key still wins: it is no key given twice.
    merged = _merged(tmp_path, "      timeoutSeconds: 9\n      <<: *hook\n")
    assert merged == {"url": "https://a.example.test/effects", "timeoutSeconds": 9}


def test_of_a_list_of_merged_mappings_the_first_gives_a_key(tmp_path: Path) -> None:
    merged = _merged(tmp_path, "      <<: [{timeoutSeconds: 7}, *hook]\n")
    assert merged == {"url": "https://a.example.test/effects", "timeoutSeconds": 7}


def test_a_spec_with_a_merge_key_validates(tmp_path: Path) -> None:
    spec = load_spec(_write(tmp_path, SHARED + "      <<: *hook\n"))
    assert spec.failure_streak is not None and spec.failure_streak.action is not None
    assert spec.failure_streak.action.parameters == spec.action.parameters  # type: ignore[union-attr]


def test_a_key_written_twice_beside_a_merge_key_is_still_refused(tmp_path: Path) -> None:
    text = (
        SHARED
        + "      <<: *hook\n      url: https://b.example.test/x\n      url: https://c.example.test/y\n"
    )
    with pytest.raises(InvalidSpec) as caught:
        load_spec(_write(tmp_path, text))
    [problem] = caught.value.problems
    assert (problem.field, problem.value) == ("url", "https://c.example.test/y")
    assert "given more than once" in problem.problem


def test_a_mapping_merging_itself_is_refused_as_a_value_holding_itself(tmp_path: Path) -> None:
    with pytest.raises(InvalidSpec) as caught:
        load_spec(_write(tmp_path, "tags: &x\n  <<: *x\n"))
    [problem] = caught.value.problems
    assert (problem.field, problem.value) == ("yaml alias", "*x")
    assert "a value cannot hold itself" in problem.problem


def test_merging_a_scalar_is_one_problem_naming_the_line(tmp_path: Path) -> None:
    with pytest.raises(InvalidSpec) as caught:
        load_spec(_write(tmp_path, "tags:\n  <<: 5\n"))
    [problem] = caught.value.problems
    line = len(SEED_YAML.splitlines()) + 2
    assert problem.field == "file"
    assert problem.problem == (
        f"not valid YAML: line {line}, column 7: a merge key (<<) takes mappings, not a scalar"
    )


def test_a_mapping_that_merged_is_no_key_given_twice_when_aliased_again(tmp_path: Path) -> None:
    # Merged, a mapping holds its merged keys beside its own; aliased again it is not re-checked.
    text = "tags:\n  first:\n    <<: &defaults\n      <<: &base\n        source: staging\n"
    text += "      source: production\n  second: *defaults\n"
    data = read_spec_data(_write(tmp_path, text))
    assert data["tags"] == {"first": {"source": "production"}, "second": {"source": "production"}}
