"""One ``almanac dev`` per data directory: a second stack on the same state is refused at once.

The fresh-user trial started a second stack with other ports on the same ``ALMANAC_DATA_DIR``:
two Temporal servers on one state file, two workers on one ledger, and the second worker's claims
failed real occurrences. The lock is a ``flock`` the kernel drops when its holder dies, so a
SIGKILLed stack never blocks the next start; a stack that ends (a start that failed, Ctrl-C)
removes ``dev.lock``, so a new data directory is left as it was.
"""

from __future__ import annotations

import os
import signal
import socket
import subprocess
import sys
from pathlib import Path

import pytest

from almanac.stack.dev import DevError, lock_data_dir

REPO = Path(__file__).resolve().parents[2]
HOLDER = (
    "import sys, time; from pathlib import Path; from almanac.stack.dev import lock_data_dir; "
    "lock = lock_data_dir(Path(sys.argv[1])); lock.__enter__(); print('held', flush=True); "
    "time.sleep(600)"
)


def _hold(data_dir: Path) -> subprocess.Popen[str]:
    holder = subprocess.Popen(
        [sys.executable, "-c", HOLDER, str(data_dir)],
        cwd=REPO,
        stdout=subprocess.PIPE,
        text=True,
    )
    assert holder.stdout is not None
    assert holder.stdout.readline().strip() == "held"  # blocks until the lock is taken
    return holder


def test_a_second_stack_on_the_same_data_directory_is_refused_naming_the_holder(
    tmp_path: Path,
) -> None:
    holder = _hold(tmp_path)
    try:
        refused = rf"in use by another `almanac dev` \(pid {holder.pid}\)"
        with pytest.raises(DevError, match=refused), lock_data_dir(tmp_path):
            pass
        done = subprocess.run(
            [str(Path(sys.executable).parent / "almanac"), "dev", "--data-dir", str(tmp_path)],
            cwd=REPO,
            capture_output=True,
            text=True,
            timeout=120,
            env={**os.environ, "ALMANAC_DEV_PORT": "27333"},
        )
        assert done.returncode == 1, done.stderr
        [line] = done.stderr.strip().splitlines()
        assert line.startswith("error: --data-dir=") and f"pid {holder.pid}" in line
        assert not (tmp_path / "temporal.sqlite3").exists()  # refused before anything started
    finally:
        holder.kill()
        holder.wait(timeout=30)


def test_the_lock_of_a_killed_stack_is_free_at_once(tmp_path: Path) -> None:
    holder = _hold(tmp_path)
    os.kill(holder.pid, signal.SIGKILL)
    holder.wait(timeout=30)
    with lock_data_dir(tmp_path) as lock:
        lock.seek(0)
        assert lock.read() == f"pid {os.getpid()}\n"
    assert not (tmp_path / "dev.lock").exists()


def test_a_start_failing_after_the_lock_leaves_no_lock_behind(tmp_path: Path) -> None:
    # The Temporal port in use: found after the data directory is taken (a second stack on it
    # is told of the holder first), before anything starts.
    data_dir = tmp_path / "new"
    with socket.socket() as taken:
        taken.bind(("127.0.0.1", 0))
        taken.listen()
        port = taken.getsockname()[1]
        done = subprocess.run(
            [str(Path(sys.executable).parent / "almanac"), "dev", "--data-dir", str(data_dir)],
            cwd=REPO,
            capture_output=True,
            text=True,
            timeout=120,
            env={**os.environ, "ALMANAC_DEV_PORT": str(port)},
        )
    assert (
        done.returncode == 1 and f"port {port} (Temporal frontend, --port) is in use" in done.stderr
    )
    assert list(data_dir.iterdir()) == []
