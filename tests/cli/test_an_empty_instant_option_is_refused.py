"""An instant option given empty (``--to ''``: a shell variable that was not set) is refused
naming the option, with exit 2, never read as the option left out (a default window)."""

from __future__ import annotations

from pathlib import Path

import pytest

SEED = str(Path(__file__).parents[2] / "examples" / "daily-ops-summary.yaml")


@pytest.mark.parametrize(
    ("args", "option"),
    [
        (["preview", SEED, "--to", ""], "--to"),
        (["preview", SEED, "--from", " "], "--from"),
        (["tzdb", "diff", SEED, "--to", "2026a", "--until", ""], "--until"),
        (["shadow", "report", "--since", ""], "--since"),
    ],
)
def test_an_empty_instant_is_refused_naming_the_option(run, args: list[str], option: str) -> None:  # type: ignore[no-untyped-def]
    result = run(*args)
    assert result.exit_code == 2, result.output
    value = args[args.index(option) + 1]
    assert f"{option}={value!r}: is empty; give an instant like 2026-11-01T00:00:00Z" in (
        result.stderr
    )
    assert result.stdout == ""
