"""``almanac console`` refuses bad settings and options in one line (exit 2), before serving."""

from __future__ import annotations

from collections.abc import Callable

import pytest
from typer.testing import Result


@pytest.mark.parametrize(
    ("env", "args", "message"),
    [
        ({}, ["--host", "nowhere"], "--host='nowhere': not an IP address"),
        (
            {"ALMANAC_CONSOLE_OPERATORS": "alice"},
            [],
            "ALMANAC_CONSOLE_OPERATORS entry 'alice': expected name=file:NAME",
        ),
        (
            {"ALMANAC_CONSOLE_OPERATORS": "alice=env:HOME"},
            [],
            "entry 'alice=env:HOME': an env token is named ALMANAC_SECRET_*",
        ),
        ({"ALMANAC_CONSOLE_PORT": "0"}, [], "ALMANAC_CONSOLE_PORT='0': Input should be"),
    ],
)
def test_bad_console_settings_are_one_line_exit_2(
    run: Callable[..., Result],
    monkeypatch: pytest.MonkeyPatch,
    env: dict[str, str],
    args: list[str],
    message: str,
) -> None:
    for name, value in env.items():
        monkeypatch.setenv(name, value)
    result = run("console", *args)
    assert result.exit_code == 2, result.output
    lines = result.output.strip().splitlines()
    assert len(lines) == 1 and message in lines[0]


def test_an_unmigrated_ledger_is_exit_1(run: Callable[..., Result]) -> None:
    result = run("console")
    assert result.exit_code == 1
    assert "almanac db upgrade" in result.output
