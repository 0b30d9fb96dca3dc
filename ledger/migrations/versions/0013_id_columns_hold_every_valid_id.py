"""ID columns hold every ID a valid input builds: occurrence and logical slot IDs, 135 characters.

A manual occurrence's ID and logical slot are ``<scheduleId>.manual.<requestId>``: with the
spec's bounds (a 63-character scheduleId, a 64-character request ID) that is 135 characters
(``timecontract.ids.MAX_OCCURRENCE_ID_LENGTH`` / ``MAX_LOGICAL_SLOT_ID_LENGTH``), where the
columns held 120 (occurrence IDs) and 90 (slot IDs): PostgreSQL refused a valid trigger with
``value too long for type character varying(90)``. Every column holding either ID is widened to
135 (:data:`COLUMNS`).

PostgreSQL: ``ALTER COLUMN … TYPE varchar(135)`` (widening a ``varchar`` rewrites no row and
rebuilds no index); the triggers whose ``WHEN``/``UPDATE OF`` name a widened column are dropped
and re-created from their own definitions around it, in the same transaction. SQLite does not
enforce a declared length; the stored table definitions are edited in place so that they match
the models (the procedure of migration 0005: only the declared length changes, each edit checked
to match exactly once). Downgrade refuses while a row
holds a longer ID.

Revision ID: 0013
Revises: 0012
Create Date: 2026-12-03 15:00:00
"""

from __future__ import annotations

from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op

from ledger.migrations.sqlite_schema_edit import Edit, edit_table_definitions

revision: str = "0013"
down_revision: str | None = "0012"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None

WIDTH = 135
"""The new width of every column in :data:`COLUMNS` (frozen here: the models compute it)."""
COLUMNS: dict[str, dict[str, int]] = {
    "occurrences": {"occurrence_id": 120, "logical_slot_id": 90},
    "logical_slots": {"logical_slot_id": 90, "owner_occurrence_id": 120},
    "attempts": {"occurrence_id": 120},
    "occurrence_events": {"occurrence_id": 120},
    "reconciliation_cases": {"occurrence_id": 120},
    "shadow_occurrences": {"occurrence_id": 120, "logical_slot_id": 90},
}
"""Table → column → its width before this migration."""


def _sqlite_edit(table: str, widths: dict[str, tuple[int, int]]) -> None:
    """Change each column's declared ``VARCHAR(before)`` to ``VARCHAR(after)`` in ``table``."""
    edits = [
        Edit(
            table,
            f"\n\t{column} VARCHAR({before})",
            f"\n\t{column} VARCHAR({after})",
            f"migration 0013: {table}.{column} is not VARCHAR({before})",
        )
        for column, (before, after) in widths.items()
    ]
    edit_table_definitions(op.get_bind(), edits)


def _dependent_triggers(table: str, columns: Sequence[str]) -> list[tuple[str, str]]:
    """(name, ``CREATE TRIGGER`` statement) of ``table``'s triggers that name one of ``columns``.

    PostgreSQL refuses to change the type of a column a trigger's ``WHEN`` or ``UPDATE OF``
    names (migration 0011's key guards, the slot owner check): they are dropped around the
    change and re-created from their own definitions.
    """
    rows = op.get_bind().execute(
        sa.text(
            "SELECT tgname, pg_get_triggerdef(oid) FROM pg_trigger "
            "WHERE tgrelid = CAST(:table AS regclass) AND NOT tgisinternal ORDER BY tgname"
        ),
        {"table": table},
    )
    return [(name, sql) for name, sql in rows if any(c in sql for c in columns)]


def _set(widths: dict[str, dict[str, tuple[int, int]]]) -> None:
    postgresql = op.get_bind().dialect.name == "postgresql"
    for table, columns in widths.items():
        if not postgresql:
            _sqlite_edit(table, columns)
            continue
        triggers = _dependent_triggers(table, list(columns))
        for name, _ in triggers:
            op.execute(f"DROP TRIGGER {name} ON {table}")
        for column, (_, after) in columns.items():
            op.execute(f"ALTER TABLE {table} ALTER COLUMN {column} TYPE varchar({after})")
        for _, definition in triggers:
            op.execute(definition)


def upgrade() -> None:
    _set(
        {
            table: {column: (before, WIDTH) for column, before in columns.items()}
            for table, columns in COLUMNS.items()
        }
    )


def downgrade() -> None:
    bind = op.get_bind()
    for table, columns in COLUMNS.items():
        for column, before in columns.items():
            longer = bind.execute(
                sa.text(f"SELECT count(*) FROM {table} WHERE length({column}) > :width"),
                {"width": before},
            ).scalar_one()
            if longer:
                raise RuntimeError(
                    f"cannot downgrade below 0013: {longer} row(s) of {table}.{column} hold "
                    f"more than {before} characters"
                )
    _set(
        {
            table: {column: (WIDTH, before) for column, before in columns.items()}
            for table, columns in COLUMNS.items()
        }
    )
