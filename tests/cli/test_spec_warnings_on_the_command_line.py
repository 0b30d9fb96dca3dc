"""Warnings reach the user: ``validate`` and ``preview`` print them on stderr and still exit 0.

The warning itself is ``timecontract.spec_warnings`` (golden cases in ``tests/unit``); here: where
it is printed, that the exit code stays 0, and that ``--json`` carries it without breaking the
preview contract.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
import yaml
from typer.testing import CliRunner

from almanac.cli import app

HOURLY = {
    "schema": "scheduleSpec.v1",
    "scheduleId": "hourly-first",
    "revision": 1,
    "timeZone": "America/New_York",
    "tzdbVersion": "2026a",
    "rule": "FREQ=HOURLY",
    "cutoverAt": "2026-10-01T00:00:00Z",
}
PREVIEW_KEYS = {
    "occurrenceId",
    "logicalSlotId",
    "scheduleId",
    "revision",
    "tzdbVersion",
    "nominalLocal",
    "fold",
    "instant",
    "gapAt",
    "utcOffset",
    "disposition",
    "reason",
    "jitter",
}


@pytest.fixture
def hourly(tmp_path: Path) -> Path:
    path = tmp_path / "hourly.yaml"
    path.write_text(yaml.safe_dump(HOURLY))
    return path


def run(*args: str) -> Any:
    return CliRunner().invoke(app, list(args))


def test_validate_prints_the_warning_on_stderr_and_exits_0(hourly: Path) -> None:
    result = run("validate", str(hourly))
    assert result.exit_code == 0
    assert "✓" in result.stdout and "warning" not in result.stdout
    (line,) = result.stderr.splitlines()
    assert line.startswith(f"warning: {hourly}: foldPolicy=FIRST_ONLY: ")
    assert line.endswith("[REPEATED_HOUR_SILENT]")


def test_validate_json_carries_the_warnings(hourly: Path, tmp_path: Path) -> None:
    both = tmp_path / "both.yaml"
    both.write_text(yaml.safe_dump({**HOURLY, "foldPolicy": "BOTH"}))
    result = run("validate", "--json", str(hourly), str(both))
    assert result.exit_code == 0
    first, second = json.loads(result.stdout)
    assert [w["code"] for w in first["warnings"]] == ["REPEATED_HOUR_SILENT"]
    assert first["warnings"][0]["field"] == "foldPolicy"
    assert "2026-11-01T06:00:00Z" in first["warnings"][0]["message"]
    assert second["warnings"] == []


def test_an_invalid_spec_has_an_empty_warning_list(tmp_path: Path) -> None:
    bad = tmp_path / "bad.yaml"
    bad.write_text(yaml.safe_dump({**HOURLY, "rule": "FREQ=SOMETIMES"}))
    result = run("validate", "--json", str(bad))
    assert result.exit_code == 2
    (only,) = json.loads(result.stdout)
    assert only["valid"] is False and only["warnings"] == []


def test_preview_warns_on_stderr_and_keeps_its_json_contract(hourly: Path) -> None:
    window = ("--from", "2026-11-01T04:00:00Z", "--to", "2026-11-01T08:00:00Z")
    result = run("preview", str(hourly), "--json", *window)
    assert result.exit_code == 0
    records = json.loads(result.stdout)
    assert all(set(r) == PREVIEW_KEYS for r in records)
    # FIRST_ONLY: 00:00 04:00Z, 01:00 05:00Z (fold 0), then 02:00 EST 07:00Z — 06:00Z is silent.
    assert [r["instant"] for r in records] == [
        "2026-11-01T04:00:00Z",
        "2026-11-01T05:00:00Z",
        "2026-11-01T07:00:00Z",
    ]
    assert "[REPEATED_HOUR_SILENT]" in result.stderr
    table = run("preview", str(hourly), *window)
    assert table.exit_code == 0 and "[REPEATED_HOUR_SILENT]" in table.stderr


def test_examples_raise_no_warning() -> None:
    examples = sorted(str(p) for p in (Path(__file__).parents[2] / "examples").glob("*.yaml"))
    result = run("validate", *examples)
    assert result.exit_code == 0 and result.stderr == ""


REFUSED = {
    **HOURLY,
    "scheduleId": "loopback-hook",
    "foldPolicy": "BOTH",  # no DST warning: only the action's
    "action": {"name": "http", "parameters": {"url": "http://127.0.0.1:1/"}},
}


def test_validate_warns_of_a_url_the_egress_policy_refuses(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.delenv("ALMANAC_EGRESS_ALLOW", raising=False)
    monkeypatch.delenv("ALMANAC_DEV_SINK_PORT", raising=False)
    path = tmp_path / "hook.yaml"
    path.write_text(yaml.safe_dump(REFUSED))
    result = run("validate", str(path))
    assert result.exit_code == 0  # valid: the worker's own policy decides at apply
    (line,) = result.stderr.splitlines()
    assert line.startswith(f'warning: {path}: action.parameters.url="http://127.0.0.1:1/": ')
    assert "127.0.0.1:1 is a loopback address" in line and line.endswith("[EGRESS_REFUSED]")
    monkeypatch.setenv("ALMANAC_EGRESS_ALLOW", "127.0.0.1")
    assert run("validate", str(path)).stderr == ""


def test_the_dev_sink_the_examples_post_to_draws_no_warning(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.delenv("ALMANAC_EGRESS_ALLOW", raising=False)
    monkeypatch.delenv("ALMANAC_DEV_SINK_PORT", raising=False)
    example = Path(__file__).resolve().parents[2] / "examples" / "every-10-seconds.yaml"
    result = run("validate", "--json", str(example))
    assert result.exit_code == 0
    assert [w["code"] for w in json.loads(result.stdout)[0]["warnings"]] == []
