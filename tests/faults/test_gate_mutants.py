"""Every acceptance gate fails when the code it checks is broken (mutation tests).

A gate that still passes with its checked code removed measures nothing. Each test below runs the
real gate (``almanac.gates.harness``, the one ``almanac gates`` prints) twice: unmutated, where it
must PASS, and with one mutant patched in, where it must FAIL. Slow gates run on a smaller scale
here (fewer boundary times, a shorter outage); the logic they run is the same.

The acceptance-point gate gets one mutant per claim check: ``ledger.occurrences.GATE_CHECKS``
minus that check, or ``OWNERSHIP_CHECK`` disabled. Each must let exactly the stale claim named for
that check through, and the gate must say so.
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable
from datetime import datetime, timedelta
from pathlib import Path
from typing import Any

import pytest

import ledger
import ledger.materialization
import ledger.occurrences
import timecontract.ids
import timecontract.resolve
from activities import io
from activities import ledger_activities as la
from activities.actions.base import ActionContext
from almanac.gates import acceptance
from almanac.gates import harness as gates
from timecontract import MisfirePlan, MisfirePolicy, Overdue

pytestmark = [pytest.mark.fault]

MATERIALIZE_MODULE = ledger.materialization
"""The module of ``ledger.materialize`` (the function the package exports)."""


def _accepted_scenarios(gate: gates.Gate) -> list[str]:
    return [note.strip() for note in gate.notes if "accepted  WRONG" in note]


# -- gate 7: acceptance points -------------------------------------------------------------------
CHECK_SCENARIOS = {
    "_disabled": acceptance.DISABLED.name,
    "_disable_generation": acceptance.DISABLE_GENERATION.name,
    "_execution_epoch": acceptance.EPOCH.name,
    "_implementation_alias": acceptance.ALIAS.name,
    "_active_revision": acceptance.STALE_REVISION.name,
}
"""Each gate check of the claim, and the scenario that only it refuses."""


def test_every_gate_check_of_the_claim_has_a_mutant_here() -> None:
    assert {check.__name__ for check in ledger.occurrences.GATE_CHECKS} == set(CHECK_SCENARIOS)


def test_acceptance_point_gate_passes_on_the_real_claim(tmp_path: Path) -> None:
    gate = gates.acceptance_points(tmp_path)
    assert gate.passed, "\n".join(gate.notes)
    assert gate.figure == 100.0


@pytest.mark.parametrize("dropped", sorted(CHECK_SCENARIOS))
def test_acceptance_point_gate_fails_when_the_claim_skips_a_check(
    dropped: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    mutant = tuple(c for c in ledger.occurrences.GATE_CHECKS if c.__name__ != dropped)
    monkeypatch.setattr(ledger.occurrences, "GATE_CHECKS", mutant)
    gate = gates.acceptance_points(tmp_path)
    assert not gate.passed
    assert gate.line().endswith("FAIL")
    accepted = _accepted_scenarios(gate)
    assert accepted, "\n".join(gate.notes)
    assert all(CHECK_SCENARIOS[dropped] in line for line in accepted), accepted
    assert any(line.startswith(acceptance.LEDGER_POINT) for line in accepted)


def test_acceptance_point_gate_fails_when_the_claim_skips_the_cutover_check(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(ledger.occurrences, "OWNERSHIP_CHECK", lambda connection, occurrence: None)
    gate = gates.acceptance_points(tmp_path)
    assert not gate.passed
    accepted = _accepted_scenarios(gate)
    assert len(accepted) == 2, accepted  # at both points
    assert all("took over its instant" in line for line in accepted)


def test_acceptance_point_gate_fails_when_the_activity_claims_with_the_current_gate(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # The activity ignoring the view its releaser read: every stale view becomes a current one.
    stores: list[ledger.Ledger] = []
    real = acceptance.fresh_ledger

    def recording(folder: Path, name: str) -> ledger.Ledger:
        stores.append(real(folder, name))
        return stores[-1]

    def current_gate(snapshot: io.GateSnapshot) -> ledger.GateView:
        return ledger.get_gate(stores[-1], snapshot.schedule_id)

    monkeypatch.setattr(acceptance, "fresh_ledger", recording)
    monkeypatch.setattr(la, "_ledger_gate", current_gate)
    gate = gates.acceptance_points(tmp_path)
    assert not gate.passed
    accepted = _accepted_scenarios(gate)
    assert all(line.startswith(acceptance.ACTIVITY_POINT) for line in accepted), accepted
    assert any(acceptance.DISABLE_GENERATION.name in line for line in accepted)
    assert any(acceptance.EPOCH.name in line for line in accepted)


def test_acceptance_point_gate_fails_when_the_claim_refuses_retries(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # Zero stale acceptances is not enough: a claim that never takes RETRY_WAIT refuses every
    # stale claim by its own gate check (those run first), but also the controls.
    monkeypatch.setattr(ledger.occurrences, "_CLAIMABLE", frozenset({ledger.OccurrenceState.DUE}))
    gate = gates.acceptance_points(tmp_path)
    assert not gate.passed
    notes = "\n".join(gate.notes)
    assert "stale claims accepted: 0 (limit 0)" in notes
    assert "control claims accepted: 0 of 2" in notes


# -- gate 5: deliveries ------------------------------------------------------------------------
def test_deliveries_gate_passes_with_one_effect(tmp_path: Path) -> None:
    gate = gates.deliveries(tmp_path)
    assert gate.passed, gate.notes
    assert gate.figure == 1


def test_deliveries_gate_fails_when_each_attempt_sends_its_own_key(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    per_attempt = property(lambda ctx: f"{ctx.occurrence_id}~{ctx.attempt}")
    monkeypatch.setattr(ActionContext, "idempotency_key", per_attempt)
    gate = gates.deliveries(tmp_path)
    assert not gate.passed
    assert gate.figure >= 2


def test_deliveries_gate_fails_when_nothing_is_delivered(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    async def nothing(self: la.AlmanacActivities, params: io.ExecuteAttemptInput) -> Any:
        return io.ExecuteAttemptResult("SUCCEEDED", detail="mutant: never called the downstream")

    monkeypatch.setattr(la.AlmanacActivities, "execute_attempt", nothing)
    gate = gates.deliveries(tmp_path)
    assert not gate.passed
    assert gate.figure == 0


# -- gate 4: catch-up bound --------------------------------------------------------------------
def _plan_with(
    monkeypatch: pytest.MonkeyPatch,
    change: Callable[[MisfirePolicy, int], tuple[MisfirePolicy, int]],
) -> None:
    real = MATERIALIZE_MODULE.plan_misfires

    def plan(
        overdue: list[Overdue],
        now_utc: datetime,
        lateness: timedelta,
        policy: MisfirePolicy,
        max_catch_up: int,
    ) -> MisfirePlan:
        return real(overdue, now_utc, lateness, *change(policy, max_catch_up))

    monkeypatch.setattr(MATERIALIZE_MODULE, "plan_misfires", plan)


def test_catch_up_gate_passes_on_the_real_release(tmp_path: Path) -> None:
    gate = gates.catch_up(tmp_path)
    assert gate.passed, gate.notes


def test_catch_up_gate_fails_when_the_bound_is_ignored(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    _plan_with(monkeypatch, lambda policy, bound: (MisfirePolicy.CATCH_UP_BOUNDED, 1000))
    gate = gates.catch_up(tmp_path)
    assert not gate.passed
    assert gate.figure > 0


def test_catch_up_gate_fails_when_nothing_is_caught_up(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    _plan_with(monkeypatch, lambda policy, bound: (MisfirePolicy.SKIP, bound))
    gate = gates.catch_up(tmp_path)
    assert not gate.passed
    assert gate.figure == 0  # nothing beyond the bound; the shortfall fails it
    assert any("missed released" in note for note in gate.notes)


# -- gate 3: recovery --------------------------------------------------------------------------
SHORT = {"downtime": timedelta(days=1)}


def test_recovery_gate_passes_when_the_horizon_is_complete(tmp_path: Path) -> None:
    gate = gates.recovery(tmp_path, **SHORT)
    assert gate.passed, gate.notes


def test_recovery_gate_fails_when_materialization_stops_short(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    real = ledger.materialize

    def short(
        store: Any, spec: Any, from_utc: datetime, to_utc: datetime, *a: Any, **k: Any
    ) -> Any:
        return real(store, spec, from_utc, to_utc - timedelta(hours=1), *a, **k)

    monkeypatch.setattr(ledger, "materialize", short)
    gate = gates.recovery(tmp_path, **SHORT)
    assert not gate.passed
    assert any("the calendar has" in note for note in gate.notes)


def test_recovery_gate_fails_with_a_13_day_horizon(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(la, "DEFAULT_HORIZON", timedelta(days=13))
    gate = gates.recovery(tmp_path, **SHORT)
    assert not gate.passed
    assert any("the calendar has" in note for note in gate.notes), gate.notes
    assert any("default horizon" in note for note in gate.notes), gate.notes


def test_recovery_gate_fails_when_the_overdue_set_is_not_released(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(ledger, "release_due", lambda *a, **k: None)
    gate = gates.recovery(tmp_path, **SHORT)
    assert not gate.passed
    assert any("still PLANNED" in note for note in gate.notes)


# -- gate 2: duplicates ------------------------------------------------------------------------
def test_duplicates_gate_passes_on_the_real_ids() -> None:
    assert gates.duplicates(total=3000).passed


def test_duplicates_gate_fails_with_an_id_that_forgets_the_fold(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    # Records near a transition (folds among them) take their IDs from IdFormatter.occurrence.
    real = timecontract.ids.IdFormatter.occurrence

    def no_fold(self: Any, nominal_local: datetime, fold: int) -> Any:
        return real(self, nominal_local, 0)

    monkeypatch.setattr(timecontract.ids.IdFormatter, "occurrence", no_fold)
    gate = gates.duplicates(total=3000)
    assert not gate.passed
    assert gate.figure > 0


# -- gate 2b: ID determinism -------------------------------------------------------------------
WALL_CLOCK_MUTANTS = {
    "formatter": """
