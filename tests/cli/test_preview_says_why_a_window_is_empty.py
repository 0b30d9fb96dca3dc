"""A preview window that ends before ``cutoverAt`` says why it holds no record.

The rule (DESIGN: a revision owns ``[cutoverAt, next cutover)``; cli.md's preview contract: records
placed at or after ``cutoverAt``): a window ``[from, to)`` with ``to <= cutoverAt`` owns nothing.
The table names the cutover; ``--json`` keeps its contract, a bare array.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path

import pytest
import yaml
from typer.testing import Result

HOURLY = {
    "schema": "scheduleSpec.v1",
    "scheduleId": "hourly-later",
    "revision": 3,
    "timeZone": "Europe/Berlin",
    "tzdbVersion": "2026a",
    "rule": "FREQ=HOURLY",
    "cutoverAt": "2026-06-01T00:00:00Z",
}
NOTE = "the window ends before cutoverAt 2026-06-01T00:00:00Z: revision r3 owns nothing there"


@pytest.fixture
def spec(tmp_path: Path) -> Path:
    path = tmp_path / "hourly.yaml"
    path.write_text(yaml.safe_dump(HOURLY))
    return path


@pytest.mark.parametrize("to", ["2026-05-31T23:00:00Z", "2026-06-01T00:00:00Z"])
def test_a_window_ending_by_the_cutover_names_it(
    run: Callable[..., Result], spec: Path, to: str
) -> None:
    shown = run("preview", str(spec), "--from", "2026-05-31T20:00:00Z", "--to", to)
    assert shown.exit_code == 0, shown.output
    assert shown.stdout.splitlines()[-2:] == [
        "0 records, 0 decided by a DST policy (highlighted)",
        NOTE,
    ]
    as_json = run("preview", str(spec), "--from", "2026-05-31T20:00:00Z", "--to", to, "--json")
    assert as_json.exit_code == 0 and json.loads(as_json.stdout) == []


def test_a_window_reaching_past_the_cutover_has_no_note(
    run: Callable[..., Result], spec: Path
) -> None:
    # [23:00Z, 01:00Z) holds the 00:00Z instant, the first the revision owns.
    shown = run(
        "preview", str(spec), "--from", "2026-05-31T23:00:00Z", "--to", "2026-06-01T01:00:00Z"
    )
    assert shown.exit_code == 0, shown.output
    assert "cutoverAt" not in shown.stdout and "2026-06-01T00:00:00Z  PLANNED" in shown.stdout
