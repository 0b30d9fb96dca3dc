"""The release activity's folded materializations (patches almanac-release-and-materialize and
almanac-materialize-in-release).

A wake-up that decides anything used to run ``release_due`` and then a second ``materialize``
activity. With ``then_materialize`` the release activity does both: the reading it returns is the
one the second activity would have returned, and a refused follow-up does not take the release
down with it (its children still start: the verdict is returned, recorded on the schedule). With
``materialize_first`` it also writes the refresh's window *before* releasing (the loop's own
materialize activity before the release): a refused write fails the activity before anything is
released.
Expected values come from the spec's arithmetic (daily 09:00 UTC, two overdue days), not from the
code under test.
"""

from __future__ import annotations

from datetime import timedelta
from typing import Any

import pytest
from faultkit import day, local_actions, publish, spec_data
from temporalio.exceptions import ApplicationError

import ledger
from activities import io
from activities.clock import FixedClock
from activities.ledger_activities import AlmanacActivities
from ledger import Ledger

pytestmark = [pytest.mark.fault]

NOW = day(3, 9, 30)  # 2027-01-03 09:30Z: the 01-01 and 01-02 and 01-03 09:00 instants passed


def activities(store: Ledger) -> AlmanacActivities:
    return AlmanacActivities(store, local_actions(), identity="test", clock=FixedClock(NOW))


def setup(store: Ledger) -> io.MaterializeOccurrencesInput:
    publish(store, spec_data("fold", maxCatchUp=1, misfirePolicy="CATCH_UP_BOUNDED"), day(1, 0))
    first = activities(store).materialize(
        io.MaterializeOccurrencesInput("fold", day(1, 0), timedelta(days=3).total_seconds())
    )
    return io.MaterializeOccurrencesInput(
        "fold", NOW, timedelta(days=3).total_seconds(), from_utc=first.materialized_through_utc
    )


def test_the_release_returns_the_follow_up_reading(store: Ledger) -> None:
    follow_up = setup(store)
    released = activities(store).release_due(
        io.ReleaseDueInput("fold", NOW, then_materialize=follow_up)
    )
    # maxCatchUp 1: the latest overdue (01-03 09:00) runs, 01-01 and 01-02 expire.
    assert [o.occurrence_id for o in released.due] == ["fold.r1.20270103T090000.f0"]
    assert released.expired == 2
    reading = released.materialized
    assert reading is not None and released.materialize_error is None
    # The window slid to NOW + 3 days: 01-04, 01-05 and 01-06 09:00 are planned, 01-04 next.
    assert reading.materialized_through_utc == NOW + timedelta(days=3)
    assert reading.next_instant_utc == day(4, 9)
    counted = {state: n for state, n in reading.counts_by_state.items() if n}
    assert counted == {"DUE": 1, "MISFIRE_EXPIRED": 2, "PLANNED": 3}
    # The same reading a second (old-path) materialize activity gives.
    again = activities(store).materialize(follow_up)
    assert (again.next_instant_utc, again.counts_by_state) == (
        reading.next_instant_utc,
        reading.counts_by_state,
    )


def test_a_refused_follow_up_leaves_the_release_standing(
    store: Ledger, monkeypatch: pytest.MonkeyPatch
) -> None:
    follow_up = setup(store)

    def refused(*a: Any, **k: Any) -> Any:
        raise ledger.ScheduleNotFound("fold")

    acts = activities(store)
    monkeypatch.setattr(acts, "_reading_after_write", refused)
    released = acts.release_due(io.ReleaseDueInput("fold", NOW, then_materialize=follow_up))
    assert [o.occurrence_id for o in released.due] == ["fold.r1.20270103T090000.f0"]
    assert released.materialized is None
    assert released.materialize_error is not None and "fold" in released.materialize_error
    events = ledger.schedule_events(store, "fold")
    assert any(
        e.kind == "ACTIVITY_REJECTED" and e.detail.startswith(io.MATERIALIZE) for e in events
    )


# -- materialize_first (patch almanac-materialize-in-release): the refresh before the release --


def test_materialize_first_writes_the_horizon_then_releases_from_it(store: Ledger) -> None:
    publish(store, spec_data("fold", maxCatchUp=1, misfirePolicy="CATCH_UP_BOUNDED"), day(1, 0))
    window = io.MaterializeOccurrencesInput("fold", NOW, timedelta(days=3).total_seconds())
    released = activities(store).release_due(
        io.ReleaseDueInput("fold", NOW, materialize_first=window)
    )
    # Nothing was materialized before this call: the three overdue days exist only because the
    # same activity wrote them first; maxCatchUp 1 runs 01-03 09:00 and expires the other two.
    assert [o.occurrence_id for o in released.due] == ["fold.r1.20270103T090000.f0"]
    assert released.expired == 2
    reading = released.materialized
    assert reading is not None and released.materialize_error is None
    assert reading.materialized_through_utc == NOW + timedelta(days=3)
    assert reading.inserted == 6  # 01-01 … 01-06 09:00
    assert reading.next_instant_utc == day(4, 9)
    counted = {state: n for state, n in reading.counts_by_state.items() if n}
    assert counted == {"DUE": 1, "MISFIRE_EXPIRED": 2, "PLANNED": 3}


def test_materialize_first_returns_a_reading_when_nothing_is_decided(store: Ledger) -> None:
    publish(store, spec_data("fold"), day(1, 0))
    window = io.MaterializeOccurrencesInput("fold", day(1, 1), timedelta(days=3).total_seconds())
    released = activities(store).release_due(
        io.ReleaseDueInput("fold", day(1, 1), materialize_first=window)
    )
    assert (released.due, released.expired) == ([], 0)
    assert released.materialized is not None
    assert released.materialized.next_instant_utc == day(1, 9)
    assert released.materialized.counts_by_state["PLANNED"] == 3


def test_a_refused_first_materialization_releases_nothing(
    store: Ledger, monkeypatch: pytest.MonkeyPatch
) -> None:
    window = setup(store)

    def refused(*a: Any, **k: Any) -> Any:
        raise ledger.ScheduleNotFound("fold")

    acts = activities(store)
    monkeypatch.setattr(acts, "_write_window", refused)
    with pytest.raises(ApplicationError) as raised:
        acts.release_due(io.ReleaseDueInput("fold", NOW, materialize_first=window))
    assert raised.value.non_retryable
    # As when the loop's own materialize activity failed: the wake-up released nothing.
    assert {s.value: n for s, n in ledger.counts_by_state(store, "fold").items() if n} == {
        "PLANNED": 3
    }
    events = ledger.schedule_events(store, "fold")
    assert any(
        e.kind == "ACTIVITY_REJECTED" and e.detail.startswith(io.MATERIALIZE) for e in events
    )
