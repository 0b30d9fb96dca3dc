"""The rollback gate: claims accepted after an execution-epoch bump (must be 0).

Drives real claims (``ledger.claim``) against a fresh SQLite ledger, through twenty alternating
rollouts and rollbacks (``ledger.switch_implementation``) of one schedule between aliases ``v1``
and ``v2``:

- **stale views**: after each switch commits, every gate view read before it (all of them carry
  an old epoch) is used to claim a DUE occurrence, once as a ``v1`` worker and once as a ``v2``
  worker. Half of those claimers run the alias the gate shows again (v1 → v2 → v1: only the epoch
  tells their view is stale), so a claim path that skipped the epoch check would be counted here;
- **racing**: four claimers holding the pre-switch view start together (a barrier) with the
  switch; a claim that commits after the switch's commit (its event row comes after the switch's
  requeue events, SQLite serializes writers) yet carries the old epoch is counted.

Returns ``(accepted_after_bump, claims_tried)``.
"""

from __future__ import annotations

import threading
from datetime import UTC, datetime, timedelta
from pathlib import Path

from sqlalchemy import select

import ledger
from ledger.events import ATTEMPTS, EVENTS
from ledger.migrate import upgrade
from timecontract import parse_spec

SCHEDULE = "gate-rollback"
START = datetime(2027, 1, 10, 9, tzinfo=UTC)
ROUNDS = 20
RACERS = 4


def _spec() -> dict[str, object]:
    return {
        "schema": "scheduleSpec.v1",
        "scheduleId": SCHEDULE,
        "revision": 1,
        "timeZone": "UTC",
        "tzdbVersion": "2026a",
        "rule": "FREQ=MINUTELY",
        "gapPolicy": "SKIP",
        "foldPolicy": "FIRST_ONLY",
        "misfirePolicy": "CATCH_UP_BOUNDED",
        "maxCatchUp": 1000,
        "lateness": "P1D",
        "cutoverAt": "2027-01-10T00:00:00Z",
        "action": {"name": "noop"},
    }


def _due(store: ledger.Ledger) -> list[str]:
    rows = ledger.list_occurrences(store, SCHEDULE, states=[ledger.OccurrenceState.DUE])
    return [r.occurrence_id for r in rows]


def _claim(store: ledger.Ledger, oid: str, view: ledger.GateView, alias: str) -> bool:
    result = ledger.claim(
        store,
        oid,
        view,
        worker_identity=f"gate-{alias}",
        implementation_alias=alias,
        input_digest="sha256:gate",
        now_utc=START,
    )
    return result.won


def claims_after_epoch_bump(folder: Path) -> tuple[int, int]:
    """Run the gate on a fresh ledger in ``folder``; return (accepted after a bump, tried)."""
    url = f"sqlite:///{folder / 'rollback.sqlite3'}"
    upgrade(url)
    store = ledger.Ledger.from_url(url)
    try:
        spec = parse_spec(_spec())
        ledger.publish_revision(store, spec, START, by="gate", implementation_alias="v1")
        ledger.materialize(store, spec, START, START + timedelta(hours=6), START, by="gate")
        ledger.release_due(store, SCHEDULE, START + timedelta(hours=5), by="gate")
        views: list[ledger.GateView] = []
        accepted = tried = 0
        for round_ in range(ROUNDS):
            before = ledger.get_gate(store, SCHEDULE)
            views.append(before)
            target = "v2" if before.implementation_alias == "v1" else "v1"
            kind = ledger.SwitchKind.ROLLOUT if target == "v2" else ledger.SwitchKind.ROLLBACK
            switched = _race(store, before, target, kind, round_)
            accepted += switched[0]
            tried += switched[1]
            for view in views:  # every one of them read an older epoch
                for alias in ("v1", "v2"):
                    due = _due(store)
                    tried += 1
                    accepted += _claim(store, due[0], view, alias)
        return accepted, tried
    finally:
        store.dispose()


def _race(
    store: ledger.Ledger,
    view: ledger.GateView,
    target: str,
    kind: ledger.SwitchKind,
    round_: int,
) -> tuple[int, int]:
    """Claims with ``view`` racing one switch; count those committed after it with the old epoch."""
    due = _due(store)[:RACERS]
    barrier = threading.Barrier(len(due) + 1)
    won: list[str] = []
    switch: list[ledger.SwitchResult] = []

    def claimer(oid: str) -> None:
        barrier.wait()
        if _claim(store, oid, view, view.implementation_alias):
            won.append(oid)

    def switcher() -> None:
        barrier.wait()
        switch.append(
            ledger.switch_implementation(
                store,
                SCHEDULE,
                target,
                START,
                kind=kind,
                by="gate",
                reason=f"gate round {round_}",
                id_formats=frozenset({1}),
            )
        )

    threads = [threading.Thread(target=claimer, args=(oid,)) for oid in due]
    threads.append(threading.Thread(target=switcher))
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    (result,) = switch
    marker = f"#{result.switch_id} "

    def late(connection: object) -> int:
        from sqlalchemy import Connection

        assert isinstance(connection, Connection)
        switch_event = connection.execute(
            select(EVENTS.c.id).where(EVENTS.c.why.contains(marker)).order_by(EVENTS.c.id)
        ).first()
        if switch_event is None:  # nothing left to requeue: every racer won before it
            return 0
        count = 0
        for oid in won:
            claimed = connection.execute(
                select(EVENTS.c.id)
                .where(EVENTS.c.occurrence_id == oid)
                .where(EVENTS.c.to_state == "DISPATCHING")
            ).scalar_one()
            epoch = connection.execute(
                select(ATTEMPTS.c.execution_epoch).where(ATTEMPTS.c.occurrence_id == oid)
            ).scalar_one()
            count += claimed > switch_event.id and epoch == result.epoch_before
        return count

    return store.read(late), len(due)
