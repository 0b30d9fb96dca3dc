"""``almanac dev`` SIGKILLed (its process group and its Temporal server) starts again at once.

Issue 15: after a crash, ``almanac dev`` refused to start for about 90 s ("port … is in use")
while nothing listened: the crashed stack's connections were in TIME_WAIT. The stack runs on
free ports with the ``every-10-seconds`` example until an occurrence succeeded (so the sink, the
worker and the server have had connections), is SIGKILLed without any chance to clean up, and is
started again as soon as its processes are gone: it must come up, not report a port in use.
"""

from __future__ import annotations

import os
import shutil
import signal
import subprocess
import sys
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from test_readme_quickstart import free_port, succeeded

pytestmark = [pytest.mark.slow, pytest.mark.temporal]

ROOT = Path(__file__).resolve().parents[2]
ALMANAC = str(Path(sys.executable).parent / "almanac")
READY = "Ctrl-C stops everything"
DEADLINE = 180.0


def wait_for(what: str, probe: Callable[[], Any], log: Path, deadline: float = DEADLINE) -> Any:
    end = time.monotonic() + deadline
    while True:
        value = probe()
        if value:
            return value
        if time.monotonic() > end:
            pytest.fail(f"no {what} within {deadline}s:\n{log.read_text(errors='replace')[-3000:]}")
        time.sleep(0.5)


def start(
    data_dir: Path, examples: Path, env: dict[str, str], log: Path
) -> subprocess.Popen[bytes]:
    with log.open("ab") as handle:
        return subprocess.Popen(
            [ALMANAC, "dev", "--no-ui", "--data-dir", str(data_dir), "--examples", str(examples)],
            cwd=ROOT,
            env=env,
            stdout=handle,
            stderr=subprocess.STDOUT,
            start_new_session=True,
        )


def children(pid: int) -> list[int]:
    found: list[int] = []
    for task in Path(f"/proc/{pid}/task").iterdir():
        text = (task / "children").read_text().split()
        found.extend(int(c) for c in text)
    return found


def gone(pid: int) -> bool:
    try:
        stat = Path(f"/proc/{pid}/stat").read_text()
    except FileNotFoundError:
        return True
    return stat.rsplit(")", 1)[1].split()[0] == "Z"  # a zombie holds no socket


@pytest.mark.skipif(sys.platform != "linux", reason="reads /proc for the server's pid")
def test_almanac_dev_starts_again_right_after_a_sigkill(tmp_path: Path) -> None:
    data_dir = tmp_path / "data"
    examples = tmp_path / "examples"
    examples.mkdir()
    shutil.copy(ROOT / "examples" / "every-10-seconds.yaml", examples)
    env = {k: v for k, v in os.environ.items() if not k.startswith("ALMANAC_")}
    env.update(
        ALMANAC_DEV_PORT=str(free_port()),
        ALMANAC_DEV_UI_PORT=str(free_port()),
        ALMANAC_DEV_SINK_PORT=str(free_port()),
        ALMANAC_DEV_METRICS_PORT=str(free_port()),
        ALMANAC_DEV_SERVER_METRICS_PORT=str(free_port()),
        ALMANAC_DEV_CONSOLE_PORT=str(free_port()),
        PYTHONUNBUFFERED="1",
    )
    first_log, second_log = tmp_path / "first.log", tmp_path / "second.log"
    first = start(data_dir, examples, env, first_log)
    second: subprocess.Popen[bytes] | None = None
    try:
        wait_for("start", lambda: READY in first_log.read_text(errors="replace"), first_log)
        wait_for("SUCCEEDED occurrence", lambda: succeeded(data_dir), first_log)
        servers = children(first.pid)
        assert servers, "the Temporal dev server is a child of almanac dev"
        os.killpg(first.pid, signal.SIGKILL)
        for pid in servers:  # in a session of its own: kill it too, as a crash of both would
            os.kill(pid, signal.SIGKILL)
        first.wait(timeout=30)
        wait_for("the old processes gone", lambda: all(gone(p) for p in servers), first_log, 30)

        second = start(data_dir, examples, env, second_log)
        wait_for(
            "restart",
            lambda: second.poll() is not None or READY in second_log.read_text(errors="replace"),
            second_log,
        )
        output = second_log.read_text(errors="replace")
        assert second.poll() is None, output[-3000:]
        assert "in use" not in output
    finally:
        for process in (first, second):
            if process is not None and process.poll() is None:
                os.killpg(process.pid, signal.SIGINT)
                try:
                    process.wait(timeout=60)
                except subprocess.TimeoutExpired:
                    os.killpg(process.pid, signal.SIGKILL)
                    process.wait()
