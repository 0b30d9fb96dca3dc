"""Fixtures for the console: a ledger with real facts (``scenario.py``) on SQLite and PostgreSQL,
the console app over it at a fixed "now", and an operator whose token is in a secrets file."""

import sys
from collections.abc import Iterator
from pathlib import Path

import pytest

_TESTS = Path(__file__).resolve().parents[1]
for folder in (_TESTS / "ledger", Path(__file__).resolve().parent):
    sys.path.insert(0, str(folder))

from ledger_fixtures import backend, database_url, ledger, pg_server, sqlite_template  # noqa: E402
from scenario import NOW, TOKEN, Facts, build  # noqa: E402

from almanac.console import ConsoleSettings  # noqa: E402
from almanac.settings import AlmanacSettings  # noqa: E402
from ledger import Ledger  # noqa: E402

__all__ = ["backend", "database_url", "ledger", "pg_server", "sqlite_template"]


@pytest.fixture
def facts(ledger: Ledger) -> Facts:
    return build(ledger)


@pytest.fixture
def settings(tmp_path: Path) -> AlmanacSettings:
    secrets = tmp_path / "secrets"
    secrets.mkdir()
    (secrets / "console-alice").write_text(TOKEN + "\n")
    return AlmanacSettings(data_dir=tmp_path, secrets_dir=secrets)


@pytest.fixture
def console_settings() -> ConsoleSettings:
    return ConsoleSettings(
        operators="alice=file:console-alice",  # type: ignore[arg-type]
        temporal_ui_url="http://127.0.0.1:8233",
    )


@pytest.fixture
def now() -> Iterator[list]:
    """The console's clock: a one-item list a test may move."""
    yield [NOW]
