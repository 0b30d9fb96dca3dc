"""The rollback gate (``almanac gates rollback``) passes, and fails on a claim without epoch check.

The mutant is the claim's gate comparison with its ``execution_epoch`` test removed: the ABA
claimers (a view from before v1 → v2 → v1, running v1 again) then win, and the gate must say so.
"""

from __future__ import annotations

import importlib
from pathlib import Path

import pytest

from devtools.gates import rollback
from ledger import ClaimRefusal, ClaimResult, GateView

occurrences_module = importlib.import_module("ledger.occurrences")


def test_rollback_gate_passes_with_zero_claims_after_the_epoch_bump(tmp_path: Path) -> None:
    gate = rollback(tmp_path)
    assert gate.passed and gate.figure == 0


def test_rollback_gate_fails_on_a_claim_that_skips_the_epoch_check(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    original = occurrences_module._gate_refusal

    def without_epoch(gate: GateView, view: GateView, alias: str) -> ClaimResult | None:
        refusal = original(gate, view, alias)
        if refusal is not None and refusal.refusal is ClaimRefusal.EXECUTION_EPOCH_CHANGED:
            if gate.implementation_alias != alias:  # keep the alias check the mutant still has
                return ClaimResult(refusal=ClaimRefusal.IMPLEMENTATION_ALIAS_MISMATCH, detail="")
            return None if gate.active_revision == view.active_revision else refusal
        return refusal

    monkeypatch.setattr(occurrences_module, "_gate_refusal", without_epoch)
    gate = rollback(tmp_path)
    assert not gate.passed and gate.figure > 0
