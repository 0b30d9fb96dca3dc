"""Matrix 11: disable races the start of an occurrence, many trials, on both backends.

Each trial: one DUE occurrence; two threads leave a barrier together — one runs the occurrence
workflow's steps (the claim activity, then the execute-attempt activity against the sink), the
other disables the schedule (the ``set_gate`` activity). Whoever commits first on the gate row
wins. Expected, every trial: either the occurrence ran (claimed, effect recorded, SUCCEEDED) or it
was CANCELLED (no attempt, no effect) — never both, never neither.
"""

from __future__ import annotations

import asyncio
import threading
from collections import Counter

import pytest
from faultkit import (
    day,
    due_occurrences,
    gate_view,
    local_actions,
    publish,
    running_sink,
    spec_data,
)

import ledger
from activities import io
from activities.clock import FixedClock
from activities.ledger_activities import AlmanacActivities
from ledger import Ledger, OccurrenceState

pytestmark = [pytest.mark.fault, pytest.mark.slow]

TRIALS = 50
RAN = {OccurrenceState.SUCCEEDED, OccurrenceState.UNKNOWN_EFFECT}


def test_disable_racing_start_either_runs_or_cancels_each_occurrence(store: Ledger) -> None:
    outcomes: Counter[str] = Counter()
    with running_sink() as sink:
        activities = AlmanacActivities(
            store, local_actions(), identity="racer", clock=FixedClock(day(10, 9))
        )
        for trial in range(TRIALS):
            schedule_id = f"race-{trial}"
            spec = publish(store, spec_data(schedule_id, sink), day(10, 8))
            (due,) = due_occurrences(store, spec, (day(10, 8), day(11, 8)), day(10, 9))
            gate = gate_view(store, schedule_id)
            barrier = threading.Barrier(2)
            errors: list[BaseException] = []

            def start(
                occurrence_id: str = due.occurrence_id,
                view: io.GateSnapshot = gate,
                barrier: threading.Barrier = barrier,
            ) -> None:
                barrier.wait()
                claimed = activities.claim(io.ClaimOccurrenceInput(occurrence_id, view, day(10, 9)))
                if claimed.claimed:
                    attempt = io.ExecuteAttemptInput(
                        occurrence_id, claimed.claim_generation, 1, 3, day(10, 9)
                    )
                    asyncio.run(activities.execute_attempt(attempt))

            def disable(schedule: str = schedule_id, barrier: threading.Barrier = barrier) -> None:
                barrier.wait()
                activities.set_gate(io.SetGateInput(schedule, True, "race", day(10, 9)))

            threads = [threading.Thread(target=_catching(f, errors)) for f in (start, disable)]
            for t in threads:
                t.start()
            for t in threads:
                t.join(timeout=60)
            assert not errors, errors
            detail = ledger.show_occurrence(store, due.occurrence_id)
            effect = sink.effect(due.occurrence_id)
            state = detail.occurrence.state
            if state in RAN:
                assert effect is not None and effect.delivery_count == 1, (trial, state)
                assert len(detail.attempts) == 1
            else:
                assert state is OccurrenceState.CANCELLED, (trial, state)
                assert effect is None and not detail.attempts, (trial, detail)
            outcomes[state.value] += 1
    assert sum(outcomes.values()) == TRIALS
    print(f"disable vs start over {TRIALS} trials: {dict(outcomes)}")


def _catching(target, errors):  # type: ignore[no-untyped-def]
    def run() -> None:
        try:
            target()
        except BaseException as exc:
            errors.append(exc)

    return run
