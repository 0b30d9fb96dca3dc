"""DESIGN §4 invariants 1–6, each a named test, on SQLite and PostgreSQL."""

from __future__ import annotations

import itertools
from datetime import timedelta

import pytest
from ledger_support import ALIAS, T0, claim_now, due_occurrence, make_spec
from sqlalchemy import func, select, text

from ledger import (
    ClaimRefusal,
    IllegalTransition,
    Ledger,
    LedgerIntegrityError,
    OccurrenceState,
    ReconciliationResolution,
    cancel,
    counts_by_state,
    get_gate,
    human_queue,
    list_occurrences,
    mark_running,
    materialize,
    publish_revision,
    release_due,
    resolve_reconciliation,
    retry_wait,
    show_occurrence,
    succeeded,
    unknown_effect,
)
from ledger.events import ATTEMPTS, EVENTS, OCCURRENCES, SLOTS

pytest_plugins = ["ledger_fixtures"]  # ledger, backend and the PostgreSQL cluster

S = OccurrenceState


def _count(ledger: Ledger, table: object) -> int:
    return ledger.read(lambda c: c.execute(select(func.count()).select_from(table)).scalar_one())  # type: ignore[arg-type]


def test_invariant_1_one_occurrence_per_id_and_one_live_owner_per_slot(ledger: Ledger) -> None:
    spec = make_spec()
    publish_revision(ledger, spec, T0, by="test")
    first = materialize(ledger, spec, T0, T0 + timedelta(days=10), T0)
    again = materialize(ledger, spec, T0, T0 + timedelta(days=10), T0)
    assert len(first.created) == 10 and again.created == ()
    assert _count(ledger, OCCURRENCES) == 10
    # A second revision takes over the slots after its cutover; each slot keeps one live owner.
    cutover = T0 + timedelta(days=5)
    r2 = make_spec(revision=2, cutoverAt="2026-11-06T00:00:00Z")
    assert r2.cutover_at == cutover
    published = publish_revision(ledger, r2, T0 + timedelta(hours=1), by="test")
    assert len(published.superseded) == 5
    materialize(ledger, r2, T0, T0 + timedelta(days=10), T0 + timedelta(hours=1))
    live = {s.value for s in (S.PLANNED, S.DUE, S.DISPATCHING, S.RUNNING, S.RETRY_WAIT)}
    rows = list_occurrences(ledger, spec.schedule_id)
    per_slot: dict[str, list[str]] = {}
    for row in rows:
        if row.state.value in live:
            per_slot.setdefault(row.logical_slot_id or "", []).append(row.occurrence_id)
    assert len(per_slot) == 10 and all(len(v) == 1 for v in per_slot.values())
    owners = ledger.read(
        lambda c: dict(c.execute(select(SLOTS.c.logical_slot_id, SLOTS.c.owner_revision)).all())
    )
    assert sorted(owners.values()) == [1] * 5 + [2] * 5
    # The database itself refuses a second row with the same occurrence ID.
    with pytest.raises(LedgerIntegrityError):
        ledger.write(
            lambda c: c.execute(
                text("INSERT INTO occurrences SELECT * FROM occurrences WHERE occurrence_id = :i"),
                {"i": rows[0].occurrence_id},
            )
        )


def test_invariant_1_at_most_one_occurrence_per_slot_reaches_dispatching(ledger: Ledger) -> None:
    occurrence_id = due_occurrence(ledger)
    now = T0 + timedelta(hours=8)
    assert claim_now(ledger, occurrence_id, now).won
    row = show_occurrence(ledger, occurrence_id).occurrence
    # Forge a second occurrence on the same slot and try to dispatch it: the schema refuses.
    forged = occurrence_id.replace(".f0", ".f1")

    def forge(connection: object) -> None:
        connection.execute(  # type: ignore[attr-defined]
            text(
                "INSERT INTO occurrences (occurrence_id, schedule_id, revision, logical_slot_id, "
                "nominal_local, fold, instant_utc, tzdb_version, reason, state, claim_generation, "
                "created_at_utc, updated_at_utc) SELECT :f, schedule_id, revision, "
                "logical_slot_id, nominal_local, 1, instant_utc, tzdb_version, reason, "
                "'DISPATCHING', 1, created_at_utc, updated_at_utc FROM occurrences "
                "WHERE occurrence_id = :i"
            ),
            {"f": forged, "i": row.occurrence_id},
        )

    with pytest.raises(LedgerIntegrityError):
        ledger.write(forge)


