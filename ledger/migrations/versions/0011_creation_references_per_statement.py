"""Cheaper creation writes: four references checked once per statement (PostgreSQL).

Materialization writes, per occurrence, an occurrence row, its logical-slot claim and its creation
event. Four foreign keys guard those rows: occurrence → revision, slot → schedule gate, slot →
owner occurrence, event → occurrence. PostgreSQL checks a foreign key with one ``AFTER … FOR EACH
ROW`` trigger per inserted row (a queued event, a lookup and a ``FOR KEY SHARE`` row lock), and
with 20,000 occurrences per window those 80,000 checks were a third of the write.

Here the same four rules hold, checked differently on PostgreSQL (SQLite keeps its foreign keys:
its checks run inside the engine, without a function call):

**A reference must exist when it is written.** ``AFTER INSERT … FOR EACH STATEMENT`` triggers join
the statement's new rows (a transition table) with the referenced table in one query and reject
the statement if any reference is missing, with SQLSTATE 23503 (foreign_key_violation) and the
dropped constraint's name, as the foreign key did. For events the check joins migration 0010's
sequence check (one query over the new events: a missing occurrence is named first). A slot
whose owner changes to another occurrence (a compare-and-set take) is checked by a row trigger
that fires only when the owner changes. Like the foreign keys, the checks run at the end of the
statement, so one statement may insert occurrences and the rows that reference them
(materialization's data-modifying CTEs).

**A referenced row never goes away or changes its key.** The foreign keys also refused deleting
or re-keying a referenced row, and took a row lock so that such a change could not race an insert.
Here no such change can happen at all, so no lock is needed: occurrences are never deleted
(migration 0002), and now revisions and schedule gates are not either (``DELETE`` and, for
revisions, ``TRUNCATE`` are rejected), and the keys of all four tables never change (an
``UPDATE`` that changes an occurrence's ID, schedule or revision, a revision's or gate's key or a
slot's key is rejected). The ledger never issues such a statement ("facts are never deleted",
``ledger.models``); the guard is stricter than the foreign key only for rows nothing references
(a revision with no occurrence yet). The remaining foreign keys (revision → gate, attempt, case and
implementation switch → their parents) are unchanged.

One difference an operator can see: these are user triggers, so ``ALTER TABLE … DISABLE TRIGGER
USER`` (or ``ALL``) turns the checks off with the ledger's other triggers (the transition graph,
the append-only events), where a foreign key survives ``DISABLE TRIGGER USER``. The ledger never
disables a trigger; do not in maintenance either.

``tests/ledger/test_ledger_references.py`` checks each rule on both backends.

Revision ID: 0011
Revises: 0010
Create Date: 2026-12-13 12:00:00
"""

from __future__ import annotations

from collections.abc import Sequence

from alembic import op

revision: str = "0011"
down_revision: str | None = "0010"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None

OCCURRENCE_REVISION = "fk_occurrences_schedule_id_revision_revisions"
SLOT_GATE = "fk_logical_slots_schedule_id_schedule_gates"
SLOT_OWNER = "fk_logical_slots_owner_occurrence_id_occurrences"
EVENT_OCCURRENCE = "fk_occurrence_events_occurrence_id_occurrences"
STATEMENT_CHECKED: dict[str, tuple[str, tuple[str, ...], str, tuple[str, ...]]] = {
    OCCURRENCE_REVISION: (
        "occurrences",
        ("schedule_id", "revision"),
        "revisions",
        ("schedule_id", "revision"),
    ),
    SLOT_GATE: ("logical_slots", ("schedule_id",), "schedule_gates", ("schedule_id",)),
    SLOT_OWNER: ("logical_slots", ("owner_occurrence_id",), "occurrences", ("occurrence_id",)),
    EVENT_OCCURRENCE: ("occurrence_events", ("occurrence_id",), "occurrences", ("occurrence_id",)),
}
"""The foreign keys this migration replaces on PostgreSQL: name → (table, columns, referenced
table, referenced columns). ``ledger.models`` still declares them (SQLite has them)."""

NEVER_DELETED = {
    "revisions": "revisions are never deleted",
    "schedule_gates": "schedule gates are never deleted",
}
KEYS = {
    "occurrences": ("occurrence_id", "schedule_id", "revision"),
    "revisions": ("schedule_id", "revision"),
    "schedule_gates": ("schedule_id",),
    "logical_slots": ("schedule_id", "logical_slot_id"),
}
"""Per table, the columns an ``UPDATE`` may never change (its key and its references' keys)."""

