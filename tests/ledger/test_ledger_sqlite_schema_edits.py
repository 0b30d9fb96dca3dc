"""SQLite's in-place table edits (``ledger/migrations/sqlite_schema_edit.py``), one by one.

Golden expectations: each migration's frozen strings (the text it says a table holds before and
after it), and the schema a straight upgrade produces — stepping down to 0004 and back up must
reproduce it, object for object, at every revision on the way (up to the order of the constraints
Alembic's batch mode writes: see :func:`_unordered`).
"""

from __future__ import annotations

import importlib.util
import sqlite3
from pathlib import Path
from types import ModuleType

import pytest
import sqlalchemy as sa
from alembic import command

import ledger as ledger_package
from ledger import Ledger
from ledger.migrate import alembic_config, current, head
from ledger.migrations.sqlite_schema_edit import Edit, edit_table_definitions

pytest_plugins = ["ledger_fixtures"]  # ledger, backend and the PostgreSQL cluster

_VERSIONS = Path(ledger_package.__file__).parent / "migrations" / "versions"


def _migration(revision: str) -> ModuleType:
    (path,) = _VERSIONS.glob(f"{revision}_*.py")
    spec = importlib.util.spec_from_file_location(f"ledger_migration_{revision}", path)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def _frozen_texts(revision: str) -> list[tuple[str, str, str]]:
    """(table, text before, text after) of each edit, from the migration's frozen strings."""
    m = _migration(revision)
    if revision == "0005":
        return [
            (
                table,
                f"CONSTRAINT {name} CHECK ({e.format(old)})",
                f"CONSTRAINT {name} CHECK ({e.format(new)})",
            )
            for table, name, e, old, new in m._CHECKS
        ]
    if revision == "0008":
        return [("occurrences", m._check(m._OLD_REASONS), m._check(m._NEW_REASONS))]
    if revision == "0013":
        return [
            (table, f"\n\t{column} VARCHAR({width})", f"\n\t{column} VARCHAR({m.WIDTH})")
            for table, columns in m.COLUMNS.items()
            for column, width in columns.items()
        ]
    return [
        (table, f"CONSTRAINT {name} CHECK ({old})", f"CONSTRAINT {name} CHECK ({new})")
        for table, name, old, new in m.CHECKS
    ]


EDITING = ("0017", "0014", "0013", "0008", "0005")
"""The migrations that edit stored table definitions, newest first."""


def _schema(ledger: Ledger) -> list[tuple[str, str, str, str | None]]:
    return ledger.read(
        lambda c: [
            tuple(row)
            for row in c.execute(
                sa.text("SELECT type, name, tbl_name, sql FROM sqlite_master ORDER BY type, name")
            )
        ]
    )


def _unordered(schema: list[tuple[str, str, str, str | None]]) -> list[tuple[object, ...]]:
    """``schema`` with each table's column and constraint lines as a sorted list.

    Migrations 0006 and 0012 rebuild ``occurrence_events`` and ``attempts`` with Alembic's batch
    mode, which writes their constraints in an order that follows Python's string hashing (it
    differs between processes, and between a straight upgrade and a round trip, on main too);
    every other object, and every line's text, is compared exactly.
    """
    return [
        (kind, name, table, sorted(line.strip().rstrip(",") for line in sql.split("\n")))
        if kind == "table" and sql is not None
        else (kind, name, table, sql)
        for kind, name, table, sql in schema
    ]


def _assert_once(ledger: Ledger, texts: list[tuple[str, str]]) -> None:
    tables = {name: sql for kind, name, _, sql in _schema(ledger) if kind == "table"}
    for table, text in texts:
        assert tables[table].count(text) == 1, (table, text)


@pytest.mark.parametrize("backend", ["sqlite"], indirect=True)
def test_each_edit_stores_its_frozen_text_both_ways_and_round_trips_to_the_same_schema(
    ledger: Ledger,
) -> None:
    straight = _unordered(_schema(ledger))
    config = alembic_config(ledger.engine)
    down: dict[str, object] = {}
    for revision in EDITING:  # down: at R its "after" texts, below R its "before" texts
        texts = _frozen_texts(revision)
        command.downgrade(config, revision)
        _assert_once(ledger, [(table, after) for table, _, after in texts])
        down[revision] = _unordered(_schema(ledger))
        command.downgrade(config, f"{int(revision) - 1:04d}")
        _assert_once(ledger, [(table, before) for table, before, _ in texts])
        down[f"{int(revision) - 1:04d}"] = _unordered(_schema(ledger))
    for revision in reversed(EDITING):  # up: the same texts, the same schema as on the way down
        texts = _frozen_texts(revision)
        command.upgrade(config, f"{int(revision) - 1:04d}")
        assert _unordered(_schema(ledger)) == down[f"{int(revision) - 1:04d}"]
        command.upgrade(config, revision)
        _assert_once(ledger, [(table, after) for table, _, after in texts])
        assert _unordered(_schema(ledger)) == down[revision]
    command.upgrade(config, "head")
    assert current(ledger.engine) == head()
    assert _unordered(_schema(ledger)) == straight
    assert ledger.read(lambda c: c.execute(sa.text("PRAGMA integrity_check")).scalar_one()) == "ok"


def _table_sql(connection: sqlite3.Connection) -> str:
    return str(connection.execute("SELECT sql FROM sqlite_master WHERE name = 't'").fetchone()[0])


def test_an_edit_that_does_not_match_exactly_once_writes_nothing(tmp_path: Path) -> None:
    engine = sa.create_engine(f"sqlite:///{tmp_path / 'edit.sqlite3'}")
    with engine.begin() as connection:
        connection.exec_driver_sql("CREATE TABLE t (a INTEGER CHECK (a = 1 OR a = 1), b TEXT)")
        version = connection.exec_driver_sql("PRAGMA schema_version").scalar_one()
    for before in ("a = 2", "a = 1"):  # missing, then twice
        good = Edit("t", "b TEXT", "b VARCHAR(9)", "unused")
        edits = [good, Edit("t", before, "a = 3", f"no single {before}")]
        with pytest.raises(RuntimeError, match=f"^no single {before}$"), engine.begin() as c:
            edit_table_definitions(c, edits)
    with engine.begin() as connection:
        driver = connection.connection.driver_connection
        assert isinstance(driver, sqlite3.Connection)
        assert _table_sql(driver) == "CREATE TABLE t (a INTEGER CHECK (a = 1 OR a = 1), b TEXT)"
        assert connection.exec_driver_sql("PRAGMA schema_version").scalar_one() == version
        edit_table_definitions(connection, [Edit("t", "b TEXT", "b VARCHAR(9)", "unused")])
    with engine.begin() as connection:
        driver = connection.connection.driver_connection
        assert isinstance(driver, sqlite3.Connection)
        assert (
            _table_sql(driver) == "CREATE TABLE t (a INTEGER CHECK (a = 1 OR a = 1), b VARCHAR(9))"
        )
        assert connection.exec_driver_sql("PRAGMA schema_version").scalar_one() == version + 1
    engine.dispose()
