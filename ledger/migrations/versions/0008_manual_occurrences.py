"""Manual occurrences (issue 13, ``almanac trigger``): the ``MANUAL`` reason.

A manual occurrence (``<scheduleId>.manual.<requestId>``) is recorded with reason ``MANUAL`` and
its own logical slot (the same string as its ID, a namespace no calendar slot uses:
``<scheduleId>@<instant>``). ``MANUAL`` joins the ``reason`` CHECK list.

PostgreSQL: the CHECK constraint is dropped and re-created. SQLite: the stored table definition is
edited in place (the procedure and the reasons are migration 0005's: a widened ``IN (…)`` list
leaves every row valid), checked to match exactly once. Downgrade refuses while a row holds
``MANUAL``.

Revision ID: 0008
Revises: 0007
Create Date: 2026-12-10 12:00:00
"""

from __future__ import annotations

from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op

from ledger.migrations.sqlite_schema_edit import check_constraint, edit_table_definitions

revision: str = "0008"
down_revision: str | None = "0007"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None

NEW_REASON = "MANUAL"
_OLD_REASONS = (
    "'UNAMBIGUOUS', 'FOLD_FIRST', 'FOLD_SECOND', 'GAP_SKIPPED', 'GAP_SHIFTED_FORWARD', "
    "'GAP_SHIFT_COLLISION', 'ELAPSED_INTERVAL'"
)
_NEW_REASONS = f"{_OLD_REASONS}, '{NEW_REASON}'"
_CONSTRAINT = "ck_occurrences_reason_valid"


def _check(reasons: str) -> str:
    return f"CONSTRAINT {_CONSTRAINT} CHECK (reason IN ({reasons}))"


def _sqlite_edit(before: str, after: str) -> None:
    edit = check_constraint(
        "0008", "occurrences", _CONSTRAINT, f"reason IN ({before})", f"reason IN ({after})"
    )
    edit_table_definitions(op.get_bind(), [edit])


def _set(before: str, after: str) -> None:
    if op.get_bind().dialect.name == "postgresql":
        op.execute(f"ALTER TABLE occurrences DROP CONSTRAINT {_CONSTRAINT}")
        op.execute(f"ALTER TABLE occurrences ADD {_check(after)}")
    else:
        _sqlite_edit(before, after)


def upgrade() -> None:
    _set(_OLD_REASONS, _NEW_REASONS)


def downgrade() -> None:
    in_use = (
        op.get_bind()
        .execute(
            sa.text("SELECT count(*) FROM occurrences WHERE reason = :reason"),
            {"reason": NEW_REASON},
        )
        .scalar_one()
    )
    if in_use:
        raise RuntimeError(f"cannot downgrade below 0008: {in_use} occurrence(s) hold {NEW_REASON}")
    _set(_NEW_REASONS, _OLD_REASONS)
