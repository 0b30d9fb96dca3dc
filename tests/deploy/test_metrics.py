"""activities.metrics: names, labels and values as a Prometheus scrape shows them."""

from __future__ import annotations

import ast
import enum
import threading
import urllib.request
from pathlib import Path

import pytest
from metricsupport import populated_registry
from prometheus_client import CollectorRegistry, generate_latest
from prometheus_client.parser import text_string_to_metric_families

import activities.metrics as metrics_module
from activities.metrics import (
    ATTEMPT_OUTCOMES,
    AlmanacMetrics,
    LedgerCollector,
    LedgerSnapshot,
    start_metrics_server,
)

ROOT = Path(__file__).resolve().parents[2]
SID = "daily-ops-summary"


def scrape(registry: CollectorRegistry) -> dict[tuple[str, frozenset[tuple[str, str]]], float]:
    """Parse a text scrape into {(sample name, labels): value}."""
    text = generate_latest(registry).decode()
    return {
        (sample.name, frozenset(sample.labels.items())): sample.value
        for family in text_string_to_metric_families(text)
        for sample in family.samples
    }


def value(registry: CollectorRegistry, name: str, **labels: str) -> float | None:
    return scrape(registry).get((name, frozenset(labels.items())))


@pytest.fixture
def registry() -> CollectorRegistry:
    return CollectorRegistry()


@pytest.fixture
def metrics(registry: CollectorRegistry) -> AlmanacMetrics:
    return AlmanacMetrics(registry)


def test_materialization_observes_seconds_in_histogram_and_counts_inserted_rows(
    registry: CollectorRegistry, metrics: AlmanacMetrics
) -> None:
    metrics.observe_materialization(SID, 0.3, 5)
    metrics.observe_materialization(SID, 2.0, 0)

    name = "almanac_materialization_duration_seconds"
    assert value(registry, f"{name}_count", schedule_id=SID) == 2
    assert value(registry, f"{name}_sum", schedule_id=SID) == pytest.approx(2.3)
    assert value(registry, f"{name}_bucket", schedule_id=SID, le="0.5") == 1
    assert value(registry, f"{name}_bucket", schedule_id=SID, le="2.5") == 2
    assert value(registry, f"{name}_bucket", schedule_id=SID, le="+Inf") == 2
    assert value(registry, "almanac_materialized_rows_total", schedule_id=SID) == 5


def test_misfires_are_counted_by_outcome_and_zero_counts_create_both_series(
    registry: CollectorRegistry, metrics: AlmanacMetrics
) -> None:
    metrics.count_misfires(SID, expired=0, caught_up=0)
    assert value(registry, "almanac_misfires_total", schedule_id=SID, outcome="expired") == 0
    assert value(registry, "almanac_misfires_total", schedule_id=SID, outcome="caught_up") == 0

    metrics.count_misfires(SID, expired=5, caught_up=2)
    metrics.count_misfires(SID, expired=1, caught_up=0)
    assert value(registry, "almanac_misfires_total", schedule_id=SID, outcome="expired") == 6
    assert value(registry, "almanac_misfires_total", schedule_id=SID, outcome="caught_up") == 2


def test_attempts_are_counted_by_outcome_with_every_outcome_series_from_the_first(
    registry: CollectorRegistry, metrics: AlmanacMetrics
) -> None:
    metrics.count_attempt(SID, "RETRY_WAIT")
    metrics.count_attempt(SID, "RETRY_WAIT")
    metrics.count_attempt(SID, "UNKNOWN_EFFECT")

    counts = {
        outcome: value(registry, "almanac_attempts_total", schedule_id=SID, outcome=outcome)
        for outcome in ATTEMPT_OUTCOMES
    }
    assert counts == {"SUCCEEDED": 0, "RETRY_WAIT": 2, "FAILED": 0, "UNKNOWN_EFFECT": 1}


def test_attempt_outcome_may_be_an_enum_member_and_is_labelled_by_its_value(
    registry: CollectorRegistry, metrics: AlmanacMetrics
) -> None:
    class Outcome(enum.Enum):  # str() of a member is "Outcome.FAILED", not its value
        FAILED = "FAILED"

    metrics.count_attempt(SID, Outcome.FAILED)
    assert value(registry, "almanac_attempts_total", schedule_id=SID, outcome="FAILED") == 1


