"""The worker's start-up catch-up (``almanac.catch_up``): missed occurrences decided fleet-wide.

A worker that serves schedules first decides, in the ledger, every enabled schedule's missed
occurrences by its misfire policy and materializes its horizon, with the same calls as each
schedule workflow's wake-up. Expected values come from the specs' arithmetic (daily 09:00 UTC,
``CATCH_UP_BOUNDED`` with ``maxCatchUp`` 2, published on 2027-01-01, horizon 3 days), not from the
code under test. The ledger was left with three days materialized on 01-01 at 00:00 (its furthest
occurrence, 01-03 09:00, written 2 days 9 hours ahead: the schedule's look-ahead). At 2027-01-05
09:30 five instants passed (01-01 … 01-05; the last two were never materialized): the two latest
run, the three others expire, and the window reaches 01-07 18:30 (now + 2 days 9 hours: never
further than the schedule's own look-ahead, although the catch-up's longest is 3 days).
"""

from __future__ import annotations

from datetime import timedelta
from typing import Any

import pytest
from faultkit import day, local_actions, publish, spec_data, states

import ledger
from activities import io
from activities.clock import FixedClock
from activities.ledger_activities import AlmanacActivities
from almanac.catch_up import catch_up
from ledger import Ledger, OccurrenceState

pytestmark = [pytest.mark.fault]

NOW = day(5, 9, 30)
HORIZON = timedelta(days=3)
RUN = {"20270104T090000", "20270105T090000"}
EXPIRED = {"20270101T090000", "20270102T090000", "20270103T090000"}
PLANNED = {"20270106T090000", "20270107T090000"}


def activities(store: Ledger) -> AlmanacActivities:
    return AlmanacActivities(store, local_actions(), identity="test", clock=FixedClock(NOW))


def down_since_new_year(store: Ledger, *schedule_ids: str) -> None:
    """Each schedule published at 01-01 00:00 with 3 days materialized, then nothing ran."""
    for schedule_id in schedule_ids:
        spec = publish(store, spec_data(schedule_id), day(1, 0))
        ledger.materialize(store, spec, day(1, 0), day(4, 0), day(1, 0))


def by_instant(store: Ledger, schedule_id: str) -> dict[str, set[str]]:
    """State → the occurrences' local instants (``20270101T090000``)."""
    grouped: dict[str, set[str]] = {}
    for occurrence_id, state in states(store, schedule_id).items():
        grouped.setdefault(state.value, set()).add(occurrence_id.split(".")[2])
    return grouped


def run_catch_up(store: Ledger, **options: Any) -> Any:
    return catch_up(activities(store), store, FixedClock(NOW), horizon=HORIZON, **options)


def test_every_missed_occurrence_is_decided_by_its_policy_and_the_horizon_written(
    store: Ledger,
) -> None:
    down_since_new_year(store, "a", "b")
    report = run_catch_up(store)
    assert (report.schedules, report.caught_up, report.released, report.expired) == (2, 2, 4, 6)
    assert not report.stopped and report.failed == 0
    for schedule_id in ("a", "b"):
        assert by_instant(store, schedule_id) == {
            "DUE": RUN,
            "MISFIRE_EXPIRED": EXPIRED,
            "PLANNED": PLANNED,
        }
        # Who decided is on record: the worker's identity, marked as its catch-up.
        events = ledger.show_occurrence(store, f"{schedule_id}.r1.20270105T090000.f0").events
        assert [(e.to_state, e.by) for e in events] == [
            ("PLANNED", "test (catch-up)"),
            ("DUE", "test (catch-up)"),
        ]


def test_a_longer_look_ahead_is_capped_at_the_catch_up_s_horizon(store: Ledger) -> None:
    spec = publish(store, spec_data("far"), day(1, 0))
    ledger.materialize(store, spec, day(1, 0), day(8, 0), day(1, 0))  # 01-07 09:00: 6 d 9 h ahead
    run_catch_up(store)
    # NOW + 3 days = 01-08 09:30: 01-08 09:00 is written, nothing after it.
    assert by_instant(store, "far")["PLANNED"] == PLANNED | {"20270108T090000"}


def test_the_summary_counts_every_decision_overlap_included(store: Ledger) -> None:
    # overlapPolicy SKIP, and the 01-01 occurrence claimed (in flight) since 01-01 09:00.
    spec = publish(store, spec_data("busy", overlapPolicy="SKIP"), day(1, 0))
    ledger.materialize(store, spec, day(1, 0), day(4, 0), day(1, 0))
    ledger.release_due(store, "busy", day(1, 9))
    occurrence_id = "busy.r1.20270101T090000.f0"
    gate = ledger.get_gate(store, "busy")
    claimed = ledger.claim(
        store,
        occurrence_id,
        gate,
        worker_identity="w",
        implementation_alias="default",
        input_digest="sha256:input",
        now_utc=day(1, 9),
    )
    assert claimed.won, claimed.detail
    report = run_catch_up(store)
    # Missed: 01-02 … 01-05. 01-02 and 01-03 expire (beyond maxCatchUp 2); 01-04 and 01-05 are
    # within the bound, but SKIP records them SKIPPED_OVERLAP while 01-01 is in flight.
    counted = (report.released, report.expired, report.skipped_overlap, report.held)
    assert counted == (0, 2, 2, 0)
    assert report.summary().endswith(
        "0 released, 2 MISFIRE_EXPIRED, 2 SKIPPED_OVERLAP, 0 failed"
    ), report.summary()


