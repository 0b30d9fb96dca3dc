"""The schema: migrations produce the models' schema; the database enforces states and types."""

from __future__ import annotations

import importlib.util
from datetime import datetime, timedelta
from pathlib import Path
from types import ModuleType

import pytest
from alembic import command
from alembic.autogenerate import compare_metadata
from alembic.migration import MigrationContext
from ledger_support import T0, due_occurrence
from sqlalchemy import text, update

import ledger as ledger_package
from ledger import Ledger, LedgerIntegrityError, OccurrenceState, show_occurrence
from ledger.events import OCCURRENCES
from ledger.migrate import alembic_config, current, head
from ledger.models import Base
from ledger.states import TERMINAL, TRANSITIONS

pytest_plugins = ["ledger_fixtures"]  # ledger, backend and the PostgreSQL cluster


S = OccurrenceState


def test_migrations_produce_the_models_schema(ledger: Ledger) -> None:
    with ledger.engine.connect() as connection:
        context = MigrationContext.configure(connection, opts={"compare_type": True})
        diffs = compare_metadata(context, Base.metadata)
    if ledger.dialect == "postgresql":
        # Migration 0011 checks these four references with triggers on PostgreSQL
        # (test_ledger_references.py); the models keep declaring them (SQLite has them).
        replaced = set(_migration("0011_creation_references_per_statement.py").STATEMENT_CHECKED)
        assert {d[1].name for d in diffs if d[0] == "add_fk"} == replaced
        diffs = [d for d in diffs if d[0] != "add_fk"]
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
    } == {s: t - {S.SKIPPED_OVERLAP} for s, t in TRANSITIONS.items() if s not in LATER_STATES}
    # Issue 13: SKIPPED_OVERLAP, a terminal fact, reached only before any dispatch.
    assert {s for s, t in TRANSITIONS.items() if S.SKIPPED_OVERLAP in t} == {S.PLANNED, S.DUE}
    assert TRANSITIONS[S.SKIPPED_OVERLAP] == frozenset()
    expected_terminal = {S.SKIPPED_GAP, S.MISFIRE_EXPIRED, S.CANCELLED, S.SUCCEEDED, S.FAILED}
    assert expected_terminal | LATER_STATES == TERMINAL
    # Issue 29: the calendar facts are created terminal; no transition reaches them.
    assert not any(t & {S.SKIPPED_HOLIDAY, S.EXCLUDED} for t in TRANSITIONS.values())


# --- Migration 0002: the transition graph and append-only facts, enforced by triggers. ---

_MIGRATION_0002 = (
    Path(ledger_package.__file__).parent
    / "migrations"
    / "versions"
    / "0002_transition_and_append_only_triggers.py"
)


def _migration_0002() -> ModuleType:
    spec = importlib.util.spec_from_file_location("ledger_migration_0002", _MIGRATION_0002)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def _migration(name: str) -> ModuleType:
    path = _MIGRATION_0002.parent / name
    spec = importlib.util.spec_from_file_location(f"ledger_migration_{path.stem}", path)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


CALENDAR_STATES = {S.SKIPPED_HOLIDAY, S.EXCLUDED}
LATER_STATES = {S.SKIPPED_OVERLAP, *CALENDAR_STATES}
"""States added after DESIGN §4's table: 0005's SKIPPED_OVERLAP and 0014's calendar facts."""


def test_migration_0014_frozen_transitions_equal_ledger_states() -> None:
    frozen = _migration("0014_calendar_facts.py").TRANSITIONS
    assert {S(a): {S(b) for b in targets} for a, targets in frozen.items()} == TRANSITIONS


def test_migration_0005_frozen_transitions_are_the_table_without_calendar_states() -> None:
    frozen = _migration("0005_jitter_overlap_and_interval_evidence.py").TRANSITIONS
    before_0014 = {s: t for s, t in TRANSITIONS.items() if s not in CALENDAR_STATES}
    assert {S(a): {S(b) for b in targets} for a, targets in frozen.items()} == before_0014


def test_migration_0002_frozen_transitions_are_the_table_without_skipped_overlap() -> None:
    frozen = _migration_0002().TRANSITIONS
    before_0005 = {
        s: {t for t in targets if t is not S.SKIPPED_OVERLAP}
        for s, targets in TRANSITIONS.items()
        if s not in LATER_STATES
    }
    assert {S(a): {S(b) for b in targets} for a, targets in frozen.items()} == before_0005


def _triggers(ledger: Ledger) -> set[str]:
    if ledger.dialect == "postgresql":
        sql = "SELECT tgname FROM pg_trigger WHERE NOT tgisinternal"
    else:
        sql = "SELECT name FROM sqlite_master WHERE type = 'trigger'"
    return set(ledger.read(lambda c: c.execute(text(sql)).scalars().all()))


def test_migration_0002_and_0004_triggers_exist(ledger: Ledger) -> None:
    expected = {
        "trg_occurrences_legal_transition",
        "trg_occurrences_no_delete",
        "trg_occurrence_events_no_update",
        "trg_occurrence_events_no_delete",
        "trg_occurrence_events_in_sequence",
    }
    if ledger.dialect == "postgresql":
        expected |= {"trg_occurrences_no_truncate", "trg_occurrence_events_no_truncate"}
        # Migration 0011 (test_ledger_references.py).
        expected |= {
            "trg_occurrences_reference_revisions",
            "trg_logical_slots_reference_gates_and_owners",
            "trg_logical_slots_owner_exists",
            "trg_revisions_no_delete",
            "trg_schedule_gates_no_delete",
            "trg_revisions_no_truncate",
            "trg_occurrences_key_unchanged",
            "trg_revisions_key_unchanged",
            "trg_schedule_gates_key_unchanged",
            "trg_logical_slots_key_unchanged",
        }
    assert _triggers(ledger) == expected


