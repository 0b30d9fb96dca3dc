"""Issue 11: a spec file is bounded (bytes, YAML aliases, expanded size) and never holds a secret.

Each limit is a clear InvalidSpec naming a field and a value; a literal secret is named by its
field and never repeated (``<redacted>``).
"""

from __future__ import annotations

import time
from pathlib import Path
from typing import Any

import pytest
import yaml
from specdata import SEED_SPEC

from timecontract import InvalidSpec, load_spec
from timecontract.errors import MAX_SHOWN
from timecontract.spec_file import MAX_SPEC_BYTES, MAX_SPEC_VALUES, MAX_YAML_ALIASES

CANARY = "canary-4e1b9c"
NUMBER = 839201938
"""A token pasted without quotes: YAML reads it as a number, still a secret."""
SEED_YAML = yaml.safe_dump(SEED_SPEC, sort_keys=False)


def write(tmp_path: Path, text: str) -> Path:
    path = tmp_path / "spec.yaml"
    path.write_text(text, encoding="utf-8")
    return path


def problems(source: Any) -> list[tuple[str, Any, str]]:
    with pytest.raises(InvalidSpec) as raised:
        load_spec(source)
    return [(p.field, p.value, p.problem) for p in raised.value.problems]


def test_the_seed_example_as_yaml_is_within_every_bound(tmp_path: Path) -> None:
    assert load_spec(write(tmp_path, SEED_YAML)).schedule_id == SEED_SPEC["scheduleId"]


def test_a_billion_laughs_document_stops_at_the_alias_limit_quickly(tmp_path: Path) -> None:
    # The 547-byte shape from the review: nine levels of nine aliases (9**9 leaves expanded).
    levels = ['a0: &a0 ["lol","lol","lol","lol","lol","lol","lol","lol","lol"]']
    for n in range(1, 9):
        levels.append(f"a{n}: &a{n} [" + ",".join([f"*a{n - 1}"] * 9) + "]")
    text = SEED_YAML + "\n".join(levels) + "\n"
    started = time.monotonic()
    [(field, value, problem)] = problems(write(tmp_path, text))
    assert time.monotonic() - started < 2.0
    assert field == "yaml alias"
    assert value == "*a2"  # the 21st alias use: the third of a2's nine *a1
    assert f"more than {MAX_YAML_ALIASES} YAML alias uses" in problem


@pytest.mark.parametrize(
    ("text", "line"),
    [
        ("tags: &x [*x]\n", 1),  # a list holding itself
        ("tags: &x\n  again: *x\n", 2),  # a mapping holding itself
        ("tags: &x [1, [2, {deep: [*x]}]]\n", 1),  # itself, further down
    ],
)
def test_an_alias_inside_its_own_anchor_is_refused_as_a_value_holding_itself(
    tmp_path: Path, text: str, line: int
) -> None:
    # Read as is, the value holds itself: the size walk then named a 20,064-character field.
    [(field, value, problem)] = problems(write(tmp_path, SEED_YAML + text))
    assert (field, value) == ("yaml alias", "*x")
    line += len(SEED_YAML.splitlines())
    assert problem == (
        f"refers to the list or mapping it is inside of (line {line}): a value cannot hold itself"
    )


def test_an_alias_bomb_within_the_alias_limit_is_one_short_problem(tmp_path: Path) -> None:
    # 19 alias uses expanding to 27,000 values, each a path longer than the bound on a name.
    long = "k" * 60
    text = f"{long}: &a [" + ",".join(["1"] * 300) + "]\n"
    text += f"{long}b: &b {{{long}: [" + ",".join(["*a"] * 10) + "]}\n"
    text += f"{long}c: [" + ",".join(["*b"] * 9) + "]\n"
    with pytest.raises(InvalidSpec) as raised:
        load_spec(write(tmp_path, SEED_YAML + text))
    [problem] = raised.value.problems
    assert problem.field.startswith(f"{long}c.") and problem.field.endswith("…")
    assert len(problem.field) == MAX_SHOWN
    assert f"more than {MAX_SPEC_VALUES} values" in problem.problem
    assert len(str(raised.value)) < 400


def test_a_few_aliases_are_fine(tmp_path: Path) -> None:
    text = SEED_YAML + "action:\n  name: http\n  parameters:\n"
    text += "    url: &u https://hooks.example.test/e\n    data: {again: *u, more: *u}\n"
    spec = load_spec(write(tmp_path, text))
    assert spec.action is not None
    assert spec.action.parameters["data"] == {"again": "https://hooks.example.test/e"} | {
        "more": "https://hooks.example.test/e"
    }


def test_a_spec_file_larger_than_the_byte_limit_is_refused_naming_the_file(
    tmp_path: Path,
) -> None:
    path = write(tmp_path, SEED_YAML + "#" + "x" * MAX_SPEC_BYTES + "\n")
    [(field, value, problem)] = problems(path)
    assert (field, value) == ("file", str(path))
    assert str(MAX_SPEC_BYTES) in problem


