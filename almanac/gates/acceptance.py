"""Drive real claims at every execution acceptance point against stale gate views.

An *acceptance point* is where an occurrence is accepted for execution (``DUE|RETRY_WAIT →
DISPATCHING``): the ledger's claim compare-and-set (:func:`ledger.claim`) and the claim activity
that workflows call (:meth:`AlmanacActivities.claim`). Each scenario publishes a schedule of its
own, brings its occurrence to ``RETRY_WAIT``, reads the gate, changes the gate behind the reader's
back and then claims with what the reader read. A stale claim must be refused, and refused by the
check named for the scenario: a refusal for another reason means that check never ran (another
check happened to cover for it). A control claim with a current view must be accepted, so a claim
that refuses everything does not pass.

``RETRY_WAIT`` because it is the claimable state that disabling and publishing leave as it is
(they cancel ``DUE`` occurrences): with a check missing, such a claim really would be accepted.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from datetime import timedelta
from pathlib import Path

import ledger
from activities import io
from activities.actions import ActionRegistry
from activities.clock import FixedClock
from activities.ledger_activities import AlmanacActivities, gate_payload
from almanac.gates.fixtures import UNUSED_URL, at, due, fresh_ledger, http_spec
from ledger import ClaimRefusal
from timecontract import parse_spec
from timecontract.ids import ID_FORMAT_VERSION

LEDGER_POINT = "ledger.claim"
"""The ledger's claim compare-and-set (:func:`ledger.claim`)."""
ACTIVITY_POINT = "claim activity"
"""The claim activity workflows call (:meth:`AlmanacActivities.claim`)."""
POINTS = (LEDGER_POINT, ACTIVITY_POINT)
DRIVEN_CALLERS = frozenset({"activities/ledger_activities.py:AlmanacActivities._claim"})
"""The callers of ``ledger.claim`` outside ``ledger/`` that this module drives (``ast`` finds
every caller; one not listed here is an acceptance point the gate does not drive, a FAIL)."""
OTHER_ALIAS = "gate-other-implementation"

Change = Callable[[ledger.Ledger, str], None]


@dataclass(frozen=True)
class Scenario:
    """One claim: what changes after the claimer reads the gate, and what must happen."""

    name: str
    change: Change
    expect: ClaimRefusal | None
    """The refusal whose check must refuse the claim; ``None``: a control, to be accepted."""
    read_after_change: bool = False
    """Read the gate after the change (a current view: only a state-side check can refuse)."""
    worker_alias: str | None = None
    """The implementation the claiming worker runs (``None``: the gate's)."""


@dataclass(frozen=True)
class ClaimOutcome:
    """What one driven claim did."""

    point: str
    scenario: str
    expect: ClaimRefusal | None
    accepted: bool
    refusal: str | None
    """The refusal's name (``ClaimRefusal``), or an exception's class name, or ``None``."""

    @property
    def stale(self) -> bool:
        """Whether the claim read a gate that no longer allows it (not a control)."""
        return self.expect is not None

    @property
    def as_expected(self) -> bool:
        """A control accepted, or a stale claim refused by the check named for it."""
        if self.expect is None:
            return self.accepted
        return not self.accepted and self.refusal == self.expect.value

    def line(self) -> str:
        """``point  scenario  accepted|refused REASON``, and what was required if it differs."""
        verdict = "accepted" if self.accepted else f"refused {self.refusal}"
        want = "accepted" if self.expect is None else f"refused {self.expect.value}"
        wrong = "" if self.as_expected else f"  WRONG: must be {want}"
        return f"  {self.point:<14} {self.scenario:<40} {verdict}{wrong}"


def _nothing(store: ledger.Ledger, schedule_id: str) -> None:
    return None


def _publish_r2(cutover_hour: int, cutover_day_offset: int = 0) -> Change:
    def change(store: ledger.Ledger, schedule_id: str) -> None:
        data = http_spec(schedule_id, UNUSED_URL)
        cutover = at(cutover_hour) + timedelta(days=cutover_day_offset)
        data.update(revision=2, cutoverAt=cutover.isoformat().replace("+00:00", "Z"))
        ledger.publish_revision(store, parse_spec(data), at(9), by="gate")

    return change


def _disable_and_enable(store: ledger.Ledger, schedule_id: str) -> None:
    ledger.disable(store, schedule_id, at(9), by="gate", reason="gate: disable generation")
    ledger.enable(store, schedule_id, at(9), by="gate")


def _disable(store: ledger.Ledger, schedule_id: str) -> None:
    ledger.disable(store, schedule_id, at(9), by="gate", reason="gate: disabled")


def _roll_back_to_the_same_alias(store: ledger.Ledger, schedule_id: str) -> None:
    # Out and back to the same alias: only the epoch moves, so only the epoch check can refuse.
    alias = ledger.get_gate(store, schedule_id).implementation_alias
    for to_alias, kind in (
        ("gate-other", ledger.SwitchKind.ROLLOUT),
        (alias, ledger.SwitchKind.ROLLBACK),
    ):
        ledger.switch_implementation(
            store,
            schedule_id,
            to_alias,
            at(9),
            kind=kind,
            by="gate",
            reason="gate: epoch",
            id_formats=frozenset({ID_FORMAT_VERSION}),
        )


