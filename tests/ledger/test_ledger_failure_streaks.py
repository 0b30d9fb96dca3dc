"""Failure streaks (issue 30) are computed from ledger facts: the latest ended occurrences that
did not succeed, counted after the latest SUCCEEDED one by resolved instant.

Daily 02:30 America/New_York, misfire ``SKIP``, lateness PT5M. Day 1 runs and SUCCEEDS: 0. A
release an hour after day 3's instant expires days 2 and 3 (``MISFIRE_EXPIRED``): 2, while day 4
(still PLANNED) neither extends nor breaks it. Day 4 runs and SUCCEEDS: 0 again. A schedule the
ledger knows with no failure is absent (exported as 0). Counts by hand from the rule.
"""

from __future__ import annotations

from datetime import datetime, timedelta

from ledger_support import T0, WORKER, claim_now, make_spec

from activities.snapshot import ledger_snapshot
from ledger import (
    Ledger,
    OccurrenceState,
    mark_running,
    materialize,
    publish_revision,
    release_due,
    succeeded,
)
from ledger.streaks import failure_streaks

pytest_plugins = ["ledger_fixtures"]  # ledger, backend and the PostgreSQL cluster

SID = "daily-ops-summary"


def run_to_success(ledger: Ledger, occurrence_id: str, instant: datetime) -> None:
    release_due(ledger, SID, instant)
    attempt = claim_now(ledger, occurrence_id, instant + timedelta(seconds=1)).attempt
    assert attempt is not None
    generation = attempt.claim_generation
    mark_running(ledger, occurrence_id, generation, instant + timedelta(seconds=2), by=WORKER)
    succeeded(ledger, occurrence_id, generation, instant + timedelta(seconds=3), by=WORKER)


def test_expired_occurrences_after_a_success_are_a_streak_a_success_ends_it(
    ledger: Ledger,
) -> None:
    spec = make_spec(misfirePolicy="SKIP")
    publish_revision(ledger, spec, T0, by="test")
    rows = materialize(ledger, spec, T0, T0 + timedelta(days=5), T0).rows
    days = [(r.occurrence_id, r.instant_utc) for r in rows if r.state is OccurrenceState.PLANNED]
    (d1, i1), (d2, _), (d3, i3), (d4, i4) = days[:4]
    assert i1 is not None and i3 is not None and i4 is not None

    run_to_success(ledger, d1, i1)
    assert ledger.read(failure_streaks).get(SID, 0) == 0

    released = release_due(ledger, SID, i3 + timedelta(hours=1))
    assert set(released.expired) >= {d2, d3}
    assert ledger.read(failure_streaks) == {SID: 2}
    assert ledger_snapshot(ledger, i3 + timedelta(hours=1)).failure_streaks == {SID: 2}

    run_to_success(ledger, d4, i4)
    assert ledger.read(failure_streaks).get(SID, 0) == 0
