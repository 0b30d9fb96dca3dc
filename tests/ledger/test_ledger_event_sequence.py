"""An occurrence's event trail is numbered 1, 2, 3, … by the ledger, never ordered by a clock."""

from __future__ import annotations

import threading
from concurrent.futures import ThreadPoolExecutor
from datetime import timedelta

import pytest
from alembic import command
from ledger_support import T0, claim_now, due_occurrence
from sqlalchemy import select, text

from ledger import (
    ClaimLost,
    Ledger,
    LedgerIntegrityError,
    OccurrenceState,
    mark_running,
    redeliver,
    retry_wait,
    show_occurrence,
    succeeded,
)
from ledger.events import OCCURRENCES
from ledger.migrate import alembic_config

pytest_plugins = ["ledger_fixtures"]  # ledger, backend and the PostgreSQL cluster

S = OccurrenceState
WRITERS = 8
REDELIVERIES_EACH = 5


def _sequences(ledger: Ledger, occurrence_id: str) -> list[int]:
    return [e.sequence for e in show_occurrence(ledger, occurrence_id).events]


def _counter(ledger: Ledger, occurrence_id: str) -> int:
    return int(
        ledger.read(
            lambda c: c.execute(
                select(OCCURRENCES.c.event_sequence).where(
                    OCCURRENCES.c.occurrence_id == occurrence_id
                )
            ).scalar_one()
        )
    )


def _running(ledger: Ledger) -> str:
    occurrence_id = due_occurrence(ledger)
    now = T0 + timedelta(hours=8)
    assert claim_now(ledger, occurrence_id, now).attempt is not None
    mark_running(ledger, occurrence_id, 1, now, by="w")
    return occurrence_id


def test_every_transition_takes_the_next_number_and_the_counter_follows(ledger: Ledger) -> None:
    occurrence_id = _running(ledger)
    now = T0 + timedelta(hours=8, minutes=1)
    succeeded(ledger, occurrence_id, 1, now, by="w")
    detail = show_occurrence(ledger, occurrence_id)
    # Materialized, released, claimed, running, succeeded: five events, numbered from 1.
    assert [(e.sequence, e.from_state, e.to_state) for e in detail.events] == [
        (1, None, "PLANNED"),
        (2, "PLANNED", "DUE"),
        (3, "DUE", "DISPATCHING"),
        (4, "DISPATCHING", "RUNNING"),
        (5, "RUNNING", "SUCCEEDED"),
    ]
    assert _counter(ledger, occurrence_id) == 5


def test_the_trail_is_in_sequence_order_even_when_a_writer_s_clock_is_behind(
    ledger: Ledger,
) -> None:
    occurrence_id = _running(ledger)
    # A worker whose clock is an hour behind records the outcome: its instant is earlier than
    # the previous event's, and the trail still lists it last (its number), with its true stamp.
    behind = T0 + timedelta(hours=7)
    retry_wait(
        ledger, occurrence_id, 1, behind + timedelta(seconds=10), behind, by="slow-clock",
        error_class="E", error_message="refused",
    )  # fmt: skip
    events = show_occurrence(ledger, occurrence_id).events
    assert [e.sequence for e in events] == [1, 2, 3, 4, 5]
    assert (events[-1].to_state, events[-1].by, events[-1].at_utc) == (
        "RETRY_WAIT",
        "slow-clock",
        behind,
    )
    assert events[-1].at_utc < events[-2].at_utc


def test_concurrent_writers_of_one_occurrence_never_share_a_number_nor_leave_a_hole(
    ledger: Ledger,
) -> None:
    """Eight writers redeliver the same occurrence at once, each fencing on what it read."""
    occurrence_id = _running(ledger)
    barrier = threading.Barrier(WRITERS)
    now = T0 + timedelta(hours=9)

    def writer(name: str) -> int:
        barrier.wait()
        won = 0
        for _ in range(REDELIVERIES_EACH):
            generation = show_occurrence(ledger, occurrence_id).occurrence.claim_generation
            try:
                redeliver(ledger, occurrence_id, generation, now, by=name, input_digest="d")
            except ClaimLost:
                continue
            won += 1
        return won

    with ThreadPoolExecutor(max_workers=WRITERS) as pool:
        wins = sum(pool.map(writer, [f"w{i}" for i in range(WRITERS)]))
    assert wins >= 1
    detail = show_occurrence(ledger, occurrence_id)
    # 4 events before the race, one per redelivery that won; no repeat, no hole.
    assert [e.sequence for e in detail.events] == list(range(1, 5 + wins))
    assert _counter(ledger, occurrence_id) == 4 + wins
    assert len(detail.attempts) == 1 + wins
    renewals = [e for e in detail.events if e.from_state == e.to_state == "RUNNING"]
    assert len(renewals) == wins


def _raw_event(ledger: Ledger, occurrence_id: str, sequence: int) -> None:
    ledger.write(
        lambda c: c.execute(
            text(
                "INSERT INTO occurrence_events "
                "(occurrence_id, from_state, to_state, at_utc, by, why, sequence) "
                "VALUES (:i, 'RUNNING', 'RUNNING', :t, 'raw', 'raw', :n)"
            ),
            {"i": occurrence_id, "t": T0, "n": sequence},
        )
    )


def test_the_database_rejects_an_event_the_counter_did_not_number(ledger: Ledger) -> None:
    occurrence_id = _running(ledger)  # four events, counter at 4
    for sequence in (5, 4, 3, 0):  # the next number without a bump, a repeat, a past one, zero
        with pytest.raises(LedgerIntegrityError):
            _raw_event(ledger, occurrence_id, sequence)
    assert _sequences(ledger, occurrence_id) == [1, 2, 3, 4]


def test_migration_0006_numbers_existing_trails_in_insertion_order(ledger: Ledger) -> None:
    occurrence_id = _running(ledger)
    before = show_occurrence(ledger, occurrence_id)
    config = alembic_config(ledger.engine)
    command.downgrade(config, "0003")
    # At 0003 an event is appended without a number, stamped *earlier* than the others.
    ledger.write(
        lambda c: c.execute(
            text(
                "INSERT INTO occurrence_events (occurrence_id, from_state, to_state, at_utc, by, "
                "why) VALUES (:i, 'RUNNING', 'RUNNING', :t, 'old', 'written at 0003')"
            ),
            {"i": occurrence_id, "t": T0 - timedelta(days=1)},
        )
    )
    command.upgrade(config, "head")
    after = show_occurrence(ledger, occurrence_id)
    assert after.events[:4] == before.events
    assert [(e.sequence, e.by) for e in after.events[4:]] == [(5, "old")]
    assert _counter(ledger, occurrence_id) == 5
    # The next transition continues the numbering.
    succeeded(ledger, occurrence_id, 1, T0 + timedelta(hours=9), by="w")
    assert _sequences(ledger, occurrence_id) == [1, 2, 3, 4, 5, 6]