def test_attempt_outcome_outside_the_four_is_rejected(metrics: AlmanacMetrics) -> None:
    with pytest.raises(ValueError, match="DISPATCHING"):
        metrics.count_attempt(SID, "DISPATCHING")


def test_dispatch_lag_lands_in_its_bucket_and_negative_skew_counts_as_zero(
    registry: CollectorRegistry, metrics: AlmanacMetrics
) -> None:
    metrics.observe_dispatch_lag(SID, 90.0)
    metrics.observe_dispatch_lag(SID, -0.4)

    name = "almanac_dispatch_lag_seconds"
    assert value(registry, f"{name}_bucket", schedule_id=SID, le="60.0") == 1  # only the 0
    assert value(registry, f"{name}_bucket", schedule_id=SID, le="120.0") == 2
    assert value(registry, f"{name}_bucket", schedule_id=SID, le="0.1") == 1
    assert value(registry, f"{name}_sum", schedule_id=SID) == pytest.approx(90.0)
    assert value(registry, f"{name}_count", schedule_id=SID) == 2


@pytest.mark.parametrize(
    "bad",
    [
        "Daily-Ops",  # upper case
        "daily-ops-summary.r7.20261101T013000.f0",  # an occurrence ID: one series per occurrence
        "-daily",
        "daily-",
        "",
        "a" * 64,
    ],
)
def test_schedule_id_label_must_be_a_slug_to_keep_cardinality_bounded(
    metrics: AlmanacMetrics, registry: CollectorRegistry, bad: str
) -> None:
    with pytest.raises(ValueError, match="slug"):
        metrics.observe_materialization(bad, 1.0, 1)
    with pytest.raises(ValueError, match="slug"):
        metrics.count_misfires(bad, 1, 1)
    with pytest.raises(ValueError, match="slug"):
        metrics.count_attempt(bad, "SUCCEEDED")
    with pytest.raises(ValueError, match="slug"):
        metrics.observe_dispatch_lag(bad, 1.0)
    assert not [key for key in scrape(registry) if ("schedule_id", bad) in key[1]]


def test_negative_counts_are_rejected(metrics: AlmanacMetrics) -> None:
    with pytest.raises(ValueError, match="inserted"):
        metrics.observe_materialization(SID, 1.0, -1)
    with pytest.raises(ValueError, match="expired"):
        metrics.count_misfires(SID, expired=-1, caught_up=0)


def test_ledger_collector_exports_the_snapshot_read_on_each_scrape(
    registry: CollectorRegistry,
) -> None:
    snapshots = iter(
        [
            LedgerSnapshot(
                counts={(SID, "DUE"): 2, (SID, "SUCCEEDED"): 10, ("weekly-report", "PLANNED"): 1},
                open_unknown={SID: (3, 1800.5), "weekly-report": (0, 0.0)},
            ),
            LedgerSnapshot(counts={(SID, "SUCCEEDED"): 12}),
        ]
    )
    calls: list[int] = []

    def read() -> LedgerSnapshot:
        calls.append(1)
        return next(snapshots)

    registry.register(LedgerCollector(read))
    assert calls == []  # registering describes the families without reading the ledger

    first = scrape(registry)
    assert first[("almanac_occurrences", frozenset({("schedule_id", SID), ("state", "DUE")}))] == 2
    assert (
        first[("almanac_occurrences", frozenset({("schedule_id", SID), ("state", "SUCCEEDED")}))]
        == 10
    )
    assert (
        first[
            (
                "almanac_occurrences",
                frozenset({("schedule_id", "weekly-report"), ("state", "PLANNED")}),
            )
        ]
        == 1
    )
    assert first[("almanac_unknown_effects_open", frozenset({("schedule_id", SID)}))] == 3
    assert (
        first[("almanac_unknown_effects_oldest_age_seconds", frozenset({("schedule_id", SID)}))]
        == 1800.5
    )
    assert (
        first[("almanac_unknown_effects_open", frozenset({("schedule_id", "weekly-report")}))] == 0
    )
    assert first[("almanac_ledger_snapshot_up", frozenset())] == 1

    second = scrape(registry)
    assert len(calls) == 2
    assert (
        second[("almanac_occurrences", frozenset({("schedule_id", SID), ("state", "SUCCEEDED")}))]
        == 12
    )
    assert (
        "almanac_occurrences",
        frozenset({("schedule_id", SID), ("state", "DUE")}),
    ) not in second
    # Resolved: the schedule's open-case series reads 0 (it does not vanish, so an alert on it
    # resolves), and no series appears for a schedule the ledger does not hold.
    open_cases = {k: v for k, v in second.items() if k[0] == "almanac_unknown_effects_open"}
    assert open_cases == {("almanac_unknown_effects_open", frozenset({("schedule_id", SID)})): 0}


