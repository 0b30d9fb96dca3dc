"""A malformed ledger URL is one line on stderr and exit 2, from every command that opens the
ledger — no traceback, and never the URL itself (it may hold a password)."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

ALMANAC = str(Path(sys.executable).parent / "almanac")
PASSWORD = "canary-pw-41c7"
BAD_URLS = [
    "not a url",
    f"postgresql+psycopg://almanac:{PASSWORD}@db:notaport/ledger",
    f"mysql://almanac:{PASSWORD}@db/ledger",
    "sqlite://",
]
COMMANDS = [
    ["ledger", "list", "some-schedule"],
    ["ledger", "show", "some-schedule.r1.20261101T013000.f0"],
    ["db", "upgrade"],
    ["worker"],
]


# Every URL through one command, and one URL through every command (each run is a process).
CASES = [(url, COMMANDS[0]) for url in BAD_URLS] + [(BAD_URLS[1], c) for c in COMMANDS[1:]]


@pytest.mark.parametrize(("url", "command"), CASES)
def test_a_bad_ledger_url_is_one_line_on_stderr_and_exit_2(
    url: str, command: list[str], tmp_path: Path
) -> None:
    env = {**os.environ, "ALMANAC_DATA_DIR": str(tmp_path), "ALMANAC_LEDGER_URL": url}
    done = subprocess.run(
        [ALMANAC, *command], env=env, capture_output=True, text=True, timeout=60, check=False
    )
    assert done.returncode == 2, done.stderr
    assert done.stderr.count("\n") == 1, done.stderr
    assert done.stderr.startswith("error: ")
    assert "ledger" in done.stderr
    assert "Traceback" not in done.stderr + done.stdout
    assert PASSWORD not in done.stderr + done.stdout
