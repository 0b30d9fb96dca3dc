"""Bad input and bad places are one clear line with exit 2 — never markup damage or a traceback."""

from __future__ import annotations

from pathlib import Path

import pytest
from typer.testing import CliRunner

from almanac.cli import app

SEED = Path(__file__).parents[2] / "examples" / "daily-ops-summary.yaml"


@pytest.fixture
def run(tmp_path: Path, monkeypatch: pytest.MonkeyPatch):  # type: ignore[no-untyped-def]
    monkeypatch.setenv("ALMANAC_DATA_DIR", str(tmp_path / "data"))
    runner = CliRunner()
    return lambda *args: runner.invoke(app, list(args))


def test_brackets_in_values_and_paths_are_printed_verbatim(run, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    folder = tmp_path / "[red]"
    folder.mkdir()
    good = folder / "x.yaml"
    good.write_text(SEED.read_text())
    bad = tmp_path / "bad.yaml"
    bad.write_text(SEED.read_text().replace("scheduleId: daily-ops-summary", 'scheduleId: "[/]"'))
    result = run("validate", str(good), str(bad))
    assert result.exit_code == 2
    assert "[red]/x.yaml" in result.output
    assert "scheduleId='[/]'" in result.output
    assert "^[a-z0-9](?:[a-z0-9-]{0,61}[a-z0-9])?$" in result.output
    assert "Traceback" not in result.output


def test_an_unusable_data_directory_is_one_line_exit_2(run, tmp_path: Path, monkeypatch) -> None:  # type: ignore[no-untyped-def]
    blocker = tmp_path / "a-file"
    blocker.write_text("")
    monkeypatch.setenv("ALMANAC_DATA_DIR", str(blocker))
    for args in (("db", "upgrade"), ("tzdb", "add", "2022b")):
        result = run(*args)
        assert result.exit_code == 2, (args, result.output)
        assert result.output.count("\n") == 1 and "error:" in result.output
