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
            "ALMANAC_CONSOLE_OPERATORS entry for 'alice': expected name=file:NAME",
        ),
        (
            {"ALMANAC_CONSOLE_OPERATORS": "alice=env:HOME"},
            [],
            "entry for 'alice': an env token is named ALMANAC_SECRET_*",
        ),
        (
            {"ALMANAC_CONSOLE_OPERATORS": "bob=file:bob,al ice=file:x"},
            [],
            "entry number 2: expected name=file:NAME",
        ),
        ({"ALMANAC_CONSOLE_PORT": "0"}, [], "ALMANAC_CONSOLE_PORT='0': must be at least 1"),
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


@pytest.mark.parametrize(
    "operators", ["alice=LEAKTOKEN123", "alice=env:LEAKTOKEN123", "alice:LEAKTOKEN123"]
)
def test_a_token_pasted_into_the_operators_setting_is_never_printed(
    run: Callable[..., Result], monkeypatch: pytest.MonkeyPatch, operators: str
) -> None:
    monkeypatch.setenv("ALMANAC_CONSOLE_OPERATORS", operators)
    result = run("console")
    assert result.exit_code == 2, result.output
    assert "ALMANAC_CONSOLE_OPERATORS entry" in result.output
    assert "LEAKTOKEN123" not in result.output


def test_an_unmigrated_ledger_is_exit_1(run: Callable[..., Result]) -> None:
    result = run("console")
    assert result.exit_code == 1
    assert "almanac db upgrade" in result.output


def test_a_port_in_use_is_one_line_exit_1_before_serving(
    run: Callable[..., Result], monkeypatch: pytest.MonkeyPatch
) -> None:
    import socket
    from unittest import mock

    assert run("db", "upgrade").exit_code == 0
    with socket.socket() as taken, mock.patch("uvicorn.run") as serve:
        taken.bind(("127.0.0.1", 0))
        taken.listen()
        port = taken.getsockname()[1]
        result = run("console", "--port", str(port))
        monkeypatch.setenv("ALMANAC_CONSOLE_PORT", str(port))
        from_settings = run("console")
    assert serve.call_count == 0
    for said, option in ((result, "--port"), (from_settings, "ALMANAC_CONSOLE_PORT")):
        assert said.exit_code == 1, said.output
        lines = said.output.strip().splitlines()
        assert len(lines) == 1 and f"{option}={port}: cannot listen on 127.0.0.1" in lines[0]


def test_help_is_plain_text_naming_only_pages_the_console_has(run: Callable[..., Result]) -> None:
    # Click prints a docstring as it is: reStructuredText markup would show literally.
    text = run("console", "--help").output
    assert "``" not in text and "--url, else ALMANAC_LEDGER_URL" in text
    assert "calendars" not in text  # no such page: a schedule's month is its calendar view
    assert "Serve the console: schedules, occurrences, the human queue, spec preview." in text


def test_the_default_port_in_use_is_not_blamed_on_a_variable(
    capsys: pytest.CaptureFixture[str],
) -> None:
    import socket

    import typer

    from almanac.cli.console import _check_port

    with socket.socket() as taken:
        taken.bind(("127.0.0.1", 0))
        taken.listen()
        port = taken.getsockname()[1]
        with pytest.raises(typer.Exit) as stopped:
            _check_port("127.0.0.1", port, None)  # neither --port nor ALMANAC_CONSOLE_PORT set
    assert stopped.value.exit_code == 1
    said = capsys.readouterr().err.strip()
    assert said.startswith(f"error: port {port}: cannot listen on 127.0.0.1:{port}")
    assert said.endswith("it is the default: choose another with --port")
    assert "ALMANAC_CONSOLE_PORT" not in said
