"""The schema: migrations produce the models' schema; the database enforces states and types."""

from __future__ import annotations

from datetime import datetime, timedelta

import pytest
from alembic.autogenerate import compare_metadata
from alembic.migration import MigrationContext
from ledger_support import T0, due_occurrence
from sqlalchemy import text, update

from ledger import Ledger, LedgerIntegrityError, OccurrenceState
from ledger.events import OCCURRENCES
from ledger.migrate import current, head
from ledger.models import Base
from ledger.states import TERMINAL, TRANSITIONS

pytest_plugins = ["ledger_fixtures"]  # ledger, backend and the PostgreSQL cluster


S = OccurrenceState


def test_migrations_produce_the_models_schema(ledger: Ledger) -> None:
    with ledger.engine.connect() as connection:
        context = MigrationContext.configure(connection, opts={"compare_type": True})
        diffs = compare_metadata(context, Base.metadata)
    assert diffs == []
    assert current(ledger.engine) == head()


def test_database_rejects_an_unknown_state(ledger: Ledger) -> None:
    occurrence_id = due_occurrence(ledger)
    with pytest.raises(LedgerIntegrityError):
        ledger.write(
            lambda c: c.execute(
                update(OCCURRENCES)
                .where(OCCURRENCES.c.occurrence_id == occurrence_id)
                .values(state="DONE")
            )
        )


def test_database_rejects_dispatch_evidence_on_undispatched_states(ledger: Ledger) -> None:
    occurrence_id = due_occurrence(ledger)
    with pytest.raises(LedgerIntegrityError):
        ledger.write(
            lambda c: c.execute(
                update(OCCURRENCES)
                .where(OCCURRENCES.c.occurrence_id == occurrence_id)
                .values(claim_generation=1)
            )
        )


def test_utc_datetime_rejects_naive_values(ledger: Ledger) -> None:
    occurrence_id = due_occurrence(ledger)
    with pytest.raises(ValueError, match="naive"):
        ledger.write(
            lambda c: c.execute(
                update(OCCURRENCES)
                .where(OCCURRENCES.c.occurrence_id == occurrence_id)
                .values(updated_at_utc=datetime(2026, 11, 1))
            )
        )


def test_instants_come_back_aware_utc_and_nominal_local_naive(ledger: Ledger) -> None:
    due_occurrence(ledger)
    row = ledger.read(lambda c: c.execute(text("SELECT * FROM occurrences LIMIT 1")).one())
    stored = ledger.read(
        lambda c: c.execute(
            OCCURRENCES.select().where(OCCURRENCES.c.occurrence_id == row.occurrence_id)
        ).one()
    )
    assert stored.instant_utc.utcoffset() == timedelta(0)
    assert stored.nominal_local.tzinfo is None
    assert row.nominal_local == stored.nominal_local.isoformat()  # stored as ISO text
    assert stored.created_at_utc == T0


def test_transition_table_is_design_section_4() -> None:
    assert {
        S.PLANNED: {S.DUE, S.CANCELLED, S.MISFIRE_EXPIRED},
        S.DUE: {S.DISPATCHING, S.CANCELLED, S.MISFIRE_EXPIRED},
        S.DISPATCHING: {S.RUNNING, S.UNKNOWN_EFFECT, S.RETRY_WAIT, S.FAILED},
        S.RUNNING: {S.SUCCEEDED, S.RETRY_WAIT, S.UNKNOWN_EFFECT, S.FAILED},
        S.RETRY_WAIT: {S.DISPATCHING, S.CANCELLED, S.FAILED},
        S.UNKNOWN_EFFECT: {S.SUCCEEDED, S.FAILED},
        S.SUCCEEDED: set(),
        S.FAILED: set(),
        S.SKIPPED_GAP: set(),
        S.MISFIRE_EXPIRED: set(),
        S.CANCELLED: set(),
    } == TRANSITIONS
    assert {S.SKIPPED_GAP, S.MISFIRE_EXPIRED, S.CANCELLED, S.SUCCEEDED, S.FAILED} == TERMINAL