import datetime
import timecontract.ids as ids
real = ids.IdFormatter.occurrence
def clocked(self, nominal_local, fold):
    now = datetime.datetime.now()
    return real(self, nominal_local.replace(microsecond=0, second=now.second), fold)
ids.IdFormatter.occurrence = clocked
""",
    "fast-path": """
import datetime
import timecontract.resolve as resolve
class Clocked(dict):
    def __missing__(self, year):
        return f"{year + datetime.datetime.now().second % 2:04d}"
    def __getitem__(self, year):
        return self.__missing__(year)
resolve.LOCAL_YEARS = Clocked()
""",
    "slot": """
import time
import timecontract.ids as ids
real = ids.IdFormatter.slot
def clocked(self, instant):
    return real(self, instant.replace(second=int(time.time()) % 60))
ids.IdFormatter.slot = clocked
""",
    "interval": """
import datetime
import timecontract.resolve as resolve
real = resolve.interval_occurrence_id
resolve.interval_occurrence_id = lambda sid, rev, instant: real(
    sid, rev, instant.replace(second=datetime.datetime.now().second)
)
""",
    "manual": """
import datetime
import timecontract.ids as ids
real = ids.manual_occurrence_id
ids.manual_occurrence_id = lambda sid, req: real(sid, f"{req}-{datetime.date.today():%d}")
""",
    "builders": """
