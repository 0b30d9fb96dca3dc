"""``ledger.horizon_reading``: the four horizon reads in one transaction, on SQLite and PostgreSQL.

The scenario's expectations come from the spec's arithmetic (``ledger_support.make_spec``: daily
02:30 America/New_York, ``CATCH_UP_BOUNDED`` with ``maxCatchUp`` 2, published at its cutover):
02:30 is EDT (06:30Z) until the fall-back of 2026-11-01 06:00Z and EST (07:30Z) from that day on.
Materialized for 2026-10-26 … 11-05 and released at 11-03 00:00Z, the 8 overdue days (10-26 …
11-02) keep their 2 latest (11-01, 11-02: DUE) and expire 6; 11-03 … 11-05 stay PLANNED.
"""

from __future__ import annotations

from collections.abc import Iterator
from datetime import UTC, datetime
from typing import Any

import pytest
from ledger_support import T0, make_spec
from sqlalchemy import event

from ledger import (
    Ledger,
    OccurrenceState,
    ScheduleNotFound,
    counts_by_state,
    get_gate,
    horizon_reading,
    list_occurrences,
    materialize,
    publish_revision,
    release_due,
)

pytest_plugins = ["ledger_fixtures"]  # ledger, backend and the PostgreSQL cluster

SCHEDULE = "daily-ops-summary"
PUBLISHED_AT = datetime(2026, 10, 1, tzinfo=UTC)  # at the cutover: materializing never backfills
RELEASED_AT = datetime(2026, 11, 3, 0, 0, tzinfo=UTC)


def _est(day: int) -> datetime:
    return datetime(2026, 11, day, 7, 30, tzinfo=UTC)


@pytest.fixture
def populated(ledger: Ledger) -> Ledger:
    spec = make_spec()
    publish_revision(ledger, spec, PUBLISHED_AT, by="test")
    materialize(
        ledger, spec, datetime(2026, 10, 26, tzinfo=UTC), datetime(2026, 11, 6, tzinfo=UTC), T0
    )
    release_due(ledger, SCHEDULE, RELEASED_AT)
    return ledger


def _separate_reads(ledger: Ledger, from_utc: datetime, limit: int) -> tuple[Any, ...]:
    """The four reads as four transactions (what the schedule's reading made before)."""
    upcoming = list_occurrences(
        ledger,
        SCHEDULE,
        from_utc=from_utc,
        states=[OccurrenceState.PLANNED, OccurrenceState.DUE],
        limit=limit,
    )
    planned = list_occurrences(
        ledger, SCHEDULE, from_utc=from_utc, states=[OccurrenceState.PLANNED], limit=1
    )
    return (
        tuple(upcoming),
        planned[0] if planned else None,
        counts_by_state(ledger, SCHEDULE),
        get_gate(ledger, SCHEDULE),
    )


@pytest.mark.parametrize(
    ("from_utc", "limit", "instants", "next_planned"),
    [
        (T0, 3, [_est(1), _est(2), _est(3)], _est(3)),
        (T0, 20, [_est(d) for d in range(1, 6)], _est(3)),
        (_est(4), 20, [_est(4), _est(5)], _est(4)),
        (datetime(2026, 11, 6, tzinfo=UTC), 20, [], None),
    ],
)
def test_the_combined_reading_equals_the_four_separate_reads(
    populated: Ledger,
    from_utc: datetime,
    limit: int,
    instants: list[datetime],
    next_planned: datetime | None,
) -> None:
    reading = horizon_reading(populated, SCHEDULE, from_utc, limit)
    assert (reading.upcoming, reading.next_planned, reading.counts, reading.gate) == (
        _separate_reads(populated, from_utc, limit)
    )
    assert [o.instant_utc for o in reading.upcoming] == instants
    assert (reading.next_planned.instant_utc if reading.next_planned else None) == next_planned
    counted = {state: n for state, n in reading.counts.items() if n}
    assert counted == {
        OccurrenceState.DUE: 2,
        OccurrenceState.MISFIRE_EXPIRED: 6,
        OccurrenceState.PLANNED: 3,
    }
    assert set(reading.counts) == set(OccurrenceState)
    assert (reading.gate.schedule_id, reading.gate.active_revision) == (SCHEDULE, 1)


def test_an_unknown_schedule_has_no_reading(ledger: Ledger) -> None:
    with pytest.raises(ScheduleNotFound, match="nobody"):
        horizon_reading(ledger, "nobody", T0, 20)


@pytest.fixture
def begun(populated: Ledger) -> Iterator[list[Any]]:
    """Each transaction the ledger's engine begins from now on (SQLAlchemy's ``begin`` event)."""
    seen: list[Any] = []

    def count(connection: Any) -> None:
        seen.append(connection)

    event.listen(populated.engine, "begin", count)
    try:
        yield seen
    finally:
        event.remove(populated.engine, "begin", count)


def test_a_reading_is_one_transaction(populated: Ledger, begun: list[Any]) -> None:
    horizon_reading(populated, SCHEDULE, T0, 20)
    assert len(begun) == 1
    _separate_reads(populated, T0, 20)  # the counter counts: four reads, four transactions
    assert len(begun) == 5
