"""Golden time-zone cases: expectations computed independently of timecontract (see README.md).

Each JSON file in ``cases/`` holds a spec, a UTC window and the records expected in it, derived
from java.time's zone rules, RFC 5545's own example text, or (``rfc7529-*``) RFC 7529's SKIP
rules applied by plain java.time loops. The resolver must agree on every
field except the IDs, which are checked for their documented format instead.
"""

from __future__ import annotations

import json
from datetime import datetime
from pathlib import Path
from typing import Any

import pytest

from timecontract import occurrences, parse_spec

CASES = sorted((Path(__file__).parent / "cases").glob("*.json"))
COMPARED = ("nominalLocal", "fold", "instant", "gapAt", "utcOffset", "disposition", "reason")


def _load(path: Path) -> dict[str, Any]:
    return json.loads(path.read_text(encoding="utf-8"))


def test_there_are_at_least_sixty_golden_cases() -> None:
    assert len(CASES) >= 60


def test_rfc7529_cases_cover_every_skip_value() -> None:
    rules = [_load(p)["spec"]["rule"] for p in CASES if p.stem.startswith("rfc7529-")]
    assert all(rule.startswith("RSCALE=GREGORIAN;") for rule in rules)
    for skip in ("OMIT", "BACKWARD", "FORWARD"):
        assert any(f"SKIP={skip}" in rule for rule in rules), skip


@pytest.mark.parametrize("path", CASES, ids=[p.stem for p in CASES])
def test_golden_case(path: Path) -> None:
    case = _load(path)
    assert case["source"], "every golden case names its source"
    spec = parse_spec(case["spec"])
    window = case["window"]
    records = occurrences(
        spec, datetime.fromisoformat(window["from"]), datetime.fromisoformat(window["to"])
    )
    actual = [{key: r.to_json()[key] for key in COMPARED} for r in records]
    expected = [{key: e[key] for key in COMPARED} for e in case["expected"]]
    assert actual == expected
    for record in records:
        # The documented format, written out here rather than computed by timecontract.ids.
        basic = record.nominal_local.strftime("%Y%m%dT%H%M%S")
        expected_id = f"{spec.schedule_id}.r{spec.revision}.{basic}.f{record.fold}"
        assert record.occurrence_id == expected_id
