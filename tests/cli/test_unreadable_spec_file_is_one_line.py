"""A spec file that cannot be read is one ``error: <path>: <reason>`` line, exit 2 (trial, bug 3).

Not "invalid scheduleSpec" plus an ``[Errno 2]`` line: a missing file or a directory is no spec
with problems. ``apply --json`` on a spec it refuses prints the object ``validate --json`` prints
for that file (stdout), and still the one error line (stderr).
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

SEED = Path(__file__).parents[2] / "examples" / "every-10-seconds.yaml"  # has an action


@pytest.mark.parametrize("command", ["validate", "preview", "apply"])
@pytest.mark.parametrize(
    ("name", "reason"), [("missing.yaml", "no such file"), ("", "is a directory, not a spec file")]
)
def test_a_missing_file_or_a_directory_is_one_line_naming_it(  # type: ignore[no-untyped-def]
    run, tmp_path: Path, command: str, name: str, reason: str
) -> None:
    path = tmp_path / name
    result = run(command, str(path))
    assert result.exit_code == 2, result.output
    assert result.stdout == ""
    assert result.stderr.splitlines() == [f"error: {path}: {reason}"]


def test_validate_json_names_the_unreadable_file_as_its_problem(run, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    path = tmp_path / "missing.yaml"
    result = run("validate", "--json", str(path))
    assert result.exit_code == 2
    [report] = json.loads(result.stdout)
    assert (report["valid"], report["problems"]) == (
        False,
        [{"field": "file", "value": str(path), "problem": "no such file"}],
    )


@pytest.mark.parametrize(
    ("old", "new"),
    [
        ("scheduleId: every-10-seconds", "scheduleId: Not_An_Id"),  # a spec problem
        ("  name: http\n", "  name: carrier-pigeon\n"),  # an action problem
        (None, None),  # no such file
    ],
)
def test_apply_json_prints_what_validate_json_prints_for_a_refused_spec(  # type: ignore[no-untyped-def]
    run, tmp_path: Path, old: str | None, new: str | None
) -> None:
    path = tmp_path / "spec.yaml"
    if old is not None and new is not None:
        text = SEED.read_text()
        assert old in text
        path.write_text(text.replace(old, new))
    [validated] = json.loads(run("validate", "--json", str(path)).stdout)
    assert validated["valid"] is False
    applied = run("apply", "--json", str(path))
    assert applied.exit_code == 2, applied.output
    assert json.loads(applied.stdout) == validated
    assert len(applied.stderr.splitlines()) >= 1 and applied.stderr.startswith("error: ")
