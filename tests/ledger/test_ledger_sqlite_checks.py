"""Migration 0017: SQLite's state and reason CHECKs as comparisons — same rule, no table per row.

Golden expectations: SQLite's own evaluation of the lists migration 0014 stored (the same engine
decides both forms, value by value), and the byte code SQLite compiles for a write (``EXPLAIN``:
``OpenEphemeral`` is the temporary table an ``IN`` list builds for every row checked).
"""

from __future__ import annotations

import importlib.util
from pathlib import Path
from types import ModuleType

import pytest
from alembic import command
from ledger_support import T0, due_occurrence
from sqlalchemy import insert, select, text

import ledger as ledger_package
from ledger import Ledger, LedgerIntegrityError
from ledger.creation import OCCURRENCE_COLUMNS
from ledger.events import EVENTS, OCCURRENCES
from ledger.migrate import alembic_config, current, head
from ledger.models import REASONS, STATES

pytest_plugins = ["ledger_fixtures"]  # ledger, backend and the PostgreSQL cluster

_PATH = (
    Path(ledger_package.__file__).parent
    / "migrations"
    / "versions"
    / "0017_sqlite_checks_without_lists.py"
)


def _migration() -> ModuleType:
    spec = importlib.util.spec_from_file_location("ledger_migration_0017", _PATH)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def _stored(ledger: Ledger) -> dict[str, str]:
    rows = ledger.read(
        lambda c: c.execute(
            text("SELECT name, sql FROM sqlite_master WHERE type = 'table' AND name IN (:a, :b)"),
            {"a": "occurrences", "b": "occurrence_events"},
        ).all()
    )
    return {name: sql for name, sql in rows}


def _opcodes(ledger: Ledger, statement: str, parameters: int) -> list[str]:
    def explain(connection):  # type: ignore[no-untyped-def]
        return connection.exec_driver_sql(f"EXPLAIN {statement}", (None,) * parameters).all()

    return [row[1] for row in ledger.read(explain)]


@pytest.mark.parametrize("backend", ["sqlite"], indirect=True)
def test_every_check_gives_the_lists_verdict_for_every_value(ledger: Ledger) -> None:
    migration = _migration()
    values = [*STATES, *REASONS, "DONE", "planned", "PLANNED ", "", None]
    # A column of the checked columns' type (VARCHAR: TEXT affinity, BINARY collation), so the
    # comparisons see what a CHECK on the table sees.
    with ledger.engine.begin() as connection:
        connection.exec_driver_sql(
            "CREATE TEMP TABLE probe (state VARCHAR(32), reason VARCHAR(32), from_state"
            " VARCHAR(16), to_state VARCHAR(16), claim_generation INTEGER)"
        )
        for value in values:
            for generation in (0, 1, None):
                connection.exec_driver_sql(
                    "INSERT INTO probe VALUES (?, ?, ?, ?, ?)", (value,) * 4 + (generation,)
                )
        for _table, name, listed, chained in migration.CHECKS:
            verdicts = connection.exec_driver_sql(
                f"SELECT ({listed}) IS ({chained}), ({listed}) FROM probe"
            ).all()
            assert all(same for same, _ in verdicts), name
            assert {0, 1} <= {verdict for _, verdict in verdicts}, name  # both verdicts seen
    assert set(STATES) == set(migration.STATES)
    assert set(REASONS) == set(migration.REASONS)


@pytest.mark.parametrize("backend", ["sqlite"], indirect=True)
def test_sqlite_writes_of_occurrences_and_events_build_no_table_per_row(ledger: Ledger) -> None:
    occurrence = (
        f"INSERT INTO occurrences ({', '.join(OCCURRENCE_COLUMNS)})"
        f" VALUES ({', '.join('?' * len(OCCURRENCE_COLUMNS))}) ON CONFLICT DO NOTHING"
    )
    event_columns = ["occurrence_id", "from_state", "to_state", "at_utc", '"by"', "why", "sequence"]
    event = (
        f"INSERT INTO occurrence_events ({', '.join(event_columns)})"
        f" VALUES ({', '.join('?' * len(event_columns))})"
    )
    assert "OpenEphemeral" not in _opcodes(ledger, occurrence, len(OCCURRENCE_COLUMNS))
    assert "OpenEphemeral" not in _opcodes(ledger, event, len(event_columns))


@pytest.mark.parametrize("backend", ["sqlite"], indirect=True)
def test_migration_0017_round_trips_the_stored_definitions(ledger: Ledger) -> None:
    after = _stored(ledger)
    config = alembic_config(ledger.engine)
    command.downgrade(config, "0016")
    before = _stored(ledger)
    assert " IN ('PLANNED', 'DUE'," in before["occurrences"]
    assert " IN ('PLANNED', 'DUE'," in before["occurrence_events"]
    command.upgrade(config, "head")
    assert current(ledger.engine) == head()
    assert _stored(ledger) == after
    for table in after.values():
        assert " IN ('PLANNED'" not in table and " IN ('UNAMBIGUOUS'" not in table


@pytest.mark.parametrize(
    ("table", "column", "value", "constraint"),
    [
        ("occurrences", "state", "DONE", "ck_occurrences_state_valid"),
        ("occurrences", "reason", "planned", "ck_occurrences_reason_valid"),
        ("occurrence_events", "to_state", "DONE", "ck_occurrence_events_to_state_valid"),
        ("occurrence_events", "from_state", "", "ck_occurrence_events_from_state_valid"),
    ],
)
def test_an_inserted_row_with_an_unknown_state_or_reason_is_rejected_by_its_check(
    ledger: Ledger, table: str, column: str, value: str, constraint: str
) -> None:
    occurrence_id = due_occurrence(ledger)
    stored = ledger.read(
        lambda c: c.execute(
            select(OCCURRENCES).where(OCCURRENCES.c.occurrence_id == occurrence_id)
        ).one()
    )
    if table == "occurrences":  # a copy of the stored row under a new ID
        statement = insert(OCCURRENCES).values(
            {**stored._mapping, "occurrence_id": occurrence_id + "-copy", column: value}
        )
    else:  # the row's next event would be valid at this sequence but for the value
        event = {
            "occurrence_id": occurrence_id,
            "from_state": "DUE",
            "to_state": "DUE",
            "at_utc": T0,
            "by": "test",
            "why": "test",
            "sequence": stored.event_sequence,
        }
        statement = insert(EVENTS).values({**event, column: value})
    with pytest.raises(LedgerIntegrityError, match=constraint):
        ledger.write(lambda c: c.execute(statement))
