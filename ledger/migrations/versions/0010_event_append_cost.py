"""Cheaper event appends: the sequence check once per statement, one redundant index fewer.

Materialization appends one creation event per occurrence (20,000 for a minutely schedule's
fortnight); two per-event costs of the events table go, with every guarantee kept.

**The sequence check (PostgreSQL).** Migration 0006's trigger ``trg_occurrence_events_in_sequence``
rejects an event whose ``sequence`` is not its occurrence's ``event_sequence`` in the inserting
transaction. On PostgreSQL it was a ``BEFORE INSERT … FOR EACH ROW`` plpgsql function: one function
call and one lookup per event. Here the same check runs once per statement: an ``AFTER INSERT …
FOR EACH STATEMENT`` trigger with the statement's new rows as a transition table, joined with
``occurrences`` in one query. The guarantee is unchanged: every inserted event is checked against
the occurrence row as the inserting transaction sees it at the end of its statement (the counter is
bumped by an earlier statement of the same transaction, or by the same statement's occurrence
insert), and a violation aborts the statement with the same SQLSTATE (23514, check_violation) and
message prefix. Same trigger name. SQLite keeps its per-row trigger (it has no statement-level
triggers; its ``WHEN`` subquery runs inside the engine, without a function call).

**The index (both).** ``ix_occurrence_events_occurrence (occurrence_id, id)`` duplicated the
unique index of ``(occurrence_id, sequence)`` (migration 0006) for every lookup by occurrence, and
nothing orders one occurrence's events by ``id`` any more (they are read in ``sequence`` order; the
global feed by ``id`` uses the primary key). An index is no constraint: dropping it changes no
guarantee, only one index entry less per event. The downgrade re-creates it.

Revision ID: 0010
Revises: 0009
Create Date: 2026-12-12 12:00:00
"""

from __future__ import annotations

from collections.abc import Sequence

from alembic import op

revision: str = "0010"
down_revision: str | None = "0009"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None

IN_SEQUENCE = "trg_occurrence_events_in_sequence"
ROW_FUNCTION = "almanac_event_in_sequence"
STATEMENT_FUNCTION = "almanac_events_in_sequence"
OUT_OF_SEQUENCE = "occurrence event out of sequence"
EVENTS_BY_OCCURRENCE = "ix_occurrence_events_occurrence"

_STATEMENT_LEVEL = [
    f"""
    CREATE FUNCTION {STATEMENT_FUNCTION}() RETURNS trigger
    LANGUAGE plpgsql AS $$
    DECLARE
        bad record;
    BEGIN
        SELECT appended.occurrence_id, appended.sequence, o.event_sequence AS latest INTO bad
        FROM appended LEFT JOIN occurrences AS o ON o.occurrence_id = appended.occurrence_id
        WHERE appended.sequence IS DISTINCT FROM o.event_sequence
        LIMIT 1;
        IF FOUND THEN
            RAISE EXCEPTION '{OUT_OF_SEQUENCE}: % #% (the occurrence is at #%)',
                bad.occurrence_id, bad.sequence, bad.latest
                USING ERRCODE = 'check_violation';
        END IF;
        RETURN NULL;
    END
    $$
    """,
    f"DROP TRIGGER {IN_SEQUENCE} ON occurrence_events",
    f"DROP FUNCTION {ROW_FUNCTION}()",
    f"""
    CREATE TRIGGER {IN_SEQUENCE} AFTER INSERT ON occurrence_events
    REFERENCING NEW TABLE AS appended
    FOR EACH STATEMENT EXECUTE FUNCTION {STATEMENT_FUNCTION}()
    """,
]

# Migration 0006's per-row form, repeated so that this file stands alone.
_ROW_LEVEL = [
    f"""
    CREATE FUNCTION {ROW_FUNCTION}() RETURNS trigger
    LANGUAGE plpgsql AS $$
    DECLARE
        latest integer;
    BEGIN
        SELECT event_sequence INTO latest FROM occurrences
        WHERE occurrence_id = NEW.occurrence_id;
        IF NEW.sequence IS DISTINCT FROM latest THEN
            RAISE EXCEPTION '{OUT_OF_SEQUENCE}: % #% (the occurrence is at #%)',
                NEW.occurrence_id, NEW.sequence, latest
                USING ERRCODE = 'check_violation';
        END IF;
        RETURN NEW;
    END
    $$
    """,
    f"DROP TRIGGER {IN_SEQUENCE} ON occurrence_events",
    f"DROP FUNCTION {STATEMENT_FUNCTION}()",
    f"""
    CREATE TRIGGER {IN_SEQUENCE} BEFORE INSERT ON occurrence_events
    FOR EACH ROW EXECUTE FUNCTION {ROW_FUNCTION}()
    """,
]


def upgrade() -> None:
    if op.get_bind().dialect.name == "postgresql":
        for statement in _STATEMENT_LEVEL:
            op.execute(statement)
    op.drop_index(EVENTS_BY_OCCURRENCE, table_name="occurrence_events")


def downgrade() -> None:
    op.create_index(EVENTS_BY_OCCURRENCE, "occurrence_events", ["occurrence_id", "id"])
    if op.get_bind().dialect.name == "postgresql":
        for statement in _ROW_LEVEL:
            op.execute(statement)
