"""Concurrency proofs on PostgreSQL: real parallel connections, started together by a Barrier."""

from __future__ import annotations

import threading
from collections import Counter
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from datetime import timedelta
from functools import partial
from typing import Any, TypeVar

import pytest
from ledger_support import T0, claim_now, make_spec
from sqlalchemy import func, select

from ledger import (
    ClaimRefusal,
    Ledger,
    OccurrenceState,
    SwitchKind,
    disable,
    enable,
    get_gate,
    list_occurrences,
    materialize,
    publish_revision,
    release_due,
    show_occurrence,
    switch_implementation,
)
from ledger.events import EVENTS, OCCURRENCES, SLOTS
from timecontract import occurrences

pytest_plugins = ["ledger_fixtures"]  # ledger, backend and the PostgreSQL cluster

pytestmark = pytest.mark.postgres
S = OccurrenceState
T = TypeVar("T")


@pytest.fixture(params=["postgresql"])
def backend(request: pytest.FixtureRequest) -> str:
    return str(request.param)


def race(*work: Callable[[], T]) -> list[T]:
    """Run each callable on its own thread, released together by a Barrier; return results."""
    barrier = threading.Barrier(len(work))

    def run(fn: Callable[[], T]) -> T:
        barrier.wait()
        return fn()

    with ThreadPoolExecutor(max_workers=len(work)) as pool:
        futures = [pool.submit(run, fn) for fn in work]
        return [f.result() for f in futures]


def _count(ledger: Ledger, table: Any) -> int:
    return int(
        ledger.read(lambda c: c.execute(select(func.count()).select_from(table)).scalar_one())
    )


def test_eight_materializers_same_window_repeated_give_one_identical_ledger(
    ledger: Ledger,
) -> None:
    spec = make_spec(rule="FREQ=HOURLY", foldPolicy="BOTH")
    publish_revision(ledger, spec, T0, by="test")
    snapshots = []
    for round_ in range(4):
        low = T0 + timedelta(hours=12 * round_)
        high = low + timedelta(days=2)
        results = race(*[partial(materialize, ledger, spec, low, high, T0)] * 8)
        created = Counter(i for r in results for i in r.created)
        assert all(n == 1 for n in created.values()), "an occurrence was created twice"
        assert {r.rows for r in results} == {results[0].rows}, "materializers saw different rows"
        snapshots.append(results[0].rows)
    expected = {r.occurrence_id for r in occurrences(spec, T0, T0 + timedelta(days=3, hours=12))}
    stored = list_occurrences(ledger, spec.schedule_id)
    assert {r.occurrence_id for r in stored} == expected
    assert len(stored) == len(expected) == 84
    assert _count(ledger, SLOTS) == 84
    assert _count(ledger, EVENTS) == 84  # one creation event each, no duplicates


def test_old_and_new_revision_racing_the_cutover_leave_one_owner_per_slot(
    ledger: Ledger,
) -> None:

    for trial in range(6):
        schedule_id = f"boundary-{trial}"
        r1 = make_spec(scheduleId=schedule_id, rule="FREQ=HOURLY", foldPolicy="BOTH")
        r2 = make_spec(
            scheduleId=schedule_id,
            revision=2,
            rule="FREQ=HOURLY;BYMINUTE=0",
            foldPolicy="BOTH",
            cutoverAt="2026-11-02T00:00:00Z",
        )
        publish_revision(ledger, r1, T0, by="test")
        low, high = T0, T0 + timedelta(days=2)
        now = T0 + timedelta(minutes=30)
        # A stale r1 materializer races r2's publication and materialization of the same window.
        if trial % 2:
            materialize(ledger, r1, low, high, T0)

        def publish_then_materialize(r2: Any, low: Any, high: Any, now: Any) -> object:
            publish_revision(ledger, r2, now, by="test")
            return materialize(ledger, r2, low, high, now)

        race(
            partial(materialize, ledger, r1, low, high, T0),
            partial(publish_then_materialize, r2, low, high, now),
            partial(materialize, ledger, r1, low, high, T0),
        )
        materialize(ledger, r2, low, high, now)  # converge: r2 may have run before r1's cancel
        rows = list_occurrences(ledger, schedule_id)
        live = {S.PLANNED, S.DUE, S.DISPATCHING, S.RUNNING, S.RETRY_WAIT}
        owners: dict[str, list[tuple[int, str]]] = {}
        for row in rows:
            if row.state in live:
                owners.setdefault(row.logical_slot_id or "", []).append(
                    (row.revision, row.occurrence_id)
                )
        assert len(owners) == 48, schedule_id
        assert all(len(v) == 1 for v in owners.values()), schedule_id
        for row in rows:
            if row.state in live:
                expected = 2 if row.placed_at_utc >= r2.cutover_at else 1
                assert row.revision == expected, row
        slot_owners = ledger.read(
            lambda c, s=schedule_id: c.execute(
                select(SLOTS.c.logical_slot_id, SLOTS.c.owner_occurrence_id).where(
                    SLOTS.c.schedule_id == s
                )
            ).all()
        )
        assert len(slot_owners) == 48 and all(owner for _, owner in slot_owners)


