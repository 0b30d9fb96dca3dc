"""A bad ``ALMANAC_*`` value is one line naming the variable and the value, exit 2, for every
command that reads the settings — ``dev`` included, before it starts anything."""

from __future__ import annotations

from collections.abc import Callable

import pytest
from typer.testing import Result


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
