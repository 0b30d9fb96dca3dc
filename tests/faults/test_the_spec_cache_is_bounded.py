"""The activities keep at most their bound of parsed specs, and an evicted one is read again.

A worker that wakes 10,000 schedules must not keep every spec it ever parsed: the cache holds the
least recently used ``spec_cache_size`` specs (the worker passes ``--max-cached-workflows``).
Expected specs are the ones published, compared by (scheduleId, revision, rule).
"""

from __future__ import annotations

from pathlib import Path
from typing import cast

import pytest
from faultkit import day, local_actions, publish, spec_data
from temporalio.client import Client

from activities import io
from activities.clock import FixedClock
from activities.ledger_activities import AlmanacActivities
from activities.spec_cache import SpecCache
from almanac import worker
from almanac.settings import AlmanacSettings
from ledger import Ledger
from timecontract import ScheduleSpecV1

pytestmark = [pytest.mark.fault]

NOW = day(1, 0)
BOUND = 2


def shape(spec: ScheduleSpecV1) -> tuple[str, int, str]:
    return (spec.schedule_id, spec.revision, spec.rule)


def bounded(store: Ledger) -> AlmanacActivities:
    return AlmanacActivities(
        store, local_actions(), identity="t", clock=FixedClock(NOW), spec_cache_size=BOUND
    )


def test_wake_ups_of_more_schedules_than_the_bound_keep_the_bound(
    store: Ledger, revision_reads: list[str]
) -> None:
    published = [publish(store, spec_data(f"s{i}"), NOW) for i in range(5)]
    acts = bounded(store)
    for spec in published:
        acts.materialize(io.MaterializeOccurrencesInput(spec.schedule_id, NOW, 86400.0))
        assert len(acts._specs) <= BOUND
    revision_reads.clear()
    # The most recent wake-up's spec is kept; the first one's was evicted and is read again.
    assert shape(acts._spec("s4", 1)) == shape(published[4])
    assert revision_reads == []
    assert shape(acts._spec("s0", 1)) == shape(published[0])
    assert revision_reads == ["s0"]
    assert len(acts._specs) <= BOUND


def test_a_schedule_with_more_revisions_than_the_bound_still_gives_each(
    store: Ledger, revision_reads: list[str]
) -> None:
    rules = ["FREQ=DAILY;BYHOUR=9", "FREQ=DAILY;BYHOUR=10", "FREQ=DAILY;BYHOUR=11"]
    for revision, rule in enumerate(rules, start=1):
        cutover = f"2027-01-0{revision}T00:00:00Z"
        publish(store, spec_data("many", revision=revision, rule=rule, cutoverAt=cutover), NOW)
    acts = bounded(store)
    # Reading revision 1 keeps revisions 1, 2, 3 in turn: 1 is evicted by its own read.
    assert shape(acts._spec("many", 1)) == ("many", 1, rules[0])
    assert len(acts._specs) <= BOUND
    assert shape(acts._spec("many", 3)) == ("many", 3, rules[2])
    assert revision_reads == ["many"]


def test_the_worker_sizes_the_cache_like_its_workflow_cache(tmp_path: Path, store: Ledger) -> None:
    for i in range(3):
        publish(store, spec_data(f"w{i}"), NOW)
    options = worker.WorkerOptions(identity="t", max_cached_workflows=BOUND)
    settings = AlmanacSettings(data_dir=tmp_path)
    acts = worker.new_activities(cast(Client, None), settings, store, options, FixedClock(NOW))
    for i in range(3):
        acts._spec(f"w{i}", 1)
    assert len(acts._specs) == BOUND


def test_a_negative_size_is_refused_naming_it() -> None:
    with pytest.raises(ValueError, match="spec cache size must be >= 0, got -1"):
        SpecCache(-1)
