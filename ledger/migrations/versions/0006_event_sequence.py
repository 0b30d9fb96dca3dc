"""Events of one occurrence are numbered by the ledger: ``occurrence_events.sequence``.

- ``occurrences.event_sequence`` (NOT NULL, default 0): the number of the occurrence's latest
  event. Every transition's compare-and-set increments it in the same ``UPDATE`` and reads the new
  value back (``RETURNING``); materialization inserts it as 1 with the creation event.
- ``occurrence_events.sequence`` (NOT NULL, CHECK ``>= 1``, UNIQUE with ``occurrence_id``): the
  event's number within its occurrence: 1, 2, 3, … with no hole and no repeat.
- A trigger rejects an event whose ``sequence`` is not the occurrence row's ``event_sequence`` in
  the inserting transaction: an event can only be appended by the transaction that bumped the
  counter (the one that won the compare-and-set), with the number it got.

Why this orders concurrent writers: the number is taken by the ``UPDATE`` of the occurrence row,
so the row lock the compare-and-set holds until commit is the lock that serialises numbering
(PostgreSQL re-reads the committed row after waiting; SQLite has one writer at a time). A loser of
the compare-and-set changes no row and appends nothing; a transaction that rolls back takes its
increment with it. So writers never share a number and never leave a hole.

Existing rows are numbered in insertion order (``id``) per occurrence, which is their commit
order: the same row lock serialised them. The append-only trigger of migration 0002 is lifted for
that one backfill ``UPDATE`` and restored. On SQLite the events table is rebuilt in batch mode
(copy and rename), which drops its triggers: they are re-created here (migration 0002's SQL,
repeated so that this file stands alone).

Revision ID: 0006
Revises: 0005
Create Date: 2026-12-02 12:00:00
"""

from __future__ import annotations

from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op

revision: str = "0006"
down_revision: str | None = "0005"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None

EVENTS_NO_UPDATE = "trg_occurrence_events_no_update"
EVENTS_NO_DELETE = "trg_occurrence_events_no_delete"
IN_SEQUENCE = "trg_occurrence_events_in_sequence"
PG_FUNCTION = "almanac_event_in_sequence"
APPEND_ONLY = "occurrence_events is append-only"
OUT_OF_SEQUENCE = "occurrence event out of sequence"

_NUMBER_EVENTS = """
    UPDATE occurrence_events SET sequence = (
        SELECT COUNT(*) FROM occurrence_events AS earlier
        WHERE earlier.occurrence_id = occurrence_events.occurrence_id
          AND earlier.id <= occurrence_events.id
    )
"""
_COUNT_EVENTS = """
    UPDATE occurrences SET event_sequence = (
        SELECT COUNT(*) FROM occurrence_events AS e
        WHERE e.occurrence_id = occurrences.occurrence_id
    )
"""


def _sqlite_events_triggers() -> list[str]:
    return [
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


_SQLITE_IN_SEQUENCE = f"""
    CREATE TRIGGER {IN_SEQUENCE} BEFORE INSERT ON occurrence_events
    FOR EACH ROW WHEN NEW.sequence IS NOT (
        SELECT event_sequence FROM occurrences WHERE occurrence_id = NEW.occurrence_id
    )
    BEGIN
        SELECT RAISE(ABORT, '{OUT_OF_SEQUENCE}');
    END
"""

_PG_IN_SEQUENCE = [
    f"""
    CREATE FUNCTION {PG_FUNCTION}() RETURNS trigger
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
    f"""
    CREATE TRIGGER {IN_SEQUENCE} BEFORE INSERT ON occurrence_events
    FOR EACH ROW EXECUTE FUNCTION {PG_FUNCTION}()
    """,
]


def upgrade() -> None:
    postgresql = op.get_bind().dialect.name == "postgresql"
    op.add_column(
        "occurrences",
        sa.Column("event_sequence", sa.Integer(), nullable=False, server_default="0"),
    )
    op.add_column("occurrence_events", sa.Column("sequence", sa.Integer(), nullable=True))
    if postgresql:
        op.execute(f"ALTER TABLE occurrence_events DISABLE TRIGGER {EVENTS_NO_UPDATE}")
        op.execute(_NUMBER_EVENTS)
        op.execute(f"ALTER TABLE occurrence_events ENABLE TRIGGER {EVENTS_NO_UPDATE}")
    else:
        op.execute(f"DROP TRIGGER {EVENTS_NO_UPDATE}")
        op.execute(_NUMBER_EVENTS)
        op.execute(f"DROP TRIGGER {EVENTS_NO_DELETE}")
    op.execute(_COUNT_EVENTS)
    with op.batch_alter_table("occurrence_events") as batch:
        batch.alter_column("sequence", existing_type=sa.Integer(), nullable=False)
        batch.create_check_constraint(
            op.f("ck_occurrence_events_sequence_positive"), "sequence >= 1"
        )
        batch.create_unique_constraint(
            op.f("uq_occurrence_events_occurrence_id_sequence"), ["occurrence_id", "sequence"]
        )
    if postgresql:
        for statement in _PG_IN_SEQUENCE:
            op.execute(statement)
    else:
        for statement in [*_sqlite_events_triggers(), _SQLITE_IN_SEQUENCE]:
            op.execute(statement)


def downgrade() -> None:
    postgresql = op.get_bind().dialect.name == "postgresql"
    if postgresql:
        op.execute(f"DROP TRIGGER {IN_SEQUENCE} ON occurrence_events")
        op.execute(f"DROP FUNCTION {PG_FUNCTION}()")
    else:
        for name in (IN_SEQUENCE, EVENTS_NO_UPDATE, EVENTS_NO_DELETE):
            op.execute(f"DROP TRIGGER {name}")
    with op.batch_alter_table("occurrence_events") as batch:
        batch.drop_constraint(op.f("uq_occurrence_events_occurrence_id_sequence"), type_="unique")
        batch.drop_constraint(op.f("ck_occurrence_events_sequence_positive"), type_="check")
        batch.drop_column("sequence")
    op.drop_column("occurrences", "event_sequence")
    if not postgresql:
        for statement in _sqlite_events_triggers():
            op.execute(statement)
