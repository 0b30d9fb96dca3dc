"""Calendar facts (issue 29): ``SKIPPED_HOLIDAY`` and ``EXCLUDED``, their reasons and evidence.

- Two terminal states an occurrence is *created* in (never reached by a transition, so the
  transition trigger's pairs are unchanged): ``SKIPPED_HOLIDAY`` (the nominal date is not a
  business day of the pinned calendar, or a holiday move collided) and ``EXCLUDED`` (``exdates``).
  They join the ``state``/``from_state``/``to_state`` CHECK lists.
- New reasons join the ``reason`` CHECK list: ``GAP_NEXT_VALID``, ``EXDATE_EXCLUDED``,
  ``HOLIDAY_SKIPPED``, ``HOLIDAY_FOLLOWING``, ``HOLIDAY_PRECEDING``,
  ``HOLIDAY_MODIFIED_FOLLOWING``, ``HOLIDAY_MOVE_COLLISION``.
- A skipped holiday or an excluded time keeps the instant it would have run at, without a slot,
  so two CHECKs are relaxed for exactly those two states: ``instant_unless_skipped`` (only
  ``SKIPPED_GAP`` has no instant; the two new states may have one or not) and
  ``slot_iff_instant`` (an instant without a slot only in the two new states).
- Evidence columns (nullable): ``holiday`` (the holiday's name, ``Saturday (weekend)``…) and
  ``calendar_release`` (``NYSE@holidays-0.108``).

Every edit only widens what a row may hold, so stored rows stay valid; SQLite's stored table
definitions are edited in place as migration 0005 explains, each edit matched exactly once.
Downgrade refuses while a row holds a new state or reason.

Revision ID: 0014
Revises: 0013
Create Date: 2026-12-03 15:00:00
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence

import sqlalchemy as sa
from alembic import op

from ledger.migrations.sqlite_schema_edit import check_constraint, edit_table_definitions

revision: str = "0014"
down_revision: str | None = "0013"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None

NEW_STATES = ("SKIPPED_HOLIDAY", "EXCLUDED")
NEW_REASONS = (
    "GAP_NEXT_VALID",
    "EXDATE_EXCLUDED",
    "HOLIDAY_SKIPPED",
    "HOLIDAY_FOLLOWING",
    "HOLIDAY_PRECEDING",
    "HOLIDAY_MODIFIED_FOLLOWING",
    "HOLIDAY_MOVE_COLLISION",
)

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
    "SKIPPED_HOLIDAY": frozenset(),
    "EXCLUDED": frozenset(),
}

_OLD_STATES = (
    "'PLANNED', 'DUE', 'DISPATCHING', 'RUNNING', 'SUCCEEDED', 'RETRY_WAIT', 'UNKNOWN_EFFECT', "
    "'FAILED', 'SKIPPED_GAP', 'MISFIRE_EXPIRED', 'CANCELLED', 'SKIPPED_OVERLAP'"
)
_NEW_STATES = _OLD_STATES + "".join(f", '{state}'" for state in NEW_STATES)
_OLD_REASONS = (
    "'UNAMBIGUOUS', 'FOLD_FIRST', 'FOLD_SECOND', 'GAP_SKIPPED', 'GAP_SHIFTED_FORWARD', "
    "'GAP_SHIFT_COLLISION', 'ELAPSED_INTERVAL', 'MANUAL'"
)
_NEW_REASONS = _OLD_REASONS + "".join(f", '{reason}'" for reason in NEW_REASONS)
_CALENDAR_STATES = "('SKIPPED_HOLIDAY', 'EXCLUDED')"

# (table, constraint, old expression, new expression)
CHECKS = (
    (
        "occurrences",
        "ck_occurrences_state_valid",
        f"state IN ({_OLD_STATES})",
        f"state IN ({_NEW_STATES})",
    ),
    (
        "occurrences",
        "ck_occurrences_reason_valid",
        f"reason IN ({_OLD_REASONS})",
        f"reason IN ({_NEW_REASONS})",
    ),
    (
        "occurrences",
        "ck_occurrences_instant_unless_skipped",
        "(instant_utc IS NULL) = (state = 'SKIPPED_GAP')",
        f"(instant_utc IS NULL) = (state = 'SKIPPED_GAP') OR state IN {_CALENDAR_STATES}",
    ),
    (
        "occurrences",
        "ck_occurrences_slot_iff_instant",
        "(instant_utc IS NULL) = (logical_slot_id IS NULL)",
        "(instant_utc IS NULL) = (logical_slot_id IS NULL) OR "
        f"(logical_slot_id IS NULL AND state IN {_CALENDAR_STATES})",
    ),
    (
        "occurrence_events",
        "ck_occurrence_events_from_state_valid",
        f"from_state IS NULL OR from_state IN ({_OLD_STATES})",
        f"from_state IS NULL OR from_state IN ({_NEW_STATES})",
    ),
    (
        "occurrence_events",
        "ck_occurrence_events_to_state_valid",
        f"to_state IN ({_OLD_STATES})",
        f"to_state IN ({_NEW_STATES})",
    ),
)


def _sqlite_edit(widen: bool) -> None:
    """Edit the stored CHECKs in place (migration 0005's procedure), one exact match each."""
    edits = []
    for table, name, old, new in CHECKS:
        before, after = (old, new) if widen else (new, old)
        edits.append(check_constraint("0014", table, name, before, after))
    edit_table_definitions(op.get_bind(), edits)


def _postgresql_checks(widen: bool) -> None:
    for table, name, old, new in CHECKS:
        op.execute(f"ALTER TABLE {table} DROP CONSTRAINT {name}")
        op.execute(f"ALTER TABLE {table} ADD CONSTRAINT {name} CHECK ({new if widen else old})")


def upgrade() -> None:
    if op.get_bind().dialect.name == "postgresql":
        _postgresql_checks(widen=True)
    else:
        _sqlite_edit(widen=True)
    op.execute("ALTER TABLE occurrences ADD COLUMN holiday TEXT")
    op.execute("ALTER TABLE occurrences ADD COLUMN calendar_release VARCHAR(90)")


def downgrade() -> None:
    bind = op.get_bind()
    states = ", ".join(f"'{s}'" for s in NEW_STATES)
    reasons = ", ".join(f"'{r}'" for r in NEW_REASONS)
    in_use = bind.execute(
        sa.text(
            f"SELECT count(*) FROM occurrences WHERE state IN ({states}) OR reason IN ({reasons})"
        )
    ).scalar_one()
    if in_use:
        raise RuntimeError(
            f"cannot downgrade below 0014: {in_use} occurrence(s) hold a calendar state or reason"
        )
    op.execute("ALTER TABLE occurrences DROP COLUMN calendar_release")
    op.execute("ALTER TABLE occurrences DROP COLUMN holiday")
    if bind.dialect.name == "postgresql":
        _postgresql_checks(widen=False)
    else:
        _sqlite_edit(widen=False)
