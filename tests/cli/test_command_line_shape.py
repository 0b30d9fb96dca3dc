"""The command line's shape: it loads light, every result has ``--json``, one worker front end."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
import typer
from typer.testing import CliRunner

from almanac.cli import app

REPO = Path(__file__).resolve().parents[2]
SEED = REPO / "examples" / "daily-ops-summary.yaml"
HEAVY = {
    "temporalio",
    "sqlalchemy",
    "alembic",
    "psycopg",
    "httpx",
    "ledger",
    "activities",
    "workflows",
    "almanac.gates",
    "almanac.stack",
}
LONG_RUNNING = {"worker", "dev", "sink", "console"}
"""Commands that serve until stopped and print a log, not a result."""

PROBE = """
import json, sys
from typer.testing import CliRunner
from almanac.cli import app
result = CliRunner().invoke(app, sys.argv[1:])
print(json.dumps({"exit": result.exit_code, "modules": sorted(sys.modules)}))
"""


def loaded_by(*args: str) -> tuple[int, set[str]]:
    """Run the command in a fresh interpreter; its exit code and the top-level modules loaded."""
    probe = subprocess.run(
        [sys.executable, "-c", PROBE, *args],
        cwd=REPO,
        capture_output=True,
        text=True,
        timeout=60,
        check=True,
    )
    report = json.loads(probe.stdout.splitlines()[-1])
    loaded = set(report["modules"])
    # The tooling packages inside ``almanac`` count as their own names.
    tooling = {
        p for p in ("almanac.gates", "almanac.stack") if any(n.startswith(p) for n in loaded)
    }
    return report["exit"], {name.split(".")[0] for name in loaded} | tooling


def test_help_and_validate_load_no_heavy_module() -> None:
    for args in (["--help"], ["validate", str(SEED)], ["ledger", "--help"]):
        code, modules = loaded_by(*args)
        assert code == 0, args
        assert modules & HEAVY == set(), (args, modules & HEAVY)


def test_the_probe_sees_a_heavy_import_when_there_is_one() -> None:
    # Help of a ledger command stays light; running the gates loads the harness.
    _, modules = loaded_by("db", "upgrade", "--help")
    assert modules & HEAVY == set()
    code, modules = loaded_by("gates", "nonsense")
    assert code == 2 and "almanac.gates" in modules


def _commands(group: Any, prefix: str = "") -> dict[str, Any]:
    """Every leaf command by its path (``tzdb add``); a group without subcommands is a leaf."""
    found: dict[str, Any] = {}
    for name, command in group.commands.items():
        path = f"{prefix}{name}"
        if getattr(command, "commands", None):
            found |= _commands(command, f"{path} ")
        else:
            found[path] = command
    return found


def test_every_command_that_prints_a_result_takes_json() -> None:
    commands = _commands(typer.main.get_group(app))
    assert {"apply", "preview", "ledger show", "tzdb add", "db upgrade", "gates"} <= set(commands)
    missing = [
        path
        for path, command in commands.items()
        if path not in LONG_RUNNING
        and not any("--json" in getattr(p, "opts", ()) for p in command.params)
    ]
    assert missing == []


def test_python_m_worker_is_the_almanac_worker_command() -> None:
    def options(args: list[str]) -> list[str]:
        text = subprocess.run(
            [sys.executable, *args, "--help"],
            cwd=REPO,
            capture_output=True,
            text=True,
            timeout=60,
            check=True,
            env={**os.environ, "COLUMNS": "200"},
        ).stdout
        return sorted(word for word in text.split() if word.startswith("--"))

    almanac_worker = options(["-c", "from almanac.cli import main; main()", "worker"])
    assert "--identity" in almanac_worker and "--sdk-metrics-port" in almanac_worker
    assert options(["-m", "worker"]) == almanac_worker


def test_errors_are_one_line_on_stderr_with_exit_2() -> None:
    result = CliRunner().invoke(app, ["preview", str(SEED), "--to", "soon"])
    assert result.exit_code == 2
    assert result.stdout == ""
    assert result.stderr == (
        "error: --to='soon': not an ISO 8601 instant like 2026-11-01T00:00:00Z\n"
    )


@pytest.mark.parametrize(
    ("given", "meant"),
    [
        ("2037-01-01Z", "2037-01-01T00:00:00Z"),
        ("2037-01-01+01:00", "2037-01-01T00:00:00+01:00"),
        ("2037-01-01-05:00", "2037-01-01T00:00:00-05:00"),
        ("2037-01-01", "2037-01-01T00:00:00Z"),
        ("2037-01-01z", "2037-01-01T00:00:00Z"),
    ],
)
def test_a_date_is_told_the_instant_of_its_midnight(given: str, meant: str) -> None:
    # ISO 8601 has no date with a UTC offset; an instant is a date, a time and an offset.
    result = CliRunner().invoke(app, ["preview", str(SEED), "--to", given])
    assert result.exit_code == 2
    assert result.stderr == (
        f"error: --to={given!r}: not an ISO 8601 instant like 2026-11-01T00:00:00Z; "
        f"did you mean {meant}?\n"
    )


def test_rfc_3339_lower_case_t_and_z_are_an_instant() -> None:
    # RFC 3339 §5.6: "T" and "Z" may alternatively be lower case.
    upper = CliRunner().invoke(
        app, ["preview", str(SEED), "--to", "2026-11-02T00:00:00Z", "--json"]
    )
    lower = CliRunner().invoke(
        app, ["preview", str(SEED), "--to", "2026-11-02t00:00:00z", "--json"]
    )
    assert upper.exit_code == 0, upper.output
    assert lower.exit_code == 0, lower.output
    assert lower.stdout == upper.stdout


def test_version_prints_the_project_version() -> None:
    import tomllib

    project = tomllib.loads((REPO / "pyproject.toml").read_text())["project"]
    done = CliRunner().invoke(app, ["--version"])
    assert done.exit_code == 0, done.output
    assert done.output == f"almanac {project['version']}\n"
