"""A spec file that YAML or JSON would read "successfully" but not as written is refused.

YAML and ``json.loads`` both keep the last of two equal keys without a word; a spec whose
``revision`` appears twice then publishes a revision its author did not see. A YAML or JSON syntax
error names its line and column, so the author can find it, and a JSON file holds JSON only:
``json.loads`` also reads ``NaN`` and ``Infinity``, which RFC 8259 §6 has not.
"""

from __future__ import annotations

import ast
import json
from pathlib import Path
from typing import Any

import pytest
import yaml
from specdata import SEED_SPEC

from timecontract import InvalidSpec, SpecError, load_spec, spec_json
from timecontract.spec_json import load_json


def only_problem(path: Path, text: str) -> SpecError:
    """The one problem of the spec file ``path`` holding ``text``."""
    path.write_text(text)
    with pytest.raises(InvalidSpec) as caught:
        load_spec(path)
    [problem] = caught.value.problems
    return problem


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


def test_a_json_key_given_twice_is_refused_naming_its_line(tmp_path: Path) -> None:
    body = json.dumps(SEED_SPEC, indent=2)[:-2] + ',\n  "maxCatchUp": 7\n}'
    problem = only_problem(tmp_path / "twice.json", body)
    line = len(body.splitlines()) - 1  # the repeated key is the line before the closing brace
    assert (problem.field, problem.value) == ("maxCatchUp", 7)
    assert f"given more than once (again on line {line})" in str(problem)


def test_a_nested_json_key_given_twice_names_its_own_line(tmp_path: Path) -> None:
    action = '{\n  "name": "noop",\n  "parameters": {"note": "a",\n  "note": "b"}}'
    problem = only_problem(
        tmp_path / "nested.json", json.dumps(SEED_SPEC)[:-1] + ', "action": ' + action + "}"
    )
    assert (problem.field, problem.value) == ("note", "b")
    assert "given more than once (again on line 4)" in str(problem)


@pytest.mark.parametrize(
    ("text", "twice"),
    [
        # In a list's second item; the first item's "k" is another object's.
        ('{"a": [\n {"k": 1},\n {"k": 2,\n "k": 3}\n]}', ("k", 3, 4)),
        # Strings holding JSON's structural characters, and "x" in another object, come first.
        ('{"s": "{[,:\\"",\n "t": {"x": "]}"},\n "x": 1,\n "x": 2}', ("x", 2, 4)),
        # The key written with an escape; its value on the line after it.
        ('{"a": 1,\n "\\u0061":\n 2}', ("a", 2, 3)),
        # The same key in sibling objects is given once in each.
        ('{"p": {"m": 1},\n "q": {"m": 2},\n "r": {"m": 1,\n "m": 2}}', ("m", 2, 4)),
        # A key given three times: its first repeat is reported.
        ('{"a": 1,\n "a": 2,\n "a": 3}', ("a", 2, 2)),
        # Two objects repeat a key: the one reported (the later here) is found on its own line.
        ('{"b": {"x": 1,\n "x": 2},\n "c": {"y": 1,\n "y": 2}}', ("y", 2, 4)),
    ],
)
def test_a_json_key_given_twice_is_found_on_the_line_of_its_later_value(
    text: str, twice: tuple[str, Any, int]
) -> None:
    _, found = load_json(text)
    assert found is not None
    assert (found.key, found.value, found.line) == twice


def test_the_json_reader_uses_only_jsons_documented_interface() -> None:
    # json.decoder's JSONObject and json.scanner are CPython's internals, not the documented API.
    tree = ast.parse(Path(spec_json.__file__).read_text())
    imported = {a.name for n in ast.walk(tree) if isinstance(n, ast.Import) for a in n.names}
    imported |= {n.module or "" for n in ast.walk(tree) if isinstance(n, ast.ImportFrom)}
    assert "json" in imported
    assert not {m for m in imported if m.startswith("json.")}
    attributes = {n.attr for n in ast.walk(tree) if isinstance(n, ast.Attribute)}
    assert not attributes & {"scanner", "decoder", "parse_object", "scan_once"}


