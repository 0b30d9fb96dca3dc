"""docs/operating/metrics.md lists every metric the code defines, under its exposed name.

Metric names are read from the sources (a ``Counter``/``Gauge``/``Histogram``/``Summary`` or a
``…MetricFamily`` constructed with a literal ``"almanac_…"`` name), so the check does not depend
on where a metric is defined. A counter is exposed with ``_total`` appended (the Prometheus
client does so), which is the name an operator queries and the guide must use. The table may not
name a metric that no longer exists either.
"""

from __future__ import annotations

import re

from doc_markdown import ROOT

GUIDE = ROOT / "docs" / "operating" / "metrics.md"
SOURCES = ("timecontract", "ledger", "activities", "workflows", "almanac")
_DEFINITION = re.compile(
    r"\b(Counter|Gauge|Histogram|Summary|CounterMetricFamily|GaugeMetricFamily"
    r"|HistogramMetricFamily|SummaryMetricFamily)\(\s*\"(almanac_[a-z0-9_]+)\""
)
_TABLE_ROW = re.compile(r"^\|\s*`(almanac_[a-z0-9_]+)`\s*\|", re.M)


def exposed_names() -> set[str]:
    """Every metric name a worker exposes, as Prometheus scrapes it."""
    names = set()
    for package in SOURCES:
        for path in (ROOT / package).rglob("*.py"):
            for kind, name in _DEFINITION.findall(path.read_text(encoding="utf-8")):
                counter = kind.startswith("Counter") and not name.endswith("_total")
                names.add(f"{name}_total" if counter else name)
    return names


def test_every_metric_is_documented() -> None:
    guide = GUIDE.read_text(encoding="utf-8")
    assert sorted(n for n in exposed_names() if f"`{n}`" not in guide) == []


def test_the_metrics_table_names_only_real_metrics() -> None:
    table = set(_TABLE_ROW.findall(GUIDE.read_text(encoding="utf-8")))
    assert sorted(table - exposed_names()) == []


def test_the_reader_finds_the_metrics() -> None:
    # Guards the tests above against reading nothing.
    assert {"almanac_attempts_total", "almanac_occurrences", "almanac_dispatch_lag_seconds"} <= (
        exposed_names()
    )
