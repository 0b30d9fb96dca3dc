"""Jitter evidence, the ``SKIPPED_OVERLAP`` state and the ``ELAPSED_INTERVAL`` reason (issue 13).

- ``occurrences.jitter_ms`` (new, nullable integer): the dispatch delay the spec's ``jitter``
  gave the occurrence, in milliseconds (``timecontract.jitter``); NULL on rows written before
  this revision. Evidence only: the ID, slot and lateness reference instant do not depend on it.
- ``SKIPPED_OVERLAP``, a terminal state (an occurrence that came due while the schedule's
  previous one still ran, under ``overlapPolicy: SKIP`` or ``BUFFER_ONE``), joins the
  ``state``/``from_state``/``to_state`` CHECK lists and the transition trigger
  (``PLANNED|DUE → SKIPPED_OVERLAP``).
- ``ELAPSED_INTERVAL`` (occurrences of an ``interval`` spec) joins the ``reason`` CHECK list.

PostgreSQL: the CHECK constraints are dropped and re-created, the trigger function replaced.

SQLite cannot alter a CHECK constraint, and rebuilding ``occurrences`` (Alembic batch mode) is not
possible here: the migration runs in one transaction with ``PRAGMA foreign_keys = ON`` (set per
connection by ``ledger.db``, and a no-op inside a transaction), so dropping the old table fails on
the rows that reference it (even with ``defer_foreign_keys``: the counter stays up at commit).
Each change here only *widens* an ``IN (…)`` list, which leaves every stored row valid and changes
nothing on disk, so the stored table definitions are edited in place, the procedure SQLite
documents for such changes ("Making Other Kinds Of Table Schema Changes", lang_altertable.html:
``writable_schema`` + ``schema_version`` + 1, inside the transaction;
``ledger/migrations/sqlite_schema_edit.py``). Every edit checks that it matched exactly once and
fails the migration otherwise. The trigger is dropped and re-created.
``jitter_ms`` is a plain ``ADD COLUMN`` on both backends.

Downgrade refuses while a row holds ``SKIPPED_OVERLAP`` or ``ELAPSED_INTERVAL`` (the old
constraints would not hold), then reverses each step.

Revision ID: 0005
Revises: 0004
Create Date: 2026-12-08 12:00:00
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence

import sqlalchemy as sa
from alembic import op

from ledger.migrations.sqlite_schema_edit import check_constraint, edit_table_definitions

revision: str = "0005"
down_revision: str | None = "0004"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None

# Frozen copy of ledger.states.TRANSITIONS at this revision (a test keeps it equal to the code).
TRANSITIONS: Mapping[str, frozenset[str]] = {
    "PLANNED": frozenset({"DUE", "CANCELLED", "MISFIRE_EXPIRED", "SKIPPED_OVERLAP"}),
    "DUE": frozenset({"DISPATCHING", "CANCELLED", "MISFIRE_EXPIRED", "SKIPPED_OVERLAP"}),
    "DISPATCHING": frozenset({"RUNNING", "UNKNOWN_EFFECT", "RETRY_WAIT", "FAILED"}),
    "RUNNING": frozenset({"SUCCEEDED", "RETRY_WAIT", "UNKNOWN_EFFECT", "FAILED"}),
    "RETRY_WAIT": frozenset({"DISPATCHING", "CANCELLED", "FAILED"}),
    "UNKNOWN_EFFECT": frozenset({"SUCCEEDED", "FAILED"}),
    "SUCCEEDED": frozenset(),
    "FAILED": frozenset(),
    "SKIPPED_GAP": frozenset(),
    "MISFIRE_EXPIRED": frozenset(),
    "CANCELLED": frozenset(),
    "SKIPPED_OVERLAP": frozenset(),
}
NEW_STATE = "SKIPPED_OVERLAP"
NEW_REASON = "ELAPSED_INTERVAL"

_OLD_STATES = (
    "'PLANNED', 'DUE', 'DISPATCHING', 'RUNNING', 'SUCCEEDED', 'RETRY_WAIT', 'UNKNOWN_EFFECT', "
    "'FAILED', 'SKIPPED_GAP', 'MISFIRE_EXPIRED', 'CANCELLED'"
)
_NEW_STATES = f"{_OLD_STATES}, '{NEW_STATE}'"
_OLD_REASONS = (
    "'UNAMBIGUOUS', 'FOLD_FIRST', 'FOLD_SECOND', 'GAP_SKIPPED', 'GAP_SHIFTED_FORWARD', "
    "'GAP_SHIFT_COLLISION'"
)
_NEW_REASONS = f"{_OLD_REASONS}, '{NEW_REASON}'"

# (table, constraint, column expression, old list, new list)
_CHECKS = (
    ("occurrences", "ck_occurrences_state_valid", "state IN ({})", _OLD_STATES, _NEW_STATES),
    ("occurrences", "ck_occurrences_reason_valid", "reason IN ({})", _OLD_REASONS, _NEW_REASONS),
    (
        "occurrence_events",
        "ck_occurrence_events_from_state_valid",
        "from_state IS NULL OR from_state IN ({})",
        _OLD_STATES,
        _NEW_STATES,
    ),
    (
        "occurrence_events",
        "ck_occurrence_events_to_state_valid",
        "to_state IN ({})",
        _OLD_STATES,
        _NEW_STATES,
    ),
)

TRANSITION_TRIGGER = "trg_occurrences_legal_transition"
ILLEGAL_TRANSITION = "illegal occurrence transition"
# Migration 0002's table, for the downgrade (its trigger is re-created exactly).
_TRANSITIONS_0002 = {
    a: frozenset(b for b in targets if b != NEW_STATE)
    for a, targets in TRANSITIONS.items()
    if a != NEW_STATE
}


def _key_list(transitions: Mapping[str, frozenset[str]]) -> str:
    pairs = sorted(f"{a}>{b}" for a, targets in transitions.items() for b in targets)
    return ", ".join(f"'{pair}'" for pair in pairs)


def _pg_function(transitions: Mapping[str, frozenset[str]]) -> str:
    # Same body as migration 0002's, with this revision's pairs.
    return f"""
        CREATE OR REPLACE FUNCTION almanac_occurrence_legal_transition() RETURNS trigger
        LANGUAGE plpgsql AS $$
        BEGIN
            IF OLD.state || '>' || NEW.state NOT IN ({_key_list(transitions)}) THEN
                RAISE EXCEPTION '{ILLEGAL_TRANSITION} % -> % (occurrence %)',
                    OLD.state, NEW.state, OLD.occurrence_id
                    USING ERRCODE = 'check_violation';
            END IF;
            RETURN NEW;
        END
        $$
        """


def _sqlite_trigger(transitions: Mapping[str, frozenset[str]]) -> str:
    return f"""
        CREATE TRIGGER {TRANSITION_TRIGGER}
        BEFORE UPDATE OF state ON occurrences
        FOR EACH ROW WHEN OLD.state IS NOT NEW.state
            AND OLD.state || '>' || NEW.state NOT IN ({_key_list(transitions)})
        BEGIN
            SELECT RAISE(ABORT, '{ILLEGAL_TRANSITION}');
        END
        """


def _sqlite_widen(widen: bool) -> None:
    """Edit the stored CHECK lists in place (see the module docstring), one exact match each."""
    edits = []
    for table, name, expression, old, new in _CHECKS:
        before, after = (old, new) if widen else (new, old)
        edits.append(
            check_constraint(
                "0005", table, name, expression.format(before), expression.format(after)
            )
        )
    edit_table_definitions(op.get_bind(), edits)


def _postgresql_checks(widen: bool) -> None:
    for table, name, expression, old, new in _CHECKS:
        op.execute(f"ALTER TABLE {table} DROP CONSTRAINT {name}")
        op.execute(
            f"ALTER TABLE {table} ADD CONSTRAINT {name} "
            f"CHECK ({expression.format(new if widen else old)})"
        )


def upgrade() -> None:
    dialect = op.get_bind().dialect.name
    if dialect == "postgresql":
        _postgresql_checks(widen=True)
        op.execute(_pg_function(TRANSITIONS))
    else:
        _sqlite_widen(widen=True)
        op.execute(f"DROP TRIGGER {TRANSITION_TRIGGER}")
        op.execute(_sqlite_trigger(TRANSITIONS))
    op.execute("ALTER TABLE occurrences ADD COLUMN jitter_ms INTEGER")


def downgrade() -> None:
    bind = op.get_bind()
    in_use = bind.execute(
        sa.text("SELECT count(*) FROM occurrences WHERE state = :state OR reason = :reason"),
        {"state": NEW_STATE, "reason": NEW_REASON},
    ).scalar_one()
    if in_use:
        raise RuntimeError(
            f"cannot downgrade below 0005: {in_use} occurrence(s) hold {NEW_STATE} or {NEW_REASON}"
        )
    op.execute("ALTER TABLE occurrences DROP COLUMN jitter_ms")
    if bind.dialect.name == "postgresql":
        _postgresql_checks(widen=False)
        op.execute(_pg_function(_TRANSITIONS_0002))
    else:
        op.execute(f"DROP TRIGGER {TRANSITION_TRIGGER}")
        _sqlite_widen(widen=False)
        op.execute(_sqlite_trigger(_TRANSITIONS_0002))
