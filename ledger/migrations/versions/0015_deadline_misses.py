"""Deadlines (issue 30): ``deadline_misses`` (one fact per occurrence) and ``deadline_sweeps``.

- ``deadline_misses``: an occurrence not SUCCEEDED by its revision's ``deadline``, keyed by the
  occurrence (recorded once: the primary key), with the state its trail showed at the deadline.
- ``deadline_sweeps``: per schedule, the instant through which every deadline is decided.

Self-contained (frozen copy of the states). Plain ``CREATE TABLE``: no batch copy, so 0002's
triggers are untouched.

Revision ID: 0015
Revises: 0014
Create Date: 2026-12-03 19:00:00
"""

from __future__ import annotations

from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op

revision: str = "0015"
down_revision: str | None = "0014"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None

STATES = (
    "PLANNED",
    "DUE",
    "DISPATCHING",
    "RUNNING",
    "SUCCEEDED",
    "RETRY_WAIT",
    "UNKNOWN_EFFECT",
    "FAILED",
    "SKIPPED_GAP",
    "MISFIRE_EXPIRED",
    "CANCELLED",
    "SKIPPED_OVERLAP",
    "SKIPPED_HOLIDAY",
    "EXCLUDED",
)


def upgrade() -> None:
    states = ", ".join(repr(s) for s in STATES)
    op.create_table(
        "deadline_misses",
        sa.Column("occurrence_id", sa.String(length=135), nullable=False),
        sa.Column("schedule_id", sa.String(length=63), nullable=False),
        sa.Column("revision", sa.Integer(), nullable=False),
        sa.Column("instant_utc", sa.DateTime(timezone=True), nullable=False),
        sa.Column("deadline_utc", sa.DateTime(timezone=True), nullable=False),
        sa.Column("state_at_deadline", sa.String(length=16), nullable=False),
        sa.Column("recorded_at_utc", sa.DateTime(timezone=True), nullable=False),
        sa.Column("by", sa.String(length=200), nullable=False),
        sa.CheckConstraint(
            f"state_at_deadline IN ({states})", name=op.f("ck_deadline_misses_state_valid")
        ),
        sa.ForeignKeyConstraint(
            ["occurrence_id"],
            ["occurrences.occurrence_id"],
            name=op.f("fk_deadline_misses_occurrence_id_occurrences"),
        ),
        sa.PrimaryKeyConstraint("occurrence_id", name=op.f("pk_deadline_misses")),
    )
    op.create_index(
        "ix_deadline_misses_schedule",
        "deadline_misses",
        ["schedule_id", "deadline_utc"],
        unique=False,
    )
    op.create_table(
        "deadline_sweeps",
        sa.Column("schedule_id", sa.String(length=63), nullable=False),
        sa.Column("swept_through_utc", sa.DateTime(timezone=True), nullable=False),
        sa.Column("updated_at_utc", sa.DateTime(timezone=True), nullable=False),
        sa.PrimaryKeyConstraint("schedule_id", name=op.f("pk_deadline_sweeps")),
    )


def downgrade() -> None:
    op.drop_table("deadline_sweeps")
    op.drop_index("ix_deadline_misses_schedule", table_name="deadline_misses")
    op.drop_table("deadline_misses")