def _raw(ledger: Ledger, sql: str, **params: object) -> None:
    ledger.write(lambda c: c.execute(text(sql), params))


def test_database_rejects_an_illegal_transition_issued_as_raw_sql(ledger: Ledger) -> None:
    occurrence_id = due_occurrence(ledger)  # DUE
    with pytest.raises(LedgerIntegrityError, match="illegal occurrence transition"):
        _raw(
            ledger,
            "UPDATE occurrences SET state = 'SUCCEEDED' WHERE occurrence_id = :i",
            i=occurrence_id,
        )
    # A same-state update passes (redeliver keeps RUNNING and bumps the claim generation).
    _raw(
        ledger,
        "UPDATE occurrences SET state = state, state_reason = 'x' WHERE occurrence_id = :i",
        i=occurrence_id,
    )
    _raw(
        ledger,
        "UPDATE occurrences SET state = 'CANCELLED' WHERE occurrence_id = :i",
        i=occurrence_id,
    )
    with pytest.raises(LedgerIntegrityError, match="illegal occurrence transition"):
        _raw(
            ledger, "UPDATE occurrences SET state = 'DUE' WHERE occurrence_id = :i", i=occurrence_id
        )
    assert show_occurrence(ledger, occurrence_id).occurrence.state is S.CANCELLED


def test_database_rejects_changing_or_deleting_events_and_deleting_occurrences(
    ledger: Ledger,
) -> None:
    occurrence_id = due_occurrence(ledger)
    trail = show_occurrence(ledger, occurrence_id).events
    with pytest.raises(LedgerIntegrityError, match="append-only"):
        _raw(ledger, "DELETE FROM occurrence_events WHERE occurrence_id = :i", i=occurrence_id)
    with pytest.raises(LedgerIntegrityError, match="append-only"):
        _raw(
            ledger,
            "UPDATE occurrence_events SET why = 'rewritten' WHERE occurrence_id = :i",
            i=occurrence_id,
        )
    with pytest.raises(LedgerIntegrityError, match="never deleted"):
        _raw(ledger, "DELETE FROM occurrences WHERE occurrence_id = :i", i=occurrence_id)
    if ledger.dialect == "postgresql":
        for table in ("occurrences", "occurrence_events"):
            with pytest.raises(LedgerIntegrityError):
                _raw(ledger, f"TRUNCATE {table} CASCADE")
    assert show_occurrence(ledger, occurrence_id).events == trail


def test_database_accepts_exactly_the_transition_table(ledger: Ledger) -> None:
    """Every (from, to) pair, as raw SQL on a row in ``from``: accepted iff legal or same-state."""
    first = due_occurrence(ledger)
    template = ledger.read(
        lambda c: (
            c.execute(OCCURRENCES.select().where(OCCURRENCES.c.occurrence_id == first))
            .one()
            ._asdict()
        )
    )
    undispatched = {S.PLANNED, S.DUE, S.SKIPPED_GAP, S.MISFIRE_EXPIRED}

    def row(state: S, n: int) -> dict[str, object]:
        skipped = state is S.SKIPPED_GAP
        return {
            **template,
            "occurrence_id": f"{template['occurrence_id']}.t{n}",
            "logical_slot_id": None if skipped else f"{template['logical_slot_id']}.t{n}",
            "instant_utc": None if skipped else template["instant_utc"],
            "gap_at_utc": template["instant_utc"] if skipped else None,
            "utc_offset_seconds": None if skipped else template["utc_offset_seconds"],
            "state": state.value,
            "claim_generation": 0 if state in undispatched else 1,
        }

    outcomes: dict[tuple[S, S], bool] = {}
    n = 0
    for source in S:
        for target in S:
            n += 1
            fields = row(source, n)
            ledger.write(lambda c, fields=fields: c.execute(OCCURRENCES.insert(), fields))
            sql = "UPDATE occurrences SET state = :to WHERE occurrence_id = :i"
            try:
                _raw(ledger, sql, to=target.value, i=fields["occurrence_id"])
            except LedgerIntegrityError as error:
                assert "transition" in str(error) or "ck_occurrences" in str(error), error
                outcomes[source, target] = False
            else:
                outcomes[source, target] = True
    # A pair the CHECK constraints forbid anyway (e.g. claim_generation > 0 in DUE) is not asked of
    # the trigger; every other outcome must be exactly "legal or same state".
    for (source, target), accepted in outcomes.items():
        legal = source is target or target in TRANSITIONS[source]
        if accepted:
            assert legal, f"database accepted {source} → {target}"
        elif legal:
            assert not _check_allows(source, target), f"database refused {source} → {target}"


def _check_allows(source: S, target: S) -> bool:
    """Whether the row CHECK constraints allow ``target`` for a row built in ``source``."""
    dispatched = source not in {S.PLANNED, S.DUE, S.SKIPPED_GAP, S.MISFIRE_EXPIRED}
    if (source is S.SKIPPED_GAP) != (target is S.SKIPPED_GAP):
        return False  # instant_unless_skipped
    return not (dispatched and target in {S.PLANNED, S.DUE, S.SKIPPED_GAP, S.MISFIRE_EXPIRED})


def test_migration_0002_downgrades_and_upgrades(ledger: Ledger) -> None:
    occurrence_id = due_occurrence(ledger)
    config = alembic_config(ledger.engine)
    command.downgrade(config, "0001")
    assert _triggers(ledger) == set()
    command.upgrade(config, "head")
    assert current(ledger.engine) == head()
    with pytest.raises(LedgerIntegrityError):
        _raw(ledger, "DELETE FROM occurrences WHERE occurrence_id = :i", i=occurrence_id)
