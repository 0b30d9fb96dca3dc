"""The alert rules' contract for the deployment tests: where they live and what they read.

``PENDING_METRICS`` names the metrics the shipped rules and dashboard read before any worker
exports them (none now). It is the one place those names are
written down for the tests: a metric leaves it when ``activities.metrics`` exports it (a test
fails until it does), so nothing stays "pending" by accident.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import yaml

ROOT = Path(__file__).resolve().parents[2]
RULES = ROOT / "deploy" / "prometheus" / "rules" / "almanac-alerts.yml"
RULE_TESTS = Path(__file__).resolve().parent / "rules" / "almanac-alerts.test.yml"
RUNBOOK = ROOT / "docs" / "operating" / "runbook.md"

PENDING_METRICS: dict[str, str] = {}
"""Metric name → its contract, for the metrics the rules read before any worker exports them."""


def alert_rules(path: Path = RULES) -> list[dict[str, Any]]:
    """Every alerting rule of a rule file, in file order (recording rules left out)."""
    groups = yaml.safe_load(path.read_text(encoding="utf-8"))["groups"]
    return [rule for group in groups for rule in group["rules"] if "alert" in rule]