def test_invariant_2_materialization_writes_occurrences_slots_events_in_one_transaction(
    ledger: Ledger,
) -> None:
    spec = make_spec(rule="FREQ=HOURLY", foldPolicy="BOTH")
    publish_revision(ledger, spec, T0, by="test")
    result = materialize(ledger, spec, T0, T0 + timedelta(days=1), T0)
    planned = [r for r in result.rows if r.state is S.PLANNED]
    assert len(planned) == 24
    assert _count(ledger, SLOTS) == 24
    assert _count(ledger, EVENTS) == len(result.rows)
    # All or nothing: a failure inside the transaction leaves no partial rows behind.
    r2 = make_spec(rule="FREQ=HOURLY", revision=1, scheduleId="other-schedule")
    publish_revision(ledger, r2, T0, by="test")
    before = (_count(ledger, OCCURRENCES), _count(ledger, SLOTS), _count(ledger, EVENTS))

    def boom(connection: object) -> None:
        from ledger.materialization import _insert

        records = __import__("timecontract").occurrences(r2, T0, T0 + timedelta(days=1))
        _insert(connection, records, T0, "test")  # type: ignore[arg-type]
        raise RuntimeError("crash after the inserts, before commit")

    with pytest.raises(RuntimeError):
        ledger.write(boom)
    after = (_count(ledger, OCCURRENCES), _count(ledger, SLOTS), _count(ledger, EVENTS))
    assert after == before


def test_invariant_3_claim_checks_revision_disable_generation_epoch_and_alias(
    ledger: Ledger,
) -> None:
    occurrence_id = due_occurrence(ledger)
    now = T0 + timedelta(hours=8)
    gate = get_gate(ledger, "daily-ops-summary")
    stale_generation = type(gate)(**{**_asdict(gate), "disable_generation": 99})
    stale_epoch = type(gate)(**{**_asdict(gate), "execution_epoch": 99})
    stale_revision = type(gate)(**{**_asdict(gate), "active_revision": 99})
    refusals = [
        claim_now(ledger, occurrence_id, now, gate=stale_generation).refusal,
        claim_now(ledger, occurrence_id, now, gate=stale_epoch).refusal,
        claim_now(ledger, occurrence_id, now, gate=stale_revision).refusal,
        claim_now(ledger, occurrence_id, now, implementation_alias="other").refusal,
    ]
    assert refusals == [
        ClaimRefusal.DISABLE_GENERATION_CHANGED,
        ClaimRefusal.EXECUTION_EPOCH_CHANGED,
        ClaimRefusal.REVISION_CHANGED,
        ClaimRefusal.IMPLEMENTATION_ALIAS_MISMATCH,
    ]
    assert show_occurrence(ledger, occurrence_id).occurrence.state is S.DUE
    won = claim_now(ledger, occurrence_id, now, gate=gate)
    assert won.won and won.attempt is not None
    assert (won.attempt.disable_generation, won.attempt.execution_epoch) == (0, 0)
    assert won.attempt.implementation_alias == ALIAS
    again = claim_now(ledger, occurrence_id, now)
    assert again.refusal is ClaimRefusal.NOT_CLAIMABLE


def _asdict(gate: object) -> dict[str, object]:
    return {name: getattr(gate, name) for name in gate.__slots__}  # type: ignore[attr-defined]


def test_invariant_4_a_retry_adds_an_attempt_never_an_occurrence(ledger: Ledger) -> None:
    occurrence_id = due_occurrence(ledger)
    now = T0 + timedelta(hours=8)
    total = _count(ledger, OCCURRENCES)
    first = claim_now(ledger, occurrence_id, now, input_digest="sha256:a").attempt
    assert first is not None
    retry_wait(
        ledger,
        occurrence_id,
        first.claim_generation,
        now + timedelta(minutes=5),
        now + timedelta(seconds=1),
        by="worker-1",
        error_class="ConnectError",
        error_message="refused",
    )
    second = claim_now(
        ledger, occurrence_id, now + timedelta(minutes=5), worker_identity="worker-2"
    ).attempt
    assert second is not None and second.claim_generation == 2
    mark_running(ledger, occurrence_id, 2, now + timedelta(minutes=5), by="worker-2")
    succeeded(ledger, occurrence_id, 2, now + timedelta(minutes=6), by="worker-2")
    detail = show_occurrence(ledger, occurrence_id)
    assert _count(ledger, OCCURRENCES) == total
    assert [a.claim_generation for a in detail.attempts] == [1, 2]
    one, two = detail.attempts
    assert (one.worker_identity, one.outcome, one.error_class) == (
        "worker-1",
        "RETRYABLE_FAILURE",
        "ConnectError",
    )
    assert one.input_digest == "sha256:a" and one.finished_at_utc is not None
    assert (two.worker_identity, two.outcome) == ("worker-2", "SUCCEEDED")
    assert detail.occurrence.state is S.SUCCEEDED
    assert _count(ledger, ATTEMPTS) == 2


