"""An attempt is ``(occurrence_id, claim_generation)``; the outbox table goes.

- ``attempts``: the ``attempt_number`` column always equalled ``claim_generation`` (CHECK
  ``generation_is_number``); it is dropped and the primary key becomes ``(occurrence_id,
  claim_generation)``, with CHECK ``claim_generation >= 1``. No value is lost.
- ``reconciliation_cases.attempt_number`` is renamed ``claim_generation`` (same values: the
  attempt whose outcome is unknown).
- ``outbox`` is dropped. It was written on every materialization and never read: dispatch goes
  through Temporal child workflows started from activity results, and every fact it held (the
  occurrence's creation and its resolution evidence) is in ``occurrences`` and the append-only
  ``occurrence_events``, written in the same transaction. Its rows are not kept; the downgrade
  re-creates the table empty.

On SQLite the two tables are altered in Alembic batch mode (copy and rename). Neither carries a
trigger (migration 0002's triggers are on ``occurrences`` and ``occurrence_events``), so none is
lost; ``tests/ledger/test_ledger_migrations.py`` checks the CHECK constraints survive.

Revision ID: 0003
Revises: 0002
Create Date: 2026-12-01 12:00:00
"""

from __future__ import annotations

from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op

revision: str = "0003"
down_revision: str | None = "0002"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None


def upgrade() -> None:
    with op.batch_alter_table("attempts") as batch:
        batch.drop_constraint(op.f("pk_attempts"), type_="primary")
        batch.drop_constraint(op.f("ck_attempts_generation_is_number"), type_="check")
        batch.drop_constraint(op.f("ck_attempts_attempt_number_positive"), type_="check")
        batch.drop_column("attempt_number")
        batch.create_check_constraint(
            op.f("ck_attempts_claim_generation_positive"), "claim_generation >= 1"
        )
        batch.create_primary_key(op.f("pk_attempts"), ["occurrence_id", "claim_generation"])
    with op.batch_alter_table("reconciliation_cases") as batch:
        batch.alter_column("attempt_number", new_column_name="claim_generation")
    op.drop_table("outbox")


def downgrade() -> None:
    op.create_table(
        "outbox",
        sa.Column(
            "id",
            sa.BigInteger().with_variant(sa.Integer(), "sqlite"),
            autoincrement=True,
            nullable=False,
        ),
        sa.Column("occurrence_id", sa.String(length=120), nullable=False),
        sa.Column("kind", sa.String(length=64), nullable=False),
        sa.Column("payload", sa.JSON(), nullable=False),
        sa.Column("created_at_utc", sa.DateTime(timezone=True), nullable=False),
        sa.Column("published_at_utc", sa.DateTime(timezone=True), nullable=True),
        sa.ForeignKeyConstraint(
            ["occurrence_id"],
            ["occurrences.occurrence_id"],
            name=op.f("fk_outbox_occurrence_id_occurrences"),
        ),
        sa.PrimaryKeyConstraint("id", name=op.f("pk_outbox")),
        sa.UniqueConstraint("occurrence_id", "kind", name=op.f("uq_outbox_occurrence_id_kind")),
    )
    with op.batch_alter_table("reconciliation_cases") as batch:
        batch.alter_column("claim_generation", new_column_name="attempt_number")
    with op.batch_alter_table("attempts") as batch:
        batch.add_column(sa.Column("attempt_number", sa.Integer(), nullable=True))
    op.execute("UPDATE attempts SET attempt_number = claim_generation")
    with op.batch_alter_table("attempts") as batch:
        batch.alter_column("attempt_number", existing_type=sa.Integer(), nullable=False)
        batch.drop_constraint(op.f("pk_attempts"), type_="primary")
        batch.drop_constraint(op.f("ck_attempts_claim_generation_positive"), type_="check")
        batch.create_check_constraint(
            op.f("ck_attempts_attempt_number_positive"), "attempt_number >= 1"
        )
        batch.create_check_constraint(
            op.f("ck_attempts_generation_is_number"), "claim_generation = attempt_number"
        )
        batch.create_primary_key(op.f("pk_attempts"), ["occurrence_id", "attempt_number"])
