"""Delete, revive, and gate changes that say what they did (issue 10), on SQLite and PostgreSQL.

Expectations come from the lifecycle rules (``ledger.gate``'s docstring, DESIGN §4): a delete
cancels what was not dispatched and keeps every row; a dispatched effect is never cancelled; only a
higher revision revives the schedule; every gate change leaves a schedule event.
"""

from __future__ import annotations

from datetime import timedelta

import pytest
from ledger_support import T0, claim_now, due_occurrence, make_spec

from ledger import (
    ClaimRefusal,
    Ledger,
    OccurrenceState,
    RevisionRejected,
    ScheduleDeleted,
    ScheduleEventKind,
    change_gate,
    delete_schedule,
    get_gate,
    list_occurrences,
    mark_running,
    materialize,
    publish_revision,
    record_schedule_event,
    release_due,
    schedule_events,
    show_occurrence,
)

pytest_plugins = ["ledger_fixtures"]  # ledger, backend and the PostgreSQL cluster

SID = "daily-ops-summary"


def test_change_gate_reports_generation_and_what_it_cancelled(ledger: Ledger) -> None:
    occurrence_id = due_occurrence(ledger)
    now = T0 + timedelta(hours=8)
    off = change_gate(ledger, SID, now, disabled=True, by="op", reason="maintenance")
    assert (off.changed, off.gate.disable_generation, off.cancelled) == (True, 1, (occurrence_id,))
    again = change_gate(ledger, SID, now, disabled=True, by="op", reason="maintenance")
    assert (again.changed, again.gate.disable_generation, again.cancelled) == (False, 1, ())
    on = change_gate(ledger, SID, now, disabled=False, by="op")
    assert (on.changed, on.gate.disabled, on.gate.disable_generation) == (True, False, 2)
    kinds = [(e.kind, e.by) for e in schedule_events(ledger, SID)]
    assert kinds == [("PUBLISHED", "test"), ("DISABLED", "op"), ("ENABLED", "op")]


def test_delete_cancels_undispatched_keeps_dispatched_and_every_row(ledger: Ledger) -> None:
    spec = make_spec()
    running = due_occurrence(ledger, spec)
    now = T0 + timedelta(hours=8)
    won = claim_now(ledger, running, now)
    assert won.attempt is not None
    mark_running(ledger, running, won.attempt.claim_generation, now, by="w")
    before = list_occurrences(ledger, SID)
    planned = [o.occurrence_id for o in before if o.state is OccurrenceState.PLANNED]
    assert planned

    deleted = delete_schedule(ledger, SID, now, by="op", reason="retired")
    assert deleted.changed and deleted.gate.deleted and deleted.gate.disabled
    assert deleted.gate.disabled_reason == "deleted: retired"
    assert deleted.gate.disable_generation == 1
    assert deleted.cancelled == tuple(sorted(planned))
    after = {o.occurrence_id: o for o in list_occurrences(ledger, SID)}
    assert after.keys() == {o.occurrence_id for o in before}  # nothing removed
    assert after[running].state is OccurrenceState.RUNNING  # a won dispatch is never cancelled
    for oid in planned:
        assert after[oid].state is OccurrenceState.CANCELLED
        assert after[oid].state_reason == "deleted: retired"
    # Nothing new is released or claimed.
    assert release_due(ledger, SID, now + timedelta(days=2)).disabled
    assert not delete_schedule(ledger, SID, now, by="op", reason="again").changed
    with pytest.raises(ScheduleDeleted, match="daily-ops-summary"):
        change_gate(ledger, SID, now, disabled=False, by="op")
    assert schedule_events(ledger, SID)[-1].kind == ScheduleEventKind.DELETED.value


def test_a_deleted_schedule_is_revived_only_by_a_higher_revision(ledger: Ledger) -> None:
    spec = make_spec()
    publish_revision(ledger, spec, T0, by="test")
    materialize(ledger, spec, T0, T0 + timedelta(days=3), T0)
    now = T0 + timedelta(hours=1)
    delete_schedule(ledger, SID, now, by="op", reason="retired")
    for same in (spec, make_spec(rule="FREQ=DAILY;BYHOUR=3")):
        with pytest.raises(RevisionRejected, match="needs a higher revision") as refused:
            publish_revision(ledger, same, now, by="test")
        assert (refused.value.field, refused.value.value) == ("revision", 1)
    newer = make_spec(revision=2, cutoverAt="2026-11-02T00:00:00Z")
    revived = publish_revision(ledger, newer, now, by="test")
    assert revived.created and revived.created_schedule
    gate = get_gate(ledger, SID)
    assert (gate.deleted, gate.disabled, gate.active_revision) == (False, False, 2)
    assert gate.disable_generation == 2
    # The revived revision runs: its first instant is released and claimed.
    rows = materialize(ledger, newer, now, now + timedelta(days=3), now).rows
    first = next(r for r in rows if r.state is OccurrenceState.PLANNED)
    assert first.instant_utc is not None
    assert first.occurrence_id in release_due(ledger, SID, first.instant_utc).released
    assert claim_now(ledger, first.occurrence_id, first.instant_utc).refusal is None
    old = show_occurrence(ledger, f"{SID}.r1.20261101T023000.f0").occurrence
    assert old.state is OccurrenceState.CANCELLED  # the deleted revision's facts stay


def test_a_refused_claim_after_delete_says_disabled(ledger: Ledger) -> None:
    occurrence_id = due_occurrence(ledger)
    now = T0 + timedelta(hours=8)
    stale = get_gate(ledger, SID)
    delete_schedule(ledger, SID, now, by="op", reason="retired")
    refusal = claim_now(ledger, occurrence_id, now, gate=stale).refusal
    assert refusal in {ClaimRefusal.DISABLED, ClaimRefusal.DISABLE_GENERATION_CHANGED}


def test_record_schedule_event_needs_no_gate_and_bounds_detail(ledger: Ledger) -> None:
    record_schedule_event(
        ledger, "never-applied", ScheduleEventKind.REVISION_REJECTED, T0, by="w", detail="x" * 5000
    )
    [event] = schedule_events(ledger, "never-applied")
    assert event.kind == "REVISION_REJECTED" and len(event.detail) == 2000