def test_skips_are_exported_by_state_and_recorded_reason(registry: CollectorRegistry) -> None:
    skips = {(SID, "SKIPPED_HOLIDAY", "HOLIDAY_SKIPPED"): 2, (SID, "SKIPPED_GAP", "GAP_SKIPPED"): 1}
    registry.register(LedgerCollector(lambda: LedgerSnapshot(skips=skips)))

    exported = {
        tuple(sorted(dict(labels).items())): v
        for (name, labels), v in scrape(registry).items()
        if name == "almanac_skipped_occurrences"
    }
    assert exported == {
        (("reason", "HOLIDAY_SKIPPED"), ("schedule_id", SID), ("state", "SKIPPED_HOLIDAY")): 2,
        (("reason", "GAP_SKIPPED"), ("schedule_id", SID), ("state", "SKIPPED_GAP")): 1,
    }


def test_a_failing_ledger_read_reports_down_and_keeps_the_event_metrics(
    registry: CollectorRegistry, metrics: AlmanacMetrics
) -> None:
    def read() -> LedgerSnapshot:
        raise ConnectionError("ledger unreachable")

    registry.register(LedgerCollector(read))
    metrics.count_attempt(SID, "SUCCEEDED")

    samples = scrape(registry)
    assert samples[("almanac_ledger_snapshot_up", frozenset())] == 0
    assert not [key for key in samples if key[0] == "almanac_occurrences"]
    assert value(registry, "almanac_attempts_total", schedule_id=SID, outcome="SUCCEEDED") == 1


def test_every_metric_is_prefixed_and_labelled_only_by_bounded_labels() -> None:
    text = generate_latest(populated_registry()).decode()
    families = list(text_string_to_metric_families(text))
    assert {family.name for family in families} >= {
        "almanac_materialization_duration_seconds",
        "almanac_materialized_rows",
        "almanac_misfires",
        "almanac_attempts",
        "almanac_dispatch_lag_seconds",
        "almanac_occurrences",
        "almanac_unknown_effects_open",
        "almanac_unknown_effects_oldest_age_seconds",
        "almanac_ledger_snapshot_up",
        "almanac_ledger_snapshot_duration_seconds",
        "almanac_shadow_mismatches",
        "almanac_skipped_occurrences",
    }
    for family in families:
        assert family.name.startswith("almanac_"), family.name
        for sample in family.samples:
            # ``alias``: an implementation alias, chosen by operators (a handful, never data).
            # ``reason``: a recorded resolution reason (an enum of the time contract).
            bounded = {"schedule_id", "outcome", "state", "le", "alias", "reason"}
            assert set(sample.labels) <= bounded, sample


def test_fresh_registries_are_independent_and_one_registry_holds_one_set(
    registry: CollectorRegistry, metrics: AlmanacMetrics
) -> None:
    other = CollectorRegistry()
    AlmanacMetrics(other).count_attempt(SID, "FAILED")
    assert value(other, "almanac_attempts_total", schedule_id=SID, outcome="FAILED") == 1
    assert value(registry, "almanac_attempts_total", schedule_id=SID, outcome="FAILED") is None
    with pytest.raises(ValueError, match="Duplicated timeseries"):
        AlmanacMetrics(registry)


