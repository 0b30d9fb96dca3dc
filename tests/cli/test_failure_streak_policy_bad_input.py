"""``failureStreak`` (issue 30): bad input is one clear line naming the field and value, exit 2.

A count of 0, a negative or a non-integer one, a notify action no adapter has, or bad parameters
of it: ``validate`` and ``apply`` refuse the file before anything is sent (``apply`` never asks
Temporal). A notify URL the worker's egress policy refuses (loopback) is refused by the worker's
registry at apply (the publish activity's check), named at ``failureStreak.action``.
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

import pytest
from typer.testing import Result

from activities.actions.registry import ActionRegistry
from timecontract import SpecError, load_spec

SPEC = """\
schema: scheduleSpec.v1
scheduleId: streaky
revision: 1
timeZone: Etc/UTC
tzdbVersion: 2026a
rule: FREQ=DAILY
cutoverAt: "2026-11-01T00:00:00Z"
action:
  name: noop
failureStreak:
  notifyAfter: {n}
  recoverAfter: {m}
  action:
    name: {name}
    parameters: {parameters}
"""


def spec_text(n: object = 3, m: object = 1, name: str = "noop", parameters: str = "{}") -> str:
    return SPEC.format(n=n, m=m, name=name, parameters=parameters)


@pytest.mark.parametrize(
    ("n", "m", "said"),
    [
        (0, 1, "failureStreak.notifyAfter=0"),
        (-2, 1, "failureStreak.notifyAfter=-2"),
        ('"3"', 1, "failureStreak.notifyAfter='3'"),
        (2.5, 1, "failureStreak.notifyAfter=2.5"),
        (3, 0, "failureStreak.recoverAfter=0"),
    ],
)
def test_a_count_below_one_or_not_an_integer_is_refused(
    run: Callable[..., Result], tmp_path: Path, n: object, m: object, said: str
) -> None:
    path = tmp_path / "spec.yaml"
    path.write_text(spec_text(n, m))
    for command in ("validate", "apply"):
        result = run(command, str(path))
        assert result.exit_code == 2, result.output
        assert said in result.output
        assert "unreachable" not in result.output  # refused before Temporal is asked


def test_a_notify_action_no_adapter_has_is_refused_at_validate_and_apply(
    run: Callable[..., Result], tmp_path: Path
) -> None:
    path = tmp_path / "spec.yaml"
    path.write_text(spec_text(name="pager"))
    for command in ("validate", "apply"):
        result = run(command, str(path))
        assert result.exit_code == 2, result.output
        assert "failureStreak.action.name='pager'" in result.output
        assert "registered: http, noop, smtp, temporal" in result.output
        assert "unreachable" not in result.output


def test_bad_notify_parameters_are_named_at_the_policys_action(
    run: Callable[..., Result], tmp_path: Path
) -> None:
    path = tmp_path / "spec.yaml"
    path.write_text(spec_text(name="http", parameters="{timeoutSeconds: 5}"))
    result = run("validate", str(path))
    assert result.exit_code == 2, result.output
    assert "failureStreak.action.parameters.url" in result.output


def test_a_notify_url_the_workers_egress_policy_refuses_is_refused_at_apply(
    tmp_path: Path,
) -> None:
    path = tmp_path / "spec.yaml"
    path.write_text(spec_text(name="http", parameters='{url: "http://127.0.0.1:9/hook"}'))
    spec = load_spec(path)
    with pytest.raises(SpecError) as refused:
        ActionRegistry.default().check_spec(spec)  # what the publish activity checks
    assert refused.value.field == "failureStreak.action.parameters.url"
    assert "egress policy refuses" in str(refused.value)
    ActionRegistry.default().check_spec(
        load_spec(tmp_path.joinpath("spec.yaml")).model_copy(update={"failure_streak": None})
    )


def test_a_literal_secret_in_the_notify_action_is_refused_unechoed(
    run: Callable[..., Result], tmp_path: Path
) -> None:
    path = tmp_path / "spec.yaml"
    headers = '{url: "https://example.com/h", headers: {Authorization: "Bearer s3cr3t-x"}}'
    path.write_text(spec_text(name="http", parameters=headers))
    result = run("validate", str(path))
    assert result.exit_code == 2, result.output
    assert "failureStreak.action.parameters.headers.Authorization" in result.output
    assert "s3cr3t-x" not in result.output


def test_the_python_clients_apply_check_names_the_policys_action(tmp_path: Path) -> None:
    # AlmanacClient.apply checks before anything is sent, as the CLI does.
    from almanac.apply_checks import check_action

    path = tmp_path / "spec.yaml"
    path.write_text(spec_text(name="pager"))
    with pytest.raises(SpecError) as refused:
        check_action(load_spec(path))
    assert str(refused.value).startswith("failureStreak.action.name='pager'")
    path.write_text(spec_text())
    check_action(load_spec(path))  # a known adapter passes
