"""The shipped alert rules, proven by ``promtool test rules`` and by their mutants.

``deploy/prometheus/rules/almanac-alerts.yml`` is tested by
``tests/deploy/rules/almanac-alerts.test.yml``: every alert has a case where it fires (with its
labels and annotations exactly) and one where it stays quiet, at its boundary. Each mutant below
(a threshold, a window, a ``for``, an aggregation changed) must make that file fail, so the cases
pin the rules' meaning and not only their syntax. Without ``promtool`` the tests skip, unless
``ALMANAC_REQUIRE_PROMETHEUS=1`` (see ``promkit``).
"""

from __future__ import annotations

import re
import subprocess
from pathlib import Path
from typing import Any

import pytest
import yaml
from alertkit import PENDING_METRICS, ROOT, RULE_TESTS, RULES, RUNBOOK, alert_rules
from metricsupport import exposed_sample_names, populated_registry
from prometheus_client import generate_latest
from prometheus_client.parser import text_string_to_metric_families
from promkit import tool

SEVERITIES = {"critical", "warning"}


def _promtool_test(rule_tests: Path) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [tool("promtool"), "test", "rules", str(rule_tests)],
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )


def _cases() -> dict[str, list[dict[str, Any]]]:
    """Per alert name: its ``alert_rule_test`` cases across the test file."""
    found: dict[str, list[dict[str, Any]]] = {}
    for test in yaml.safe_load(RULE_TESTS.read_text(encoding="utf-8"))["tests"]:
        for case in test.get("alert_rule_test", []):
            found.setdefault(case["alertname"], []).append(case)
    return found


def _anchor(heading: str) -> str:
    """GitHub's anchor for a Markdown heading: lower case, punctuation dropped, spaces as -."""
    return re.sub(r"[^\w\- ]", "", heading.strip().lower()).replace(" ", "-")


def _schedule_metrics() -> set[str]:
    """Metric names whose series carry ``schedule_id``: exported today, or pending (alertkit)."""
    text = generate_latest(populated_registry()).decode()
    names = {
        sample.name
        for family in text_string_to_metric_families(text)
        for sample in family.samples
        if "schedule_id" in sample.labels
    }
    return names | {name for name, contract in PENDING_METRICS.items() if "schedule_id" in contract}


def test_the_rules_pass_promtool_unit_tests() -> None:
    result = _promtool_test(RULE_TESTS)
    assert result.returncode == 0, result.stdout + result.stderr


def test_every_alert_has_a_firing_and_a_quiet_case() -> None:
    cases = _cases()
    names = [rule["alert"] for rule in alert_rules()]
    assert len(names) == len(set(names)), "alert names must be unique"
    assert set(cases) == set(names), f"cases for unknown alerts: {set(cases) - set(names)}"
    for name in names:
        assert any(case["exp_alerts"] for case in cases[name]), f"{name} never fires"
        assert any(not case["exp_alerts"] for case in cases[name]), f"{name} is never quiet"


def test_every_alert_names_the_schedule_when_its_metric_has_one() -> None:
    schedule_metrics = _schedule_metrics()
    cases = _cases()
    for rule in alert_rules():
        reads = set(re.findall(r"\b(almanac_\w+)", rule["expr"]))
        if not reads & schedule_metrics:
            continue
        assert re.search(r"\bby \(schedule_id\b", rule["expr"]), rule["alert"]
        for case in cases[rule["alert"]]:
            for expected in case["exp_alerts"]:
                assert "schedule_id" in expected["exp_labels"], rule["alert"]


def test_every_alert_has_a_severity_a_summary_and_a_runbook_section() -> None:
    headings = {
        _anchor(line.lstrip("#"))
        for line in RUNBOOK.read_text(encoding="utf-8").splitlines()
        if line.startswith("## ")
    }
    for rule in alert_rules():
        name = rule["alert"]
        assert rule["labels"]["severity"] in SEVERITIES, name
        assert rule["annotations"]["summary"], name
        url = rule["annotations"]["runbook_url"]
        path, _, anchor = url.partition("#")
        assert path == RUNBOOK.relative_to(ROOT).as_posix(), name
        assert anchor == _anchor(name), f"{name}: the section is named after the alert"
        assert anchor in headings, f"{name}: no section {anchor!r} in {RUNBOOK.name}"
    assert len(headings) >= len(alert_rules())


