"""A spec file that YAML or JSON would read "successfully" but not as written is refused.

YAML and ``json.loads`` both keep the last of two equal keys without a word; a spec whose
``revision`` appears twice then publishes a revision its author did not see. And a YAML syntax
error names its line and column, so the author can find it.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest
import yaml
from specdata import SEED_SPEC

from timecontract import InvalidSpec, load_spec


def test_a_yaml_key_given_twice_is_refused_naming_the_key_value_and_line(tmp_path: Path) -> None:
    text = yaml.safe_dump(SEED_SPEC, sort_keys=False) + "revision: 99\n"
    path = tmp_path / "twice.yaml"
    path.write_text(text)
    with pytest.raises(InvalidSpec) as caught:
        load_spec(path)
    [problem] = caught.value.problems
    line = len(text.splitlines())  # the repeated key is the file's last line
    assert (problem.field, problem.value) == ("revision", 99)
    assert f"given more than once (again on line {line})" in str(problem)


def test_a_json_key_given_twice_is_refused(tmp_path: Path) -> None:
    body = json.dumps(SEED_SPEC)[:-1] + ', "maxCatchUp": 7}'
    path = tmp_path / "twice.json"
    path.write_text(body)
    with pytest.raises(InvalidSpec) as caught:
        load_spec(path)
    [problem] = caught.value.problems
    assert (problem.field, problem.value) == ("maxCatchUp", 7)


def test_nested_mappings_are_checked_too(tmp_path: Path) -> None:
    path = tmp_path / "nested.yaml"
    path.write_text(
        yaml.safe_dump(SEED_SPEC, sort_keys=False)
        + "action:\n  name: noop\n  parameters: {}\n  name: http\n"
    )
    with pytest.raises(InvalidSpec) as caught:
        load_spec(path)
    assert any(p.field == "name" and p.value == "http" for p in caught.value.problems)


def test_a_yaml_syntax_error_names_its_line_and_column(tmp_path: Path) -> None:
    path = tmp_path / "broken.yaml"
    path.write_text("schema: scheduleSpec.v1\nrule: [FREQ=DAILY\nrevision: 1\n")
    with pytest.raises(InvalidSpec) as caught:
        load_spec(path)
    [problem] = caught.value.problems
    assert problem.field == "file"
    assert "not valid YAML: line 3, column" in str(problem)