def _minutely(ledger: Ledger, count: int) -> list[str]:
    spec = make_spec(scheduleId="racer", rule="FREQ=MINUTELY", lateness="P1D", timeZone="UTC")
    publish_revision(ledger, spec, T0, by="test")
    result = materialize(ledger, spec, T0, T0 + timedelta(minutes=count), T0)
    assert [r.instant_utc for r in result.rows] == [T0 + timedelta(minutes=i) for i in range(count)]
    return [r.occurrence_id for r in result.rows]


def test_disable_racing_claim_1000_trials_exactly_one_wins(ledger: Ledger) -> None:
    ids = _minutely(ledger, 1000)
    wins = Counter[str]()
    for minute, occurrence_id in enumerate(ids):
        now = T0 + timedelta(minutes=minute)
        enable(ledger, "racer", now, by="test")
        assert release_due(ledger, "racer", now).released == (occurrence_id,)
        gate = get_gate(ledger, "racer")
        assert not gate.disabled
        claimed, disabled = race(
            lambda o=occurrence_id, n=now, g=gate: claim_now(ledger, o, n, gate=g),
            lambda n=now: disable(ledger, "racer", n, by="operator", reason="race"),
        )
        state = show_occurrence(ledger, occurrence_id).occurrence.state
        assert disabled.disabled and disabled.disable_generation == gate.disable_generation + 1
        if claimed.won:
            assert claimed.attempt is not None
            assert claimed.attempt.disable_generation == gate.disable_generation
            assert state is S.DISPATCHING
            wins["claim"] += 1
        else:
            assert claimed.refusal in {
                ClaimRefusal.DISABLED,
                ClaimRefusal.DISABLE_GENERATION_CHANGED,
            }
            assert state is S.CANCELLED
            wins["disable"] += 1
    assert sum(wins.values()) == 1000
    # Never a claim against a disabled gate: every attempt carries an enabled generation (even).
    attempts = ledger.read(
        lambda c: c.execute(
            select(func.count()).select_from(OCCURRENCES).where(OCCURRENCES.c.claim_generation > 0)
        ).scalar_one()
    )
    assert attempts == wins["claim"]
    print(f"disable vs claim: {dict(wins)}")


def test_hundred_concurrent_claims_of_one_occurrence_one_winner(ledger: Ledger) -> None:
    ids = _minutely(ledger, 1)
    release_due(ledger, "racer", T0)
    gate = get_gate(ledger, "racer")
    results = race(
        *[
            lambda i=i: claim_now(ledger, ids[0], T0, gate=gate, worker_identity=f"w{i}")
            for i in range(100)
        ]
    )
    winners = [r for r in results if r.won]
    refusals = [r for r in results if not r.won]
    assert len(winners) == 1 and len(refusals) == 99
    assert {r.refusal for r in refusals} == {ClaimRefusal.NOT_CLAIMABLE}
    assert all(r.detail for r in refusals)
    detail = show_occurrence(ledger, ids[0])
    assert len(detail.attempts) == 1 and detail.occurrence.claim_generation == 1


def test_rollback_racing_claim_no_claim_with_old_epoch_after_rollback(ledger: Ledger) -> None:
    ids = _minutely(ledger, 60)
    outcomes = Counter[str]()
    for minute in range(0, 60, 2):
        now = T0 + timedelta(minutes=minute)
        racing, late = ids[minute], ids[minute + 1]
        release_due(ledger, "racer", now + timedelta(minutes=1))
        gate = get_gate(ledger, "racer")
        new_alias = "green" if gate.implementation_alias != "green" else "blue"
        claimed, rolled = race(
            lambda g=gate, n=now, o=racing: claim_now(
                ledger, o, n, gate=g, implementation_alias=g.implementation_alias
            ),
            lambda n=now, a=new_alias: (
                switch_implementation(
                    ledger,
                    "racer",
                    a,
                    n,
                    kind=SwitchKind.ROLLBACK,
                    by="operator",
                    reason="test",
                    id_formats=frozenset({1}),
                ).gate
            ),
        )
        assert rolled.execution_epoch == gate.execution_epoch + 1
        if claimed.won:
            assert claimed.attempt is not None
            assert claimed.attempt.execution_epoch == gate.execution_epoch
            outcomes["claim first"] += 1
        else:
            assert claimed.refusal in {
                ClaimRefusal.EXECUTION_EPOCH_CHANGED,
                ClaimRefusal.IMPLEMENTATION_ALIAS_MISMATCH,
            }
            outcomes["rollback first"] += 1
        # Once the rollback has committed, the old epoch (and the old alias) never claims again.
        late_claim = claim_now(
            ledger, late, now, gate=gate, implementation_alias=gate.implementation_alias
        )
        assert late_claim.refusal is ClaimRefusal.EXECUTION_EPOCH_CHANGED
        assert claim_now(ledger, late, now, implementation_alias=new_alias).won
    print(f"rollback vs claim: {dict(outcomes)}")
