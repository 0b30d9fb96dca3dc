"""The README's first command, exactly as written, runs the main job and resumes without repeats.

The command is read from the README's Quick start block (so this test breaks when the README
changes), run in the background with ``ALMANAC_DATA_DIR`` set to a fresh directory and free ports
(``ALMANAC_DEV_*``), stopped with SIGINT to its process group (what Ctrl-C does), started again and
stopped again. The short-period example (``every-10-seconds``) must record SUCCEEDED occurrences in
the ledger and effects at the sink in both runs, and nothing may run twice: one effect per
occurrenceId, each delivered once, one succeeded attempt per SUCCEEDED occurrence. While the
second run is up, the venv's ``temporal`` CLI must find the schedule's occurrence workflows by
their ``ScheduleId`` search attribute. Nothing here depends on the wall-clock date.
"""

from __future__ import annotations

import json
import os
import re
import signal
import socket
import sqlite3
import subprocess
import sys
import time
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pytest

from ledger import Ledger, OccurrenceState, list_occurrences, show_occurrence

pytestmark = [pytest.mark.slow, pytest.mark.temporal]

ROOT = Path(__file__).resolve().parents[2]
SCHEDULE = "every-10-seconds"
TEMPORAL = str(Path(sys.executable).parent / "temporal")
# `make run` may first (re)install the venv from the lock file when pyproject.toml changed.
START_DEADLINE = 240.0
STOP_DEADLINE = 60.0


def readme_first_command() -> str:
    """The first command of the README's Quick start ``sh`` block, without its comment."""
    text = (ROOT / "README.md").read_text(encoding="utf-8")
    section = text.split("## Quick start", 1)[1]
    block = re.search(r"```sh\n(.*?)```", section, re.S)
    assert block, "README.md: no ```sh block under ## Quick start"
    lines = [line.split("#", 1)[0].strip() for line in block.group(1).splitlines()]
    commands = [line for line in lines if line]
    assert commands, "README.md: the Quick start block has no command"
    return commands[0]


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


@dataclass
class Run:
    """One background run of the README command."""

    process: subprocess.Popen[bytes]
    log: Path

    def output(self) -> str:
        return self.log.read_text(errors="replace")

    def stop(self) -> int:
        os.killpg(self.process.pid, signal.SIGINT)  # Ctrl-C in a terminal signals the group
        try:
            return self.process.wait(timeout=STOP_DEADLINE)
        except subprocess.TimeoutExpired:
            os.killpg(self.process.pid, signal.SIGKILL)
            self.process.wait()
            pytest.fail(f"did not stop within {STOP_DEADLINE}s of SIGINT:\n{self.output()[-3000:]}")


@dataclass
class Sessions:
    """What the two runs left behind."""

    data_dir: Path
    command: str
    outputs: list[str] = field(default_factory=list)
    succeeded_after: list[set[str]] = field(default_factory=list)
    workflow_list: list[dict[str, Any]] = field(default_factory=list)
    python_runs: list[subprocess.CompletedProcess[str]] = field(default_factory=list)


def tutorial_python_example() -> str:
    """The ``python`` block of the tutorial's "From Python" section, exactly as written."""
    text = (ROOT / "docs" / "tutorial.md").read_text(encoding="utf-8")
    heading = re.search(r"^## (?:\d+\. )?From Python$", text, re.M)
    assert heading, "docs/tutorial.md: no ## From Python section"
    section = text[heading.end() :].split("\n## ", 1)[0]
    block = re.search(r"```python\n(.*?)```", section, re.S)
    assert block, "docs/tutorial.md: no ```python block under ## From Python"
    return block.group(1)


def succeeded(data_dir: Path) -> set[str]:
    path = data_dir / "ledger.sqlite3"
    if not path.exists():
        return set()
    handle = Ledger.from_url(f"sqlite:///{path}")
    try:
        rows = list_occurrences(handle, SCHEDULE, states=[OccurrenceState.SUCCEEDED])
    except Exception:  # not migrated yet
        return set()
    finally:
        handle.dispose()
    return {r.occurrence_id for r in rows}


def effects(data_dir: Path) -> list[tuple[str, int, dict[str, Any]]]:
    path = data_dir / "sink.sqlite3"
    if not path.exists():
        return []
    with sqlite3.connect(f"file:{path}?mode=ro", uri=True) as conn:
        rows = conn.execute("select idempotency_key, delivery_count, body from effects").fetchall()
    return [(key, count, json.loads(body)) for key, count, body in rows]


def wait_for(run: Run, what: str, probe: Any, deadline: float = START_DEADLINE) -> Any:
    end = time.monotonic() + deadline
    while True:
        value = probe()
        if value:
            return value
        if run.process.poll() is not None:
            pytest.fail(
                f"exited with {run.process.returncode} before {what}:\n{run.output()[-3000:]}"
            )
        if time.monotonic() > end:
            pytest.fail(f"no {what} within {deadline}s:\n{run.output()[-3000:]}")
        time.sleep(1.0)


