"""The in-process command line for CLI tests: ``run("validate", path)`` → a Typer ``Result``.

Isolated from the machine: the data directory (and so the default SQLite ledger) is the test's
own, ``ALMANAC_LEDGER_URL`` is unset, and Temporal's address is one nothing listens on, so a
command that should refuse before connecting cannot reach a server by accident.
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from typer.testing import CliRunner, Result

from almanac.cli import app


@pytest.fixture
def run(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Callable[..., Result]:
    monkeypatch.setenv("ALMANAC_DATA_DIR", str(tmp_path / "data"))
    monkeypatch.delenv("ALMANAC_LEDGER_URL", raising=False)
    monkeypatch.setenv("ALMANAC_TEMPORAL_ADDRESS", "127.0.0.1:1")  # never reached
    runner = CliRunner()

    def invoke(*args: Any) -> Result:
        return runner.invoke(app, list(args))

    return invoke
