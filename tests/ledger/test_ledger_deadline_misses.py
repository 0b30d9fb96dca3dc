"""Deadline misses (issue 30): a recorded fact beside the state, once, whenever the sweep runs.

The spec's daily 02:30 America/New_York occurrences have ``deadline: PT30M``. An occurrence still
RUNNING 30 minutes after its instant is one miss with ``RUNNING`` as its state at the deadline,
and a later success shows both; a success at the deadline itself is on time (at or before); an
occurrence never released, swept a day late (the worker was down), is one miss in ``PLANNED``;
repeated and concurrent sweeps record nothing twice (the database's key decides). Expected
instants are the occurrence's own instant + 30 minutes, from the spec, not from the sweep.
"""

from __future__ import annotations

import threading
from datetime import datetime, timedelta

import pytest
from ledger_support import T0, WORKER, claim_now, make_spec

from activities.snapshot import ledger_snapshot
from almanac.readings import read_status
from ledger import (
    Ledger,
    OccurrenceState,
    mark_running,
    materialize,
    publish_revision,
    release_due,
    show_occurrence,
    succeeded,
)
from ledger.deadlines import count_deadline_misses, deadline_miss, sweep_deadlines

pytest_plugins = ["ledger_fixtures"]  # ledger, backend and the PostgreSQL cluster

DEADLINE = timedelta(minutes=30)
WAIT = 30.0


def planned(ledger: Ledger, **overrides: object) -> list[tuple[str, datetime]]:
    spec = make_spec(deadline="PT30M", **overrides)
    publish_revision(ledger, spec, T0, by="test")
    rows = materialize(ledger, spec, T0, T0 + timedelta(days=3), T0).rows
    found = [(r.occurrence_id, r.instant_utc) for r in rows if r.state is OccurrenceState.PLANNED]
    assert len(found) >= 2
    return [(o, i) for o, i in found if i is not None]


def run_until_running(ledger: Ledger, occurrence_id: str, instant: datetime) -> int:
    release_due(ledger, "daily-ops-summary", instant)
    attempt = claim_now(ledger, occurrence_id, instant + timedelta(minutes=1)).attempt
    assert attempt is not None
    mark_running(
        ledger, occurrence_id, attempt.claim_generation, instant + timedelta(minutes=2), by=WORKER
    )
    return attempt.claim_generation


def test_running_at_the_deadline_is_one_miss_and_a_late_success_shows_both(ledger: Ledger) -> None:
    (first, instant), _ = planned(ledger)[:2]
    generation = run_until_running(ledger, first, instant)
    before = sweep_deadlines(
        ledger, "daily-ops-summary", instant + DEADLINE - timedelta(seconds=1), by=WORKER
    )
    assert before.recorded == []
    assert before.next_deadline_utc == instant + DEADLINE

    swept = sweep_deadlines(
        ledger, "daily-ops-summary", instant + DEADLINE + timedelta(minutes=5), by=WORKER
    )
    assert [(m.occurrence_id, m.deadline_utc, m.state_at_deadline) for m in swept.recorded] == [
        (first, instant + DEADLINE, OccurrenceState.RUNNING)
    ]
    succeeded(ledger, first, generation, instant + timedelta(hours=1), by=WORKER)
    assert show_occurrence(ledger, first).occurrence.state is OccurrenceState.SUCCEEDED
    miss = deadline_miss(ledger, first)
    assert miss is not None and miss.state_at_deadline is OccurrenceState.RUNNING

    again = sweep_deadlines(ledger, "daily-ops-summary", instant + timedelta(hours=2), by=WORKER)
    assert again.recorded == []
    assert count_deadline_misses_of(ledger) == 1


def test_a_sweep_after_a_late_success_still_records_the_state_at_the_deadline(
    ledger: Ledger,
) -> None:
    (first, instant), _ = planned(ledger)[:2]
    generation = run_until_running(ledger, first, instant)
    succeeded(ledger, first, generation, instant + DEADLINE + timedelta(minutes=10), by=WORKER)
    swept = sweep_deadlines(ledger, "daily-ops-summary", instant + timedelta(hours=3), by=WORKER)
    assert [(m.occurrence_id, m.state_at_deadline) for m in swept.recorded] == [
        (first, OccurrenceState.RUNNING)
    ]