def test_spec_data_expanding_past_the_value_limit_names_where_it_ran_out() -> None:
    data = {**SEED_SPEC, "action": {"name": "http", "parameters": {"data": list(range(20_000))}}}
    [(field, _value, problem)] = problems(data)
    assert field.startswith("action.parameters.data")
    assert f"more than {MAX_SPEC_VALUES} values" in problem


@pytest.mark.parametrize(
    ("parameters", "field"),
    [
        ({"headers": {"Authorization": f"Bearer {CANARY}"}}, "headers.Authorization"),
        ({"headers": {"x-api-key": CANARY}}, "headers.x-api-key"),
        ({"password": CANARY}, "password"),
        ({"signingSecret": CANARY}, "signingSecret"),
        ({"data": {"nested": [{"clientSecret": CANARY}]}}, "data.nested.0.clientSecret"),
        # A scalar at any depth below a secret-bearing key, and numbers too.
        ({"data": {"password": [CANARY]}}, "data.password.0"),
        ({"data": {"apiToken": NUMBER}}, "data.apiToken"),
        (
            {"data": {"auth": {"credentials": {"deep": [NUMBER / 7]}}}},
            "data.auth.credentials.deep.0",
        ),
        ({"headers": {"X-Api-Key": NUMBER}}, "headers.X-Api-Key"),
        ({"data": {"credentials": {"pin": 1234}}}, "data.credentials.pin"),
    ],
)
def test_a_literal_secret_is_refused_naming_the_field_never_the_value(
    parameters: dict[str, Any], field: str
) -> None:
    data = {**SEED_SPEC, "action": {"name": "http", "parameters": parameters}}
    with pytest.raises(InvalidSpec) as raised:
        load_spec(data)
    [problem] = raised.value.problems
    assert problem.field == f"action.parameters.{field}"
    assert problem.value == "<redacted>"
    assert "secretRef" in problem.problem
    assert CANARY not in str(raised.value)
    assert str(NUMBER) not in str(raised.value) and str(NUMBER // 7)[:6] not in str(raised.value)


def test_a_number_in_a_secret_header_is_refused_by_the_adapter_too_never_repeated() -> None:
    from activities.actions import ActionRegistry

    parameters = {"url": "https://example.com/hook", "headers": {"X-Api-Key": NUMBER}}
    [problem] = ActionRegistry.default().problems("http", parameters)
    assert problem.field == "action.parameters.headers"
    assert "holds a literal secret" in str(problem)
    assert str(NUMBER) not in str(problem)


def test_secret_references_and_harmless_names_are_accepted() -> None:
    parameters = {
        "headers": {
            "Authorization": {"secretRef": {"env": "ALMANAC_SECRET_OPS"}},
            "X-Team": "ops",
        },
        "signingSecret": {"secretRef": {"file": "ops.key"}},
        "data": {
            "tokenCount": 3,
            "maxTokens": 500,
            "tokenTtl": 3600,
            "author": "ops",
            "passwordless": True,
            "apiKey": None,
        },
    }
    spec = load_spec({**SEED_SPEC, "action": {"name": "http", "parameters": parameters}})
    assert spec.action is not None and spec.action.parameters == parameters


@pytest.mark.parametrize("field", ["url", "resultUrl"])
def test_credentials_in_a_url_are_refused_and_never_repeated(field: str) -> None:
    from activities.actions import ActionRegistry

    parameters: dict[str, Any] = {"url": "https://example.com/hook"}
    parameters[field] = "https://ops:hunter2-canary@example.com/r/{idempotencyKey}"
    problems = ActionRegistry.default().problems("http", parameters)
    assert [p.field for p in problems] == [f"action.parameters.{field}"]
    assert "hunter2-canary" not in str(problems[0])
    assert "holds credentials" in str(problems[0])


@pytest.mark.parametrize(
    ("field", "url"),
    [
        ("url", f"https://example.com/hook?token={CANARY}"),
        ("url", f"https://example.com/hook?page=1&api_key={CANARY}#top"),
        ("resultUrl", f"https://example.com/r/{{idempotencyKey}}?sig=1&password={CANARY}"),
    ],
)
def test_a_secret_in_a_url_query_is_refused_never_repeated(field: str, url: str) -> None:
    parameters = {"url": "https://example.com/hook", field: url}
    with pytest.raises(InvalidSpec) as raised:
        load_spec({**SEED_SPEC, "action": {"name": "http", "parameters": parameters}})
    [problem] = raised.value.problems
    assert problem.field == f"action.parameters.{field}"
    assert "holds a literal secret" in problem.problem
    assert CANARY not in str(raised.value)
