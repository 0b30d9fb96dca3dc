"""Apply the ledger's Alembic migrations programmatically (``almanac db upgrade``).

The schema comes only from these migrations (``ledger/migrations/versions``); nothing calls
``metadata.create_all``. Alembic runs on a connection of a :func:`ledger.db.create_ledger_engine`
engine, so SQLite gets the same pragmas as at run time.
"""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

from alembic import command
from alembic.config import Config
from alembic.runtime.migration import MigrationContext
from alembic.script import ScriptDirectory
from sqlalchemy import Engine
from sqlalchemy import exc as sa_exc

from ledger.db import create_ledger_engine
from ledger.errors import translate

MIGRATIONS = Path(__file__).parent / "migrations"


def alembic_config(engine: Engine | None = None) -> Config:
    """An Alembic config pointing at ``ledger/migrations``; ``engine`` is handed to ``env.py``."""
    config = Config()
    config.set_main_option("script_location", str(MIGRATIONS))
    if engine is not None:
        config.attributes["engine"] = engine
    return config


@contextmanager
def _engine(url: str) -> Iterator[Engine]:
    """A ledger engine on ``url`` for one call: driver errors translated, disposed after."""
    engine = create_ledger_engine(url)
    try:
        yield engine
    except sa_exc.SQLAlchemyError as error:
        raise translate(error, engine.url) from error
    finally:
        engine.dispose()


def upgrade(url: str, revision: str = "head") -> str | None:
    """Migrate the ledger at ``url`` to ``revision`` (default: the newest).

    Creates the SQLite file (not its directory) if it does not exist.

    Returns:
        The Alembic revision the database is at afterwards.

    Raises:
        LedgerUnavailable: the database cannot be reached.

    """
    with _engine(url) as engine:
        command.upgrade(alembic_config(engine), revision)
        return current(engine)


def revision_of(url: str) -> str | None:
    """The Alembic revision the ledger at ``url`` is at (``None``: never migrated).

    Raises:
        LedgerUnavailable: the database cannot be reached.

    """
    with _engine(url) as engine:
        return current(engine)


def current(engine: Engine) -> str | None:
    """The Alembic revision the database is at (``None``: never migrated)."""
    with engine.connect() as connection:
        return MigrationContext.configure(connection).get_current_revision()


def head() -> str | None:
    """The newest migration's revision ID."""
    return ScriptDirectory.from_config(alembic_config()).get_current_head()
