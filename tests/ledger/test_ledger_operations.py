"""Operation contracts on SQLite and PostgreSQL: publish, materialize, release, gate, outcomes."""

from __future__ import annotations

from datetime import timedelta

import pytest
from ledger_support import T0, claim_now, due_occurrence, make_spec

from ledger import (
    ClaimLost,
    ClaimRefusal,
    IllegalTransition,
    Ledger,
    MissedSchedule,
    OccurrenceNotFound,
    OccurrenceState,
    ReconciliationResolution,
    RevisionNotFound,
    RevisionRejected,
    ScheduleNotFound,
    SwitchKind,
    cancel,
    disable,
    enable,
    failed,
    get_gate,
    list_occurrences,
    mark_running,
    materialize,
    missed_schedules,
    next_due,
    open_cases,
    publish_revision,
    release_due,
    resolve_reconciliation,
    retry_wait,
    show_occurrence,
    succeeded,
    switch_implementation,
    unknown_effect,
)
from ledger import materialization as materialize_module

pytest_plugins = ["ledger_fixtures"]  # ledger, backend and the PostgreSQL cluster

S = OccurrenceState


def test_publish_requires_increasing_revision_and_future_cutover(ledger: Ledger) -> None:
    publish_revision(ledger, make_spec(revision=3), T0, by="t")
    assert not publish_revision(ledger, make_spec(revision=3), T0, by="t").created
    with pytest.raises(RevisionRejected, match="digest"):
        publish_revision(ledger, make_spec(revision=3, maxCatchUp=5), T0, by="t")
    with pytest.raises(RevisionRejected, match="does not increase"):
        publish_revision(
            ledger, make_spec(revision=2, cutoverAt="2026-12-01T00:00:00Z"), T0, by="t"
        )
    with pytest.raises(RevisionRejected, match="before now"):
        publish_revision(
            ledger, make_spec(revision=4, cutoverAt="2026-10-31T00:00:00Z"), T0, by="t"
        )
    assert get_gate(ledger, "daily-ops-summary").active_revision == 3
    with pytest.raises(ScheduleNotFound):
        get_gate(ledger, "nope")


def test_supersede_cancels_old_planned_at_cutover_and_new_revision_takes_slots(
    ledger: Ledger,
) -> None:

    r1 = make_spec()
    publish_revision(ledger, r1, T0, by="t")
    materialize(ledger, r1, T0, T0 + timedelta(days=6), T0)
    # Same rule in r2: the same instants, hence the same logical slots, pass by CAS.
    r2 = make_spec(revision=2, cutoverAt="2026-11-04T07:30:00Z", maxCatchUp=1)
    result = publish_revision(ledger, r2, T0, by="t")
    assert len(result.superseded) == 3  # 11-04, 11-05, 11-06 at 07:30Z (cutover inclusive)
    for occurrence_id in result.superseded:
        row = show_occurrence(ledger, occurrence_id).occurrence
        assert (row.state, row.state_reason) == (S.CANCELLED, "superseded by revision 2")
    made = materialize(ledger, r2, T0, T0 + timedelta(days=6), T0)
    assert [r.revision for r in made.rows] == [2, 2, 2] and made.slot_conflicts == ()
    # A stale r1 materializer never writes at or after r2's cutover.
    stale = materialize(ledger, r1, T0, T0 + timedelta(days=10), T0)
    assert stale.window_to_utc == r2.cutover_at and stale.created == ()
    assert next_due(ledger, "daily-ops-summary") is not None


def test_materialize_never_backfills_before_publication(ledger: Ledger) -> None:
    spec = make_spec()
    publish_revision(ledger, spec, T0 + timedelta(days=2), by="t")
    result = materialize(ledger, spec, T0, T0 + timedelta(days=5), T0 + timedelta(days=2))
    assert result.window_from_utc == T0 + timedelta(days=2)
    assert all(r.placed_at_utc >= T0 + timedelta(days=2) for r in result.rows)
    with pytest.raises(RevisionNotFound):
        materialize(ledger, make_spec(revision=9), T0, T0 + timedelta(days=1), T0)