@pytest.fixture(scope="module")
def sessions(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Sessions]:
    tmp = tmp_path_factory.mktemp("quickstart")
    data_dir = tmp / "data"
    ports = {
        "ALMANAC_DEV_PORT": free_port(),
        "ALMANAC_DEV_UI_PORT": free_port(),
        "ALMANAC_DEV_SINK_PORT": free_port(),
        "ALMANAC_DEV_METRICS_PORT": free_port(),
        "ALMANAC_DEV_SERVER_METRICS_PORT": free_port(),
        "ALMANAC_DEV_CONSOLE_PORT": free_port(),
    }
    env = {**os.environ, "ALMANAC_DATA_DIR": str(data_dir), **{k: str(v) for k, v in ports.items()}}
    for name in ("ALMANAC_LEDGER_URL", "ALMANAC_TEMPORAL_ADDRESS", "ALMANAC_TZDB_DIR"):
        env.pop(name, None)
    command = readme_first_command()
    found = Sessions(data_dir, command)

    def start(n: int) -> Run:
        log = tmp / f"run{n}.log"
        with log.open("wb") as out:
            process = subprocess.Popen(
                command,
                shell=True,  # exactly as a user types it
                cwd=ROOT,
                env=env,
                stdout=out,
                stderr=subprocess.STDOUT,
                start_new_session=True,
            )
        return Run(process, log)

    run = start(1)
    try:
        wait_for(run, "two SUCCEEDED occurrences", lambda: len(succeeded(data_dir)) >= 2)
        wait_for(run, "effects at the sink", lambda: len(effects(data_dir)) >= 2)
    finally:
        run.stop()
    found.outputs.append(run.output())
    found.succeeded_after.append(succeeded(data_dir))

    run = start(2)
    try:
        before = found.succeeded_after[0]
        wait_for(
            run,
            "two more SUCCEEDED occurrences after the restart",
            lambda: len(succeeded(data_dir) - before) >= 2,
        )

        def listed() -> list[dict[str, Any]]:
            address = f"127.0.0.1:{ports['ALMANAC_DEV_PORT']}"
            query = f'ScheduleId="{SCHEDULE}"'
            result = subprocess.run(
                [TEMPORAL, "workflow", "list", "--address", address, "-q", query, "-o", "json"],
                capture_output=True,
                text=True,
                timeout=30,
            )
            assert result.returncode == 0, result.stderr
            rows: list[dict[str, Any]] = json.loads(result.stdout or "[]")
            ids = {r["execution"]["workflowId"] for r in rows}
            return rows if len(ids & succeeded(data_dir)) >= 2 else []

        found.workflow_list = wait_for(run, "occurrences listed by ScheduleId", listed, 60)
        # The tutorial's Python example, as written, against this running `make run` (twice: the
        # second run finds its schedule running and leaves it as it is).
        example = tmp / "example.py"
        example.write_text(tutorial_python_example())
        python_env = {
            **env,
            "ALMANAC_TEMPORAL_ADDRESS": f"127.0.0.1:{ports['ALMANAC_DEV_PORT']}",
        }
        for _ in range(2):
            found.python_runs.append(
                subprocess.run(
                    [sys.executable, str(example)],
                    cwd=ROOT,
                    env=python_env,
                    capture_output=True,
                    text=True,
                    timeout=120,
                )
            )
    finally:
        run.stop()
    found.outputs.append(run.output())
    found.succeeded_after.append(succeeded(data_dir))
    yield found


def test_readme_first_command_runs_the_dev_stack(sessions: Sessions) -> None:
    assert sessions.command == "make run"
    first, second = sessions.outputs
    assert "Temporal Web UI" in first and "/metrics" in first
    assert f"{SCHEDULE} r1: started" in first
    assert f"{SCHEDULE} r1: already running, left as it is" in second
    for output in sessions.outputs:
        assert "SUCCEEDED" in output and "stopped; run it again" in output
        assert "Traceback" not in output


def test_restart_resumes_and_nothing_runs_twice(sessions: Sessions) -> None:
    first, final = sessions.succeeded_after
    assert len(first) >= 2 and len(final - first) >= 2 and first <= final
    recorded = effects(sessions.data_dir)
    keys = [key for key, _, _ in recorded]
    assert len(keys) == len(set(keys))
    assert all(count == 1 for _, count, _ in recorded), recorded
    assert all(body["occurrenceId"] == key for key, _, body in recorded)
    mine = {key for key in keys if key.startswith(f"{SCHEDULE}.")}
    assert final <= mine, "a SUCCEEDED occurrence without its effect at the sink"
    handle = Ledger.from_url(f"sqlite:///{sessions.data_dir / 'ledger.sqlite3'}")
    try:
        for occurrence_id in final:
            attempts = show_occurrence(handle, occurrence_id).attempts
            assert [a.outcome for a in attempts].count("SUCCEEDED") == 1, occurrence_id
    finally:
        handle.dispose()


def test_temporal_cli_finds_occurrences_by_schedule_id(sessions: Sessions) -> None:
    rows = sessions.workflow_list
    assert rows
    assert {r["type"]["name"] for r in rows} == {"AlmanacOccurrence"}
    assert all(r["execution"]["workflowId"].startswith(f"{SCHEDULE}.r1.") for r in rows)


def test_tutorial_python_example_runs_as_written_against_make_run(sessions: Sessions) -> None:
    first, second = sessions.python_runs
    for run in (first, second):
        assert run.returncode == 0, run.stderr[-3000:]
        assert "Traceback" not in run.stderr
    assert "started almanac-schedule-readme-example" in first.stdout
    assert "started" not in second.stdout  # left as it is
    for run in (first, second):
        lines = run.stdout.splitlines()
        assert "ledger 1" in lines  # status read from the ledger, revision 1
        upcoming = [line for line in lines if line.startswith("readme-example.r1.")]
        assert len(upcoming) == 5
        assert "readme-example" in lines[-1] and "every-10-seconds" in lines[-1]
