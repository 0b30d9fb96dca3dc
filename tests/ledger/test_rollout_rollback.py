"""Rollout and rollback of a schedule's implementation alias, with requeue, on both backends.

Issue 12 / DESIGN §5: one transaction per gate flips the alias and bumps the execution epoch; from
that commit no claim that read the old epoch or runs another alias succeeds; an attempt whose
dispatch already won finishes; SUCCEEDED is never touched; only occurrences not started (DUE,
claim generation 0) whose ID format the target alias recognises are requeued, with an event naming
the switch; the rest are listed with why.
"""

from __future__ import annotations

import hashlib
from datetime import timedelta

import pytest
from ledger_support import T0, claim_now, make_spec
from sqlalchemy import text

from ledger import (
    ClaimRefusal,
    ImplementationNotRegistered,
    Ledger,
    OccurrenceState,
    SwitchKind,
    canary_bucket,
    get_gate,
    in_canary,
    mark_running,
    materialize,
    publish_revision,
    recognised_id_formats,
    register_implementation,
    release_due,
    retry_wait,
    show_occurrence,
    succeeded,
    switch_implementation,
)

pytest_plugins = ["ledger_fixtures"]

S = OccurrenceState
SCHEDULE = "daily-ops-summary"
V1 = frozenset({1})


def _five_due(ledger: Ledger) -> list[str]:
    """Publish on alias v1, materialize 8 days, release the first five (all DUE)."""
    spec = make_spec(maxCatchUp=10, lateness="P10D")
    publish_revision(ledger, spec, T0, by="t", implementation_alias="v1")
    rows = materialize(ledger, spec, T0, T0 + timedelta(days=8), T0).rows
    planned = [r for r in rows if r.state is S.PLANNED]
    fifth = planned[4].instant_utc
    assert fifth is not None
    released = release_due(ledger, SCHEDULE, fifth)
    assert len(released.released) == 5
    return [r.occurrence_id for r in planned]


def _events(ledger: Ledger, occurrence_id: str) -> list[tuple[str | None, str, str]]:
    return [
        (e.from_state, e.to_state, e.why) for e in show_occurrence(ledger, occurrence_id).events
    ]


def test_rollback_flips_alias_and_epoch_requeues_only_not_started_and_lists_the_rest(
    ledger: Ledger,
) -> None:
    ids = _five_due(ledger)
    now = T0 + timedelta(days=6)
    rolled_out = switch_implementation(
        ledger,
        SCHEDULE,
        "v2",
        now,
        kind=SwitchKind.ROLLOUT,
        by="op",
        reason="canary",
        id_formats=V1,
    )
    assert rolled_out.changed and rolled_out.requeued == tuple(sorted(ids[:5]))
    o1, o2, o3, o4, o5, o6 = ids[:6]
    v2 = {"implementation_alias": "v2"}
    # o1 succeeds, o2 is running (dispatch won), o3 failed without effect, o4 and o5 stay DUE.
    for oid in (o1, o2, o3):
        assert claim_now(ledger, oid, now, **v2).won
        mark_running(ledger, oid, 1, now, by="w2")
    succeeded(ledger, o1, 1, now, by="w2")
    retry_wait(
        ledger, o3, 1, now + timedelta(minutes=5), now, by="w2", error_class="E", error_message="x"
    )
    # o5 was written in an ID format v1 does not know (as a v2 materializer would write it).
    ledger.write(
        lambda c: c.execute(
            text("UPDATE occurrences SET id_format = 2 WHERE occurrence_id = :i"), {"i": o5}
        )
    )
    stale_v2 = get_gate(ledger, SCHEDULE)
    o1_before = show_occurrence(ledger, o1)

    back = switch_implementation(
        ledger,
        SCHEDULE,
        "v1",
        now,
        kind=SwitchKind.ROLLBACK,
        by="op",
        reason="v2 bug",
        id_formats=V1,
    )

    assert back.changed and (back.from_alias, back.to_alias) == ("v2", "v1")
    assert (back.epoch_before, back.epoch_after) == (1, 2)
    assert back.gate.implementation_alias == "v1" and back.gate.execution_epoch == 2
    assert back.requeued == (o4,)
    listed = {n.occurrence_id: n for n in back.not_requeued}
    assert set(listed) == {o2, o3, o5}
    assert listed[o2].state is S.RUNNING and "dispatch already won" in listed[o2].why
    assert listed[o3].state is S.RETRY_WAIT and "started" in listed[o3].why
    assert listed[o5].state is S.CANCELLED and "ID format" in listed[o5].why
    assert show_occurrence(ledger, o5).occurrence.state is S.CANCELLED
    assert show_occurrence(ledger, o6).occurrence.state is S.PLANNED
    # SUCCEEDED untouched: same row, same events, nothing re-sent.
    assert show_occurrence(ledger, o1) == o1_before
    # The requeue event names the rollback.
    last = _events(ledger, o4)[-1]
    assert last[:2] == ("DUE", "DUE")
    assert f"rollback #{back.switch_id}" in last[2] and "v2 bug" in last[2]
    # From the commit: the old epoch's view and the other alias are refused; v1 claims.
    assert claim_now(ledger, o4, now, gate=stale_v2, **v2).refusal is (
        ClaimRefusal.EXECUTION_EPOCH_CHANGED
    )
    assert claim_now(ledger, o4, now, **v2).refusal is ClaimRefusal.IMPLEMENTATION_ALIAS_MISMATCH
    assert claim_now(ledger, o4, now, implementation_alias="v1").won
    # The attempt that had won dispatch is not cancelled: it finishes.
    succeeded(ledger, o2, 1, now, by="w2")
    assert show_occurrence(ledger, o2).occurrence.state is S.SUCCEEDED


