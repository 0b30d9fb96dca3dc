"""SQLite: the transition trigger's allowed pairs as comparisons grouped by source state.

Migration 0009's SQLite trigger fires when ``OLD.state || '>' || NEW.state NOT IN (…21 pairs…)``.
SQLite fills a temporary index with that list each time the trigger's program runs, i.e. for
every row whose state an ``UPDATE`` changes (a trigger program's ``OP_Once`` is per invocation):
every release, claim and outcome pays 21 index inserts per occurrence. This re-creates the
trigger with the same rule without a list:

    NOT ((OLD.state = 'PLANNED' AND (NEW.state = 'CANCELLED' OR NEW.state = 'DUE' OR …))
         OR (OLD.state = 'DUE' AND (…)) OR …)
    AND OLD.state IS NOT NULL AND NEW.state IS NOT NULL

one group per source state of :data:`TRANSITIONS`, targets in name order (a legal change is
decided after at most six source and four target comparisons). The NULL guard keeps 0009's
verdict for a NULL state: its pair is NULL, ``NULL NOT IN (…)`` is NULL and the trigger does not
fire (the column's NOT NULL constraint rejects the row). For two non-NULL text states the pair
is in 0009's list exactly when the source's group holds the target (no state contains ``>``), so
the trigger fires for the same rows; the same-state pass and the backfill edge are 0009's terms,
unchanged. PostgreSQL evaluates an ``IN`` list without such a table and keeps its trigger
function. Downgrade restores 0009's trigger.

Revision ID: 0018
Revises: 0017
Create Date: 2026-12-04 16:00:00
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence

from alembic import op

revision: str = "0018"
down_revision: str | None = "0017"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None

# Frozen copy of ledger.states.TRANSITIONS at this revision (a test keeps it equal to the code),
# in lifecycle order: the groups are tested in this order, the busiest sources first.
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

TRANSITION_TRIGGER = "trg_occurrences_legal_transition"
ILLEGAL_TRANSITION = "illegal occurrence transition"
# Migration 0009's backfill edge, verbatim in both triggers.
BACKFILL_PAIR = (
    "(OLD.state = 'MISFIRE_EXPIRED' AND NEW.state = 'DUE' AND NEW.backfill_at_utc IS NOT NULL "
    "AND NEW.backfill_at_utc IS NOT OLD.backfill_at_utc)"
)


def allowed(transitions: Mapping[str, frozenset[str]]) -> str:
    """Whether ``OLD.state → NEW.state`` is a pair of ``transitions``, as grouped comparisons."""
    groups = [
        f"(OLD.state = '{source}' AND ("
        + " OR ".join(f"NEW.state = '{target}'" for target in sorted(targets))
        + "))"
        for source, targets in transitions.items()
        if targets
    ]
    return "(" + " OR ".join(groups) + ")"


def _key_list() -> str:
    """Migration 0009's list of ``'from>to'`` keys (for the downgrade)."""
    pairs = sorted(f"{a}>{b}" for a, targets in TRANSITIONS.items() for b in targets)
    return ", ".join(f"'{pair}'" for pair in pairs)


def _trigger(condition: str) -> str:
    return f"""
        CREATE TRIGGER {TRANSITION_TRIGGER}
        BEFORE UPDATE OF state ON occurrences
        FOR EACH ROW WHEN OLD.state IS NOT NEW.state
            AND {condition} AND NOT {BACKFILL_PAIR}
        BEGIN
            SELECT RAISE(ABORT, '{ILLEGAL_TRANSITION}');
        END
        """


WITHOUT_LIST = (
    f"NOT {allowed(TRANSITIONS)}\n            AND OLD.state IS NOT NULL AND NEW.state IS NOT NULL"
)
"""This revision's condition: the pair is not allowed, and both states are known."""
WITH_LIST = f"OLD.state || '>' || NEW.state NOT IN ({_key_list()})"
"""Migration 0009's condition."""


def _recreate(condition: str) -> None:
    if op.get_bind().dialect.name == "sqlite":
        op.execute(f"DROP TRIGGER {TRANSITION_TRIGGER}")
        op.execute(_trigger(condition))


def upgrade() -> None:
    _recreate(WITHOUT_LIST)


def downgrade() -> None:
    _recreate(WITH_LIST)
