"""Fixtures for the ledger contract suite (a plugin: `pytest_plugins = ["ledger_fixtures"]`).

- ``backend`` is parametrised ``sqlite`` / ``postgresql`` (the latter marked ``postgres``).
- PostgreSQL: one throwaway cluster per session (``tests/ledger/ledger_pg.py``), a template database
  migrated once, and a fresh database per test (``CREATE DATABASE … TEMPLATE``). Without server
  binaries the PostgreSQL cases skip — unless ``ALMANAC_REQUIRE_POSTGRES=1`` (CI), then they fail.
- SQLite: a template file migrated once per session, copied per test.
- Teardown asserts that no pooled connection is still checked out.
"""

from __future__ import annotations

import itertools
import os
import shutil
from collections.abc import Iterator
from pathlib import Path

import pytest
from ledger_pg import PgServer, find_pg_ctl, start_server

from ledger import Ledger
from ledger.migrate import upgrade

_counter = itertools.count()


@pytest.fixture(scope="session")
def pg_server() -> Iterator[PgServer]:
    pg_ctl = find_pg_ctl()
    if pg_ctl is None:
        message = "PostgreSQL server binaries (pg_ctl) not found; set ALMANAC_PG_CTL"
        if os.environ.get("ALMANAC_REQUIRE_POSTGRES") == "1":
            pytest.fail(message + " (ALMANAC_REQUIRE_POSTGRES=1)", pytrace=False)
        pytest.skip(message)
    server = start_server(pg_ctl)
    try:
        server.admin("CREATE DATABASE almanac_template")
        upgrade(server.url("almanac_template"))
        yield server
    finally:
        server.stop()


@pytest.fixture(scope="session")
def sqlite_template(tmp_path_factory: pytest.TempPathFactory) -> Path:
    path = tmp_path_factory.mktemp("ledger-template") / "template.sqlite3"
    upgrade(f"sqlite:///{path}")
    return path


@pytest.fixture
def database_url(request: pytest.FixtureRequest, backend: str, tmp_path: Path) -> Iterator[str]:
    if backend == "sqlite":
        template: Path = request.getfixturevalue("sqlite_template")
        path = tmp_path / "ledger.sqlite3"
        shutil.copyfile(template, path)
        yield f"sqlite:///{path}"
        return
    server: PgServer = request.getfixturevalue("pg_server")
    name = f"ledger_{os.getpid()}_{next(_counter)}"
    server.admin(f"CREATE DATABASE {name} TEMPLATE almanac_template")
    yield server.url(name)
    server.admin(f"DROP DATABASE IF EXISTS {name} WITH (FORCE)")


@pytest.fixture(
    params=["sqlite", pytest.param("postgresql", marks=pytest.mark.postgres)],
)
def backend(request: pytest.FixtureRequest) -> str:
    return str(request.param)


@pytest.fixture
def ledger(database_url: str) -> Iterator[Ledger]:
    if database_url.startswith("postgresql"):
        handle = Ledger.from_url(database_url, pool_size=20, max_overflow=120)
    else:
        handle = Ledger.from_url(database_url)
    try:
        yield handle
        assert handle.engine.pool.checkedout() == 0, "a connection was left checked out"  # type: ignore[attr-defined]
    finally:
        handle.dispose()