_EVENTS_TRIGGER = "trg_occurrence_events_in_sequence"
_EVENTS_FUNCTION = "almanac_events_in_sequence"
_OUT_OF_SEQUENCE = "occurrence event out of sequence"


def _missing(constraint: str, table: str, key: str, parent: str) -> str:
    """``RAISE`` of a missing reference, worded as PostgreSQL's own foreign-key error."""
    return f"""RAISE EXCEPTION 'insert or update on table "{table}" violates foreign key '
                'constraint "{constraint}"'
                USING ERRCODE = 'foreign_key_violation', CONSTRAINT = '{constraint}',
                    TABLE = '{table}',
                    DETAIL = format('Key ({key})=(%s) is not present in table "{parent}".',
                        missing.key)"""


_CHECKS = [
    # Occurrences: one (schedule, revision) per materialized window, so one lookup per statement.
    f"""
    CREATE FUNCTION almanac_occurrences_reference_revisions() RETURNS trigger
    LANGUAGE plpgsql AS $$
    DECLARE
        missing record;
    BEGIN
        SELECT created.schedule_id || ', ' || created.revision AS key INTO missing
        FROM (SELECT DISTINCT schedule_id, revision FROM created) AS created
        WHERE NOT EXISTS (
            SELECT 1 FROM revisions AS r
            WHERE r.schedule_id = created.schedule_id AND r.revision = created.revision
        )
        LIMIT 1;
        IF FOUND THEN
            {_missing(OCCURRENCE_REVISION, "occurrences", "schedule_id, revision", "revisions")};
        END IF;
        RETURN NULL;
    END
    $$
    """,
    """
    CREATE TRIGGER trg_occurrences_reference_revisions AFTER INSERT ON occurrences
    REFERENCING NEW TABLE AS created
    FOR EACH STATEMENT EXECUTE FUNCTION almanac_occurrences_reference_revisions()
    """,
    f"""
    CREATE FUNCTION almanac_slots_reference_gates_and_owners() RETURNS trigger
    LANGUAGE plpgsql AS $$
    DECLARE
        missing record;
    BEGIN
        SELECT claimed.schedule_id AS key INTO missing
        FROM (SELECT DISTINCT schedule_id FROM claimed) AS claimed
        WHERE NOT EXISTS (
            SELECT 1 FROM schedule_gates AS g WHERE g.schedule_id = claimed.schedule_id
        )
        LIMIT 1;
        IF FOUND THEN
            {_missing(SLOT_GATE, "logical_slots", "schedule_id", "schedule_gates")};
        END IF;
        SELECT claimed.owner_occurrence_id AS key INTO missing
        FROM claimed
        WHERE claimed.owner_occurrence_id IS NOT NULL AND NOT EXISTS (
            SELECT 1 FROM occurrences AS o WHERE o.occurrence_id = claimed.owner_occurrence_id
        )
        LIMIT 1;
        IF FOUND THEN
            {_missing(SLOT_OWNER, "logical_slots", "owner_occurrence_id", "occurrences")};
        END IF;
        RETURN NULL;
    END
    $$
    """,
    """
    CREATE TRIGGER trg_logical_slots_reference_gates_and_owners AFTER INSERT ON logical_slots
    REFERENCING NEW TABLE AS claimed
    FOR EACH STATEMENT EXECUTE FUNCTION almanac_slots_reference_gates_and_owners()
    """,
    # A slot's owner changes by compare-and-set (one row); NULL (released) references nothing.
    f"""
    CREATE FUNCTION almanac_slot_owner_exists() RETURNS trigger
    LANGUAGE plpgsql AS $$
    DECLARE
        missing record;
    BEGIN
        IF NOT EXISTS (SELECT 1 FROM occurrences WHERE occurrence_id = NEW.owner_occurrence_id)
        THEN
            SELECT NEW.owner_occurrence_id AS key INTO missing;
            {_missing(SLOT_OWNER, "logical_slots", "owner_occurrence_id", "occurrences")};
        END IF;
        RETURN NULL;
    END
    $$
    """,
    """
    CREATE TRIGGER trg_logical_slots_owner_exists AFTER UPDATE OF owner_occurrence_id
    ON logical_slots FOR EACH ROW
    WHEN (NEW.owner_occurrence_id IS NOT NULL
        AND NEW.owner_occurrence_id IS DISTINCT FROM OLD.owner_occurrence_id)
    EXECUTE FUNCTION almanac_slot_owner_exists()
    """,
    # Events: migration 0010's sequence check, a missing occurrence named first.
    f"""
    CREATE OR REPLACE FUNCTION {_EVENTS_FUNCTION}() RETURNS trigger
    LANGUAGE plpgsql AS $$
    DECLARE
        bad record;
        missing record;
    BEGIN
        SELECT appended.occurrence_id, appended.sequence, o.event_sequence AS latest,
            o.occurrence_id IS NULL AS dangling INTO bad
        FROM appended LEFT JOIN occurrences AS o ON o.occurrence_id = appended.occurrence_id
        WHERE appended.sequence IS DISTINCT FROM o.event_sequence
        ORDER BY o.occurrence_id IS NULL DESC
        LIMIT 1;
        IF FOUND AND bad.dangling THEN
            SELECT bad.occurrence_id AS key INTO missing;
            {_missing(EVENT_OCCURRENCE, "occurrence_events", "occurrence_id", "occurrences")};
        END IF;
        IF FOUND THEN
            RAISE EXCEPTION '{_OUT_OF_SEQUENCE}: % #% (the occurrence is at #%)',
                bad.occurrence_id, bad.sequence, bad.latest
                USING ERRCODE = 'check_violation';
        END IF;
        RETURN NULL;
    END
    $$
    """,
]

