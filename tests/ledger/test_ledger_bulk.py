"""Materialization's set-based inserts: same values as the column types, same rows as a re-read."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta, timezone
from pathlib import Path

import pytest
from ledger_support import T0, make_spec
from sqlalchemy import select
from sqlalchemy.dialects import postgresql, sqlite

from ledger import (
    Ledger,
    LedgerError,
    OccurrenceState,
    list_occurrences,
    materialize,
    publish_revision,
)
from ledger.bulk import (
    StoredTimes,
    bulk_insert,
    nominal_local_text,
    sqlite_insert_stored,
    sqlite_instant_text,
    statement_sizes,
    utc_instant,
)
from ledger.events import EVENTS, OCCURRENCES, SLOTS
from ledger.migrate import upgrade
from ledger.types import NominalLocal, UtcDateTime

pytest_plugins = ["ledger_fixtures"]

S = OccurrenceState

INSTANTS = [
    datetime(2026, 11, 1, 6, 30, tzinfo=UTC),
    datetime(2026, 11, 1, 1, 30, 0, 123456, tzinfo=timezone(timedelta(hours=-5))),
    datetime(999, 1, 2, 3, 4, 5, 6, tzinfo=timezone(timedelta(hours=5, minutes=30))),
]


@pytest.mark.parametrize("instant", INSTANTS, ids=str)
def test_bulk_converters_equal_the_column_types_bind_processors(instant: datetime) -> None:
    dialect = sqlite.dialect()
    utc_bind = UtcDateTime().dialect_impl(dialect).bind_processor(dialect)
    assert utc_bind is not None
    assert sqlite_instant_text(instant) == utc_bind(instant)
    pg = postgresql.dialect()
    pg_bind = UtcDateTime().dialect_impl(pg).bind_processor(pg)
    expected = pg_bind(instant) if pg_bind else UtcDateTime().process_bind_param(instant, pg)
    assert utc_instant(instant) == expected and utc_instant(instant).tzinfo is UTC
    local = instant.replace(tzinfo=None, microsecond=0)
    assert nominal_local_text(local) == NominalLocal().process_bind_param(local, dialect)


def test_bulk_converters_reject_what_the_column_types_reject() -> None:
    with pytest.raises(ValueError, match="naive"):
        sqlite_instant_text(datetime(2026, 11, 1))
    with pytest.raises(ValueError, match="naive"):
        utc_instant(datetime(2026, 11, 1))
    with pytest.raises(ValueError, match="aware"):
        nominal_local_text(T0)
    with pytest.raises(ValueError, match="fractional"):
        nominal_local_text(datetime(2026, 11, 1, microsecond=1))


def test_stored_times_equal_the_column_types_bind_processors_across_days() -> None:
    """One converter over a sequence: each value's date must be its own, not the previous one's."""
    dialect = sqlite.dialect()
    utc_bind = UtcDateTime().dialect_impl(dialect).bind_processor(dialect)
    assert utc_bind is not None
    minus_five = timezone(timedelta(hours=-5))
    instants = [
        datetime(2026, 11, 1, 23, 59, 59, 999999, tzinfo=UTC),
        datetime(2026, 11, 2, 0, 0, tzinfo=UTC),  # the next day
        datetime(2026, 12, 2, 0, 0, 1, 5, tzinfo=UTC),  # same day of another month
        datetime(2027, 12, 2, 7, 8, 9, tzinfo=UTC),  # … and of another year
        datetime(2027, 12, 2, 20, 0, tzinfo=minus_five),  # UTC's next day
        datetime(2027, 12, 3, 1, 0, tzinfo=UTC),
        datetime(999, 1, 2, 3, 4, 5, 6, tzinfo=UTC),
        *INSTANTS,
    ]
    times = StoredTimes()
    assert [times.instant(v) for v in instants] == [utc_bind(v) for v in instants]
    locals_ = [v.replace(tzinfo=None, microsecond=0) for v in instants]
    expected = [NominalLocal().process_bind_param(v, dialect) for v in locals_]
    assert [times.local(v) for v in locals_] == expected
    with pytest.raises(ValueError, match="naive"):
        times.instant(datetime(2026, 11, 1))
    with pytest.raises(ValueError, match="aware"):
        times.local(T0)
    with pytest.raises(ValueError, match="fractional"):
        times.local(datetime(2026, 11, 1, microsecond=1))


@pytest.mark.parametrize(
    ("count", "most", "sizes"),
    [
        (0, 1489, []),
        (1, 1489, [1]),
        (643, 1489, [512, 128, 2, 1]),
        (1489, 1489, [1489]),
        (3000, 1489, [1489, 1489, 16, 4, 2]),
        (1024, 1000, [1000, 16, 8]),
    ],
)
def test_statement_sizes_are_the_most_then_powers_of_two(
    count: int, most: int, sizes: list[int]
) -> None:
    assert statement_sizes(count, most) == sizes


def test_statement_sizes_have_few_shapes_whatever_the_count() -> None:
    shapes = {size for count in range(5_000) for size in statement_sizes(count, 1489)}
    assert shapes == {1489} | {1 << k for k in range(11)}  # 1 … 1024


def test_materialize_returns_the_rows_a_fresh_read_returns(ledger: Ledger) -> None:
    """The rows it wrote are not read back; they must equal what the database holds."""
    spec = make_spec(rule="FREQ=HOURLY;BYMINUTE=30", foldPolicy="BOTH", gapPolicy="SKIP")
    publish_revision(ledger, spec, T0, by="test")
    now = datetime(2026, 11, 1, 1, 0, 0, 250, tzinfo=timezone(timedelta(hours=1)))
    first = materialize(ledger, spec, T0, T0 + timedelta(days=2), now)
    assert first.created and len(first.created) == len(first.rows)
    stored = list_occurrences(ledger, spec.schedule_id, T0, T0 + timedelta(days=2))
    assert sorted(first.rows, key=lambda v: v.occurrence_id) == sorted(
        stored, key=lambda v: v.occurrence_id
    )
    assert all(v.created_at_utc == now and v.created_at_utc.tzinfo is UTC for v in first.rows)
    # A second, overlapping call writes only the new rows and reads back the others.
    second = materialize(ledger, spec, T0 + timedelta(days=1), T0 + timedelta(days=3), now)
    stored = list_occurrences(
        ledger, spec.schedule_id, T0 + timedelta(days=1), T0 + timedelta(days=3)
    )
    assert list(second.rows) == sorted(
        stored, key=lambda v: (v.placed_at_utc, v.nominal_local, v.fold)
    )
    assert set(second.created) == {v.occurrence_id for v in second.rows} - set(first.created)


def test_materialize_writes_one_slot_and_event_row_per_created_occurrence(
    ledger: Ledger,
) -> None:
    spec = make_spec(rule="FREQ=MINUTELY;INTERVAL=7", timeZone="UTC")
    publish_revision(ledger, spec, T0, by="test")
    # More rows than one SQLite statement holds (32,766 parameters / 18 columns ≈ 1,820 rows).
    result = materialize(ledger, spec, T0, T0 + timedelta(days=10), T0)
    planned = {v.occurrence_id for v in result.rows if v.state is S.PLANNED}
    assert len(planned) == len(result.created) > 2_000

    def column(table_column: object) -> list[str]:
        return list(ledger.read(lambda c: c.execute(select(table_column)).scalars().all()))

    assert sorted(column(SLOTS.c.owner_occurrence_id)) == sorted(planned)
    assert sorted(column(EVENTS.c.occurrence_id)) == sorted(planned)


def test_bulk_insert_rejects_an_overlong_key_instead_of_truncating(ledger: Ledger) -> None:
    spec = make_spec()
    publish_revision(ledger, spec, T0, by="test")
    values = {
        "occurrence_id": "x" * 200,  # String(120); PostgreSQL must not truncate it
        "schedule_id": spec.schedule_id, "revision": 1, "logical_slot_id": None,
        "nominal_local": datetime(2026, 11, 2), "fold": 0, "instant_utc": None, "gap_at_utc": T0,
        "utc_offset_seconds": None, "tzdb_version": "2026a", "reason": "GAP_SKIPPED",
        "state": "SKIPPED_GAP", "state_reason": None, "claim_generation": 0,
        "next_attempt_at_utc": None, "created_at_utc": T0, "updated_at_utc": T0, "id_format": 1,
        "jitter_ms": None, "event_sequence": 1,
    }  # fmt: skip
    # By name: columns added by later migrations take their defaults.
    columns = list(values)
    row = tuple(values.values())
    if ledger.dialect == "postgresql":
        with pytest.raises(LedgerError, match="too long"):
            ledger.write(
                lambda c: bulk_insert(c, OCCURRENCES, columns, [row], ignore_conflicts=True)
            )
    else:  # SQLite does not enforce VARCHAR lengths at all; the row goes in unchanged.
        ledger.write(lambda c: bulk_insert(c, OCCURRENCES, columns, [row], ignore_conflicts=True))
        stored = ledger.read(
            lambda c: c.execute(select(OCCURRENCES.c.occurrence_id)).scalars().all()
        )
        assert "x" * 200 in stored


def test_bulk_insert_rejects_a_naive_instant(ledger: Ledger) -> None:
    columns = ["occurrence_id", "from_state", "to_state", "at_utc", "by", "why", "sequence"]
    with pytest.raises(ValueError, match="naive"):
        ledger.write(
            lambda c: bulk_insert(
                c,
                EVENTS,
                columns,
                [("x", None, "PLANNED", datetime(2026, 11, 1), "t", "w", 1)],
                ignore_conflicts=False,
            )
        )


def test_stored_form_rows_of_the_wrong_width_are_refused_and_nothing_is_written(
    tmp_path: Path,
) -> None:
    """Rows whose total still fills the placeholders must not be bound shifted into columns."""
    url = f"sqlite:///{tmp_path / 'ledger.sqlite3'}"
    upgrade(url)
    ledger = Ledger.from_url(url)
    spec = make_spec()
    publish_revision(ledger, spec, T0, by="test")
    columns = ["occurrence_id", "from_state", "to_state", "at_utc", "by", "why", "sequence"]
    at = sqlite_instant_text(T0)
    # 8 + 6 values fill the 14 placeholders of two rows: only a width check notices.
    ragged = [
        ("a", None, "PLANNED", at, "t", "w", 1, "extra"),
        ("b", None, "PLANNED", at, "t", "w"),
    ]
    with pytest.raises(ValueError, match="7 values wide"):
        ledger.write(
            lambda c: sqlite_insert_stored(c, EVENTS, columns, ragged, ignore_conflicts=False)
        )
    assert ledger.read(lambda c: c.execute(select(EVENTS.c.id)).all()) == []
    ledger.dispose()