def test_switching_to_the_alias_the_gate_shows_changes_nothing(ledger: Ledger) -> None:
    _five_due(ledger)
    now = T0 + timedelta(days=6)
    first = switch_implementation(
        ledger, SCHEDULE, "v2", now, kind=SwitchKind.ROLLOUT, by="op", reason="r", id_formats=V1
    )
    again = switch_implementation(
        ledger, SCHEDULE, "v2", now, kind=SwitchKind.ROLLOUT, by="op", reason="r", id_formats=V1
    )
    assert first.changed and not again.changed
    assert again.requeued == () and again.epoch_after == first.epoch_after == 1


def test_epoch_refuses_a_view_from_before_a_rollout_and_rollback_same_alias(
    ledger: Ledger,
) -> None:
    """ABA: v1 → v2 → v1. A v1 claimer holding the first view runs the right alias again; only the
    epoch tells its view is stale."""
    ids = _five_due(ledger)
    now = T0 + timedelta(days=6)
    stale = get_gate(ledger, SCHEDULE)
    for alias, kind in (("v2", SwitchKind.ROLLOUT), ("v1", SwitchKind.ROLLBACK)):
        switch_implementation(
            ledger, SCHEDULE, alias, now, kind=kind, by="op", reason="aba", id_formats=V1
        )
    refused = claim_now(ledger, ids[0], now, gate=stale, implementation_alias="v1")
    assert refused.refusal is ClaimRefusal.EXECUTION_EPOCH_CHANGED


def test_switch_needs_the_target_alias_registered_formats(ledger: Ledger) -> None:
    _five_due(ledger)
    now = T0 + timedelta(days=6)
    with pytest.raises(ImplementationNotRegistered, match="v9"):
        switch_implementation(
            ledger, SCHEDULE, "v9", now, kind=SwitchKind.ROLLOUT, by="o", reason="r"
        )
    assert recognised_id_formats(ledger, "v9") is None
    assert register_implementation(ledger, "v9", [1], now, by="w") == {1}
    assert register_implementation(ledger, "v9", [2], now, by="w") == {1, 2}
    result = switch_implementation(
        ledger, SCHEDULE, "v9", now, kind=SwitchKind.ROLLOUT, by="o", reason="r"
    )
    assert result.changed and len(result.requeued) == 5


def test_canary_bucket_is_sha256_prefix_mod_10000_and_percent_only_grows() -> None:
    # Independent of ledger.rollout: the first 16 hex digits of SHA-256, as an integer, mod 10000.
    for schedule_id in ("daily-ops-summary", "s-00", "s-39", "a"):
        expected = int(hashlib.sha256(schedule_id.encode()).hexdigest()[:16], 16) % 10000
        assert canary_bucket(schedule_id) == expected
    ids = [f"s-{n:02d}" for n in range(200)]
    chosen = {p: {i for i in ids if in_canary(i, p)} for p in (0, 5, 50, 100)}
    assert chosen[0] == set() and chosen[100] == set(ids)
    assert chosen[5] <= chosen[50] <= chosen[100]
    with pytest.raises(ValueError, match="percent"):
        in_canary("x", 101)
