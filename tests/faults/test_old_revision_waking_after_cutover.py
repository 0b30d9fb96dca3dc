"""Matrix 10: a worker still holding revision N acts after revision N+1's cutover.

The stale worker is simulated exactly: it keeps revision 1's spec and the gate view it read before
revision 2 was published, and calls the ledger (and the claim activity) with them after the
cutover. Revision 2 moves the daily occurrence from 09:00 to 10:00 from 2027-01-15 on, so every
slot the old revision could still write is distinguishable. Both backends.
"""

from __future__ import annotations

import dataclasses
from datetime import datetime

import pytest
from faultkit import day, gate_view, local_actions, publish, spec_data

import ledger
from activities import io
from activities.clock import FixedClock
from activities.ledger_activities import AlmanacActivities
from ledger import ClaimRefusal, Ledger, OccurrenceState

pytestmark = [pytest.mark.fault]

CUTOVER = day(15, 0)
DIGEST = "sha256:test"


def setup(store: Ledger) -> tuple[object, ledger.GateView]:
    """r1 published and materialized through 01-20; r2 (10:00) published on 01-12, cutover 01-15.

    Returns revision 1's spec and the gate view a worker read before revision 2 existed.
    """
    spec1 = publish(store, spec_data("stale"), day(10, 8))
    ledger.materialize(store, spec1, day(10, 8), day(20, 8), day(10, 8), by="r1-worker")
    stale_gate = ledger.get_gate(store, "stale")
    r2 = spec_data(
        "stale",
        revision=2,
        rule="FREQ=DAILY;BYHOUR=10;BYMINUTE=0",
        cutoverAt="2027-01-15T00:00:00Z",
    )
    publish(store, r2, day(12, 8))
    return spec1, stale_gate


def claim(
    store: Ledger, occurrence_id: str, view: ledger.GateView, now: datetime
) -> ledger.ClaimResult:
    return ledger.claim(
        store,
        occurrence_id,
        view,
        worker_identity="r1-worker",
        implementation_alias=ledger.DEFAULT_IMPLEMENTATION_ALIAS,
        input_digest=DIGEST,
        now_utc=now,
    )


def test_a_stale_materializer_writes_nothing_at_or_after_the_new_cutover(store: Ledger) -> None:
    spec1, _ = setup(store)
    # The stale worker wakes on 01-16 and materializes its old window again, and a later one.
    again = ledger.materialize(store, spec1, day(10, 8), day(30), day(16), by="r1-worker")
    assert again.created == ()
    assert again.window_to_utc <= CUTOVER
    assert all(r.instant_utc is None or r.instant_utc < CUTOVER for r in again.rows)
    r1_after = [
        o
        for o in ledger.list_occurrences(store, "stale")
        if o.revision == 1 and o.instant_utc is not None and o.instant_utc >= CUTOVER
    ]
    # What r1 had materialized past the cutover was superseded, and nothing new was added.
    assert r1_after and all(o.state is OccurrenceState.CANCELLED for o in r1_after)
    assert all("superseded by revision 2" in (o.state_reason or "") for o in r1_after)
    # r2 owns the slots from the cutover on; r1 none of them.
    spec2 = ledger.published_specs(store, "stale")[-1]
    ledger.materialize(store, spec2, day(12, 8), day(30), day(16), by="r2-worker")
    live = [
        o
        for o in ledger.list_occurrences(store, "stale", from_utc=CUTOVER)
        if o.state is OccurrenceState.PLANNED
    ]
    assert live and {o.revision for o in live} == {2}
    assert all(o.instant_utc is not None and o.instant_utc.hour == 10 for o in live)


def test_a_stale_claim_is_refused_at_and_after_the_cutover(store: Ledger) -> None:
    _, stale_gate = setup(store)
    # r1's 01-15 09:00 occurrence lies after the cutover: cancelled at publish, never claimable.
    after = "stale.r1.20270115T090000.f0"
    refused = claim(store, after, stale_gate, day(16))
    assert refused.attempt is None
    fresh = claim(store, after, ledger.get_gate(store, "stale"), day(16))
    assert fresh.attempt is None and fresh.refusal is ClaimRefusal.NOT_CLAIMABLE
    # A claim with the stale gate view is refused even for an instant r1 still owns.
    before = "stale.r1.20270114T090000.f0"
    ledger.release_due(store, "stale", day(14, 9, 1))
    stale = claim(store, before, stale_gate, day(14, 9, 1))
    assert stale.attempt is None and stale.refusal is ClaimRefusal.REVISION_CHANGED
    assert all(not d.attempts for d in (ledger.show_occurrence(store, i) for i in (after, before)))


def test_no_dispatch_after_the_cutover_belongs_to_the_old_revision(store: Ledger) -> None:
    setup(store)
    spec2 = ledger.published_specs(store, "stale")[-1]
    ledger.materialize(store, spec2, day(12, 8), day(20), day(12, 8), by="r2-worker")
    # Run the calendar through 01-19 with a fresh gate each time: whatever was claimed after the
    # cutover is revision 2's.
    ledger.release_due(store, "stale", day(19, 11))
    gate = ledger.get_gate(store, "stale")
    claimed = []
    for o in ledger.list_occurrences(store, "stale", states=[OccurrenceState.DUE]):
        if claim(store, o.occurrence_id, gate, day(19, 11)).attempt is not None:
            claimed.append(o)
    after = [o for o in claimed if o.instant_utc is not None and o.instant_utc >= CUTOVER]
    assert after and {o.revision for o in after} == {2}


def test_publishing_a_revision_does_not_cancel_an_old_occurrence_before_its_cutover(
    store: Ledger,
) -> None:
    setup(store)
    before = "stale.r1.20270114T090000.f0"
    ledger.release_due(store, "stale", day(14, 9, 1))
    # The occurrence workflow of 01-14 09:00 was started with the gate its releaser read on 01-11.
    activities = AlmanacActivities(
        store, local_actions(), identity="worker", clock=FixedClock(day(14, 9, 1))
    )
    released_gate = ledger.get_gate(store, "stale")
    assert released_gate.active_revision == 2
    io_gate = dataclasses.replace(gate_view(store, "stale"), active_revision=1)
    result = activities.claim(io.ClaimOccurrenceInput(before, io_gate, day(14, 9, 1)))
    state = ledger.show_occurrence(store, before).occurrence.state
    # r1 owns [2027-01-01, 2027-01-15): its 01-14 occurrence must still run.
    assert state is not OccurrenceState.CANCELLED, result
