"""Issue 27 §3: no error of reading a spec file repeats a value it refuses (a secret).

Every path by which reading YAML or JSON can fail, with the canary where a user would paste a
secret: a key given twice (its value shown only as the secret rule allows at its path), a
``!!binary`` or ``!!set`` value (no JSON form: refused without repeating it), a tagged scalar
that is no such value, an undefined alias, an unknown tag, and a nested JSON duplicate. Each
is one ``InvalidSpec`` naming where, never the canary in any form the file wrote it.
"""

from __future__ import annotations

import base64
import json
from pathlib import Path

import pytest
import yaml
from specdata import SEED_SPEC

from timecontract import InvalidSpec, load_spec

CANARY = "Zq8canaryX4v2k9"
B64 = base64.b64encode(CANARY.encode()).decode()
SEED = yaml.safe_dump(SEED_SPEC, sort_keys=False)
ACTION = "action:\n  name: http\n  parameters:\n    url: https://hooks.example.test/e\n"

YAML_CASES = {
    "a secret header twice": ACTION
    + f"    headers:\n      X-Api-Key: a\n      X-Api-Key: {CANARY}\n",
    "a password twice in data": ACTION
    + f"    data:\n      password: a\n      password: {CANARY}\n",
    "a key twice below a secret name": ACTION + f"    data:\n      auth: {{a: x, a: {CANARY}}}\n",
    "a list item's key twice below a secret name": ACTION
    + f"    data:\n      credentials:\n        - {{pin: 1, pin: {CANARY}}}\n",
    "a credential-shaped value twice": ACTION
    + f"    data:\n      note: a\n      note: Bearer {CANARY}\n",
    "a binary value": ACTION + f"    data: !!binary {B64}\n",
    "a binary value under a password": ACTION + f"    data:\n      password: !!binary {B64}\n",
    "a set": ACTION + f"    data: !!set {{{CANARY}: null}}\n",
    "an int that is not one": ACTION + f"    data:\n      pin: !!int {CANARY}\n",
    "a float that is not one": ACTION + f"    data:\n      pin: !!float {CANARY}\n",
    "a bool that is not one": ACTION + f"    data:\n      pin: !!bool {CANARY}\n",
    "a timestamp": ACTION + f"    data:\n      at: !!timestamp {CANARY}\n",
    "an undefined alias": ACTION + f"    data: *{CANARY}\n",
    "an unknown tag": ACTION + f"    data: !{CANARY} x\n",
    "a broken flow sequence": ACTION + f"    data: [{CANARY}\n",
}


@pytest.mark.parametrize("case", sorted(YAML_CASES))
def test_a_yaml_read_error_never_repeats_the_secret(case: str, tmp_path: Path) -> None:
    path = tmp_path / "spec.yaml"
    path.write_text(SEED + YAML_CASES[case])
    with pytest.raises(InvalidSpec) as raised:
        load_spec(path)
    said = str(raised.value) + repr([p.value for p in raised.value.problems])
    assert CANARY not in said and CANARY.lower() not in said and B64 not in said
    assert raised.value.problems


@pytest.mark.parametrize(
    "parameters",
    [
        '{"url": "https://hooks.example.test/e", "headers": {"Cookie": "a", "Cookie": "%s"}}',
        '{"url": "https://hooks.example.test/e", "data": {"password": {"a": "x", "a": "%s"}}}',
        '{"url": "https://hooks.example.test/e", "data": [{"note": "x", "note": "Bearer %s"}]}',
    ],
)
def test_a_json_key_given_twice_never_repeats_the_secret(parameters: str, tmp_path: Path) -> None:
    action = '{"name": "http", "parameters": %s}' % (parameters % CANARY)
    path = tmp_path / "spec.json"
    path.write_text(json.dumps(SEED_SPEC)[:-1] + f', "action": {action}}}')
    with pytest.raises(InvalidSpec) as raised:
        load_spec(path)
    [problem] = raised.value.problems
    assert "given more than once" in problem.problem
    assert CANARY not in str(raised.value)


def test_a_harmless_duplicate_still_names_its_value(tmp_path: Path) -> None:
    path = tmp_path / "spec.yaml"
    path.write_text(SEED + ACTION + "    data:\n      colour: red\n      colour: blue\n")
    with pytest.raises(InvalidSpec) as raised:
        load_spec(path)
    [problem] = raised.value.problems
    assert (problem.field, problem.value) == ("colour", "blue")