CONTROL = Scenario("a current view (control)", _nothing, None)
STALE_REVISION = Scenario(
    "stale revision (r2 from tomorrow)", _publish_r2(0, 1), ClaimRefusal.REVISION_CHANGED
)
TAKEN_OVER = Scenario(
    "r2 took over its instant", _publish_r2(9), ClaimRefusal.NOT_OWNER, read_after_change=True
)
DISABLE_GENERATION = Scenario(
    "bumped disable generation (re-enabled)",
    _disable_and_enable,
    ClaimRefusal.DISABLE_GENERATION_CHANGED,
)
DISABLED = Scenario(
    "disabled (view read while disabled)", _disable, ClaimRefusal.DISABLED, read_after_change=True
)
EPOCH = Scenario(
    "bumped execution epoch (rollback)",
    _roll_back_to_the_same_alias,
    ClaimRefusal.EXECUTION_EPOCH_CHANGED,
)
ALIAS = Scenario(
    "worker runs another implementation",
    _nothing,
    ClaimRefusal.IMPLEMENTATION_ALIAS_MISMATCH,
    worker_alias=OTHER_ALIAS,
)

SCENARIOS: dict[str, tuple[Scenario, ...]] = {
    LEDGER_POINT: (CONTROL, STALE_REVISION, TAKEN_OVER, DISABLE_GENERATION, DISABLED, EPOCH, ALIAS),
    # The activity re-reads the gate once after REVISION_CHANGED (an older revision still owns
    # the instants before a new cutover), so a revision that only *exists* is not a refusal there;
    # one that took the instant over is, read stale: REVISION_CHANGED, re-read, then NOT_OWNER.
    ACTIVITY_POINT: (
        CONTROL,
        Scenario("r2 took over its instant (stale view)", _publish_r2(9), ClaimRefusal.NOT_OWNER),
        DISABLE_GENERATION,
        DISABLED,
        EPOCH,
        ALIAS,
    ),
}
"""The scenarios driven at each acceptance point, control first."""


def _retry_waiting(store: ledger.Ledger, schedule_id: str) -> str:
    """A fresh schedule whose 09:00 occurrence failed once without effect: ``RETRY_WAIT``."""
    occurrence, _ = due(store, http_spec(schedule_id, UNUSED_URL))
    gate = ledger.get_gate(store, schedule_id)
    won = ledger.claim(
        store,
        occurrence.occurrence_id,
        gate,
        worker_identity="gate",
        implementation_alias=gate.implementation_alias,
        input_digest="gate",
        now_utc=at(9),
    )
    if won.attempt is None:
        raise RuntimeError(f"setup claim refused: {won.refusal} {won.detail}")
    generation = won.attempt.claim_generation
    oid = occurrence.occurrence_id
    ledger.mark_running(store, oid, generation, at(9), by="gate")
    ledger.retry_wait(
        store,
        oid,
        generation,
        at(9, 1),
        at(9),
        by="gate",
        error_class="Refused",
        error_message="the downstream refused the call (nothing happened)",
    )
    return oid


def _claim(point: str, store: ledger.Ledger, oid: str, view: ledger.GateView, alias: str) -> str:
    """Claim at ``point``; return ``""`` when accepted, else the refusal's name."""
    if point == LEDGER_POINT:
        result = ledger.claim(
            store,
            oid,
            view,
            worker_identity="gate",
            implementation_alias=alias,
            input_digest="gate",
            now_utc=at(9, 2),
        )
        return "" if result.attempt is not None else str(result.refusal)
    activities = AlmanacActivities(
        store,
        ActionRegistry.default(),
        identity="gate",
        implementation_alias=alias,
        clock=FixedClock(at(9, 2)),
    )
    claimed = activities.claim(io.ClaimOccurrenceInput(oid, gate_payload(view), at(9, 2)))
    return "" if claimed.claimed else (claimed.refusal or "?").partition(":")[0]


def drive(folder: Path) -> list[ClaimOutcome]:
    """Run every scenario at every acceptance point on a fresh SQLite ledger in ``folder``."""
    store = fresh_ledger(folder, "acceptance.sqlite3")
    outcomes = []
    try:
        for p, point in enumerate(POINTS):
            for s, scenario in enumerate(SCENARIOS[point]):
                schedule_id = f"gate-accept-{p}-{s}"
                try:
                    oid = _retry_waiting(store, schedule_id)
                    view = ledger.get_gate(store, schedule_id)
                    scenario.change(store, schedule_id)
                    if scenario.read_after_change:
                        view = ledger.get_gate(store, schedule_id)
                    alias = scenario.worker_alias or view.implementation_alias
                    refusal = _claim(point, store, oid, view, alias)
                except Exception as exc:  # a gate reports a broken claim; it does not crash
                    refusal = f"{type(exc).__name__}: {exc}"
                outcomes.append(
                    ClaimOutcome(
                        point, scenario.name, scenario.expect, not refusal, refusal or None
                    )
                )
    finally:
        store.dispose()
    return outcomes
