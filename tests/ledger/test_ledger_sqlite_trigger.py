"""Migration 0018: SQLite's transition trigger without a list — the same pairs, no table per row.

Golden expectations: the transition table (``ledger.states``, DESIGN §4, pinned by
``test_transition_table_is_design_section_4``) and SQL's NULL rule for migration 0009's
``NOT IN`` (a NULL pair is not "not in", so the trigger does not fire and the column's NOT NULL
constraint rejects the row); migration 0009's own trigger text for the downgrade; and the byte
code SQLite compiles (``EXPLAIN``: ``OpenEphemeral`` is the temporary table an ``IN`` list builds).
"""

from __future__ import annotations

import importlib.util
import sqlite3
from pathlib import Path
from types import ModuleType
from typing import Any

import pytest
from alembic import command
from ledger_support import due_occurrence
from sqlalchemy import text

import ledger as ledger_package
from ledger import Ledger, OccurrenceState
from ledger.migrate import alembic_config, current, head
from ledger.states import BACKFILL_TRANSITIONS, TRANSITIONS

pytest_plugins = ["ledger_fixtures"]  # ledger, backend and the PostgreSQL cluster

S = OccurrenceState
_VERSIONS = Path(ledger_package.__file__).parent / "migrations" / "versions"
_TRIGGER = "trg_occurrences_legal_transition"
_ILLEGAL = "illegal occurrence transition"
_NOT_NULL = "NOT NULL constraint failed: occurrences.state"


def _migration(name: str) -> ModuleType:
    spec = importlib.util.spec_from_file_location(f"ledger_migration_{name[:4]}", _VERSIONS / name)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def _stored_trigger(ledger: Ledger) -> str:
    return str(
        ledger.read(
            lambda c: c.execute(
                text("SELECT sql FROM sqlite_master WHERE type = 'trigger' AND name = :n"),
                {"n": _TRIGGER},
            ).scalar_one()
        )
    )


def test_migration_0018_frozen_transitions_equal_ledger_states() -> None:
    migration = _migration("0018_sqlite_transition_trigger_without_list.py")
    frozen = migration.TRANSITIONS
    assert {S(a): {S(b) for b in targets} for a, targets in frozen.items()} == TRANSITIONS
    (source, targets), *others = BACKFILL_TRANSITIONS.items()
    (target,) = targets
    assert not others
    assert f"(OLD.state = '{source}' AND NEW.state = '{target}' AND" in migration.BACKFILL_PAIR


def _outcome(
    connection: sqlite3.Connection, row: dict[str, Any], update: str, **values: Any
) -> str:
    """Insert ``row`` (CHECKs off), run ``update`` on it, roll back: ``ok`` or the error text."""
    columns = ", ".join(f'"{c}"' for c in row)
    connection.execute("BEGIN")
    try:
        connection.execute(
            f"INSERT INTO occurrences ({columns}) VALUES ({', '.join('?' * len(row))})",
            tuple(row.values()),
        )
        connection.execute(update, {"i": row["occurrence_id"], **values})
    except sqlite3.IntegrityError as error:
        return str(error)
    finally:
        connection.execute("ROLLBACK")
    return "ok"


@pytest.mark.parametrize("backend", ["sqlite"], indirect=True)
def test_the_trigger_refuses_exactly_the_pairs_outside_the_transition_table(
    ledger: Ledger,
) -> None:
    """Every (from, to) pair of states, an unknown state and NULL, on a row in ``from``.

    The row CHECK constraints are switched off (``ignore_check_constraints``), so each verdict
    is the trigger's alone, pairs the CHECKs also forbid included.
    """
    first = due_occurrence(ledger)
    raw = ledger.engine.raw_connection()
    try:
        driver = raw.driver_connection
        assert isinstance(driver, sqlite3.Connection)
        driver.row_factory = sqlite3.Row
        template = dict(
            driver.execute("SELECT * FROM occurrences WHERE occurrence_id = ?", (first,)).fetchone()
        )
        driver.row_factory = None
        driver.execute("PRAGMA ignore_check_constraints = ON")
        set_state = "UPDATE occurrences SET state = :to WHERE occurrence_id = :i"
        for source in S:
            row = {**template, "occurrence_id": f"{first}.{source.value}", "state": source.value}
            row.update(logical_slot_id=None, backfill_at_utc=None)
            for target in [*S, "DONE", None]:
                legal = target == source or target in TRANSITIONS[source]
                expected = _NOT_NULL if target is None else "ok" if legal else _ILLEGAL
                got = _outcome(driver, row, set_state, to=target)
                assert got == expected, f"{source} → {target}"
        # The backfill edge: MISFIRE_EXPIRED → DUE only with a new, non-NULL backfill stamp.
        expired = {**template, "occurrence_id": f"{first}.expired", "state": "MISFIRE_EXPIRED"}
        expired.update(logical_slot_id=None, backfill_at_utc=None)
        stamp = (
            "UPDATE occurrences SET state = 'DUE', backfill_at_utc = :t WHERE occurrence_id = :i"
        )
        assert _outcome(driver, expired, stamp, t="2026-11-08 00:00:00.000000") == "ok"
        assert _outcome(driver, expired, stamp, t=None) == _ILLEGAL
        restamped = {**expired, "backfill_at_utc": "2026-11-08 00:00:00.000000"}
        assert _outcome(driver, restamped, stamp, t="2026-11-08 00:00:00.000000") == _ILLEGAL
        assert _outcome(driver, restamped, stamp, t="2026-11-09 00:00:00.000000") == "ok"
    finally:
        raw.close()


@pytest.mark.parametrize("backend", ["sqlite"], indirect=True)
def test_a_state_change_builds_no_table_per_row(ledger: Ledger) -> None:
    def explain(connection):  # type: ignore[no-untyped-def]
        return connection.exec_driver_sql(
            "EXPLAIN UPDATE occurrences SET state = ? WHERE occurrence_id = ?", (None, None)
        ).all()

    opcodes = [(row[1], row[5]) for row in ledger.read(explain)]
    assert ("Init", f"-- TRIGGER {_TRIGGER}") in opcodes  # the trigger's program is listed
    assert "OpenEphemeral" not in [opcode for opcode, _ in opcodes]


@pytest.mark.parametrize("backend", ["sqlite"], indirect=True)
def test_migration_0018_round_trips_and_its_downgrade_restores_0009s_trigger(
    ledger: Ledger,
) -> None:
    after = _stored_trigger(ledger)
    assert " IN (" not in after
    config = alembic_config(ledger.engine)
    command.downgrade(config, "0017")
    restored = _migration("0009_backfill.py")._sqlite_trigger(with_backfill=True)
    assert _stored_trigger(ledger) == restored.strip()
    command.upgrade(config, "head")
    assert current(ledger.engine) == head()
    assert _stored_trigger(ledger) == after
