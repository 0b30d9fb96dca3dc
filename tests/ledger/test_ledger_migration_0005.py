"""Migration 0005 (issue 13): SKIPPED_OVERLAP, ELAPSED_INTERVAL and jitter evidence, with rows.

The ledger under test already holds occurrences with events, attempts and slots referencing them
(the reason SQLite's CHECK lists are widened in place, not by rebuilding the table).
"""

from __future__ import annotations

from dataclasses import replace
from datetime import timedelta

import pytest
from alembic import command
from ledger_support import BASE_SPEC, T0, claim_now, due_occurrence, make_spec
from sqlalchemy import inspect, text

from ledger import (
    Ledger,
    LedgerIntegrityError,
    OccurrenceState,
    materialize,
    publish_revision,
    show_occurrence,
)
from ledger.migrate import alembic_config, current, head
from ledger.transitions import transition

pytest_plugins = ["ledger_fixtures"]  # ledger, backend and the PostgreSQL cluster

S = OccurrenceState


def _raw(ledger: Ledger, sql: str, **params: object) -> None:
    ledger.write(lambda c: c.execute(text(sql), params))


def _columns(ledger: Ledger) -> list[str]:
    return [c["name"] for c in ledger.read(lambda c: inspect(c).get_columns("occurrences"))]


def test_upgrade_from_0004_with_referenced_rows_keeps_them_and_adds_the_column(
    ledger: Ledger,
) -> None:
    occurrence_id = due_occurrence(ledger)
    claim_now(ledger, occurrence_id, T0 + timedelta(hours=8))  # an attempt references it
    before = show_occurrence(ledger, occurrence_id)
    config = alembic_config(ledger.engine)
    command.downgrade(config, "0004")
    assert "jitter_ms" not in _columns(ledger)
    with pytest.raises(LedgerIntegrityError):  # 0004 refuses the new state
        _raw(ledger, "UPDATE occurrences SET state = 'SKIPPED_OVERLAP' WHERE state = 'PLANNED'")
    command.upgrade(config, "head")
    assert current(ledger.engine) == head()
    assert "jitter_ms" in _columns(ledger)
    after = show_occurrence(ledger, occurrence_id)
    assert before.occurrence.jitter == timedelta(0)  # written by this code at 0005
    assert after.occurrence.jitter is None  # the column is new: rows before it hold NULL
    assert (after.occurrence, after.attempts, after.events) == (
        replace(before.occurrence, jitter=None),
        before.attempts,
        before.events,
    )


def test_due_and_planned_may_become_skipped_overlap_and_it_is_terminal(ledger: Ledger) -> None:
    due = due_occurrence(ledger)
    planned = next(
        r.occurrence_id
        for r in show_occurrence_rows(ledger)
        if r.state is S.PLANNED and r.occurrence_id != due
    )
    now = T0 + timedelta(hours=9)
    for occurrence_id in (due, planned):
        ledger.write(
            lambda c, i=occurrence_id: transition(
                c, i, S.SKIPPED_OVERLAP, now_utc=now, by="test", why="overlap: previous running"
            )
        )
        assert show_occurrence(ledger, occurrence_id).occurrence.state is S.SKIPPED_OVERLAP
    with pytest.raises(LedgerIntegrityError, match="illegal occurrence transition"):
        _raw(ledger, "UPDATE occurrences SET state = 'DUE' WHERE occurrence_id = :i", i=due)


def show_occurrence_rows(ledger: Ledger) -> list:  # type: ignore[type-arg]
    from ledger import list_occurrences

    return list(list_occurrences(ledger, BASE_SPEC["scheduleId"]))


def test_running_may_not_become_skipped_overlap_even_in_raw_sql(ledger: Ledger) -> None:
    occurrence_id = due_occurrence(ledger)
    claim_now(ledger, occurrence_id, T0 + timedelta(hours=8))
    with pytest.raises(LedgerIntegrityError, match="illegal occurrence transition"):
        _raw(
            ledger,
            "UPDATE occurrences SET state = 'SKIPPED_OVERLAP' WHERE occurrence_id = :i",
            i=occurrence_id,
        )


def test_an_interval_spec_materializes_with_its_reason_and_jitter(ledger: Ledger) -> None:
    overrides = {"rule": None, "interval": "PT2H", "jitter": "PT30S", "revision": 1}
    spec = make_spec(**overrides)
    publish_revision(ledger, spec, T0, by="test")
    result = materialize(ledger, spec, T0, T0 + timedelta(hours=12), T0)
    assert [r.instant_utc for r in result.rows] == [
        T0 + timedelta(hours=h) for h in range(0, 12, 2)
    ]
    assert {r.reason for r in result.rows} == {"ELAPSED_INTERVAL"}
    assert all(r.jitter is not None and timedelta(0) <= r.jitter < timedelta(seconds=30)
               for r in result.rows)  # fmt: skip
    stored = show_occurrence(ledger, result.rows[0].occurrence_id).occurrence
    assert stored.jitter == result.rows[0].jitter
    assert stored.occurrence_id == "daily-ops-summary.r1.20261101T000000Z"


def test_downgrade_refuses_while_a_row_holds_a_new_value_then_round_trips(ledger: Ledger) -> None:
    spec = make_spec(rule=None, interval="PT6H")
    publish_revision(ledger, spec, T0, by="test")
    materialize(ledger, spec, T0, T0 + timedelta(days=1), T0)
    config = alembic_config(ledger.engine)
    with pytest.raises(RuntimeError, match="ELAPSED_INTERVAL"):
        command.downgrade(config, "0004")
    # PostgreSQL rolls the whole downgrade back; SQLite (no transactional DDL here) stops at 0005.
    assert current(ledger.engine) == ("0005" if ledger.dialect == "sqlite" else head())


def test_downgrade_to_0004_and_back_on_a_ledger_without_new_values(ledger: Ledger) -> None:
    occurrence_id = due_occurrence(ledger)
    config = alembic_config(ledger.engine)
    command.downgrade(config, "0004")
    command.upgrade(config, "head")
    assert show_occurrence(ledger, occurrence_id).occurrence.state is S.DUE
    with pytest.raises(LedgerIntegrityError):
        _raw(ledger, "UPDATE occurrences SET reason = 'NO_SUCH_REASON'")
