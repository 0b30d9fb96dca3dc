"""Helpers for the deployment tests: what a scrape of a registry exposes."""

from __future__ import annotations

from prometheus_client import CollectorRegistry, generate_latest
from prometheus_client.parser import text_string_to_metric_families

from activities.metrics import AlmanacMetrics, LedgerCollector, LedgerSnapshot


def exposed_sample_names(registry: CollectorRegistry) -> set[str]:
    """Every sample name a scrape of ``registry`` shows (``_bucket``, ``_total``… included)."""
    text = generate_latest(registry).decode()
    return {
        sample.name for family in text_string_to_metric_families(text) for sample in family.samples
    }


def populated_registry() -> CollectorRegistry:
    """A fresh registry with Almanac's metrics, each observed once, and a ledger collector."""
    registry = CollectorRegistry()
    metrics = AlmanacMetrics(registry)
    metrics.observe_materialization("daily-ops-summary", 0.2, 3)
    metrics.count_misfires("daily-ops-summary", expired=1, caught_up=2)
    metrics.count_attempt("daily-ops-summary", "SUCCEEDED")
    metrics.observe_dispatch_lag("daily-ops-summary", 1.5)
    snapshot = LedgerSnapshot(
        counts={("daily-ops-summary", "SUCCEEDED"): 4},
        open_unknown={"daily-ops-summary": (1, 60.0)},
        shadow_mismatches={"v2": 0},
        skips={("daily-ops-summary", "SKIPPED_GAP", "GAP_SKIPPED"): 1},
        streak_thresholds={"daily-ops-summary": 3},
    )
    registry.register(LedgerCollector(lambda: snapshot))
    return registry
