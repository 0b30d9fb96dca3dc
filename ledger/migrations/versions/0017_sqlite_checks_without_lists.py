"""SQLite: the state and reason CHECKs of occurrences and events as chains of comparisons.

SQLite compiles ``x IN ('A', 'B', 'C', …)`` in a CHECK constraint (more than two values) into a
temporary table filled with the list, built again for every row the statement writes (no
``OP_Once`` guard in constraint code). Five such lists are checked on every occurrence and event
a materialization inserts and on every state change, about 60 index inserts per occurrence;
this rewrites each as the same rule without a list:

- ``x IN ('A', 'B', …)`` → ``(x = 'A' OR x = 'B' OR …)``;
- ``x NOT IN ('A', 'B', …)`` → ``(x <> 'A' AND x <> 'B' AND …)``.

The same truth value for every ``x``, NULL included (both sides are NULL for a NULL ``x``; a
CHECK passes on NULL either way), compared with the column's own affinity and collation (TEXT,
BINARY) as ``IN`` does, so every stored row stays valid and the same rows are accepted and
rejected. The lists are the ones migration 0014 left; the tables' definitions are edited in place
as migration 0005 explains, each edit matched exactly once. PostgreSQL evaluates an ``IN`` list
without such a table and keeps its constraints. Downgrade restores the lists.

Revision ID: 0017
Revises: 0016
Create Date: 2026-12-04 10:30:00
"""

from __future__ import annotations

from collections.abc import Sequence

from alembic import op

from ledger.migrations.sqlite_schema_edit import check_constraint, edit_table_definitions

revision: str = "0017"
down_revision: str | None = "0016"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None

# Frozen copies of the lists at this revision (migration 0014's), in their stored order.
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
REASONS = (
    "UNAMBIGUOUS",
    "FOLD_FIRST",
    "FOLD_SECOND",
    "GAP_SKIPPED",
    "GAP_SHIFTED_FORWARD",
    "GAP_SHIFT_COLLISION",
    "ELAPSED_INTERVAL",
    "MANUAL",
    "GAP_NEXT_VALID",
    "EXDATE_EXCLUDED",
    "HOLIDAY_SKIPPED",
    "HOLIDAY_FOLLOWING",
    "HOLIDAY_PRECEDING",
    "HOLIDAY_MODIFIED_FOLLOWING",
    "HOLIDAY_MOVE_COLLISION",
)
UNDISPATCHED = ("PLANNED", "DUE", "SKIPPED_GAP", "MISFIRE_EXPIRED")


def _listed(values: Sequence[str]) -> str:
    return ", ".join(f"'{v}'" for v in values)


def any_of(column: str, values: Sequence[str]) -> str:
    """``column IN (values)`` without a list: ``(column = 'A' OR column = 'B' OR …)``."""
    return "(" + " OR ".join(f"{column} = '{v}'" for v in values) + ")"


def none_of(column: str, values: Sequence[str]) -> str:
    """``column NOT IN (values)`` without a list: ``(column <> 'A' AND column <> 'B' AND …)``."""
    return "(" + " AND ".join(f"{column} <> '{v}'" for v in values) + ")"


# (table, constraint, stored with a list, stored without)
CHECKS = (
    (
        "occurrences",
        "ck_occurrences_state_valid",
        f"state IN ({_listed(STATES)})",
        any_of("state", STATES),
    ),
    (
        "occurrences",
        "ck_occurrences_reason_valid",
        f"reason IN ({_listed(REASONS)})",
        any_of("reason", REASONS),
    ),
    (
        "occurrences",
        "ck_occurrences_undispatched_states",
        f"claim_generation = 0 OR state NOT IN ({_listed(UNDISPATCHED)})",
        f"claim_generation = 0 OR {none_of('state', UNDISPATCHED)}",
    ),
    (
        "occurrence_events",
        "ck_occurrence_events_from_state_valid",
        f"from_state IS NULL OR from_state IN ({_listed(STATES)})",
        f"from_state IS NULL OR {any_of('from_state', STATES)}",
    ),
    (
        "occurrence_events",
        "ck_occurrence_events_to_state_valid",
        f"to_state IN ({_listed(STATES)})",
        any_of("to_state", STATES),
    ),
)


def _sqlite_edit(without_lists: bool) -> None:
    """Edit the stored CHECKs in place (migration 0005's procedure), one exact match each."""
    edits = []
    for table, name, listed, chained in CHECKS:
        before, after = (listed, chained) if without_lists else (chained, listed)
        edits.append(check_constraint("0017", table, name, before, after))
    edit_table_definitions(op.get_bind(), edits)


def upgrade() -> None:
    if op.get_bind().dialect.name == "sqlite":
        _sqlite_edit(without_lists=True)


def downgrade() -> None:
    if op.get_bind().dialect.name == "sqlite":
        _sqlite_edit(without_lists=False)
