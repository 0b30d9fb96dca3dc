"""A schedule's misfire counter exists at 0 before its first misfire, so ``increase()`` sees it.

Prometheus's ``increase()`` (the dashboard's misfire panel) measures a series from its first
sample: a counter series born at 1 shows no increase for its first misfire. So the activities
create ``almanac_misfires_total{schedule_id, outcome}`` at 0 for both outcomes the first time
they touch a schedule (its materialization, any release), before anything can misfire.

Daily 09:00 UTC, ``maxCatchUp: 2``, lateness PT5M: materialized on Jan 1 at 01:00 through Jan 3,
then released on Jan 5 (an outage): Jan 1–3 are overdue; the two most recent run (caught up,
later than lateness) and Jan 1 expires — the spec's arithmetic.
"""

from __future__ import annotations

from datetime import timedelta

import pytest
from faultkit import day, local_actions, publish, spec_data
from prometheus_client import CollectorRegistry
from temporalio.testing import ActivityEnvironment

from activities import io
from activities.clock import FixedClock
from activities.ledger_activities import AlmanacActivities
from activities.metrics import AlmanacMetrics
from ledger import Ledger

pytestmark = [pytest.mark.fault]
SID = "first-misfire"


def misfires(registry: CollectorRegistry, outcome: str) -> float | None:
    return registry.get_sample_value(
        "almanac_misfires_total", {"schedule_id": SID, "outcome": outcome}
    )


def test_misfire_series_start_at_zero_before_the_first_misfire(store: Ledger) -> None:
    publish(store, spec_data(SID), day(1, 0))
    registry = CollectorRegistry()
    clock = FixedClock(day(1, 1))
    activities = AlmanacActivities(
        store, local_actions(), identity="w", clock=clock, metrics=AlmanacMetrics(registry)
    )
    env = ActivityEnvironment()
    horizon = timedelta(days=2, hours=9).total_seconds()
    env.run(activities.materialize, io.MaterializeOccurrencesInput(SID, day(1, 1), horizon))
    assert (misfires(registry, "expired"), misfires(registry, "caught_up")) == (0.0, 0.0)

    clock.instant_utc = day(5, 10)
    released = env.run(activities.release_due, io.ReleaseDueInput(SID, day(5, 10)))
    assert (released.expired, len(released.due)) == (1, 2)
    assert (misfires(registry, "expired"), misfires(registry, "caught_up")) == (1.0, 2.0)