def test_module_functions_record_in_the_default_registry_not_the_global_one() -> None:
    from prometheus_client import REGISTRY as GLOBAL

    registry = metrics_module.DEFAULT_REGISTRY
    assert registry is not GLOBAL
    assert metrics_module.default_metrics().registry is registry
    sid = "module-functions-test"
    metrics_module.observe_materialization(sid, 0.1, 2)
    metrics_module.count_misfires(sid, expired=1, caught_up=0)
    metrics_module.count_attempt(sid, "SUCCEEDED")
    metrics_module.observe_dispatch_lag(sid, 3.0)

    assert value(registry, "almanac_materialized_rows_total", schedule_id=sid) == 2
    assert value(registry, "almanac_misfires_total", schedule_id=sid, outcome="expired") == 1
    assert value(registry, "almanac_attempts_total", schedule_id=sid, outcome="SUCCEEDED") == 1
    assert value(registry, "almanac_dispatch_lag_seconds_count", schedule_id=sid) == 1
    assert GLOBAL.get_sample_value("almanac_attempts_total") is None


def test_metrics_server_serves_the_registry_over_http(
    registry: CollectorRegistry, metrics: AlmanacMetrics
) -> None:
    metrics.count_attempt(SID, "SUCCEEDED")
    server, thread = start_metrics_server(0, registry, addr="127.0.0.1")
    try:
        assert isinstance(thread, threading.Thread) and thread.daemon
        url = f"http://127.0.0.1:{server.server_port}/metrics"
        with urllib.request.urlopen(url, timeout=10) as response:
            body = response.read().decode()
        assert f'almanac_attempts_total{{outcome="SUCCEEDED",schedule_id="{SID}"}} 1.0' in body
    finally:
        server.shutdown()
        server.server_close()
        thread.join(timeout=10)


def test_workflow_code_never_imports_the_metrics_module() -> None:
    # The sandbox re-imports workflow modules and refuses to create metrics there.
    for path in sorted((ROOT / "workflows").rglob("*.py")):
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            names: list[str] = []
            if isinstance(node, ast.Import):
                names = [alias.name for alias in node.names]
            elif isinstance(node, ast.ImportFrom) and node.module:
                names = [node.module] + [f"{node.module}.{alias.name}" for alias in node.names]
            assert not [n for n in names if n.startswith("activities.metrics")], path
            assert "prometheus_client" not in {n.split(".")[0] for n in names}, path


def test_deadline_misses_are_a_counter_at_zero_for_every_known_schedule(
    registry: CollectorRegistry,
) -> None:
    snapshot = LedgerSnapshot(
        counts={(SID, "SUCCEEDED"): 3, ("quiet", "PLANNED"): 1}, deadline_misses={SID: 2}
    )
    registry.register(LedgerCollector(lambda: snapshot))

    exported = {
        dict(labels)["schedule_id"]: v
        for (name, labels), v in scrape(registry).items()
        if name == "almanac_deadline_missed_total"
    }
    assert exported == {SID: 2, "quiet": 0}


def test_failure_streaks_are_a_gauge_at_zero_for_every_known_schedule(
    registry: CollectorRegistry,
) -> None:
    snapshot = LedgerSnapshot(
        counts={(SID, "FAILED"): 3, ("quiet", "SUCCEEDED"): 1}, failure_streaks={SID: 3}
    )
    registry.register(LedgerCollector(lambda: snapshot))

    exported = {
        dict(labels)["schedule_id"]: v
        for (name, labels), v in scrape(registry).items()
        if name == "almanac_failure_streak"
    }
    assert exported == {SID: 3, "quiet": 0}


def test_the_failure_streak_threshold_is_exported_only_for_schedules_with_a_policy(
    registry: CollectorRegistry,
) -> None:
    snapshot = LedgerSnapshot(
        counts={(SID, "FAILED"): 3, ("quiet", "SUCCEEDED"): 1}, streak_thresholds={SID: 3}
    )
    registry.register(LedgerCollector(lambda: snapshot))

    exported = {
        dict(labels)["schedule_id"]: v
        for (name, labels), v in scrape(registry).items()
        if name == "almanac_failure_streak_threshold"
    }
    assert exported == {SID: 3}
