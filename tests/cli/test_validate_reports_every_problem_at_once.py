"""``validate`` and ``apply`` report a spec's own problems and its action's problems together.

Trial finding: a literal secret (a problem of the spec itself) hid the action's other problems, so
a user fixed one, ran ``validate`` again and met the next. DESIGN: every problem reported at once,
naming field and value, and a literal secret's value never echoed. A field both checks refuse
(the literal secret header: the spec at ``headers.<name>``, the adapter at ``headers``) is said
once.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

SPEC = """\
schema: scheduleSpec.v1
scheduleId: every-problem
revision: 1
timeZone: Etc/UTC
tzdbVersion: 2026a
rule: {rule}
cutoverAt: "2026-11-01T00:00:00Z"
action:
  name: http
  parameters:
    url: https://example.com/hook
    timeoutSeconds: -5
    headers:
      Authorization: Bearer do-not-echo-me
"""


@pytest.mark.parametrize("rule", ["FREQ=DAILY", "FREQ=NEVER"])
def test_a_literal_secret_does_not_hide_the_actions_other_problems(  # type: ignore[no-untyped-def]
    run, tmp_path: Path, rule: str
) -> None:
    path = tmp_path / "spec.yaml"
    path.write_text(SPEC.format(rule=rule))
    result = run("validate", "--json", str(path))
    assert result.exit_code == 2, result.output
    [report] = json.loads(result.stdout)
    fields = [p["field"] for p in report["problems"]]
    expected = ["action.parameters.headers.Authorization", "action.parameters.timeoutSeconds"]
    if rule == "FREQ=NEVER":
        expected.append("rule")
    assert sorted(fields) == sorted(expected)
    assert "do-not-echo-me" not in result.output
    text = run("validate", str(path))
    assert text.exit_code == 2
    assert "timeoutSeconds=-5" in text.output and "headers.Authorization" in text.output
    assert "do-not-echo-me" not in text.output


def test_an_unknown_action_beside_a_spec_problem_is_reported_too(  # type: ignore[no-untyped-def]
    run, tmp_path: Path
) -> None:
    path = tmp_path / "spec.yaml"
    path.write_text(SPEC.format(rule="FREQ=NEVER").replace("name: http", "name: carrier-pigeon"))
    [report] = json.loads(run("validate", "--json", str(path)).stdout)
    assert {p["field"] for p in report["problems"]} >= {"rule", "action.name"}


def test_apply_refuses_with_the_same_problems_validate_reports(  # type: ignore[no-untyped-def]
    run, tmp_path: Path
) -> None:
    # Third trial: `apply` (text) checked the action only once the spec itself was valid.
    path = tmp_path / "spec.yaml"
    path.write_text(SPEC.format(rule="FREQ=DAILY"))
    result = run("apply", str(path))
    assert result.exit_code == 2, result.output
    assert "invalid scheduleSpec (2 problems)" in result.stderr
    assert "timeoutSeconds=-5" in result.stderr and "headers.Authorization" in result.stderr
    assert "do-not-echo-me" not in result.output