def test_a_json_syntax_error_names_its_line_and_column(tmp_path: Path) -> None:
    problem = only_problem(
        tmp_path / "broken.json", '{"schema": "scheduleSpec.v1",\n "revision": 1,,\n}'
    )
    assert problem.field == "file"
    assert problem.problem.startswith("not valid JSON: line 2, column 16: ")


@pytest.mark.parametrize(
    ("text", "said"),
    [
        # The comma is the mistake (RFC 8259 §4, §5): named where it is, not at the bracket.
        (
            '{"schema": "scheduleSpec.v1",\n "revision": 1,\n}',
            "line 2, column 15: a comma before '}'",
        ),
        ('{"rdates": ["2027-01-01T09:00:00",\n  ]}', "line 1, column 34: a comma before ']'"),
    ],
)
def test_a_trailing_comma_is_named_at_the_comma(tmp_path: Path, text: str, said: str) -> None:
    problem = only_problem(tmp_path / "comma.json", text)
    assert problem.problem == (f"not valid JSON: {said}: JSON allows no trailing comma (RFC 8259)")


@pytest.mark.parametrize("word", ["NaN", "Infinity", "-Infinity"])
def test_a_number_json_has_not_is_refused_as_not_json(tmp_path: Path, word: str) -> None:
    # RFC 8259 §6: "Numeric values that cannot be represented ... (such as Infinity and NaN)
    # are not permitted"; Python's json reads them unless told not to.
    problem = only_problem(
        tmp_path / "nan.json", '{"note": "NaN, Infinity",\n "maxCatchUp": ' + word + "}"
    )
    assert problem.field == "file"
    assert problem.problem.startswith(f"not valid JSON: line 2, column 16: {word} is no JSON")


@pytest.mark.parametrize("suffix", [".yaml", ".json"])
@pytest.mark.parametrize(
    ("twice", "named"),
    [
        ("gapPolicy", ("daily-ops-summary", 7)),  # identity valid and given once: named
        ("revision", ("daily-ops-summary", None)),  # given twice: no one revision
        ("scheduleId", (None, 7)),
    ],
)
def test_a_file_with_a_key_given_twice_still_names_its_schedule(
    tmp_path: Path, suffix: str, twice: str, named: tuple[str | None, int | None]
) -> None:
    # The InvalidSpec contract: scheduleId and revision as given when each is itself valid.
    path = tmp_path / f"twice{suffix}"
    if suffix == ".json":
        path.write_text(
            json.dumps(SEED_SPEC)[:-1] + f", {json.dumps(twice)}: {json.dumps(SEED_SPEC[twice])}}}"
        )
    else:
        path.write_text(
            yaml.safe_dump(SEED_SPEC, sort_keys=False) + yaml.safe_dump({twice: SEED_SPEC[twice]})
        )
    with pytest.raises(InvalidSpec) as caught:
        load_spec(path)
    [problem] = caught.value.problems
    assert problem.field == twice and "given more than once" in problem.problem
    assert (caught.value.schedule_id, caught.value.revision) == named


def test_a_file_with_a_key_given_twice_names_no_invalid_identity(tmp_path: Path) -> None:
    path = tmp_path / "twice.yaml"
    bad = {**SEED_SPEC, "scheduleId": "Not A Slug", "revision": True}
    path.write_text(yaml.safe_dump(bad, sort_keys=False) + "gapPolicy: SKIP\n")
    with pytest.raises(InvalidSpec) as caught:
        load_spec(path)
    assert (caught.value.schedule_id, caught.value.revision) == (None, None)


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
    problem = only_problem(
        tmp_path / "broken.yaml", "schema: scheduleSpec.v1\nrule: [FREQ=DAILY\nrevision: 1\n"
    )
    assert problem.field == "file"
    assert "not valid YAML: line 3, column" in str(problem)
