"""Migration 0014 (issue 29): holiday and exclusion decisions are terminal facts with evidence.

A daily 09:00 New York schedule over the NYSE calendar (Thanksgiving 2026 is Thursday 26
November) with ``exdates`` on Wednesday 25 November, materialized on both backends.
"""

from __future__ import annotations

from datetime import timedelta

import pytest
from alembic import command
from ledger_support import T0, make_spec
from sqlalchemy import text

from ledger import (
    Ledger,
    LedgerIntegrityError,
    OccurrenceState,
    materialize,
    publish_revision,
    show_occurrence,
)
from ledger.migrate import alembic_config

pytest_plugins = ["ledger_fixtures"]  # ledger, backend and the PostgreSQL cluster

S = OccurrenceState
NYSE = {"name": "NYSE", "release": "holidays-0.108"}


def _materialized(ledger: Ledger, **fields: object) -> dict[str, tuple[object, ...]]:
    spec = make_spec(rule="FREQ=DAILY;BYHOUR=9", calendar=NYSE, exdates=["2026-11-25"], **fields)
    publish_revision(ledger, spec, T0, by="test")
    result = materialize(ledger, spec, T0 + timedelta(days=24), T0 + timedelta(days=28), T0)
    return {
        r.occurrence_id.split(".")[-2][:8]: (
            r.state.value,
            r.reason,
            r.holiday,
            r.calendar_release,
            r.logical_slot_id,
        )
        for r in result.rows
    }


def test_skip_records_skipped_holiday_and_excluded_facts_with_their_evidence(
    ledger: Ledger,
) -> None:
    rows = _materialized(ledger)
    assert rows == {
        "20261125": ("EXCLUDED", "EXDATE_EXCLUDED", None, None, None),
        "20261126": ("SKIPPED_HOLIDAY", "HOLIDAY_SKIPPED", "Thanksgiving Day",
                     "NYSE@holidays-0.108", None),
        "20261127": ("PLANNED", "UNAMBIGUOUS", None, None, "daily-ops-summary@20261127T140000Z"),
        "20261128": ("SKIPPED_HOLIDAY", "HOLIDAY_SKIPPED", "Saturday (weekend)",
                     "NYSE@holidays-0.108", None),
    }  # fmt: skip
    skipped = show_occurrence(ledger, "daily-ops-summary.r1.20261126T090000.f0").occurrence
    assert skipped.instant_utc is not None and skipped.instant_utc.hour == 14  # would have run
    assert [e.why for e in show_occurrence(ledger, skipped.occurrence_id).events] == [
        "materialized: HOLIDAY_SKIPPED"
    ]


def test_a_moved_occurrence_keeps_its_id_and_records_the_holiday(ledger: Ledger) -> None:
    rows = _materialized(ledger, holidayPolicy="PRECEDING")
    # Thanksgiving moves to Wednesday 09:00, whose own time is excluded: the slot is free.
    assert rows["20261126"] == (
        "PLANNED",
        "HOLIDAY_PRECEDING",
        "Thanksgiving Day",
        "NYSE@holidays-0.108",
        "daily-ops-summary@20261125T140000Z",
    )


def test_calendar_facts_are_terminal_even_in_raw_sql(ledger: Ledger) -> None:
    _materialized(ledger)
    with pytest.raises(LedgerIntegrityError, match="illegal occurrence transition"):
        ledger.write(
            lambda c: c.execute(
                text("UPDATE occurrences SET state = 'DUE' WHERE state = 'SKIPPED_HOLIDAY'")
            )
        )


def test_downgrade_refuses_while_calendar_facts_exist_and_works_without(ledger: Ledger) -> None:
    config = alembic_config(ledger.engine)
    command.downgrade(config, "0013")
    command.upgrade(config, "head")
    _materialized(ledger)
    with pytest.raises(RuntimeError, match="cannot downgrade below 0014"):
        command.downgrade(config, "0013")


def test_a_moved_occurrence_crosses_to_the_workflows_with_its_holiday(ledger: Ledger) -> None:
    # The one converter feeds the schedule workflow's ``upcoming`` query and a child's input.
    _materialized(ledger, holidayPolicy="PRECEDING")
    moved = show_occurrence(ledger, "daily-ops-summary.r1.20261126T090000.f0").occurrence.upcoming()
    assert (moved.holiday, moved.calendar_release) == ("Thanksgiving Day", "NYSE@holidays-0.108")
    plain = show_occurrence(ledger, "daily-ops-summary.r1.20261127T090000.f0").occurrence.upcoming()
    assert (plain.holiday, plain.calendar_release) == (None, None)
