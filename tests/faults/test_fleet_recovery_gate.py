"""The opt-in fleet-recovery gate passes on the production worker and fails on a mutant.

The gate (``almanac.gates.harness.fleet_recovery``, ``almanac gates fleet-recovery``) runs 1,000
schedules in minutes; here it runs the same scenario (``almanac.gates.fleet``) on a few schedules:
unmutated it must PASS, and with a worker whose release decides nothing it must FAIL, naming what is
undecided.
"""

from __future__ import annotations

import re
from datetime import timedelta
from pathlib import Path

import pytest

from almanac.gates import harness as gates

pytestmark = [pytest.mark.fault, pytest.mark.temporal, pytest.mark.slow]


def test_fleet_recovery_gate_passes_on_the_production_worker(tmp_path: Path) -> None:
    gate = gates.fleet_recovery(tmp_path, schedules=8, limit=timedelta(seconds=120))
    assert gate.passed, gate.notes
    assert gate.name.startswith("8 schedules recovered")
    assert 0 < gate.figure <= 120
    # The milestones side by side: the seed's (every horizon, every overdue one decided), the
    # first caught-up run, and end to end (the gate's figure), none after the end.
    (note,) = [n for n in gate.notes if "materialized" in n]
    found = re.search(
        r"materialized ([\d.]+) s, first caught-up run SUCCEEDED ([\d.]+) s, "
        r"end to end \(every caught-up run SUCCEEDED\) ([\d.]+) s",
        note,
    )
    assert found, note
    materialized, first_run, end = (float(found[i]) for i in (1, 2, 3))
    assert end == pytest.approx(gate.figure, abs=0.05)
    assert 0 < materialized <= end and 0 < first_run <= end


def test_fleet_recovery_gate_fails_when_nothing_overdue_is_released(tmp_path: Path) -> None:
    gate = gates.fleet_recovery(
        tmp_path,
        schedules=4,
        limit=timedelta(seconds=10),
        worker_module="tests.faults.fleet_mutant_worker",
    )
    assert not gate.passed
    # 4 schedules × 7 overdue days, none decided; the horizons were re-materialized.
    assert any("28 overdue occurrences undecided" in note for note in gate.notes), gate.notes


def test_fleet_recovery_gate_is_opt_in() -> None:
    assert "fleet-recovery" in gates.NAMES
    assert "fleet-recovery" in gates.OPT_IN
