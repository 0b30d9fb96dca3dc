"""A fact's time is read when it happens: after the locks its transaction waits for.

A worker that read its clock and then waited for a lock recorded the moment it *asked*, earlier
than the moment the claim (or outcome) really took effect. Here another transaction holds the lock
a claim needs; the clock jumps forward while it holds it and only then releases it. The recorded
time must be the clock's reading after the jump: the claim cannot have happened before the lock
was free. SQLite: the holder has the write lock (``BEGIN IMMEDIATE``); PostgreSQL: it has the
gate's and the occurrence's rows ``FOR UPDATE``.
"""

from __future__ import annotations

import threading
from collections.abc import Callable
from datetime import datetime, timedelta
from typing import Any

from ledger_support import ALIAS, T0, WORKER, due_occurrence
from sqlalchemy import text

from ledger import (
    Ledger,
    claim,
    get_gate,
    mark_running,
    show_occurrence,
    succeeded,
)

pytest_plugins = ["ledger_fixtures"]  # ledger, backend and the PostgreSQL cluster

WAIT = 30.0
"""Seconds any step may take before the test fails (never a sleep)."""


class SteppedClock:
    """A clock the test moves: reads ``now`` as it is at the moment of the read."""

    def __init__(self, start: datetime) -> None:
        self.instant = start

    def now(self) -> datetime:
        return self.instant


def _holding_lock_while(
    ledger: Ledger, occurrence_id: str, clock: SteppedClock, fact: Callable[[], Any]
) -> Any:
    """Run ``fact`` while another transaction holds the lock it needs; jump the clock; release.

    The jump happens once ``fact`` has opened its connection (before it can hold any lock): a
    time read before the lock reads the old clock, one read after it the new.
    """
    opened = threading.Event()
    holder = ledger.engine.connect()
    transaction = holder.begin()  # SQLite: BEGIN IMMEDIATE, the write lock
    if ledger.dialect == "postgresql":
        schedule_id = occurrence_id.split(".r")[0]
        for table, key, value in (
            ("schedule_gates", "schedule_id", schedule_id),
            ("occurrences", "occurrence_id", occurrence_id),
        ):
            holder.execute(text(f"SELECT 1 FROM {table} WHERE {key} = :v FOR UPDATE"), {"v": value})
    connect = ledger.engine.connect
    result: list[Any] = []

    def run() -> None:
        def connecting() -> Any:
            opened.set()
            return connect()

        ledger.engine.connect = connecting  # type: ignore[method-assign]
        result.append(fact())

    worker = threading.Thread(target=run)
    try:
        worker.start()
        assert opened.wait(WAIT), "the fact never opened a connection"
        clock.instant += timedelta(minutes=5)  # the lock is held 5 minutes (on this clock)
        transaction.commit()
        holder.close()
        worker.join(WAIT)
        assert not worker.is_alive()
    finally:
        ledger.engine.connect = connect  # type: ignore[method-assign]
        if not holder.closed:
            transaction.rollback()
            holder.close()
    return result[0]


def test_a_claim_waiting_for_a_lock_records_when_it_got_it(ledger: Ledger) -> None:
    oid = due_occurrence(ledger)
    clock = SteppedClock(T0 + timedelta(days=1))
    gate = get_gate(ledger, "daily-ops-summary")

    def take() -> Any:
        return claim(
            ledger,
            oid,
            gate,
            worker_identity=WORKER,
            implementation_alias=ALIAS,
            input_digest="sha256:input",
            now_utc=clock.now,
        )

    result = _holding_lock_while(ledger, oid, clock, take)
    assert result.attempt is not None
    released = T0 + timedelta(days=1, minutes=5)
    assert result.attempt.started_at_utc == released
    detail = show_occurrence(ledger, oid)
    assert detail.events[-1].at_utc == released
    assert detail.attempts[-1].started_at_utc == released


def test_an_outcome_waiting_for_a_lock_records_when_it_got_it(ledger: Ledger) -> None:
    oid = due_occurrence(ledger)
    clock = SteppedClock(T0 + timedelta(days=1))
    gate = get_gate(ledger, "daily-ops-summary")
    attempt = claim(
        ledger,
        oid,
        gate,
        worker_identity=WORKER,
        implementation_alias=ALIAS,
        input_digest="sha256:input",
        now_utc=clock.now,
    ).attempt
    assert attempt is not None
    mark_running(ledger, oid, attempt.claim_generation, clock.now, by=WORKER)
    _holding_lock_while(
        ledger,
        oid,
        clock,
        lambda: succeeded(ledger, oid, attempt.claim_generation, clock.now, by=WORKER),
    )
    detail = show_occurrence(ledger, oid)
    assert detail.events[-1].at_utc == T0 + timedelta(days=1, minutes=5)
    assert detail.attempts[-1].finished_at_utc == T0 + timedelta(days=1, minutes=5)