def test_a_success_at_the_deadline_itself_is_on_time(ledger: Ledger) -> None:
    (first, instant), _ = planned(ledger)[:2]
    generation = run_until_running(ledger, first, instant)
    succeeded(ledger, first, generation, instant + DEADLINE, by=WORKER)
    swept = sweep_deadlines(ledger, "daily-ops-summary", instant + timedelta(hours=3), by=WORKER)
    assert swept.recorded == []
    assert deadline_miss(ledger, first) is None


def test_deadlines_passed_while_nothing_swept_are_recorded_once_later(ledger: Ledger) -> None:
    occurrences = planned(ledger)
    (first, instant), (second, later) = occurrences[:2]
    # Nothing ran and nothing swept until a day and a half later (the worker was down).
    late = later + DEADLINE + timedelta(hours=12)
    swept = sweep_deadlines(ledger, "daily-ops-summary", late, by=WORKER)
    assert [(m.occurrence_id, m.deadline_utc, m.state_at_deadline) for m in swept.recorded] == [
        (first, instant + DEADLINE, OccurrenceState.PLANNED),
        (second, later + DEADLINE, OccurrenceState.PLANNED),
    ]
    assert (
        sweep_deadlines(
            ledger, "daily-ops-summary", late + timedelta(minutes=1), by=WORKER
        ).recorded
        == []
    )
    assert count_deadline_misses_of(ledger) == 2
    assert ledger_snapshot(ledger, late).deadline_misses == {"daily-ops-summary": 2}
    status = read_status(ledger, "daily-ops-summary", late)
    assert status.deadline_misses == 2
    assert status.latest_deadline_miss is not None
    assert status.latest_deadline_miss.occurrence_id == second


def test_the_bound_stops_a_sweep_and_the_next_one_continues(ledger: Ledger) -> None:
    occurrences = planned(ledger)
    late = occurrences[-1][1] + DEADLINE + timedelta(hours=1)
    first = sweep_deadlines(ledger, "daily-ops-summary", late, by=WORKER, limit=1)
    assert [m.occurrence_id for m in first.recorded] == [occurrences[0][0]]
    assert first.next_deadline_utc == late  # more to decide now
    rest = sweep_deadlines(ledger, "daily-ops-summary", late, by=WORKER)
    assert [m.occurrence_id for m in rest.recorded] == [o for o, _ in occurrences[1:]]


def test_concurrent_sweeps_record_each_miss_once(ledger: Ledger) -> None:
    occurrences = planned(ledger)
    late = occurrences[-1][1] + DEADLINE + timedelta(hours=1)
    barrier = threading.Barrier(2, timeout=WAIT)
    results: list[int] = []

    def sweep() -> None:
        barrier.wait()
        results.append(len(sweep_deadlines(ledger, "daily-ops-summary", late, by=WORKER).recorded))

    threads = [threading.Thread(target=sweep) for _ in range(2)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(WAIT)
    assert sorted(results)[-1] + sorted(results)[0] == len(occurrences)
    assert count_deadline_misses_of(ledger) == len(occurrences)


def test_a_schedule_without_a_deadline_has_none(ledger: Ledger) -> None:
    spec = make_spec()
    publish_revision(ledger, spec, T0, by="test")
    materialize(ledger, spec, T0, T0 + timedelta(days=3), T0)
    swept = sweep_deadlines(ledger, "daily-ops-summary", T0 + timedelta(days=5), by=WORKER)
    assert (swept.recorded, swept.next_deadline_utc) == ([], None)


def test_naive_now_is_refused(ledger: Ledger) -> None:
    with pytest.raises(ValueError, match="now_utc"):
        sweep_deadlines(ledger, "daily-ops-summary", datetime(2026, 11, 1), by=WORKER)


def count_deadline_misses_of(ledger: Ledger) -> int:
    return ledger.read(count_deadline_misses).get("daily-ops-summary", 0)
