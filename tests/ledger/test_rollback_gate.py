"""The rollback gate (``almanac gates rollback``) passes, and fails on a claim without epoch check.

The mutant is the claim's gate comparison with its ``execution_epoch`` test removed: the ABA
claimers (a view from before v1 → v2 → v1, running v1 again) then win, and the gate must say so.
"""

from __future__ import annotations

import importlib
from pathlib import Path

import pytest

from almanac.gates.harness import rollback

occurrences_module = importlib.import_module("ledger.occurrences")


def test_rollback_gate_passes_with_zero_claims_after_the_epoch_bump(tmp_path: Path) -> None:
    gate = rollback(tmp_path)
    assert gate.passed and gate.figure == 0


def test_rollback_gate_fails_on_a_claim_that_skips_the_epoch_check(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # The claim's gate checks are a tuple (ledger.occurrences.GATE_CHECKS): drop the epoch's.
    without_epoch = tuple(
        check
        for check in occurrences_module.GATE_CHECKS
        if check is not occurrences_module._execution_epoch
    )
    assert len(without_epoch) == len(occurrences_module.GATE_CHECKS) - 1
    monkeypatch.setattr(occurrences_module, "GATE_CHECKS", without_epoch)
    gate = rollback(tmp_path)
    assert not gate.passed and gate.figure > 0
