"""A schedule's wake-up asks the ledger each question once.

- Its horizon reading (upcoming occurrences, the next planned one, the counts, the gate) is one
  read-only transaction (``ledger.horizon_reading``), not one per query: a ``materialize`` whose
  window is already written costs two transactions, the revisions' read and the reading.
- The revisions a wake-up reads to write its window fill the spec cache, so its release (the
  lateness of what it runs late) and the start-up catch-up do not read them again.

Transactions are counted with SQLAlchemy's ``Engine`` ``begin`` event. Expected values come from the
spec's arithmetic (daily 09:00 UTC, ``maxCatchUp`` 1, three overdue days), not from the code under
test.
"""

from __future__ import annotations

from collections.abc import Iterator
from datetime import timedelta
from typing import Any

import pytest
from faultkit import day, local_actions, publish, spec_data
from sqlalchemy import event

from activities import io
from activities.clock import FixedClock
from activities.ledger_activities import AlmanacActivities
from ledger import Ledger

pytestmark = [pytest.mark.fault]

NOW = day(3, 9, 30)  # 2027-01-03 09:30Z: the 01-01, 01-02 and 01-03 09:00 instants passed
HORIZON = timedelta(days=3)


def activities(store: Ledger) -> AlmanacActivities:
    return AlmanacActivities(store, local_actions(), identity="test", clock=FixedClock(NOW))


@pytest.fixture
def begun(store: Ledger) -> Iterator[list[Any]]:
    """Each transaction the ledger's engine begins from now on."""
    seen: list[Any] = []

    def count(connection: Any) -> None:
        seen.append(connection)

    event.listen(store.engine, "begin", count)
    try:
        yield seen
    finally:
        event.remove(store.engine, "begin", count)


def test_a_materialize_with_its_window_written_costs_two_transactions(
    store: Ledger, begun: list[Any]
) -> None:
    publish(store, spec_data("fold", maxCatchUp=1), day(1, 0))
    acts = activities(store)
    first = acts.materialize(
        io.MaterializeOccurrencesInput("fold", day(1, 0), HORIZON.total_seconds())
    )
    assert first.materialized_through_utc == day(4, 0)
    begun.clear()
    again = acts.materialize(
        io.MaterializeOccurrencesInput(
            "fold", day(1, 0), HORIZON.total_seconds(), from_utc=first.materialized_through_utc
        )
    )
    assert len(begun) == 2  # the revisions, the reading
    assert again.inserted == 0
    # 01-01, 01-02 and 01-03 09:00 planned; 01-01 next.
    assert again.next_instant_utc == day(1, 9)
    assert [o.instant_utc for o in again.upcoming] == [day(1, 9), day(2, 9), day(3, 9)]
    assert {state: n for state, n in again.counts_by_state.items() if n} == {"PLANNED": 3}
    assert (again.gate.schedule_id, again.gate.active_revision) == ("fold", 1)


def test_a_materializing_release_reads_the_revisions_once(
    store: Ledger, revision_reads: list[str]
) -> None:
    publish(store, spec_data("fold", maxCatchUp=1), day(1, 0))
    window = io.MaterializeOccurrencesInput("fold", NOW, HORIZON.total_seconds())
    released = activities(store).release_due(
        io.ReleaseDueInput("fold", NOW, materialize_first=window)
    )
    assert revision_reads == ["fold"]
    # maxCatchUp 1: the latest overdue (01-03 09:00) runs, 01-01 and 01-02 expire.
    assert [o.occurrence_id for o in released.due] == ["fold.r1.20270103T090000.f0"]
    assert released.expired == 2
    reading = released.materialized
    assert reading is not None and released.materialize_error is None
    assert reading.materialized_through_utc == NOW + HORIZON
    assert reading.next_instant_utc == day(4, 9)
    counted = {state: n for state, n in reading.counts_by_state.items() if n}
    assert counted == {"DUE": 1, "MISFIRE_EXPIRED": 2, "PLANNED": 3}


def test_the_start_up_catch_up_reads_the_revisions_once(
    store: Ledger, revision_reads: list[str]
) -> None:
    publish(store, spec_data("fold", maxCatchUp=1), day(1, 0))
    result = activities(store).catch_up("fold", day(1, 0), NOW, HORIZON)
    assert revision_reads == ["fold"]
    assert result.released == ("fold.r1.20270103T090000.f0",)
    assert len(result.expired) == 2
