"""A word YAML 1.1 reads as a boolean (``NO``, ``yes``, ``on``, ``off``: yaml.org/type/bool) where
the spec wants text is told so: ``foldPolicy: NO`` arrives as ``false``, and a problem that only
said ``foldPolicy=false`` would show a value the writer never typed."""

from __future__ import annotations

from pathlib import Path

import pytest

from timecontract import InvalidSpec, load_spec

HEAD = """\
schema: scheduleSpec.v1
scheduleId: words
revision: 1
timeZone: Etc/UTC
tzdbVersion: 2026a
rule: FREQ=DAILY
cutoverAt: 2026-11-01T00:00:00Z
"""
FALSE_HINT = "; YAML reads an unquoted no or off as false: quote the word if you meant it"
TRUE_HINT = "; YAML reads an unquoted yes or on as true: quote the word if you meant it"


@pytest.mark.parametrize(
    ("line", "said"),
    [
        ("foldPolicy: NO", "foldPolicy=false: must be one of FIRST_ONLY, SECOND_ONLY, BOTH"
         + FALSE_HINT),
        ("gapPolicy: on", "gapPolicy=true: must be one of SKIP, SHIFT_FORWARD, NEXT_VALID"
         + TRUE_HINT),
        ("scheduleId: Off", "scheduleId=false: must be a string" + FALSE_HINT),
    ],
)  # fmt: skip
def test_a_boolean_word_where_text_is_due_is_told_to_quote_it(
    tmp_path: Path, line: str, said: str
) -> None:
    path = tmp_path / "spec.yaml"
    key = line.partition(":")[0]
    kept = [given for given in HEAD.splitlines() if not given.startswith(f"{key}:")]
    path.write_text("\n".join([*kept, line]) + "\n")
    with pytest.raises(InvalidSpec) as refused:
        load_spec(path)
    assert [str(problem) for problem in refused.value.problems] == [said]


def test_the_quoted_word_is_text(tmp_path: Path) -> None:
    path = tmp_path / "spec.yaml"
    path.write_text(HEAD + "foldPolicy: 'NO'\n")
    with pytest.raises(InvalidSpec) as refused:
        load_spec(path)
    [problem] = [str(p) for p in refused.value.problems]
    assert problem == "foldPolicy='NO': must be one of FIRST_ONLY, SECOND_ONLY, BOTH"