MUTANTS = [
    ("AlmanacUnknownEffectOpenTooLong", "expr", "> 1800", "> 1700"),
    ("AlmanacUnknownEffectOpenTooLong", "expr", "max by", "sum by"),
    ("AlmanacOccurrencesMisfired", "expr", "offset 1h)", "offset 2h)"),
    ("AlmanacOccurrencesMisfired", "expr", "(almanac_occurrences offset",
     "(almanac_occurrences{state='MISFIRE_EXPIRED'} offset"),
    ("AlmanacMaterializationBehindHorizon", "expr", "[3h]", "[1h]"),
    ("AlmanacMaterializationBehindHorizon", "expr", "offset 3h", "offset 1m"),
    ("AlmanacMaterializationBehindHorizon", "for", "15m", "5m"),
    ("AlmanacDeadlineMissed", "expr", "[1h]", "[2h]"),
    ("AlmanacDeadlineMissed", "expr", "> 0", ">= 0"),
    ("AlmanacFailureStreak", "expr", ">=", ">"),
    ("AlmanacLedgerUnreadable", "for", "5m", "3m"),
    ("AlmanacNoWorkerPolling", "expr", "or absent", "and absent"),
    ("AlmanacNoWorkerPolling", "expr", 'absent(temporal_num_pollers{job="almanac-worker-sdk"})',
     "absent(temporal_num_pollers)"),
    ("AlmanacNoWorkerPolling", "for", "5m", "1m"),
    ("AlmanacDispatchLagHigh", "expr", "> 300", "> 250"),
    ("AlmanacDispatchLagHigh", "for", "5m", "10m"),
]  # fmt: skip
"""(alert, field, text, replacement): each changes what one rule means."""


def test_every_alert_has_a_mutant() -> None:
    assert {name for name, *_ in MUTANTS} == {rule["alert"] for rule in alert_rules()}


def _run_with(tmp_path: Path, document: dict[str, Any]) -> subprocess.CompletedProcess[str]:
    """The unit tests of RULE_TESTS against ``document`` (a rule file, dumped to ``tmp_path``)."""
    rules = tmp_path / "rules.yml"
    rules.write_text(yaml.safe_dump(document, sort_keys=False), encoding="utf-8")
    tests = yaml.safe_load(RULE_TESTS.read_text(encoding="utf-8"))
    tests["rule_files"] = [str(rules)]
    rule_tests = tmp_path / "rules.test.yml"
    rule_tests.write_text(yaml.safe_dump(tests, sort_keys=False), encoding="utf-8")
    return _promtool_test(rule_tests)


def test_the_rules_dumped_unmutated_pass_their_unit_tests(tmp_path: Path) -> None:
    # The mutants below go through this dump: only their mutation can make it fail.
    result = _run_with(tmp_path, yaml.safe_load(RULES.read_text(encoding="utf-8")))
    assert result.returncode == 0, result.stdout + result.stderr


@pytest.mark.parametrize(
    ("alert", "field", "old", "new"), MUTANTS, ids=[f"{m[0]}:{m[2]}->{m[3]}" for m in MUTANTS]
)
def test_a_mutated_rule_fails_its_unit_tests(
    tmp_path: Path, alert: str, field: str, old: str, new: str
) -> None:
    document = yaml.safe_load(RULES.read_text(encoding="utf-8"))
    (rule,) = [r for g in document["groups"] for r in g["rules"] if r.get("alert") == alert]
    assert old in str(rule[field]), f"{alert}.{field} has no {old!r}"
    rule[field] = str(rule[field]).replace(old, new, 1)
    result = _run_with(tmp_path, document)
    assert result.returncode != 0, f"{alert}: {old!r} -> {new!r} passed the unit tests"
    assert "FAILED" in result.stdout + result.stderr


def test_the_rules_read_only_exported_or_pending_almanac_metrics() -> None:
    exported = exposed_sample_names(populated_registry())
    read = set().union(*(re.findall(r"\b(almanac_\w+)", rule["expr"]) for rule in alert_rules()))
    assert read <= exported | set(PENDING_METRICS), sorted(read - exported - set(PENDING_METRICS))
    # A pending metric is read by a rule, and leaves the list once a worker exports it.
    assert set(PENDING_METRICS) <= read
    assert not set(PENDING_METRICS) & exported, "exported now: remove it from PENDING_METRICS"


def test_ci_installs_alertmanager_when_missing() -> None:
    ci = (ROOT / ".ci" / "run").read_text(encoding="utf-8")
    assert "apt-get install -y -q prometheus-alertmanager" in ci
    assert "export ALMANAC_REQUIRE_PROMETHEUS=1" in ci  # a missing binary fails, never skips
