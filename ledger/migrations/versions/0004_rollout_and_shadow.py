"""Rollout and rollback: ID-format versions, alias registry, switch log, shadow tables (issue 12).

- ``occurrences.id_format``: the version of the occurrence-ID format a row was written with
  (``timecontract.ids.ID_FORMAT_VERSION``; every row so far is format 1). A rollback requeues only
  occurrences whose format the implementation it returns to recognises.
- ``implementation_aliases``: each implementation alias a worker ran, with the ID formats it
  recognises (a worker registers on start).
- ``implementation_switches``: one row per rollout or rollback of one schedule's gate (from and
  to alias, the execution epoch before and after, the reason): what requeue events name.
- ``shadow_runs`` and ``shadow_occurrences``: what a candidate implementation computed for a
  window, keyed by alias, for comparison only. Nothing reads them to dispatch.

Only ``ADD COLUMN`` touches ``occurrences`` (no batch copy on SQLite), so migration 0002's
triggers on it stay in place.

Revision ID: 0004
Revises: 0003
Create Date: 2026-12-02 12:00:00
"""

from __future__ import annotations

from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op

revision: str = "0004"
down_revision: str | None = "0003"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None

_BIG_ID = sa.BigInteger().with_variant(sa.Integer(), "sqlite")


def _utc() -> sa.DateTime:
    return sa.DateTime(timezone=True)


def upgrade() -> None:
    op.add_column(
        "occurrences",
        sa.Column("id_format", sa.SmallInteger(), server_default=sa.text("1"), nullable=False),
    )
    op.create_table(
        "implementation_aliases",
        sa.Column("alias", sa.String(length=128), nullable=False),
        sa.Column("id_formats", sa.String(length=64), nullable=False),
        sa.Column("registered_at_utc", _utc(), nullable=False),
        sa.Column("registered_by", sa.String(length=200), nullable=False),
        sa.PrimaryKeyConstraint("alias", name=op.f("pk_implementation_aliases")),
    )
    op.create_table(
        "implementation_switches",
        sa.Column("id", _BIG_ID, autoincrement=True, nullable=False),
        sa.Column("schedule_id", sa.String(length=63), nullable=False),
        sa.Column("kind", sa.String(length=16), nullable=False),
        sa.Column("from_alias", sa.String(length=128), nullable=False),
        sa.Column("to_alias", sa.String(length=128), nullable=False),
        sa.Column("epoch_before", sa.Integer(), nullable=False),
        sa.Column("epoch_after", sa.Integer(), nullable=False),
        sa.Column("reason", sa.Text(), nullable=False),
        sa.Column("at_utc", _utc(), nullable=False),
        sa.Column("by", sa.String(length=200), nullable=False),
        sa.CheckConstraint(
            "kind IN ('ROLLOUT', 'ROLLBACK')", name=op.f("ck_implementation_switches_kind_valid")
        ),
        sa.CheckConstraint(
            "epoch_after = epoch_before + 1",
            name=op.f("ck_implementation_switches_epoch_bumped"),
        ),
        sa.ForeignKeyConstraint(
            ["schedule_id"],
            ["schedule_gates.schedule_id"],
            name=op.f("fk_implementation_switches_schedule_id_schedule_gates"),
        ),
        sa.PrimaryKeyConstraint("id", name=op.f("pk_implementation_switches")),
    )
    op.create_table(
        "shadow_runs",
        sa.Column("id", _BIG_ID, autoincrement=True, nullable=False),
        sa.Column("alias", sa.String(length=128), nullable=False),
        sa.Column("schedule_id", sa.String(length=63), nullable=False),
        sa.Column("from_utc", _utc(), nullable=False),
        sa.Column("to_utc", _utc(), nullable=False),
        sa.Column("run_at_utc", _utc(), nullable=False),
        sa.Column("by", sa.String(length=200), nullable=False),
        sa.Column("records", sa.Integer(), nullable=False),
        sa.Column("mismatches", sa.Integer(), nullable=False),
        sa.CheckConstraint("from_utc < to_utc", name=op.f("ck_shadow_runs_window_ordered")),
        sa.PrimaryKeyConstraint("id", name=op.f("pk_shadow_runs")),
    )
    op.create_index(
        "ix_shadow_runs_alias_schedule", "shadow_runs", ["alias", "schedule_id"], unique=False
    )
    op.create_table(
        "shadow_occurrences",
        sa.Column("alias", sa.String(length=128), nullable=False),
        sa.Column("occurrence_id", sa.String(length=120), nullable=False),
        sa.Column("schedule_id", sa.String(length=63), nullable=False),
        sa.Column("revision", sa.Integer(), nullable=False),
        sa.Column("logical_slot_id", sa.String(length=90), nullable=True),
        sa.Column("nominal_local", sa.String(length=19), nullable=False),
        sa.Column("fold", sa.SmallInteger(), nullable=False),
        sa.Column("instant_utc", _utc(), nullable=True),
        sa.Column("gap_at_utc", _utc(), nullable=True),
        sa.Column("utc_offset_seconds", sa.Integer(), nullable=True),
        sa.Column("tzdb_version", sa.String(length=16), nullable=False),
        sa.Column("disposition", sa.String(length=16), nullable=False),
        sa.Column("reason", sa.String(length=32), nullable=False),
        sa.Column("computed_at_utc", _utc(), nullable=False),
        sa.PrimaryKeyConstraint("alias", "occurrence_id", name=op.f("pk_shadow_occurrences")),
    )
    op.create_index(
        "ix_shadow_occurrences_alias_schedule",
        "shadow_occurrences",
        ["alias", "schedule_id"],
        unique=False,
    )


def downgrade() -> None:
    op.drop_index("ix_shadow_occurrences_alias_schedule", table_name="shadow_occurrences")
    op.drop_table("shadow_occurrences")
    op.drop_index("ix_shadow_runs_alias_schedule", table_name="shadow_runs")
    op.drop_table("shadow_runs")
    op.drop_table("implementation_switches")
    op.drop_table("implementation_aliases")
    # Plain DROP COLUMN (SQLite 3.35+): a batch copy would drop migration 0002's triggers.
    op.drop_column("occurrences", "id_format")
