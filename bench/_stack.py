"""What the Temporal benches share: a dev server, a sink, worker processes, CPU accounting.

- :func:`dev_server`: ``temporal server start-dev`` (the pip ``temporal`` binary) on free ports,
  headless, SQLite file with the WAL pragmas of ``shared/notes/temporal.md``, Almanac's search
  attributes registered; its process ID for CPU accounting.
- :class:`WorkerProcess`: ``python -m worker`` (or any module) as a child process with its own
  task queue and ledger, optionally from another source tree (``--before REF``: the code at a git
  revision, extracted with ``git archive``), so before and after run side by side in one bench;
  :func:`almanac_arm` starts one arm's production worker that way, optionally counting its
  ledger transactions (``bench/_counted_worker.py``).
- :func:`cpu_seconds`: user + system CPU of a process so far (``/proc/<pid>/stat``).
"""

from __future__ import annotations

import contextlib
import os
import shutil
import signal
import socket
import subprocess
import sys
import tarfile
import tempfile
import time
import uuid
from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from io import BytesIO
from pathlib import Path

from bench._counted_worker import new_counts_file
from ledger.migrate import upgrade

ROOT = Path(__file__).resolve().parent.parent
SEARCH_ATTRIBUTES = ("ScheduleId=Keyword", "Revision=Int", "NominalLocal=Keyword")
SEARCH_ATTRIBUTES += ("OccurrenceState=Keyword",)
TICKS = os.sysconf("SC_CLK_TCK")


def free_port() -> int:
    """A TCP port nobody listens on right now (127.0.0.1)."""
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def binary(name: str) -> str:
    """A binary installed next to this interpreter (``temporal``)."""
    path = Path(sys.executable).parent / name
    if not path.is_file():
        raise SystemExit(f"{name} not found next to {sys.executable}: run make install")
    return str(path)


def cpu_seconds(pid: int) -> float:
    """User + system CPU seconds the process ``pid`` has used (not its children)."""
    fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / TICKS


def thread_cpu_seconds(pid: int) -> dict[str, float]:
    """CPU seconds of ``pid``'s threads by kind: ``main`` (a Python worker's event loop: workflow
    activations, async activities), ``core`` (the Temporal SDK's Rust threads, ``tokio-*``) and
    ``other`` (the rest: for a worker, its synchronous activities' thread pool)."""
    kinds = {"main": 0.0, "core": 0.0, "other": 0.0}
    for task in Path(f"/proc/{pid}/task").iterdir():
        try:
            stat = (task / "stat").read_text()
        except OSError:
            continue  # the thread ended
        name = stat[stat.index("(") + 1 : stat.rindex(")")]
        fields = stat.rsplit(")", 1)[1].split()
        kind = "main" if task.name == str(pid) else "core" if name.startswith("tokio") else "other"
        kinds[kind] += (int(fields[11]) + int(fields[12])) / TICKS
    return kinds


def rss_mib(pid: int, field: str = "VmRSS") -> float:
    """Resident memory of ``pid`` in MiB: now (``VmRSS``), or its peak so far (``VmHWM``)."""
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith(f"{field}:"):
            return int(line.split()[1]) / 1024
    return float("nan")


@dataclass
class DevServer:
    """A running dev server: its address and process."""

    address: str
    process: subprocess.Popen[bytes]

    @property
    def pid(self) -> int:
        """The server's process ID."""
        return self.process.pid


