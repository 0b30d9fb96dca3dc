"""Initial ledger schema: gate, revisions, occurrences, slots, attempts, outbox, events, cases.

Revision ID: 0001
Revises:
Create Date: 2026-11-30 10:19:31.048398
"""

from __future__ import annotations

from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op

revision: str = "0001"
down_revision: str | None = None
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None

# Frozen copies of the enums at this revision (a migration never imports application code).
STATES = (
    "('PLANNED', 'DUE', 'DISPATCHING', 'RUNNING', 'SUCCEEDED', 'RETRY_WAIT', 'UNKNOWN_EFFECT', "
    "'FAILED', 'SKIPPED_GAP', 'MISFIRE_EXPIRED', 'CANCELLED')"
)
REASONS = (
    "('UNAMBIGUOUS', 'FOLD_FIRST', 'FOLD_SECOND', 'GAP_SKIPPED', 'GAP_SHIFTED_FORWARD', "
    "'GAP_SHIFT_COLLISION')"
)


def upgrade() -> None:
    op.create_table(
        "schedule_gates",
        sa.Column("schedule_id", sa.String(length=63), nullable=False),
        sa.Column("active_revision", sa.Integer(), nullable=False),
        sa.Column("disabled", sa.Boolean(), nullable=False),
        sa.Column("disabled_reason", sa.Text(), nullable=True),
        sa.Column("disable_generation", sa.Integer(), nullable=False),
        sa.Column("execution_epoch", sa.Integer(), nullable=False),
        sa.Column("implementation_alias", sa.String(length=128), nullable=False),
        sa.Column("created_at_utc", sa.DateTime(timezone=True), nullable=False),
        sa.Column("updated_at_utc", sa.DateTime(timezone=True), nullable=False),
        sa.Column("updated_by", sa.String(length=200), nullable=False),
        sa.CheckConstraint(
            "(disabled AND disabled_reason IS NOT NULL) OR NOT disabled",
            name=op.f("ck_schedule_gates_disabled_reason"),
        ),
        sa.CheckConstraint(
            "active_revision >= 1", name=op.f("ck_schedule_gates_active_revision_positive")
        ),
        sa.CheckConstraint(
            "disable_generation >= 0", name=op.f("ck_schedule_gates_disable_generation_nonnegative")
        ),
        sa.CheckConstraint(
            "execution_epoch >= 0", name=op.f("ck_schedule_gates_execution_epoch_nonnegative")
        ),
        sa.PrimaryKeyConstraint("schedule_id", name=op.f("pk_schedule_gates")),
    )
    op.create_table(
        "revisions",
        sa.Column("schedule_id", sa.String(length=63), nullable=False),
        sa.Column("revision", sa.Integer(), nullable=False),
        sa.Column("spec_json", sa.Text(), nullable=False),
        sa.Column("digest", sa.String(length=71), nullable=False),
        sa.Column("cutover_at_utc", sa.DateTime(timezone=True), nullable=False),
        sa.Column("published_at_utc", sa.DateTime(timezone=True), nullable=False),
        sa.Column("published_by", sa.String(length=200), nullable=False),
        sa.CheckConstraint("revision >= 1", name=op.f("ck_revisions_revision_positive")),
        sa.ForeignKeyConstraint(
            ["schedule_id"],
            ["schedule_gates.schedule_id"],
            name=op.f("fk_revisions_schedule_id_schedule_gates"),
        ),
        sa.PrimaryKeyConstraint("schedule_id", "revision", name=op.f("pk_revisions")),
        sa.UniqueConstraint(
            "schedule_id", "cutover_at_utc", name=op.f("uq_revisions_schedule_id_cutover_at_utc")
        ),
    )
    op.create_table(
        "occurrences",
        sa.Column("occurrence_id", sa.String(length=120), nullable=False),
        sa.Column("schedule_id", sa.String(length=63), nullable=False),
        sa.Column("revision", sa.Integer(), nullable=False),
        sa.Column("logical_slot_id", sa.String(length=90), nullable=True),
        sa.Column("nominal_local", sa.String(length=19), nullable=False),
        sa.Column("fold", sa.SmallInteger(), nullable=False),
        sa.Column("instant_utc", sa.DateTime(timezone=True), nullable=True),
        sa.Column("gap_at_utc", sa.DateTime(timezone=True), nullable=True),
        sa.Column("utc_offset_seconds", sa.Integer(), nullable=True),
        sa.Column("tzdb_version", sa.String(length=16), nullable=False),
        sa.Column("reason", sa.String(length=32), nullable=False),
        sa.Column("state", sa.String(length=16), nullable=False),
        sa.Column("state_reason", sa.Text(), nullable=True),
        sa.Column("claim_generation", sa.Integer(), nullable=False),
        sa.Column("next_attempt_at_utc", sa.DateTime(timezone=True), nullable=True),
        sa.Column("created_at_utc", sa.DateTime(timezone=True), nullable=False),
        sa.Column("updated_at_utc", sa.DateTime(timezone=True), nullable=False),
        sa.CheckConstraint(
            "(instant_utc IS NULL) = (state = 'SKIPPED_GAP')",
            name=op.f("ck_occurrences_instant_unless_skipped"),
        ),
        sa.CheckConstraint(
            "claim_generation = 0 OR state NOT IN ('PLANNED', 'DUE', 'SKIPPED_GAP', "
            "'MISFIRE_EXPIRED')",
            name=op.f("ck_occurrences_undispatched_states"),
        ),
        sa.CheckConstraint(
            f"reason IN {REASONS}",
            name=op.f("ck_occurrences_reason_valid"),
        ),
        sa.CheckConstraint(
            f"state IN {STATES}",
            name=op.f("ck_occurrences_state_valid"),
        ),
        sa.CheckConstraint(
            "(instant_utc IS NULL) = (logical_slot_id IS NULL)",
            name=op.f("ck_occurrences_slot_iff_instant"),
        ),
        sa.CheckConstraint(
            "claim_generation >= 0", name=op.f("ck_occurrences_claim_generation_nonnegative")
        ),
        sa.CheckConstraint("fold IN (0, 1)", name=op.f("ck_occurrences_fold_valid")),
        sa.CheckConstraint(
            "instant_utc IS NOT NULL OR gap_at_utc IS NOT NULL",
            name=op.f("ck_occurrences_placed_on_utc_line"),
        ),
        sa.ForeignKeyConstraint(
            ["schedule_id", "revision"],
            ["revisions.schedule_id", "revisions.revision"],
            name=op.f("fk_occurrences_schedule_id_revision_revisions"),
        ),
        sa.PrimaryKeyConstraint("occurrence_id", name=op.f("pk_occurrences")),
    )
    op.create_index(
        "ix_occurrences_schedule_instant",
        "occurrences",
        ["schedule_id", "instant_utc"],
        unique=False,
    )
    op.create_index(
        "ix_occurrences_schedule_state", "occurrences", ["schedule_id", "state"], unique=False
    )
    op.create_index(
        "uq_occurrences_dispatched_slot",
        "occurrences",
        ["schedule_id", "logical_slot_id"],
        unique=True,
        postgresql_where=sa.text("claim_generation > 0"),
        sqlite_where=sa.text("claim_generation > 0"),
    )
    op.create_table(
        "attempts",
        sa.Column("occurrence_id", sa.String(length=120), nullable=False),
        sa.Column("attempt_number", sa.Integer(), nullable=False),
        sa.Column("claim_generation", sa.Integer(), nullable=False),
        sa.Column("worker_identity", sa.String(length=200), nullable=False),
        sa.Column("implementation_alias", sa.String(length=128), nullable=False),
        sa.Column("execution_epoch", sa.Integer(), nullable=False),
        sa.Column("disable_generation", sa.Integer(), nullable=False),
        sa.Column("gate_revision", sa.Integer(), nullable=False),
        sa.Column("input_digest", sa.String(length=200), nullable=False),
        sa.Column("started_at_utc", sa.DateTime(timezone=True), nullable=False),
        sa.Column("finished_at_utc", sa.DateTime(timezone=True), nullable=True),
        sa.Column("outcome", sa.String(length=32), nullable=True),
        sa.Column("error_class", sa.String(length=200), nullable=True),
        sa.Column("error_message", sa.Text(), nullable=True),
        sa.CheckConstraint(
            "outcome IS NULL OR outcome IN ('SUCCEEDED', 'RETRYABLE_FAILURE', 'FAILED', 'UNKNOWN')",
            name=op.f("ck_attempts_outcome_valid"),
        ),
        sa.CheckConstraint("attempt_number >= 1", name=op.f("ck_attempts_attempt_number_positive")),
        sa.CheckConstraint(
            "claim_generation = attempt_number", name=op.f("ck_attempts_generation_is_number")
        ),
        sa.ForeignKeyConstraint(
            ["occurrence_id"],
            ["occurrences.occurrence_id"],
            name=op.f("fk_attempts_occurrence_id_occurrences"),
        ),
        sa.PrimaryKeyConstraint("occurrence_id", "attempt_number", name=op.f("pk_attempts")),
    )
    op.create_table(
        "logical_slots",
        sa.Column("schedule_id", sa.String(length=63), nullable=False),
        sa.Column("logical_slot_id", sa.String(length=90), nullable=False),
        sa.Column("instant_utc", sa.DateTime(timezone=True), nullable=False),
        sa.Column("owner_occurrence_id", sa.String(length=120), nullable=True),
        sa.Column("owner_revision", sa.Integer(), nullable=True),
        sa.Column("claimed_at_utc", sa.DateTime(timezone=True), nullable=False),
        sa.Column("released_at_utc", sa.DateTime(timezone=True), nullable=True),
        sa.Column("release_reason", sa.Text(), nullable=True),
        sa.CheckConstraint(
            "(owner_occurrence_id IS NULL) = (owner_revision IS NULL)",
            name=op.f("ck_logical_slots_owner_complete"),
        ),
        sa.ForeignKeyConstraint(
            ["owner_occurrence_id"],
            ["occurrences.occurrence_id"],
            name=op.f("fk_logical_slots_owner_occurrence_id_occurrences"),
        ),
        sa.ForeignKeyConstraint(
            ["schedule_id"],
            ["schedule_gates.schedule_id"],
            name=op.f("fk_logical_slots_schedule_id_schedule_gates"),
        ),
        sa.PrimaryKeyConstraint("schedule_id", "logical_slot_id", name=op.f("pk_logical_slots")),
        sa.UniqueConstraint(
            "owner_occurrence_id", name=op.f("uq_logical_slots_owner_occurrence_id")
        ),
    )
    op.create_table(
        "occurrence_events",
        sa.Column(
            "id",
            sa.BigInteger().with_variant(sa.Integer(), "sqlite"),
            autoincrement=True,
            nullable=False,
        ),
        sa.Column("occurrence_id", sa.String(length=120), nullable=False),
        sa.Column("from_state", sa.String(length=16), nullable=True),
        sa.Column("to_state", sa.String(length=16), nullable=False),
        sa.Column("at_utc", sa.DateTime(timezone=True), nullable=False),
        sa.Column("by", sa.String(length=200), nullable=False),
        sa.Column("why", sa.Text(), nullable=False),
        sa.CheckConstraint(
            f"from_state IS NULL OR from_state IN {STATES}",
            name=op.f("ck_occurrence_events_from_state_valid"),
        ),
        sa.CheckConstraint(
            f"to_state IN {STATES}",
            name=op.f("ck_occurrence_events_to_state_valid"),
        ),
        sa.ForeignKeyConstraint(
            ["occurrence_id"],
            ["occurrences.occurrence_id"],
            name=op.f("fk_occurrence_events_occurrence_id_occurrences"),
        ),
        sa.PrimaryKeyConstraint("id", name=op.f("pk_occurrence_events")),
    )
    op.create_index(
        "ix_occurrence_events_occurrence",
        "occurrence_events",
        ["occurrence_id", "id"],
        unique=False,
    )
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
    op.create_table(
        "reconciliation_cases",
        sa.Column(
            "id",
            sa.BigInteger().with_variant(sa.Integer(), "sqlite"),
            autoincrement=True,
            nullable=False,
        ),
        sa.Column("occurrence_id", sa.String(length=120), nullable=False),
        sa.Column("attempt_number", sa.Integer(), nullable=False),
        sa.Column("opened_at_utc", sa.DateTime(timezone=True), nullable=False),
        sa.Column("deadline_utc", sa.DateTime(timezone=True), nullable=False),
        sa.Column("resolution", sa.String(length=16), nullable=True),
        sa.Column("resolved_by", sa.String(length=200), nullable=True),
        sa.Column("resolved_at_utc", sa.DateTime(timezone=True), nullable=True),
        sa.Column("note", sa.Text(), nullable=True),
        sa.CheckConstraint(
            "resolution IS NULL OR resolution IN ('SUCCEEDED', 'NOT_APPLIED', 'HUMAN')",
            name=op.f("ck_reconciliation_cases_resolution_valid"),
        ),
        sa.CheckConstraint(
            "(resolution IS NULL) = (resolved_at_utc IS NULL)",
            name=op.f("ck_reconciliation_cases_resolved_at_iff_resolution"),
        ),
        sa.CheckConstraint(
            "deadline_utc > opened_at_utc", name=op.f("ck_reconciliation_cases_deadline_after_open")
        ),
        sa.ForeignKeyConstraint(
            ["occurrence_id"],
            ["occurrences.occurrence_id"],
            name=op.f("fk_reconciliation_cases_occurrence_id_occurrences"),
        ),
        sa.PrimaryKeyConstraint("id", name=op.f("pk_reconciliation_cases")),
        sa.UniqueConstraint("occurrence_id", name=op.f("uq_reconciliation_cases_occurrence_id")),
    )


def downgrade() -> None:
    op.drop_table("reconciliation_cases")
    op.drop_table("outbox")
    op.drop_index("ix_occurrence_events_occurrence", table_name="occurrence_events")
    op.drop_table("occurrence_events")
    op.drop_table("logical_slots")
    op.drop_table("attempts")
    op.drop_index(
        "uq_occurrences_dispatched_slot",
        "occurrences",
        postgresql_where=sa.text("claim_generation > 0"),
        sqlite_where=sa.text("claim_generation > 0"),
    )
    op.drop_index("ix_occurrences_schedule_state", table_name="occurrences")
    op.drop_index("ix_occurrences_schedule_instant", table_name="occurrences")
    op.drop_table("occurrences")
    op.drop_table("revisions")
    op.drop_table("schedule_gates")
