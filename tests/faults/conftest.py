"""Fixtures for the fault matrix.

- Temporal environments and a ``task_queue`` per test (``tests/temporal_env.py``).
- ``store``: a fresh ledger parametrised over ``sqlite`` and ``postgresql`` (the ledger suite's
  fixtures, ``tests/ledger/ledger_fixtures.py``: a throwaway cluster; skipped without server
  binaries unless ``ALMANAC_REQUIRE_POSTGRES=1``).
- ``revision_reads``: the schedule IDs ``ledger.published_specs`` is called for.

The helpers live in ``faultkit.py``.
"""

import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

_TESTS = Path(__file__).resolve().parents[1]
for folder in (_TESTS, _TESTS / "ledger", _TESTS / "workflows", Path(__file__).resolve().parent):
    sys.path.insert(0, str(folder))

from ledger_fixtures import backend, database_url, pg_server, sqlite_template  # noqa: E402
from ledger_fixtures import ledger as ledger_handle  # noqa: E402
from temporal_env import anyio_backend, dev_env, task_queue, time_skipping_env  # noqa: E402

import ledger  # noqa: E402
from ledger import Ledger  # noqa: E402


@pytest.fixture
def store(ledger_handle: Ledger) -> Ledger:
    """The ledger of this test (SQLite file or PostgreSQL database), migrated, empty."""
    return ledger_handle


@pytest.fixture
def revision_reads(monkeypatch: pytest.MonkeyPatch) -> list[str]:
    """The schedule IDs ``ledger.published_specs`` is called for, from now on."""
    seen: list[str] = []
    real: Callable[..., Any] = ledger.published_specs

    def counted(store: Ledger, schedule_id: str) -> Any:
        seen.append(schedule_id)
        return real(store, schedule_id)

    monkeypatch.setattr(ledger, "published_specs", counted)
    return seen


__all__ = [
    "anyio_backend",
    "backend",
    "database_url",
    "dev_env",
    "ledger_handle",
    "pg_server",
    "revision_reads",
    "sqlite_template",
    "store",
    "task_queue",
    "time_skipping_env",
]