def test_materialize_resolves_only_the_owned_window_however_wide_the_request(
    ledger: Ledger, monkeypatch: pytest.MonkeyPatch
) -> None:
    # A first materialization asks from 1970: the time contract must only see the owned part,
    # or the cost would grow with the time since the cutover.
    seen: list[tuple[object, object]] = []
    real = materialize_module.occurrences

    def spy(spec, from_utc, to_utc, **kwargs):  # type: ignore[no-untyped-def]
        seen.append((from_utc, to_utc))
        return real(spec, from_utc, to_utc, **kwargs)

    monkeypatch.setattr(materialize_module, "occurrences", spy)
    spec = make_spec()
    published = T0 + timedelta(days=30)
    publish_revision(ledger, spec, published, by="t")
    materialize(ledger, spec, T0 - timedelta(days=20000), published + timedelta(days=1), published)
    assert seen == [(published, published + timedelta(days=1))]


def test_materialize_records_skipped_gaps_as_terminal_facts(ledger: Ledger) -> None:
    spec = make_spec(cutoverAt="2027-03-01T00:00:00Z")
    publish_revision(ledger, spec, T0, by="t")
    start = spec.cutover_at
    rows = materialize(ledger, spec, start, start + timedelta(days=30), start).rows
    skipped = [r for r in rows if r.state is S.SKIPPED_GAP]
    assert len(skipped) == 1 and skipped[0].reason == "GAP_SKIPPED"
    assert skipped[0].instant_utc is None and skipped[0].logical_slot_id is None
    assert skipped[0].gap_at_utc is not None


def test_release_due_applies_the_catch_up_bound_after_downtime(ledger: Ledger) -> None:
    spec = make_spec()  # CATCH_UP_BOUNDED, maxCatchUp 2, lateness 5 minutes
    publish_revision(ledger, spec, T0, by="t")
    materialize(ledger, spec, T0, T0 + timedelta(days=7), T0)
    now = T0 + timedelta(days=6)  # six daily occurrences overdue (07:30Z each day)
    result = release_due(ledger, spec.schedule_id, now)
    assert len(result.released) == 2 and len(result.expired) == 4
    again = release_due(ledger, spec.schedule_id, now)
    assert (again.released, again.expired, again.held, again.skipped) == ((), (), (), ())
    states = [r.state for r in list_occurrences(ledger, spec.schedule_id, T0, now)]
    assert states == [S.MISFIRE_EXPIRED] * 4 + [S.DUE] * 2
    # Each release also returns, from its own transaction, the gate it locked and every DUE
    # occurrence: what a second and a third read would have returned.
    due = tuple(list_occurrences(ledger, spec.schedule_id, states=[S.DUE]))
    assert [o.occurrence_id for o in result.due] == list(result.released)
    assert again.due == due and len(due) == 2
    assert result.gate == again.gate == get_gate(ledger, spec.schedule_id)


def test_missed_schedules_names_enabled_ones_with_a_planned_occurrence_due_by_now(
    ledger: Ledger,
) -> None:
    # Daily 02:30 New York (EDT until 11-01 06:00Z): 10-01 … 10-07 at 06:30Z.
    for schedule_id in ("b-missed", "a-missed", "c-disabled", "d-decided", "e-ahead"):
        spec = make_spec(scheduleId=schedule_id)
        publish_revision(ledger, spec, T0 - timedelta(days=31), by="t")
        # e-ahead's window is after T0: nothing of it has come due.
        start = T0 if schedule_id == "e-ahead" else T0 - timedelta(days=31)
        materialize(ledger, spec, start, start + timedelta(days=7), T0)
    first_missed = T0 - timedelta(days=31) + timedelta(hours=6, minutes=30)
    disable(ledger, "c-disabled", T0, by="op", reason="maintenance")
    release_due(ledger, "d-decided", T0)
    # The look-ahead: the furthest occurrence (10-07 06:30Z) minus its creation time (T0).
    lookahead = first_missed + timedelta(days=6) - T0
    assert missed_schedules(ledger, T0) == [
        MissedSchedule("a-missed", first_missed, lookahead),
        MissedSchedule("b-missed", first_missed, lookahead),
    ]
    # Before the first instant nothing is missed; at the instant it is (instant <= now).
    assert missed_schedules(ledger, first_missed - timedelta(microseconds=1)) == []
    missed = missed_schedules(ledger, first_missed)
    assert [m.schedule_id for m in missed] == ["a-missed", "b-missed"]