_GUARDS = [
    *(
        f"""
        CREATE TRIGGER trg_{table}_no_delete BEFORE DELETE ON {table}
        FOR EACH ROW EXECUTE FUNCTION almanac_reject_change('{why}')
        """
        for table, why in NEVER_DELETED.items()
    ),
    f"""
    CREATE TRIGGER trg_revisions_no_truncate BEFORE TRUNCATE ON revisions
    FOR EACH STATEMENT EXECUTE FUNCTION almanac_reject_change('{NEVER_DELETED["revisions"]}')
    """,
    *(
        f"""
        CREATE TRIGGER trg_{table}_key_unchanged BEFORE UPDATE ON {table} FOR EACH ROW
        WHEN ({" OR ".join(f"OLD.{c} IS DISTINCT FROM NEW.{c}" for c in columns)})
        EXECUTE FUNCTION almanac_reject_change('the key of {table} never changes')
        """
        for table, columns in KEYS.items()
    ),
]

# Migration 0010's sequence check, repeated so that this file stands alone.
_EVENTS_0010 = f"""
    CREATE OR REPLACE FUNCTION {_EVENTS_FUNCTION}() RETURNS trigger
    LANGUAGE plpgsql AS $$
    DECLARE
        bad record;
    BEGIN
        SELECT appended.occurrence_id, appended.sequence, o.event_sequence AS latest INTO bad
        FROM appended LEFT JOIN occurrences AS o ON o.occurrence_id = appended.occurrence_id
        WHERE appended.sequence IS DISTINCT FROM o.event_sequence
        LIMIT 1;
        IF FOUND THEN
            RAISE EXCEPTION '{_OUT_OF_SEQUENCE}: % #% (the occurrence is at #%)',
                bad.occurrence_id, bad.sequence, bad.latest
                USING ERRCODE = 'check_violation';
        END IF;
        RETURN NULL;
    END
    $$
    """

_DROPPED = [
    "DROP TRIGGER trg_occurrences_reference_revisions ON occurrences",
    "DROP FUNCTION almanac_occurrences_reference_revisions()",
    "DROP TRIGGER trg_logical_slots_reference_gates_and_owners ON logical_slots",
    "DROP FUNCTION almanac_slots_reference_gates_and_owners()",
    "DROP TRIGGER trg_logical_slots_owner_exists ON logical_slots",
    "DROP FUNCTION almanac_slot_owner_exists()",
    *(f"DROP TRIGGER trg_{table}_no_delete ON {table}" for table in NEVER_DELETED),
    "DROP TRIGGER trg_revisions_no_truncate ON revisions",
    *(f"DROP TRIGGER trg_{table}_key_unchanged ON {table}" for table in KEYS),
    _EVENTS_0010,
]


def upgrade() -> None:
    if op.get_bind().dialect.name != "postgresql":
        return
    for name, (table, _, _, _) in STATEMENT_CHECKED.items():
        op.drop_constraint(name, table, type_="foreignkey")
    for statement in [*_CHECKS, *_GUARDS]:
        op.execute(statement)


def downgrade() -> None:
    if op.get_bind().dialect.name != "postgresql":
        return
    for statement in _DROPPED:
        op.execute(statement)
    for name, (table, columns, parent, parent_columns) in STATEMENT_CHECKED.items():
        op.create_foreign_key(name, table, parent, list(columns), list(parent_columns))