def test_invariant_5_dispatched_effect_is_never_cancelled_and_unknown_goes_to_reconciliation(
    ledger: Ledger,
) -> None:

    occurrence_id = due_occurrence(ledger)
    now = T0 + timedelta(hours=8)
    attempt = claim_now(ledger, occurrence_id, now).attempt
    assert attempt is not None
    with pytest.raises(IllegalTransition):
        cancel(ledger, occurrence_id, now, by="test", why="operator")
    mark_running(ledger, occurrence_id, 1, now, by="w")
    with pytest.raises(IllegalTransition):
        cancel(ledger, occurrence_id, now, by="test", why="operator")
    unknown_effect(ledger, occurrence_id, 1, now, by="w", error_class="Timeout", error_message="")
    with pytest.raises(IllegalTransition):
        cancel(ledger, occurrence_id, now, by="test", why="operator")
    detail = show_occurrence(ledger, occurrence_id)
    assert detail.occurrence.state is S.UNKNOWN_EFFECT
    assert detail.case is not None
    assert detail.case.deadline_utc - detail.case.opened_at_utc == timedelta(minutes=30)
    # Not in the human queue before the deadline; in it from the deadline on.
    assert human_queue(ledger, now + timedelta(minutes=29)) == []
    assert [c.occurrence_id for c in human_queue(ledger, now + timedelta(minutes=30))] == [
        occurrence_id
    ]
    resolve_reconciliation(
        ledger, occurrence_id, ReconciliationResolution.HUMAN, now, by="reconciler"
    )
    assert show_occurrence(ledger, occurrence_id).occurrence.state is S.UNKNOWN_EFFECT
    assert [c.occurrence_id for c in human_queue(ledger, now)] == [occurrence_id]
    case = resolve_reconciliation(
        ledger,
        occurrence_id,
        ReconciliationResolution.SUCCEEDED,
        now,
        by="alice",
        note="seen downstream",
    )
    assert case.resolution is ReconciliationResolution.SUCCEEDED and case.resolved_by == "alice"
    assert show_occurrence(ledger, occurrence_id).occurrence.state is S.SUCCEEDED
    assert human_queue(ledger, now + timedelta(hours=1)) == []


def test_invariant_6_every_transition_appends_an_event(ledger: Ledger) -> None:
    occurrence_id = due_occurrence(ledger)
    now = T0 + timedelta(hours=8)
    claim_now(ledger, occurrence_id, now)
    mark_running(ledger, occurrence_id, 1, now, by="w")
    succeeded(ledger, occurrence_id, 1, now, by="w")
    events = show_occurrence(ledger, occurrence_id).events
    assert [(e.from_state, e.to_state) for e in events] == [
        (None, "PLANNED"),
        ("PLANNED", "DUE"),
        ("DUE", "DISPATCHING"),
        ("DISPATCHING", "RUNNING"),
        ("RUNNING", "SUCCEEDED"),
    ]
    assert all(e.at_utc.tzinfo is not None and e.by and e.why for e in events)
    # And across the whole ledger: each occurrence's trail ends in its current state.
    for row in list_occurrences(ledger, "daily-ops-summary"):
        trail = show_occurrence(ledger, row.occurrence_id).events
        assert trail[0].from_state is None
        assert trail[-1].to_state == row.state.value
        assert all(a.to_state == b.from_state for a, b in itertools.pairwise(trail))
    counts = counts_by_state(ledger, "daily-ops-summary")
    assert counts[S.SUCCEEDED] == 1
    release_due(ledger, "daily-ops-summary", now)
