"""Every schedule the ledger knows has a series in the per-schedule gauges documented as 0 for
every known schedule (docs/operating/metrics.md), occurrences or not.

``leap-day`` (29 February 08:00) published on 2026-11-01 and materialized 14 days ahead has no
occurrence row (the next 29 February is in 2028), yet the ledger knows it: it reads 0 in
``almanac_unknown_effects_open``, ``almanac_deadline_missed_total`` and
``almanac_failure_streak``, beside the daily schedule that has rows.
"""

from __future__ import annotations

from datetime import timedelta

from ledger_support import T0, make_spec
from prometheus_client import CollectorRegistry, generate_latest
from prometheus_client.parser import text_string_to_metric_families

from activities.metrics import LedgerCollector
from activities.snapshot import ledger_snapshot
from ledger import Ledger, list_occurrences, materialize, publish_revision

pytest_plugins = ["ledger_fixtures"]  # ledger, backend and the PostgreSQL cluster

GAUGES = ("almanac_unknown_effects_open", "almanac_deadline_missed_total", "almanac_failure_streak")


def test_a_schedule_without_occurrences_reads_zero_in_every_per_schedule_gauge(
    ledger: Ledger,
) -> None:
    daily = make_spec()
    leap = make_spec(scheduleId="leap-day", rule="FREQ=YEARLY;BYMONTH=2;BYMONTHDAY=29;BYHOUR=8")
    for spec in (daily, leap):
        publish_revision(ledger, spec, T0, by="test")
        materialize(ledger, spec, T0, T0 + timedelta(days=14), T0)
    assert list_occurrences(ledger, "leap-day") == []
    assert list_occurrences(ledger, daily.schedule_id)

    registry = CollectorRegistry()
    snapshot = ledger_snapshot(ledger, T0)
    registry.register(LedgerCollector(lambda: snapshot))
    text = generate_latest(registry).decode()
    series: dict[str, dict[str, float]] = {name: {} for name in GAUGES}
    for family in text_string_to_metric_families(text):
        for sample in family.samples:
            if sample.name in series:
                series[sample.name][sample.labels["schedule_id"]] = sample.value

    for name in GAUGES:
        assert series[name] == {daily.schedule_id: 0, "leap-day": 0}, name