@contextlib.contextmanager
def dev_server(folder: Path, *extra: str) -> Iterator[DevServer]:
    """A headless dev server on a SQLite file in ``folder`` (WAL pragmas); stopped on exit."""
    port = free_port()
    args = [
        binary("temporal"),
        "server",
        "start-dev",
        "--headless",
        "--db-filename",
        str(folder / "temporal.sqlite3"),
        "--port",
        str(port),
        "--http-port",
        str(free_port()),
        "--metrics-port",
        str(free_port()),
        "--log-level",
        "error",
        "--sqlite-pragma",
        "journal_mode=wal",
        "--sqlite-pragma",
        "synchronous=off",
        *[a for sa in SEARCH_ATTRIBUTES for a in ("--search-attribute", sa)],
        *extra,
    ]
    process = subprocess.Popen(args, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    try:
        _wait_for_port(port, 30.0)
        yield DevServer(f"127.0.0.1:{port}", process)
    finally:
        process.send_signal(signal.SIGTERM)
        try:
            process.wait(15)
        except subprocess.TimeoutExpired:
            process.kill()
            process.wait()


def _wait_for_port(port: int, timeout: float) -> None:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        with contextlib.suppress(OSError), socket.create_connection(("127.0.0.1", port), 0.5):
            time.sleep(0.5)  # the frontend accepts before the namespace is ready
            return
        time.sleep(0.1)
    raise RuntimeError(f"the dev server did not listen on {port} within {timeout} s")


@contextlib.contextmanager
def source_tree(ref: str | None) -> Iterator[Path]:
    """This checkout (``ref`` None), or the code at git ``ref`` extracted to a temp directory."""
    if ref is None:
        yield ROOT
        return
    archive = subprocess.run(
        ["git", "-C", str(ROOT), "archive", "--format=tar", ref],
        check=True,
        capture_output=True,
    ).stdout
    folder = Path(tempfile.mkdtemp(prefix="almanac-bench-tree-"))
    try:
        with tarfile.open(fileobj=BytesIO(archive)) as tar:
            tar.extractall(folder, filter="data")
        yield folder
    finally:
        shutil.rmtree(folder, ignore_errors=True)


class WorkerProcess:
    """A worker as a child process: ``python -m <module>`` (or ``python <script>``) from ``tree``
    with ``env`` added."""

    def __init__(
        self,
        tree: Path,
        env: dict[str, str],
        *,
        module: str = "worker",
        script: Path | None = None,
        log: Path,
        args: Sequence[str] = (),
    ) -> None:
        """Start it (``args``: its command-line arguments); ``log`` receives its output.

        ``script``: run this file instead of ``module`` (a wrapper of this checkout around the
        worker of ``tree``, which stays first on ``PYTHONPATH``).
        """
        full = {**os.environ, **env, "PYTHONPATH": str(tree), "PYTHONUNBUFFERED": "1"}
        self._log = open(log, "ab")  # noqa: SIM115 - closed in stop()
        launch = ["-m", module] if script is None else [str(script)]
        self.process = subprocess.Popen(
            [sys.executable, *launch, *args],
            cwd=tree,
            env=full,
            stdout=self._log,
            stderr=subprocess.STDOUT,
        )

    @property
    def pid(self) -> int:
        """The worker's process ID."""
        return self.process.pid

    def stop(self, sig: int = signal.SIGTERM, timeout: float = 30.0) -> None:
        """Signal the worker and wait for it (kill after ``timeout``)."""
        if self.process.poll() is None:
            self.process.send_signal(sig)
            try:
                self.process.wait(timeout)
            except subprocess.TimeoutExpired:
                self.process.kill()
                self.process.wait()
        self._log.close()


def almanac_worker_env(
    address: str, task_queue: str, ledger_url: str, data_dir: Path
) -> dict[str, str]:
    """The environment of ``python -m worker`` for one bench arm (loopback sink allowed)."""
    return {
        "ALMANAC_TEMPORAL_ADDRESS": address,
        "ALMANAC_TEMPORAL_TASK_QUEUE": task_queue,
        "ALMANAC_LEDGER_URL": ledger_url,
        "ALMANAC_DATA_DIR": str(data_dir),
        "ALMANAC_EGRESS_ALLOW": "127.0.0.1",
    }


def migrate(tree: Path, url: str) -> None:
    """Migrate the ledger at ``url`` to the newest migration of ``tree``.

    Another tree's migrations run in a child process of that tree: its worker migrates an embedded
    ledger on start and refuses one at a revision it does not know.
    """
    if tree == ROOT:
        upgrade(url)
        return
    subprocess.run(
        [sys.executable, "-c", "import sys, ledger.migrate as m; m.upgrade(sys.argv[1])", url],
        cwd=tree,
        env={**os.environ, "PYTHONPATH": str(tree)},
        check=True,
    )


@dataclass
class ArmWorker:
    """One Almanac arm's production worker: its process, ledger URL and task queue."""

    process: WorkerProcess
    ledger_url: str
    task_queue: str
    transactions: Path | None
    """The worker's transaction counts (``bench._counted_worker.read_counts``), if counted."""


def almanac_arm(
    stack: contextlib.ExitStack,
    folder: Path,
    address: str,
    name: str,
    ref: str | None,
    *,
    count_transactions: bool = False,
) -> ArmWorker:
    """Start the worker of git revision ``ref`` (``None``: this checkout) as arm ``name``.

    The arm gets a task queue and a fresh SQLite ledger of its own in ``folder``, migrated by the
    tree's own migrations (:func:`migrate`; the bench seeds it with this checkout's
    ``publish_revision`` and ``materialize``, which must fit the revision's schema). ``stack``
    stops the worker before it removes the revision's source tree. ``count_transactions``: run
    the worker under this checkout's ``bench/_counted_worker.py``, its counts in
    ``folder/<name>.transactions``.
    """
    tree = stack.enter_context(source_tree(ref))
    url = f"sqlite:///{folder / f'{name}.sqlite3'}"
    migrate(tree, url)
    queue = f"{name}-{uuid.uuid4().hex[:6]}"
    env = almanac_worker_env(address, queue, url, folder / name)
    counts, script = None, None
    if count_transactions:
        counts = new_counts_file(folder / f"{name}.transactions")
        env["BENCH_TXN_COUNTS"] = str(counts)
        script = ROOT / "bench" / "_counted_worker.py"
    proc = WorkerProcess(tree, env, script=script, log=folder / f"{name}.log")
    stack.callback(proc.stop)
    return ArmWorker(proc, url, queue, counts)
