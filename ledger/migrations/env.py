"""Alembic environment for the ledger; run through ``ledger.migrate`` (or ``alembic`` with a URL).

``ledger.migrate`` hands a ready engine in ``config.attributes["engine"]``; the ``alembic``
command line may instead set ``sqlalchemy.url`` (``-x url=…`` is also read).
"""

from __future__ import annotations

from alembic import context
from sqlalchemy import Engine

from ledger.db import create_ledger_engine
from ledger.models import Base

config = context.config
target_metadata = Base.metadata


def _engine() -> Engine:
    engine = config.attributes.get("engine")
    if isinstance(engine, Engine):
        return engine
    url = context.get_x_argument(as_dictionary=True).get("url") or config.get_main_option(
        "sqlalchemy.url"
    )
    if not url:
        raise RuntimeError("no database: pass -x url=… or use ledger.migrate.upgrade(url)")
    return create_ledger_engine(url)


def run_migrations_online() -> None:
    engine = _engine()
    with engine.connect() as connection:
        context.configure(
            connection=connection,
            target_metadata=target_metadata,
            render_as_batch=connection.dialect.name == "sqlite",
            compare_type=True,
        )
        with context.begin_transaction():
            context.run_migrations()
        connection.commit()


if context.is_offline_mode():
    raise RuntimeError("offline (SQL script) mode is not supported for the ledger")
run_migrations_online()
