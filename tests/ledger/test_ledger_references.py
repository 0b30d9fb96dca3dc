"""A materialized occurrence's four references hold on both backends (migration 0011).

Expectations come from what a foreign key means (DESIGN §4: the ledger's facts reference each
other and are never deleted), not from the code under test: an occurrence names an existing
revision, a logical slot an existing schedule gate and owner occurrence, an event an existing
occurrence; a violation rejects the whole statement, good rows with it; a referenced row can be
neither deleted nor re-keyed. SQLite checks these with its foreign keys; PostgreSQL, since
migration 0011, with triggers once per statement, naming the constraint the foreign key had.
"""

from __future__ import annotations

import importlib.util
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import pytest
from ledger_support import T0, due_occurrence
from sqlalchemy import Table, select, text

from ledger import Ledger, LedgerIntegrityError, show_occurrence
from ledger.bulk import bulk_insert
from ledger.events import EVENTS, OCCURRENCES, SLOTS

pytest_plugins = ["ledger_fixtures"]  # ledger, backend and the PostgreSQL cluster

_VERSIONS = Path(__file__).resolve().parents[2] / "ledger" / "migrations" / "versions"


def _migration_0011() -> Any:
    path = _VERSIONS / "0011_creation_references_per_statement.py"
    spec = importlib.util.spec_from_file_location("ledger_migration_0011", path)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


M = _migration_0011()


def _rejected(ledger: Ledger, constraint: str) -> Any:
    """``pytest.raises`` for a broken reference: PostgreSQL names the constraint, SQLite says
    ``FOREIGN KEY constraint failed`` (or, for an event, its sequence trigger fires first)."""
    if ledger.dialect == "postgresql":
        return pytest.raises(LedgerIntegrityError, match=f'foreign key constraint "{constraint}"')
    return pytest.raises(LedgerIntegrityError)


def _row(ledger: Ledger, table: Table, **where: Any) -> dict[str, Any]:
    query = select(table).where(*(table.c[k] == v for k, v in where.items()))
    return dict(ledger.read(lambda c: c.execute(query).one())._mapping)


def _insert(ledger: Ledger, table: Table, rows: Sequence[dict[str, Any]]) -> None:
    """One multi-row ``INSERT`` statement (the ledger's own bulk path) of ``rows``."""
    columns = [c for c in rows[0] if c != "id"]
    values = [tuple(r[c] for c in columns) for r in rows]
    ledger.write(
        lambda c: bulk_insert(c, table, columns, values, ignore_conflicts=False)  # one statement
    )


def _raw(ledger: Ledger, sql: str, **params: object) -> None:
    ledger.write(lambda c: c.execute(text(sql), params))


def _count(ledger: Ledger, table: Table, column: str, values: Sequence[Any]) -> int:
    query = select(table.c[column]).where(table.c[column].in_(values))
    return len(ledger.read(lambda c: c.execute(query).all()))


def test_an_occurrence_of_a_missing_revision_is_rejected_with_its_good_neighbours(
    ledger: Ledger,
) -> None:
    template = _row(ledger, OCCURRENCES, occurrence_id=due_occurrence(ledger))
    good = {**template, "occurrence_id": "copy-good"}
    bad = {**template, "occurrence_id": "copy-bad", "revision": 99}
    with _rejected(ledger, M.OCCURRENCE_REVISION):
        _insert(ledger, OCCURRENCES, [good, bad])
    assert _count(ledger, OCCURRENCES, "occurrence_id", ["copy-good", "copy-bad"]) == 0
    _insert(ledger, OCCURRENCES, [good])  # the same row with an existing revision is accepted
    assert _count(ledger, OCCURRENCES, "occurrence_id", ["copy-good"]) == 1


