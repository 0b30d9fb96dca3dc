"""A spec file nested absurdly deep, or with a key that is not text: exit 2, no traceback.

Found by an attack: 5,000 nested YAML lists and 30,000 nested JSON arrays raised ``RecursionError``;
a YAML key that is a list (``? [a, b]``) raised ``TypeError: unhashable type``; each was a
traceback and exit 1. Now each is one problem naming the bound or the line (``MAX_SPEC_DEPTH``).
"""

from __future__ import annotations

from pathlib import Path

import pytest

from timecontract.spec_file import MAX_SPEC_DEPTH

SPEC_HEAD = "schema: scheduleSpec.v1\nscheduleId: shapes\n"


@pytest.mark.parametrize(
    ("name", "text", "problem"),
    [
        ("deep.yaml", "a: " + "[" * 5000 + "]" * 5000 + "\n", f"nested more than {MAX_SPEC_DEPTH}"),
        (
            "deep.json",
            '{"a": ' + "[" * 30000 + "]" * 30000 + "}",
            f"nested more than {MAX_SPEC_DEPTH}",
        ),
        (
            "just-deep.json",
            '{"a": ' + "[" * 40 + "]" * 40 + "}",
            f"nested more than {MAX_SPEC_DEPTH}",
        ),
        ("list-key.yaml", SPEC_HEAD + "? [a, b]\n: y\n", "key on line 3 is not a string (list)"),
        ("map-key.yaml", SPEC_HEAD + "? {a: 1}\n: y\n", "key on line 3 is not a string (dict)"),
        ("int-key.yaml", SPEC_HEAD + "1: x\n", "key on line 3 is not a string (int)"),
    ],
)
@pytest.mark.parametrize("command", ["validate", "preview"])
def test_a_malformed_shape_is_one_problem_and_exit_2(  # type: ignore[no-untyped-def]
    run, tmp_path: Path, command: str, name: str, text: str, problem: str
) -> None:
    path = tmp_path / name
    path.write_text(text, encoding="utf-8")
    result = run(command, str(path))
    assert result.exit_code == 2, result.output
    assert "Traceback" not in result.output
    assert result.exception is None or isinstance(result.exception, SystemExit)
    assert problem in result.output, result.output


def test_a_spec_nested_as_deep_as_allowed_is_read(run, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    # A mapping at depth MAX_SPEC_DEPTH is within the bound: refused for its content, not shape.
    nested = "{" * (MAX_SPEC_DEPTH - 1) + "}" * (MAX_SPEC_DEPTH - 1)
    path = tmp_path / "ok.json"
    path.write_text('{"a": ' + nested.replace("{}", '{"b": 1}', 1) + "}", encoding="utf-8")
    result = run("validate", str(path))
    assert "nested more than" not in result.output
