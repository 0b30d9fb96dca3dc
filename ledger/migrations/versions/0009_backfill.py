"""Backfill (issue 13, ``almanac backfill``): ``occurrences.backfill_at_utc`` and its one edge.

- ``occurrences.backfill_at_utc`` (new, nullable): when an operator's backfill released the
  occurrence (created it in a past window, or moved it back from ``MISFIRE_EXPIRED``); NULL
  otherwise. The recorded decision that it runs although its instant is past.
- The transition trigger (migrations 0002/0005) allows exactly one more pair,
  ``MISFIRE_EXPIRED → DUE``, and only in an ``UPDATE`` that also records a backfill: the new
  ``backfill_at_utc`` is set and differs from the old one. Any other way out of
  ``MISFIRE_EXPIRED`` (a raw ``UPDATE … SET state = 'DUE'``, or to any other state) is still
  rejected. The code's table is ``ledger.states.TRANSITIONS`` plus
  ``ledger.states.BACKFILL_TRANSITIONS``; the frozen copies below are held equal to them by a test.

PostgreSQL: the trigger function is replaced (the trigger itself, ``BEFORE UPDATE OF state … WHEN
(OLD.state IS DISTINCT FROM NEW.state)``, is unchanged). SQLite: the trigger is dropped and
re-created. ``backfill_at_utc`` is a plain ``ADD COLUMN`` on both (no table rebuild: see 0005).

Downgrade restores migration 0005's trigger and drops the column (rows already moved back to
``DUE`` stay valid: the old trigger checks transitions, not states).

Revision ID: 0009
Revises: 0008
Create Date: 2026-12-12 12:00:00
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence

import sqlalchemy as sa
from alembic import op

revision: str = "0009"
down_revision: str | None = "0008"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None

# Frozen copy of ledger.states.TRANSITIONS at this revision (unchanged since 0005).
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
# Frozen copy of ledger.states.BACKFILL_TRANSITIONS: the edges only a recorded backfill takes.
BACKFILL_TRANSITIONS: Mapping[str, frozenset[str]] = {"MISFIRE_EXPIRED": frozenset({"DUE"})}

COLUMN = "backfill_at_utc"
TRANSITION_TRIGGER = "trg_occurrences_legal_transition"
ILLEGAL_TRANSITION = "illegal occurrence transition"


def _key_list() -> str:
    pairs = sorted(f"{a}>{b}" for a, targets in TRANSITIONS.items() for b in targets)
    return ", ".join(f"'{pair}'" for pair in pairs)


def _backfill_pair(distinct: str) -> str:
    """The SQL condition under which a backfill edge is allowed (``distinct``: the dialect's)."""
    (source, targets), *_ = BACKFILL_TRANSITIONS.items()
    (target,) = targets
    return (
        f"(OLD.state = '{source}' AND NEW.state = '{target}' AND NEW.{COLUMN} IS NOT NULL "
        f"AND NEW.{COLUMN} {distinct} OLD.{COLUMN})"
    )


def _pg_function(with_backfill: bool) -> str:
    allowed = f"OLD.state || '>' || NEW.state IN ({_key_list()})"
    if with_backfill:
        allowed = f"({allowed}) OR {_backfill_pair('IS DISTINCT FROM')}"
    return f"""
        CREATE OR REPLACE FUNCTION almanac_occurrence_legal_transition() RETURNS trigger
        LANGUAGE plpgsql AS $$
        BEGIN
            IF NOT ({allowed}) THEN
                RAISE EXCEPTION '{ILLEGAL_TRANSITION} % -> % (occurrence %)',
                    OLD.state, NEW.state, OLD.occurrence_id
                    USING ERRCODE = 'check_violation';
            END IF;
            RETURN NEW;
        END
        $$
        """


def _sqlite_trigger(with_backfill: bool) -> str:
    extra = f" AND NOT {_backfill_pair('IS NOT')}" if with_backfill else ""
    return f"""
        CREATE TRIGGER {TRANSITION_TRIGGER}
        BEFORE UPDATE OF state ON occurrences
        FOR EACH ROW WHEN OLD.state IS NOT NEW.state
            AND OLD.state || '>' || NEW.state NOT IN ({_key_list()}){extra}
        BEGIN
            SELECT RAISE(ABORT, '{ILLEGAL_TRANSITION}');
        END
        """


def upgrade() -> None:
    op.add_column("occurrences", sa.Column(COLUMN, sa.DateTime(timezone=True), nullable=True))
    if op.get_bind().dialect.name == "postgresql":
        op.execute(_pg_function(with_backfill=True))
    else:
        op.execute(f"DROP TRIGGER {TRANSITION_TRIGGER}")
        op.execute(_sqlite_trigger(with_backfill=True))


def downgrade() -> None:
    if op.get_bind().dialect.name == "postgresql":
        op.execute(_pg_function(with_backfill=False))
    else:
        op.execute(f"DROP TRIGGER {TRANSITION_TRIGGER}")
        op.execute(_sqlite_trigger(with_backfill=False))
    op.drop_column("occurrences", COLUMN)