def test_a_slot_of_a_missing_gate_or_owner_is_rejected(ledger: Ledger) -> None:
    occurrence_id = due_occurrence(ledger)
    template = _row(ledger, SLOTS, owner_occurrence_id=occurrence_id)
    # A copy needs its own key and an owner no other slot has: an unowned (released) slot.
    good = {**template, "logical_slot_id": "s-good", "owner_occurrence_id": None}
    good["owner_revision"] = None
    no_gate = {**good, "logical_slot_id": "s-no-gate", "schedule_id": "no-such-schedule"}
    no_owner = {**template, "logical_slot_id": "s-no-owner", "owner_occurrence_id": "nobody"}
    with _rejected(ledger, M.SLOT_GATE):
        _insert(ledger, SLOTS, [good, no_gate])
    with _rejected(ledger, M.SLOT_OWNER):
        _insert(ledger, SLOTS, [good, no_owner])
    assert _count(ledger, SLOTS, "logical_slot_id", ["s-good", "s-no-gate", "s-no-owner"]) == 0
    _insert(ledger, SLOTS, [good])
    assert _count(ledger, SLOTS, "logical_slot_id", ["s-good"]) == 1


def test_a_slot_owner_changes_only_to_an_existing_occurrence_or_none(ledger: Ledger) -> None:
    occurrence_id = due_occurrence(ledger)
    slot = _row(ledger, SLOTS, owner_occurrence_id=occurrence_id)
    where = "schedule_id = :s AND logical_slot_id = :l"
    key = {"s": slot["schedule_id"], "l": slot["logical_slot_id"]}
    with _rejected(ledger, M.SLOT_OWNER):
        _raw(
            ledger, f"UPDATE logical_slots SET owner_occurrence_id = 'nobody' WHERE {where}", **key
        )
    released = "owner_occurrence_id = NULL, owner_revision = NULL"
    _raw(ledger, f"UPDATE logical_slots SET {released} WHERE {where}", **key)
    taken = "owner_occurrence_id = :o, owner_revision = :r"
    _raw(ledger, f"UPDATE logical_slots SET {taken} WHERE {where}", o=occurrence_id, r=1, **key)
    assert _row(ledger, SLOTS, **{"logical_slot_id": key["l"]})["owner_occurrence_id"] == (
        occurrence_id
    )


def test_an_event_of_a_missing_occurrence_is_rejected(ledger: Ledger) -> None:
    occurrence_id = due_occurrence(ledger)
    trail = show_occurrence(ledger, occurrence_id).events
    event = {
        "occurrence_id": "nobody",
        "from_state": None,
        "to_state": "PLANNED",
        "at_utc": T0,
        "by": "test",
        "why": "dangling",
        "sequence": 1,
    }
    with _rejected(ledger, M.EVENT_OCCURRENCE):
        _insert(ledger, EVENTS, [event])
    assert _count(ledger, EVENTS, "occurrence_id", ["nobody"]) == 0
    assert show_occurrence(ledger, occurrence_id).events == trail


@pytest.mark.parametrize(
    "sql",
    [
        "DELETE FROM revisions",
        "DELETE FROM schedule_gates",
        "UPDATE revisions SET revision = 7",
        "UPDATE schedule_gates SET schedule_id = 'renamed'",
        "UPDATE occurrences SET occurrence_id = occurrence_id || '-renamed'",
        "UPDATE occurrences SET revision = 99",
        "UPDATE logical_slots SET schedule_id = 'renamed'",
    ],
)
def test_a_referenced_row_is_never_deleted_or_rekeyed(ledger: Ledger, sql: str) -> None:
    occurrence_id = due_occurrence(ledger)
    before = show_occurrence(ledger, occurrence_id)
    with pytest.raises(LedgerIntegrityError):
        _raw(ledger, sql)
    assert show_occurrence(ledger, occurrence_id) == before


def test_postgresql_rejects_truncating_revisions(ledger: Ledger) -> None:
    if ledger.dialect != "postgresql":
        pytest.skip("SQLite has no TRUNCATE")
    due_occurrence(ledger)
    with pytest.raises(LedgerIntegrityError, match="revisions are never deleted"):
        _raw(ledger, "TRUNCATE revisions")
