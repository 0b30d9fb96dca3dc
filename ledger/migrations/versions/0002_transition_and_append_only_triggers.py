"""Database-enforced transition graph and append-only facts (triggers, both backends).

- ``occurrences``: an UPDATE that changes ``state`` must be a pair of :data:`TRANSITIONS` (a
  same-state update passes: ``redeliver`` keeps RUNNING and bumps ``claim_generation``); a DELETE
  is rejected (facts are never deleted).
- ``occurrence_events``: append-only, every UPDATE and DELETE is rejected.
- PostgreSQL also rejects TRUNCATE of both tables.

PostgreSQL: plpgsql trigger functions raising SQLSTATE 23514 (check_violation), which the driver
reports as an integrity error. SQLite: ``BEFORE`` triggers with ``RAISE(ABORT, …)``, reported as
SQLITE_CONSTRAINT_TRIGGER (an integrity error). The ledger maps both to
:class:`ledger.errors.LedgerIntegrityError`.

Autogenerate does not compare triggers, so the "migrations produce the models' schema" test is
unaffected; ``tests/ledger/test_ledger_schema.py`` checks them separately. Beware: an Alembic
*batch* migration on SQLite recreates the table (copy and rename) and drops its triggers, so a
later batch migration of ``occurrences`` or ``occurrence_events`` must re-create them
(:func:`create_triggers`).

Revision ID: 0002
Revises: 0001
Create Date: 2026-11-30 12:00:00
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence

from alembic import op

revision: str = "0002"
down_revision: str | None = "0001"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None

# Frozen copy of ledger.states.TRANSITIONS at this revision (a migration never imports application
# code; a test checks that this copy still equals it — change both with a new migration).
TRANSITIONS: Mapping[str, frozenset[str]] = {
    "PLANNED": frozenset({"DUE", "CANCELLED", "MISFIRE_EXPIRED"}),
    "DUE": frozenset({"DISPATCHING", "CANCELLED", "MISFIRE_EXPIRED"}),
    "DISPATCHING": frozenset({"RUNNING", "UNKNOWN_EFFECT", "RETRY_WAIT", "FAILED"}),
    "RUNNING": frozenset({"SUCCEEDED", "RETRY_WAIT", "UNKNOWN_EFFECT", "FAILED"}),
    "RETRY_WAIT": frozenset({"DISPATCHING", "CANCELLED", "FAILED"}),
    "UNKNOWN_EFFECT": frozenset({"SUCCEEDED", "FAILED"}),
    "SUCCEEDED": frozenset(),
    "FAILED": frozenset(),
    "SKIPPED_GAP": frozenset(),
    "MISFIRE_EXPIRED": frozenset(),
    "CANCELLED": frozenset(),
}

TRANSITION_TRIGGER = "trg_occurrences_legal_transition"
OCCURRENCE_NO_DELETE = "trg_occurrences_no_delete"
EVENTS_NO_UPDATE = "trg_occurrence_events_no_update"
EVENTS_NO_DELETE = "trg_occurrence_events_no_delete"
PG_TRUNCATE_TRIGGERS = ("trg_occurrences_no_truncate", "trg_occurrence_events_no_truncate")
PG_FUNCTIONS = ("almanac_occurrence_legal_transition", "almanac_reject_change")

ILLEGAL_TRANSITION = "illegal occurrence transition"
NEVER_DELETED = "occurrences are never deleted"
APPEND_ONLY = "occurrence_events is append-only"


def legal_pairs() -> list[str]:
    """The legal ``'FROM>TO'`` keys, sorted (the trigger compares ``old || '>' || new``)."""
    return sorted(f"{a}>{b}" for a, targets in TRANSITIONS.items() for b in targets)


def _key_list() -> str:
    return ", ".join(f"'{pair}'" for pair in legal_pairs())


def _postgresql() -> list[str]:
    return [
        f"""
        CREATE FUNCTION almanac_occurrence_legal_transition() RETURNS trigger
        LANGUAGE plpgsql AS $$
        BEGIN
            IF OLD.state || '>' || NEW.state NOT IN ({_key_list()}) THEN
                RAISE EXCEPTION '{ILLEGAL_TRANSITION} % -> % (occurrence %)',
                    OLD.state, NEW.state, OLD.occurrence_id
                    USING ERRCODE = 'check_violation';
            END IF;
            RETURN NEW;
        END
        $$
        """,
        f"""
        CREATE TRIGGER {TRANSITION_TRIGGER}
        BEFORE UPDATE OF state ON occurrences
        FOR EACH ROW WHEN (OLD.state IS DISTINCT FROM NEW.state)
        EXECUTE FUNCTION almanac_occurrence_legal_transition()
        """,
        """
        CREATE FUNCTION almanac_reject_change() RETURNS trigger
        LANGUAGE plpgsql AS $$
        BEGIN
            RAISE EXCEPTION '%: % rejected', TG_ARGV[0], TG_OP
                USING ERRCODE = 'check_violation';
        END
        $$
        """,
        f"""
        CREATE TRIGGER {OCCURRENCE_NO_DELETE} BEFORE DELETE ON occurrences
        FOR EACH ROW EXECUTE FUNCTION almanac_reject_change('{NEVER_DELETED}')
        """,
        f"""
        CREATE TRIGGER {EVENTS_NO_UPDATE} BEFORE UPDATE ON occurrence_events
        FOR EACH ROW EXECUTE FUNCTION almanac_reject_change('{APPEND_ONLY}')
        """,
        f"""
        CREATE TRIGGER {EVENTS_NO_DELETE} BEFORE DELETE ON occurrence_events
        FOR EACH ROW EXECUTE FUNCTION almanac_reject_change('{APPEND_ONLY}')
        """,
        f"""
        CREATE TRIGGER {PG_TRUNCATE_TRIGGERS[0]} BEFORE TRUNCATE ON occurrences
        FOR EACH STATEMENT EXECUTE FUNCTION almanac_reject_change('{NEVER_DELETED}')
        """,
        f"""
        CREATE TRIGGER {PG_TRUNCATE_TRIGGERS[1]} BEFORE TRUNCATE ON occurrence_events
        FOR EACH STATEMENT EXECUTE FUNCTION almanac_reject_change('{APPEND_ONLY}')
        """,
    ]


def _sqlite() -> list[str]:
    return [
        f"""
        CREATE TRIGGER {TRANSITION_TRIGGER}
        BEFORE UPDATE OF state ON occurrences
        FOR EACH ROW WHEN OLD.state IS NOT NEW.state
            AND OLD.state || '>' || NEW.state NOT IN ({_key_list()})
        BEGIN
            SELECT RAISE(ABORT, '{ILLEGAL_TRANSITION}');
        END
        """,
        f"""
        CREATE TRIGGER {OCCURRENCE_NO_DELETE} BEFORE DELETE ON occurrences
        BEGIN
            SELECT RAISE(ABORT, '{NEVER_DELETED}');
        END
        """,
        f"""
        CREATE TRIGGER {EVENTS_NO_UPDATE} BEFORE UPDATE ON occurrence_events
        BEGIN
            SELECT RAISE(ABORT, '{APPEND_ONLY}');
        END
        """,
        f"""
        CREATE TRIGGER {EVENTS_NO_DELETE} BEFORE DELETE ON occurrence_events
        BEGIN
            SELECT RAISE(ABORT, '{APPEND_ONLY}');
        END
        """,
    ]


def create_triggers(dialect: str) -> None:
    """Create this revision's triggers (and PostgreSQL functions) on ``dialect``."""
    for statement in _postgresql() if dialect == "postgresql" else _sqlite():
        op.execute(statement)


def upgrade() -> None:
    create_triggers(op.get_bind().dialect.name)


def downgrade() -> None:
    if op.get_bind().dialect.name == "postgresql":
        for name, table in (
            (TRANSITION_TRIGGER, "occurrences"),
            (OCCURRENCE_NO_DELETE, "occurrences"),
            (EVENTS_NO_UPDATE, "occurrence_events"),
            (EVENTS_NO_DELETE, "occurrence_events"),
            (PG_TRUNCATE_TRIGGERS[0], "occurrences"),
            (PG_TRUNCATE_TRIGGERS[1], "occurrence_events"),
        ):
            op.execute(f"DROP TRIGGER {name} ON {table}")
        for function in PG_FUNCTIONS:
            op.execute(f"DROP FUNCTION {function}()")
        return
    for name in (TRANSITION_TRIGGER, OCCURRENCE_NO_DELETE, EVENTS_NO_UPDATE, EVENTS_NO_DELETE):
        op.execute(f"DROP TRIGGER {name}")