def test_a_disabled_schedule_is_left_as_it_is(store: Ledger) -> None:
    down_since_new_year(store, "on", "off")
    ledger.disable(store, "off", day(1, 12), by="test", reason="maintenance")
    report = run_catch_up(store)
    assert (report.schedules, report.caught_up) == (1, 1)
    assert by_instant(store, "off") == {"PLANNED": EXPIRED}  # 01-01 … 01-03, undecided


def test_the_schedule_wake_up_afterwards_starts_what_is_due_and_decides_nothing_again(
    store: Ledger,
) -> None:
    down_since_new_year(store, "a")
    run_catch_up(store)
    # The schedule workflow's wake-up at the same instant (its release activity).
    woke = activities(store).release_due(io.ReleaseDueInput("a", NOW))
    assert {o.occurrence_id.split(".")[2] for o in woke.due} == RUN
    assert woke.expired == 0
    # A second catch-up (another worker starting) finds nothing missed.
    again = run_catch_up(store)
    assert (again.schedules, again.released, again.expired) == (0, 0, 0)
    assert by_instant(store, "a")["DUE"] == RUN


def test_after_the_schedule_woke_first_the_catch_up_changes_nothing(store: Ledger) -> None:
    down_since_new_year(store, "a")
    window = io.MaterializeOccurrencesInput("a", NOW, HORIZON.total_seconds(), from_utc=day(2, 0))
    activities(store).release_due(io.ReleaseDueInput("a", NOW, materialize_first=window))
    before = by_instant(store, "a")
    report = run_catch_up(store)
    assert report.schedules == 0
    # The workflow's own 3-day horizon: through 01-08 09:30.
    expected = {"DUE": RUN, "MISFIRE_EXPIRED": EXPIRED, "PLANNED": PLANNED | {"20270108T090000"}}
    assert by_instant(store, "a") == before == expected


def test_one_schedule_s_deterministic_error_leaves_the_others_caught_up(
    store: Ledger, monkeypatch: pytest.MonkeyPatch
) -> None:
    down_since_new_year(store, "a", "broken", "c")
    real = ledger.release_due

    def refusing(store_: Ledger, schedule_id: str, *args: Any, **kwargs: Any) -> Any:
        if schedule_id == "broken":
            raise ledger.ScheduleNotFound(schedule_id)
        return real(store_, schedule_id, *args, **kwargs)

    monkeypatch.setattr(ledger, "release_due", refusing)
    report = run_catch_up(store)
    assert (report.schedules, report.caught_up, report.failed) == (3, 2, 1)
    assert by_instant(store, "c")["DUE"] == RUN
    assert set(states(store, "broken").values()) == {OccurrenceState.PLANNED}


def test_an_unreachable_ledger_stops_the_catch_up_without_raising(
    store: Ledger, monkeypatch: pytest.MonkeyPatch
) -> None:
    down_since_new_year(store, "a", "b")

    def unreachable(*args: Any, **kwargs: Any) -> Any:
        raise ledger.LedgerUnavailable("connection refused")

    monkeypatch.setattr(ledger, "release_due", unreachable)
    report = run_catch_up(store)
    assert report.stopped and (report.schedules, report.caught_up) == (2, 0)


def test_an_unexpected_error_stops_the_catch_up_without_raising(
    store: Ledger, monkeypatch: pytest.MonkeyPatch
) -> None:
    down_since_new_year(store, "a", "b")

    def defect(*args: Any, **kwargs: Any) -> Any:
        raise RuntimeError("a bug")

    monkeypatch.setattr(ledger, "release_due", defect)
    report = run_catch_up(store)
    assert report.stopped and (report.schedules, report.caught_up, report.failed) == (2, 0, 0)


def test_a_stop_request_ends_the_catch_up_between_schedules(store: Ledger) -> None:
    down_since_new_year(store, "a", "b", "c")
    asked: list[int] = []

    def after_one() -> bool:
        asked.append(1)
        return len(asked) > 1

    report = run_catch_up(store, should_stop=after_one, threads=1)  # one at a time, in order
    assert report.stopped and (report.schedules, report.caught_up) == (3, 1)
    assert by_instant(store, "a")["DUE"] == RUN
    assert set(states(store, "b").values()) == {OccurrenceState.PLANNED}
