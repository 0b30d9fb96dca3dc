"""``make run``'s first install says what it does, step by step, and shows uv's progress.

Read with ``make -n`` (print the commands, run nothing) against a virtual environment that does
not exist, so the install rule is what ``make run`` would run first.
"""

from __future__ import annotations

import os
import shutil
import subprocess
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]


@pytest.mark.skipif(shutil.which("make") is None, reason="make is not installed")
def test_first_install_prints_each_step_and_lets_uv_show_progress(tmp_path: Path) -> None:
    venv = tmp_path / "venv"
    # Under `make test` (CI) the parent make's flags would reach this one: start it clean.
    env = {k: v for k, v in os.environ.items() if k not in {"MAKEFLAGS", "MAKELEVEL", "MFLAGS"}}
    dry = subprocess.run(
        ["make", "--no-print-directory", "-n", "run", f"VENV={venv}"],
        cwd=ROOT,
        env=env,
        capture_output=True,
        text=True,
        timeout=60,
        check=True,
    ).stdout.splitlines()
    steps = [line for line in dry if line.startswith("echo ") and "[" in line and "/5]" in line]
    assert len(steps) == 5, dry
    lock_install = [line for line in dry if "-r requirements.lock" in line]
    assert len(lock_install) == 1 and " -q " not in f" {lock_install[0]} "
    # Dependencies are compiled at install, so no command pays for compiling them (Makefile);
    # the compiling prints nothing for the better part of a minute, so a step line says so first.
    (compiling,) = [i for i, line in enumerate(dry) if " -m compileall " in line]
    assert dry.index(lock_install[0]) < compiling
    assert dry[compiling - 1].startswith("echo ") and "bytecode" in dry[compiling - 1]
    assert "purelib" in dry[compiling]
    assert dry[-1].endswith("almanac dev")
