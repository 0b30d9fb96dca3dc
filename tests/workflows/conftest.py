"""Workflow test fixtures: ``time_skipping_env``, ``dev_env``, ``task_queue``, ``pg_ledger_url``.

The Temporal ones are defined in ``tests/temporal_env.py`` (shared with ``tests/actions``). Tests
using them are async, marked ``@pytest.mark.anyio`` and ``@pytest.mark.temporal``. The PostgreSQL
cluster is the ledger suite's (``tests/ledger/ledger_fixtures.py``: skipped without server binaries
unless ``ALMANAC_REQUIRE_POSTGRES=1``); ``pg_ledger_url`` is a fresh migrated database per test.
"""

import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
sys.path.insert(0, str(Path(__file__).resolve().parent))
sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "ledger"))

import itertools
import os
from collections.abc import Iterator

import pytest
from ledger_fixtures import pg_server
from ledger_pg import PgServer
from temporal_env import anyio_backend, dev_env, task_queue, time_skipping_env

__all__ = [
    "anyio_backend",
    "dev_env",
    "pg_ledger_url",
    "pg_server",
    "task_queue",
    "time_skipping_env",
]

_databases = itertools.count()


@pytest.fixture
def pg_ledger_url(pg_server: PgServer) -> Iterator[str]:
    """A fresh PostgreSQL ledger database (copied from the migrated template), dropped after."""
    name = f"workflows_{os.getpid()}_{next(_databases)}"
    pg_server.admin(f"CREATE DATABASE {name} TEMPLATE almanac_template")
    yield pg_server.url(name)
    pg_server.admin(f"DROP DATABASE IF EXISTS {name} WITH (FORCE)")
