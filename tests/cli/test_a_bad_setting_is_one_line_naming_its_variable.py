"""A bad ``ALMANAC_*`` value is one line naming the variable and the value, exit 2, for every
command that reads the settings — ``dev`` included, before it starts anything. A secret's value
(a ``SecretStr`` field) is never in that line."""

from __future__ import annotations

from collections.abc import Callable

import pytest
from pydantic import Field, SecretStr, ValidationError
from pydantic_settings import BaseSettings, SettingsConfigDict
from typer.testing import Result

from almanac.cli.output import setting_problem


@pytest.mark.parametrize("value", ["0", "-1", "abc"])
@pytest.mark.parametrize(
    "command",
    [("dev", "--no-ui"), ("ledger", "list", "some-schedule"), ("status", "some-schedule")],
)
def test_a_bad_activity_start_rate_names_its_variable(
    run: Callable[..., Result],
    monkeypatch: pytest.MonkeyPatch,
    value: str,
    command: tuple[str, ...],
) -> None:
    monkeypatch.setenv("ALMANAC_MAX_ACTIVITY_STARTS_PER_SECOND", value)
    result = run(*command)
    assert result.exit_code == 2, result.output
    lines = result.output.strip().splitlines()
    assert len(lines) == 1, result.output
    assert lines[0].startswith(f"error: ALMANAC_MAX_ACTIVITY_STARTS_PER_SECOND={value!r}: ")


class _Vault(BaseSettings):
    """Settings with a secret that a constraint can refuse (no Almanac secret setting can fail)."""

    model_config = SettingsConfigDict(env_prefix="ALMANAC_VAULT_", extra="ignore")

    token: SecretStr = Field(default=SecretStr("x" * 12), min_length=12)
    backup_token: SecretStr | None = Field(default=None, min_length=12)
    retries: int = Field(default=1, ge=1)


@pytest.mark.parametrize("variable", ["ALMANAC_VAULT_TOKEN", "ALMANAC_VAULT_BACKUP_TOKEN"])
def test_a_refused_secret_setting_never_shows_its_value(
    monkeypatch: pytest.MonkeyPatch, variable: str
) -> None:
    monkeypatch.setenv(variable, "hunter2")
    with pytest.raises(ValidationError) as refused:
        _Vault()
    line = setting_problem(refused.value, _Vault)
    assert line.startswith(f"{variable}=<redacted>: "), line
    assert "hunter2" not in line


def test_a_refused_plain_setting_beside_a_secret_still_shows_its_value(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setenv("ALMANAC_VAULT_RETRIES", "0")
    with pytest.raises(ValidationError) as refused:
        _Vault()
    assert setting_problem(refused.value, _Vault).startswith("ALMANAC_VAULT_RETRIES='0': ")
