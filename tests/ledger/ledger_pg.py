"""A throwaway PostgreSQL cluster for the ledger tests, on the local server binaries.

pytest-postgresql's ``PostgreSQLExecutor`` runs ``pg_ctl`` (initdb, start, stop). We build it
ourselves instead of through the ``postgresql_proc`` factory for one reason: PostgreSQL refuses to
run as root, and these machines run tests as root. Then ``pg_ctl`` goes through a small wrapper
that runs it as the ``postgres`` user (``runuser``), and the data directory and log live in a
directory that user owns (pytest's own temp directories are private to root).
"""

from __future__ import annotations

import glob
import os
import pwd
import shutil
import stat
import subprocess
import tempfile
from dataclasses import dataclass
from pathlib import Path

from pytest_postgresql.executors import PostgreSQLExecutor


def find_pg_ctl() -> str | None:
    """Locate ``pg_ctl``: $ALMANAC_PG_CTL, PATH, pg_config --bindir, /usr/lib/postgresql/*/bin."""
    explicit = os.environ.get("ALMANAC_PG_CTL")
    if explicit:
        return explicit if os.access(explicit, os.X_OK) else None
    found = shutil.which("pg_ctl")
    if found:
        return found
    pg_config = shutil.which("pg_config")
    if pg_config:
        bindir = subprocess.run(
            [pg_config, "--bindir"], capture_output=True, text=True, check=False
        ).stdout.strip()
        candidate = Path(bindir) / "pg_ctl"
        if candidate.exists():
            return str(candidate)

    def version(path: str) -> tuple[int, ...]:
        part = Path(path).parts[-3]
        return tuple(int(x) for x in part.split(".") if x.isdigit())

    candidates = sorted(glob.glob("/usr/lib/postgresql/*/bin/pg_ctl"), key=version)
    return candidates[-1] if candidates else None


@dataclass
class PgServer:
    """A running cluster: connect as ``user`` on ``host:port`` (trust auth)."""

    executor: PostgreSQLExecutor
    host: str
    port: int
    user: str
    workdir: Path

    def url(self, dbname: str) -> str:
        return f"postgresql+psycopg://{self.user}@{self.host}:{self.port}/{dbname}"

    def admin(self, sql: str) -> None:
        import psycopg

        with psycopg.connect(
            host=self.host, port=self.port, user=self.user, dbname="postgres", autocommit=True
        ) as connection:
            connection.execute(sql)  # type: ignore[arg-type]

    def stop(self) -> None:
        try:
            self.executor.stop()
        finally:
            shutil.rmtree(self.workdir, ignore_errors=True)


def _free_port() -> int:
    import socket

    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def start_server(pg_ctl: str) -> PgServer:
    """initdb and start a cluster in a fresh temp directory; stop it with :meth:`PgServer.stop`."""
    workdir = Path(tempfile.mkdtemp(prefix="almanac-pg-"))
    executable = pg_ctl
    if os.geteuid() == 0:
        owner = pwd.getpwnam("postgres")
        os.chown(workdir, owner.pw_uid, owner.pw_gid)
        workdir.chmod(0o755)
        wrapper = Path(tempfile.mkdtemp(prefix="almanac-pgctl-")) / "pg_ctl"
        wrapper.write_text(f'#!/bin/sh\nexec runuser -u postgres -- "{pg_ctl}" "$@"\n')
        wrapper.chmod(wrapper.stat().st_mode | stat.S_IXUSR | stat.S_IXGRP | stat.S_IXOTH)
        wrapper.parent.chmod(0o755)
        executable = str(wrapper)
    port = _free_port()
    executor = PostgreSQLExecutor(
        executable=executable,
        host="127.0.0.1",
        port=port,
        user="postgres",
        dbname="almanac",
        options="",
        datadir=str(workdir / "data"),
        unixsocketdir=str(workdir),
        logfile=str(workdir / "postgresql.log"),
        startparams="-w",
        postgres_options="-c fsync=off -c synchronous_commit=off -c full_page_writes=off "
        "-c max_connections=200",
    )
    executor.start()
    executor.wait_for_postgres()
    server = PgServer(executor, "127.0.0.1", port, "postgres", workdir)
    _wait_for_connections(server)
    return server


def _wait_for_connections(server: PgServer, timeout: float = 60.0) -> None:
    """Wait until the cluster accepts connections, not only until ``pg_ctl`` says it runs.

    On a busy machine the first connection was refused "the database system is starting up".
    """
    import time

    import psycopg

    deadline = time.monotonic() + timeout
    while True:
        try:
            server.admin("SELECT 1")
            return
        except psycopg.OperationalError:
            if time.monotonic() >= deadline:
                raise
            time.sleep(0.1)
