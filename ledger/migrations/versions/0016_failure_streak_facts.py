"""Failure streaks (issue 30): ``failure_streak_facts``, one row per STREAK or RECOVERED fact.

Keyed by the schedule, the streak's first failing occurrence and the kind, so a repeated,
restarted or concurrent decision records each fact once; the row also holds its notification's
outcome (``PENDING`` until the action delivered it or failed after its bounded attempts).

Plain ``CREATE TABLE``: no batch copy, so 0002's triggers are untouched.

Revision ID: 0016
Revises: 0015
Create Date: 2026-12-03 22:30:00
"""

from __future__ import annotations

from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op

revision: str = "0016"
down_revision: str | None = "0015"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None


def upgrade() -> None:
    op.create_table(
        "failure_streak_facts",
        sa.Column("schedule_id", sa.String(length=63), nullable=False),
        sa.Column("streak_start_occurrence_id", sa.String(length=135), nullable=False),
        sa.Column("kind", sa.String(length=10), nullable=False),
        sa.Column("threshold", sa.Integer(), nullable=False),
        sa.Column("occurrence_ids", sa.Text(), nullable=False),
        sa.Column("paused", sa.Boolean(), nullable=False),
        sa.Column("recorded_at_utc", sa.DateTime(timezone=True), nullable=False),
        sa.Column("by", sa.String(length=200), nullable=False),
        sa.Column("notify_state", sa.String(length=10), nullable=False),
        sa.Column("notify_attempts", sa.Integer(), nullable=False),
        sa.Column("notify_detail", sa.String(length=500), nullable=True),
        sa.Column("notified_at_utc", sa.DateTime(timezone=True), nullable=True),
        sa.CheckConstraint(
            "kind IN ('STREAK', 'RECOVERED')", name=op.f("ck_failure_streak_facts_kind_valid")
        ),
        sa.CheckConstraint(
            "notify_state IN ('PENDING', 'DELIVERED', 'FAILED')",
            name=op.f("ck_failure_streak_facts_notify_state_valid"),
        ),
        sa.PrimaryKeyConstraint(
            "schedule_id",
            "streak_start_occurrence_id",
            "kind",
            name=op.f("pk_failure_streak_facts"),
        ),
    )


def downgrade() -> None:
    op.drop_table("failure_streak_facts")
