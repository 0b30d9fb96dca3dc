"""Edit SQLite's stored ``CREATE TABLE`` text in place: the procedure migrations share.

SQLite cannot alter a CHECK constraint or a declared type, and rebuilding ``occurrences`` (Alembic
batch mode) is not possible in a migration: it runs in one transaction with ``PRAGMA foreign_keys
= ON`` (set per connection by ``ledger.db``, a no-op inside a transaction), so dropping the old
table fails on the rows that reference it. A change that leaves every stored row valid and
nothing on disk different (a widened list, the same rule written another way, a declared width
SQLite does not enforce) is made instead by editing the stored table definitions, the procedure
SQLite documents ("Making Other Kinds Of Table Schema Changes", lang_altertable.html):
``writable_schema``, rewrite the text, ``schema_version`` + 1, all inside the transaction.

Migrations 0005, 0008, 0013, 0014 and 0017 use it. A migration's behaviour must never change
once released, so neither may this module's: a different procedure is a new function.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import sqlalchemy as sa
from sqlalchemy import Connection


@dataclass(frozen=True, slots=True)
class Edit:
    """One text replacement in one table's stored ``CREATE TABLE`` statement."""

    table: str
    """The table whose ``sqlite_master.sql`` is edited."""
    before: str
    """The exact text to replace; it must occur exactly once (after the earlier edits)."""
    after: str
    """Its replacement."""
    mismatch: str
    """The ``RuntimeError`` message when ``before`` does not occur exactly once."""


def check_constraint(revision: str, table: str, name: str, before: str, after: str) -> Edit:
    """The edit of CHECK constraint ``name`` of ``table`` from ``before`` to ``after``.

    Args:
        revision: the migration's revision, named in the mismatch message.
        table: the table.
        name: the constraint's name.
        before: its expression as stored, e.g. ``state IN ('PLANNED', 'DUE')``.
        after: the expression to store.

    """
    return Edit(
        table,
        f"CONSTRAINT {name} CHECK ({before})",
        f"CONSTRAINT {name} CHECK ({after})",
        f"migration {revision}: {name} on {table} is not as expected",
    )


def edit_table_definitions(connection: Connection, edits: Sequence[Edit]) -> None:
    """Apply ``edits`` in order to the stored definitions of their tables, then store them.

    Every edit is checked before anything is written; each edited table's text is then written
    back (in table-name order) under ``writable_schema``, and ``schema_version`` is raised by one,
    so every connection re-reads the schema. Runs on the migration's connection, inside its
    transaction.

    Raises:
        RuntimeError: an edit's ``before`` does not occur exactly once (its ``mismatch``);
            nothing is written.

    """
    stored: dict[str, str] = {}
    for table in sorted({edit.table for edit in edits}):
        stored[table] = connection.execute(
            sa.text("SELECT sql FROM sqlite_master WHERE type = 'table' AND name = :name"),
            {"name": table},
        ).scalar_one()
    for edit in edits:
        if stored[edit.table].count(edit.before) != 1:
            raise RuntimeError(edit.mismatch)
        stored[edit.table] = stored[edit.table].replace(edit.before, edit.after)
    version = connection.execute(sa.text("PRAGMA schema_version")).scalar_one()
    connection.execute(sa.text("PRAGMA writable_schema = ON"))
    for table, sql in stored.items():
        connection.execute(
            sa.text("UPDATE sqlite_master SET sql = :sql WHERE type = 'table' AND name = :name"),
            {"sql": sql, "name": table},
        )
    connection.execute(sa.text(f"PRAGMA schema_version = {int(version) + 1}"))
    connection.execute(sa.text("PRAGMA writable_schema = OFF"))
