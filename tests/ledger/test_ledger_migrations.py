"""Migration 0003 on a ledger holding rows: attempts keyed by claim generation, no outbox."""

from __future__ import annotations

import json
from dataclasses import replace
from datetime import timedelta

import pytest
from alembic import command
from ledger_support import T0, claim_now, due_occurrence
from sqlalchemy import Connection, inspect, text

from ledger import (
    AttemptOutcome,
    Ledger,
    LedgerIntegrityError,
    OccurrenceDetail,
    OccurrenceState,
    mark_running,
    redeliver,
    retry_wait,
    show_occurrence,
    unknown_effect,
)
from ledger.migrate import alembic_config, current, head
from ledger.models import Base

pytest_plugins = ["ledger_fixtures"]  # ledger, backend and the PostgreSQL cluster


def _tables(ledger: Ledger) -> set[str]:
    return set(ledger.read(lambda c: inspect(c).get_table_names()))


def _columns(ledger: Ledger, table: str) -> list[str]:
    return [c["name"] for c in ledger.read(lambda c: inspect(c).get_columns(table))]


def _occurrence_with_three_attempts(ledger: Ledger) -> str:
    """Attempt 1 retried, attempt 2 redelivered as 3, attempt 3's outcome unknown (a case)."""
    occurrence_id = due_occurrence(ledger)
    now = T0 + timedelta(hours=8)
    claim_now(ledger, occurrence_id, now)
    retry_wait(
        ledger, occurrence_id, 1, now + timedelta(minutes=1), now, by="w", error_class="E",
        error_message="refused",
    )  # fmt: skip
    claim_now(ledger, occurrence_id, now + timedelta(minutes=1))
    mark_running(ledger, occurrence_id, 2, now + timedelta(minutes=1), by="w")
    redeliver(ledger, occurrence_id, 2, now + timedelta(minutes=2), by="w2", input_digest="d")
    unknown_effect(
        ledger, occurrence_id, 3, now + timedelta(minutes=3), by="w2", error_class="Timeout",
        error_message="no answer",
    )  # fmt: skip
    return occurrence_id


def _without_jitter(detail: OccurrenceDetail) -> OccurrenceDetail:
    """The detail as it reads after a downgrade below 0005 and back.

    ``jitter_ms`` is a new column (0005); a LOST attempt reads as the revisions before 0012 wrote
    it: UNKNOWN, finished when it was found lost.
    """
    attempts = [
        replace(
            a,
            outcome=AttemptOutcome.UNKNOWN.value,
            finished_at_utc=a.lost_detected_at_utc,
            lost_detected_at_utc=None,
            lost_detected_by=None,
        )
        if a.outcome == AttemptOutcome.LOST.value
        else a
        for a in detail.attempts
    ]
    return replace(
        detail, occurrence=replace(detail.occurrence, jitter=None), attempts=tuple(attempts)
    )


def _insert_outbox_row(connection: Connection, occurrence_id: str) -> None:
    connection.execute(
        text(
            "INSERT INTO outbox (occurrence_id, kind, payload, created_at_utc) "
            "VALUES (:i, 'occurrence.planned', :p, :t)"
        ),
        {"i": occurrence_id, "p": json.dumps({"occurrenceId": occurrence_id}), "t": T0},
    )


def test_migration_0003_upgrades_a_ledger_at_0002_holding_rows(ledger: Ledger) -> None:
    occurrence_id = _occurrence_with_three_attempts(ledger)
    before = show_occurrence(ledger, occurrence_id)
    config = alembic_config(ledger.engine)
    command.downgrade(config, "0002")
    # The 0002 schema, as 0002's code left it: attempt_number = claim_generation, outbox rows.
    assert "attempt_number" in _columns(ledger, "attempts")
    assert "attempt_number" in _columns(ledger, "reconciliation_cases")
    ledger.write(lambda c: _insert_outbox_row(c, occurrence_id))
    numbers = ledger.read(
        lambda c: c.execute(
            text("SELECT attempt_number, claim_generation FROM attempts ORDER BY attempt_number")
        ).all()
    )
    assert [tuple(row) for row in numbers] == [(1, 1), (2, 2), (3, 3)]

    command.upgrade(config, "head")

    assert current(ledger.engine) == head()
    assert "outbox" not in _tables(ledger)
    assert "attempt_number" not in _columns(ledger, "attempts")
    assert "attempt_number" not in _columns(ledger, "reconciliation_cases")
    after = show_occurrence(ledger, occurrence_id)
    assert after == _without_jitter(before)
    assert [a.claim_generation for a in after.attempts] == [1, 2, 3]
    assert after.case is not None and after.case.claim_generation == 3
    assert after.occurrence.state is OccurrenceState.UNKNOWN_EFFECT


def test_migration_0003_keys_attempts_by_claim_generation(ledger: Ledger) -> None:
    occurrence_id = _occurrence_with_three_attempts(ledger)
    primary_key = ledger.read(lambda c: inspect(c).get_pk_constraint("attempts"))
    assert primary_key["constrained_columns"] == ["occurrence_id", "claim_generation"]
    duplicate = (
        "INSERT INTO attempts (occurrence_id, claim_generation, worker_identity, "
        "implementation_alias, execution_epoch, disable_generation, gate_revision, input_digest, "
        "started_at_utc) SELECT occurrence_id, :g, 'x', 'x', 0, 0, 1, 'x', started_at_utc "
        "FROM attempts WHERE occurrence_id = :i AND claim_generation = 1"
    )
    for generation in (1, 0):  # the key, then CHECK claim_generation >= 1
        with pytest.raises(LedgerIntegrityError):
            ledger.write(
                lambda c, g=generation: c.execute(text(duplicate), {"g": g, "i": occurrence_id})
            )


def test_migrations_produce_the_models_check_constraints(ledger: Ledger) -> None:
    """Autogenerate does not compare CHECK constraints; batch copies on SQLite must keep them."""
    for table in Base.metadata.sorted_tables:
        declared = {
            str(c.name) for c in table.constraints if c.__class__.__name__ == "CheckConstraint"
        }
        reflected = {
            c["name"]
            for c in ledger.read(lambda c, t=table.name: inspect(c).get_check_constraints(t))
        }
        assert reflected == declared, table.name


def test_migration_0003_downgrades_to_0002_and_back(ledger: Ledger) -> None:
    occurrence_id = _occurrence_with_three_attempts(ledger)
    before = show_occurrence(ledger, occurrence_id)
    config = alembic_config(ledger.engine)
    command.downgrade(config, "0002")
    assert "outbox" in _tables(ledger)
    ledger.write(lambda c: _insert_outbox_row(c, occurrence_id))  # the 0002 outbox accepts rows
    command.upgrade(config, "head")
    assert show_occurrence(ledger, occurrence_id) == _without_jitter(before)
