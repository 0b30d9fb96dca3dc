"""A release decides as of its timer's instant (patches almanac-early-wake and almanac-on-time).

The schedule workflow's timer for an occurrence fires ``io.RELEASE_LEAD`` (0.1 s) before the
instant, and the release it runs carries the instant as ``not_before_utc``: the activity decides
as of that instant and waits until its own clock reaches it. When the timer's workflow task
started late (a busy worker, within ``io.RELEASE_GRACE``), the release carries the instant all the
same and decides as of it: ``lateness`` is not counted from a busy worker's task. Expected values
come from the rule (nothing is DUE before its instant; the DESIGN's event trail records when; the
misfire policy applies after downtime, DESIGN §4) and the spec's arithmetic (daily 09:00 UTC),
not from the code under test.
"""

from __future__ import annotations

import time
from dataclasses import dataclass, field
from datetime import datetime, timedelta

import pytest
from faultkit import day, local_actions, publish, spec_data

import ledger
from activities import io
from activities.clock import FixedClock
from activities.ledger_activities import AlmanacActivities
from ledger import Ledger, OccurrenceState

pytestmark = [pytest.mark.fault]

INSTANT = day(2, 9)  # 2027-01-02 09:00Z, the second daily instant
EARLY = timedelta(milliseconds=80)
"""How long before the instant the release starts (a timer fired 0.1 s early, 20 ms late)."""
OCCURRENCE = "early.r1.20270102T090000.f0"


@dataclass
class MovingClock:
    """A clock that moves with the monotonic clock from a set instant (no wall-clock date)."""

    start_utc: datetime
    _origin: float = field(default_factory=time.monotonic)

    def now(self) -> datetime:
        return self.start_utc + timedelta(seconds=time.monotonic() - self._origin)


def setup(store: Ledger, clock_starts_at: datetime, **spec: str) -> AlmanacActivities:
    """Publish and materialize the spec (``spec``: camelCase overrides); the activities' clock
    reads ``clock_starts_at`` now."""
    publish(store, spec_data("early", start="2027-01-02T00:00:00", **spec), day(1, 0))
    before = AlmanacActivities(store, local_actions(), identity="t", clock=FixedClock(day(1, 10)))
    before.materialize(
        io.MaterializeOccurrencesInput("early", day(1, 10), timedelta(days=3).total_seconds())
    )
    return AlmanacActivities(
        store, local_actions(), identity="test", clock=MovingClock(clock_starts_at)
    )


def due_at(store: Ledger) -> datetime:
    """When the occurrence's ``PLANNED → DUE`` event was recorded (the worker's clock)."""
    (event,) = [
        e
        for e in ledger.show_occurrence(store, OCCURRENCE).events
        if e.to_state == OccurrenceState.DUE.value
    ]
    return event.at_utc


def state_of(store: Ledger) -> OccurrenceState:
    """The occurrence's state in the ledger now."""
    (view,) = [o for o in ledger.list_occurrences(store, "early") if o.occurrence_id == OCCURRENCE]
    return view.state


def test_an_early_release_waits_for_the_instant_and_releases_it(store: Ledger) -> None:
    acts = setup(store, INSTANT - EARLY)
    started = time.monotonic()
    released = acts.release_due(
        io.ReleaseDueInput("early", INSTANT - EARLY, not_before_utc=INSTANT)
    )
    # Decided as of the instant (the workflow's now is 80 ms before it) ...
    assert [o.occurrence_id for o in released.due] == [OCCURRENCE]
    # ... and released no earlier than it, by the clock that records the event.
    assert due_at(store) >= INSTANT
    assert time.monotonic() - started >= EARLY.total_seconds()


def test_without_the_instant_the_release_decides_as_of_now(store: Ledger) -> None:
    acts = setup(store, INSTANT - EARLY)
    released = acts.release_due(io.ReleaseDueInput("early", INSTANT - EARLY))
    assert released.due == []
    assert state_of(store) is OccurrenceState.PLANNED


def test_a_clock_far_behind_does_not_hold_the_release(store: Ledger) -> None:
    # The worker's clock reads an hour before the instant (a fixed test clock, a simulated
    # calendar): the wait is bounded by io.MAX_RELEASE_HOLD, so it is not taken at all, and the
    # workflow's instant decides.
    acts = setup(store, INSTANT - timedelta(hours=1))
    started = time.monotonic()
    released = acts.release_due(
        io.ReleaseDueInput("early", INSTANT - EARLY, not_before_utc=INSTANT)
    )
    assert time.monotonic() - started < io.MAX_RELEASE_HOLD.total_seconds()
    assert [o.occurrence_id for o in released.due] == [OCCURRENCE]


def test_a_late_release_does_not_wait(store: Ledger) -> None:
    # The timer fired after the instant after all (a busy worker): nothing to wait for.
    acts = setup(store, INSTANT + timedelta(seconds=5))
    started = time.monotonic()
    released = acts.release_due(
        io.ReleaseDueInput("early", INSTANT + timedelta(seconds=5), not_before_utc=INSTANT)
    )
    assert time.monotonic() - started < EARLY.total_seconds()
    assert [o.occurrence_id for o in released.due] == [OCCURRENCE]
    assert due_at(store) >= INSTANT + timedelta(seconds=5)


LATE = timedelta(milliseconds=400)
"""How late the timer's workflow task started (a busy worker; within ``io.RELEASE_GRACE``)."""


def test_a_late_task_of_the_timer_decides_as_of_the_instant(store: Ledger) -> None:
    # lateness PT0S and SKIP: as of the task's start (0.4 s after the instant) the occurrence
    # would be missed and expired; as of the instant its timer was set for, it is on time.
    acts = setup(store, INSTANT + LATE, lateness="PT0S", misfirePolicy="SKIP")
    started = time.monotonic()
    released = acts.release_due(io.ReleaseDueInput("early", INSTANT + LATE, not_before_utc=INSTANT))
    assert time.monotonic() - started < LATE.total_seconds()  # nothing to wait for
    assert [o.occurrence_id for o in released.due] == [OCCURRENCE]
    assert released.expired == 0
    assert due_at(store) >= INSTANT + LATE  # the trail says when it was released


def test_a_release_not_for_a_timer_counts_lateness_from_now(store: Ledger) -> None:
    # The control: the same release without the timer's instant (a wake-up after downtime)
    # applies the misfire policy as of now, so PT0S expires it.
    acts = setup(store, INSTANT + LATE, lateness="PT0S", misfirePolicy="SKIP")
    released = acts.release_due(io.ReleaseDueInput("early", INSTANT + LATE))
    assert released.due == []
    assert released.expired == 1
    assert state_of(store) is OccurrenceState.MISFIRE_EXPIRED
