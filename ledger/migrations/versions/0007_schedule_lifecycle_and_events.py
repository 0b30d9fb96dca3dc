"""Schedule lifecycle: a deleted gate, and a schedule-level event trail.

- ``schedule_gates.deleted_at_utc`` (nullable): set by ``almanac delete``. A deleted gate is also
  disabled (``disabled_reason`` ``deleted: …``), so every claim is refused by the existing gate
  check; nothing else changes and no row is removed. Publishing a higher revision revives it.
- ``schedule_events``: append-only facts about a schedule as a whole — revisions published or
  rejected, gate changes, deletion, and the deterministic errors an activity refused with (the
  "rejection on the schedule" of issue 10). ``schedule_id`` has no foreign key: a first revision
  that is rejected leaves an event for a schedule that has no gate.

Self-contained (frozen copy of the event kinds; no application import). Plain ``ADD COLUMN`` and
``CREATE TABLE`` (a plain ``DROP COLUMN`` down): no batch copy, so 0002's triggers are untouched.

Revision ID: 0007
Revises: 0006
Create Date: 2026-12-01 18:00:00
"""

from __future__ import annotations

from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op

revision: str = "0007"
down_revision: str | None = "0006"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None

# Frozen copy of ledger.states.ScheduleEventKind at this revision.
EVENT_KINDS = (
    "PUBLISHED",
    "REVISION_REJECTED",
    "DISABLED",
    "ENABLED",
    "DELETED",
    "ACTIVITY_REJECTED",
)


def upgrade() -> None:
    op.add_column(
        "schedule_gates", sa.Column("deleted_at_utc", sa.DateTime(timezone=True), nullable=True)
    )
    kinds = ", ".join(repr(k) for k in EVENT_KINDS)
    op.create_table(
        "schedule_events",
        sa.Column(
            "id",
            sa.BigInteger().with_variant(sa.Integer(), "sqlite"),
            autoincrement=True,
            nullable=False,
        ),
        sa.Column("schedule_id", sa.String(length=63), nullable=False),
        sa.Column("kind", sa.String(length=32), nullable=False),
        sa.Column("revision", sa.Integer(), nullable=True),
        sa.Column("at_utc", sa.DateTime(timezone=True), nullable=False),
        sa.Column("by", sa.String(length=200), nullable=False),
        sa.Column("detail", sa.Text(), nullable=False),
        sa.CheckConstraint(f"kind IN ({kinds})", name=op.f("ck_schedule_events_kind_valid")),
        sa.PrimaryKeyConstraint("id", name=op.f("pk_schedule_events")),
    )
    op.create_index(
        "ix_schedule_events_schedule", "schedule_events", ["schedule_id", "id"], unique=False
    )


def downgrade() -> None:
    op.drop_index("ix_schedule_events_schedule", table_name="schedule_events")
    op.drop_table("schedule_events")
    # Not a batch copy: other tables' foreign keys refer to schedule_gates, and SQLite (3.35+)
    # drops a plain column in place.
    op.drop_column("schedule_gates", "deleted_at_utc")