def test_disable_cancels_due_keeps_planned_and_blocks_release(ledger: Ledger) -> None:
    occurrence_id = due_occurrence(ledger)
    now = T0 + timedelta(hours=8)
    gate = disable(ledger, "daily-ops-summary", now, by="op", reason="maintenance")
    assert gate.disabled and gate.disable_generation == 1
    assert show_occurrence(ledger, occurrence_id).occurrence.state is S.CANCELLED
    assert claim_now(ledger, occurrence_id, now).refusal is ClaimRefusal.DISABLED
    later = now + timedelta(days=1)
    refused = release_due(ledger, "daily-ops-summary", later)
    assert refused.disabled and refused.gate is not None and refused.gate.disabled
    gate = enable(ledger, "daily-ops-summary", later, by="op")
    assert not gate.disabled and gate.disable_generation == 2
    assert len(release_due(ledger, "daily-ops-summary", later).released) == 1


def test_rollback_flips_alias_and_epoch_together(ledger: Ledger) -> None:
    occurrence_id = due_occurrence(ledger)
    now = T0 + timedelta(hours=8)
    before = get_gate(ledger, "daily-ops-summary")
    after = switch_implementation(
        ledger,
        "daily-ops-summary",
        "v0",
        now,
        kind=SwitchKind.ROLLBACK,
        by="op",
        reason="test",
        id_formats=frozenset({1}),
    ).gate
    assert (after.implementation_alias, after.execution_epoch) == ("v0", before.execution_epoch + 1)
    assert claim_now(ledger, occurrence_id, now, gate=before).refusal in {
        ClaimRefusal.EXECUTION_EPOCH_CHANGED
    }
    assert claim_now(ledger, occurrence_id, now, implementation_alias="v0").won


def test_outcomes_are_fenced_by_claim_generation_and_follow_the_table(ledger: Ledger) -> None:
    occurrence_id = due_occurrence(ledger)
    now = T0 + timedelta(hours=8)
    claim_now(ledger, occurrence_id, now)
    with pytest.raises(ClaimLost):
        mark_running(ledger, occurrence_id, 7, now, by="stale")
    retry_wait(
        ledger,
        occurrence_id,
        1,
        now + timedelta(minutes=1),
        now,
        by="w",
        error_class="E",
        error_message="m",
    )
    with pytest.raises(IllegalTransition) as info:
        succeeded(ledger, occurrence_id, 1, now, by="w")
    assert (info.value.from_state, info.value.to_state) == (S.RETRY_WAIT, S.SUCCEEDED)
    cancel(ledger, occurrence_id, now, by="op", why="confirmed no effect; operator cancel")
    with pytest.raises(OccurrenceNotFound):
        cancel(ledger, "daily-ops-summary.r1.20300101T000000.f0", now, by="op", why="x")


def test_unknown_effect_reconciled_not_applied_becomes_failed(ledger: Ledger) -> None:
    occurrence_id = due_occurrence(ledger)
    now = T0 + timedelta(hours=8)
    claim_now(ledger, occurrence_id, now)
    unknown_effect(ledger, occurrence_id, 1, now, by="w", error_class="Timeout", error_message="")
    with pytest.raises(IllegalTransition):
        failed(ledger, occurrence_id, 1, now, by="w", error_class="X", error_message="")
    assert [c.occurrence_id for c in open_cases(ledger, "daily-ops-summary")] == [occurrence_id]
    for blank in ("", "  \t"):  # who decided is the case's record: never blank, nothing written
        with pytest.raises(ValueError, match="by"):
            resolve_reconciliation(
                ledger, occurrence_id, ReconciliationResolution.NOT_APPLIED, now, by=blank
            )
    assert [c.resolved_by for c in open_cases(ledger)] == [None]
    resolve_reconciliation(
        ledger, occurrence_id, ReconciliationResolution.NOT_APPLIED, now, by="reconciler"
    )
    assert show_occurrence(ledger, occurrence_id).occurrence.state is S.FAILED
    assert open_cases(ledger) == []