import datetime
import timecontract.ids as ids
real = ids.occurrence_id
ids.occurrence_id = lambda sid, rev, nominal, fold: real(
    sid, rev, nominal.replace(minute=datetime.date.today().day), fold
)
""",
}
"""IDs read from the wall clock, one per ID code path (each a module the corpus process loads).

Each keeps the documented format of the ID it changes where it can, so only the comparison
across processes and time can catch it (the date mutants: across the two processes' zones)."""


def test_id_determinism_gate_passes_on_the_real_ids(tmp_path: Path) -> None:
    gate = gates.id_determinism(tmp_path)
    assert gate.passed, gate.notes
    assert gate.figure == 0


@pytest.mark.parametrize("path", sorted(WALL_CLOCK_MUTANTS))
def test_id_determinism_gate_fails_on_ids_from_the_wall_clock(path: str, tmp_path: Path) -> None:
    module = f"wall_clock_ids_{path.replace('-', '_')}"
    (tmp_path / f"{module}.py").write_text(WALL_CLOCK_MUTANTS[path], encoding="utf-8")
    gate = gates.id_determinism(tmp_path, setup=module, setup_path=tmp_path)
    assert not gate.passed, path
    assert gate.figure > 0
    assert gate.line().endswith("FAIL")


# -- a check that crashes ----------------------------------------------------------------------
def test_a_crashing_check_is_one_fail_line_and_the_others_still_run(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    def crash(folder: Path) -> gates.Gate:
        raise KeyError("mutant\nwith a second line \x1b[31m")

    monkeypatch.setitem(gates.GATES, "duplicates", crash)
    assert gates.main(["duplicates", "golden"]) == 1
    lines = capsys.readouterr().out.splitlines()
    assert lines[0].startswith("golden time-zone agreement") and lines[0].endswith("PASS")
    assert lines[1].startswith("duplicates (the check crashed)")
    assert "FAIL  KeyError: " in lines[1] and "\x1b" not in lines[1]
    assert not any("Traceback" in line for line in lines)


# -- gate 1: golden cases ----------------------------------------------------------------------
def test_golden_gate_fails_when_zones_are_attached_without_checking(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    # dateutil's behaviour (STYLE): the zone attached to every wall time, no gap or fold handling.
    resolution = timecontract.resolve.Resolution
    unambiguous = timecontract.resolve.Reason.UNAMBIGUOUS

    def attach(nominal_local: datetime, zone: Any, gap_policy: Any, fold_policy: Any) -> Any:
        offset = nominal_local.replace(tzinfo=zone).utcoffset()
        instant = timecontract.resolve._utc(nominal_local, offset)
        return [resolution(0, instant, None, offset, unambiguous)]

    monkeypatch.setattr(timecontract.resolve, "resolve_local", attach)
    gate = gates.golden()
    assert not gate.passed
    assert 0 < gate.figure < 100


# -- gate 6: unknown effect (the workflow on the time-skipping server) -------------------------
@pytest.mark.temporal
def test_unknown_effect_gate_fails_when_nothing_reaches_the_human_queue(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(ledger, "resolve_reconciliation", lambda *a, **k: None)
    gate = gates.unknown_effect(tmp_path)
    assert not gate.passed
    assert gate.figure == float("inf")


@pytest.mark.temporal
def test_unknown_effect_gate_fails_with_a_31_minute_reconciliation_deadline(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(ledger.occurrences, "RECONCILIATION_DEADLINE", timedelta(minutes=31))
    gate = gates.unknown_effect(tmp_path)
    assert not gate.passed
    assert gate.figure == 31
    assert any("recorded deadline is 31 min" in note for note in gate.notes), gate.notes


@pytest.mark.temporal
def test_unknown_effect_gate_fails_on_a_blind_resend(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # An unconfirmed call recorded as a failure without effect: the workflow sends it again.
    real = la.AlmanacActivities._record_unknown

    async def resend(
        self: la.AlmanacActivities,
        occurrence: ledger.OccurrenceView,
        generation: int,
        can_query: bool,
        detail: str,
    ) -> io.ExecuteAttemptResult:
        if generation >= 3:  # then give up as the real code does, so the workflow ends
            return await real(self, occurrence, generation, can_query, detail)
        now = self._clock.now()
        await asyncio.to_thread(
            ledger.retry_wait,
            self._ledger,
            occurrence.occurrence_id,
            generation,
            now + timedelta(seconds=1),
            now,
            by="mutant",
            error_class="Timeout",
            error_message=detail,
        )
        return io.ExecuteAttemptResult("RETRY_WAIT", retry_after_seconds=1.0)

    monkeypatch.setattr(la.AlmanacActivities, "_record_unknown", resend)
    gate = gates.unknown_effect(tmp_path)
    assert not gate.passed
    assert any("a resend?" in note for note in gate.notes), gate.notes
