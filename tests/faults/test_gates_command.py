"""``almanac gates`` prints what ``bench/gates.py`` prints and exits 0 on all PASS, 1 otherwise.

The fast gates (golden cases, acceptance points) run for real, through the CLI and through the
script as a subprocess; a failing gate is substituted to check the exit code. The full run is
``almanac gates`` (about a minute), whose output is in the README. That each gate fails when the
code it checks is broken is ``test_gate_mutants.py``.
"""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest
from typer.testing import CliRunner

from almanac.cli import app
from almanac.gates import harness as gates

pytestmark = [pytest.mark.fault]

REPO = Path(__file__).resolve().parents[2]
FAST = ["golden", "acceptance-points"]


def gate_lines(output: str) -> list[str]:
    """The report without its duration line (the only part that varies)."""
    return [line for line in output.splitlines() if line and not line.startswith("(")]


def test_gates_command_prints_the_script_s_lines_and_exits_0_when_all_pass() -> None:
    result = CliRunner().invoke(app, ["gates", *FAST])
    assert result.exit_code == 0, result.output
    lines = gate_lines(result.stdout)
    assert lines[0].startswith("golden time-zone agreement") and lines[0].endswith("PASS")
    assert lines[1].startswith("acceptance points checking revision + disable generation")
    assert lines[1].endswith("PASS")
    assert "stale claims accepted: 0 (limit 0)" in result.stdout
    assert not any("NOT DRIVEN" in line or "WRONG" in line for line in lines)
    script = subprocess.run(
        [sys.executable, "bench/gates.py", *FAST],
        cwd=REPO,
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )
    assert script.returncode == 0, script.stdout + script.stderr
    assert gate_lines(script.stdout) == lines


def test_gates_command_exits_1_when_a_gate_fails(monkeypatch: pytest.MonkeyPatch) -> None:
    failing = gates.Gate("golden time-zone agreement (1 cases)", 0.0, "%", "100%", False)
    monkeypatch.setitem(gates.GATES, "golden", lambda _: failing)
    result = CliRunner().invoke(app, ["gates", "golden"])
    assert result.exit_code == 1
    assert gate_lines(result.stdout) == [failing.line()]
    assert failing.line().endswith("FAIL")


def test_gates_command_rejects_an_unknown_gate_with_exit_2() -> None:
    result = CliRunner().invoke(app, ["gates", "nonsense"])
    assert result.exit_code == 2
    assert "unknown gate nonsense" in result.stderr


def test_the_command_s_gate_names_are_the_harness_s() -> None:
    # almanac.cli.gates spells the names out so that --help does not import the harness.
    from almanac.cli.gates import GATE_NAMES

    assert GATE_NAMES == gates.NAMES


def test_gates_json_reports_each_gate_and_the_verdict() -> None:
    result = CliRunner().invoke(app, ["gates", "golden", "--json"])
    assert result.exit_code == 0, result.output
    report = json.loads(result.stdout)
    assert report["passed"] is True
    (golden,) = report["gates"]
    assert golden["name"].startswith("golden time-zone agreement") and golden["passed"] is True
    assert set(golden) == {"name", "figure", "unit", "limit", "passed"}


def test_a_temporal_gate_s_report_is_only_the_report() -> None:
    # The SDK core logs to the process's stdout (not through Python): only a subprocess sees it.
    # Against the test server it used to warn about a server capability Almanac does not use
    # (heartbeat details), as the first line of the report.
    result = subprocess.run(
        [str(Path(sys.executable).parent / "almanac"), "gates", "unknown-effect"],
        cwd=REPO,
        capture_output=True,
        text=True,
        timeout=180,
        check=False,
    )
    assert result.returncode == 0, result.stdout + result.stderr
    assert result.stdout.startswith("UNKNOWN_EFFECT reconciled or queued"), result.stdout
    assert "WARN" not in result.stdout + result.stderr


def test_a_crashed_check_is_a_fail_line_and_a_null_figure_in_json(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    def crash(folder: Path) -> gates.Gate:
        raise RuntimeError("the corpus process exited 1")

    monkeypatch.setitem(gates.GATES, "golden", crash)
    result = CliRunner().invoke(app, ["gates", "golden"])
    assert result.exit_code == 1
    (line,) = gate_lines(result.stdout)
    assert line.startswith("golden (the check crashed)")
    assert line.endswith("FAIL  RuntimeError: the corpus process exited 1")
    assert result.exception is None or isinstance(result.exception, SystemExit)
    report = json.loads(CliRunner().invoke(app, ["gates", "golden", "--json"]).stdout)
    (golden,) = report["gates"]
    assert (golden["figure"], golden["passed"]) == (None, False)
    assert golden["error"] == "RuntimeError: the corpus process exited 1"
