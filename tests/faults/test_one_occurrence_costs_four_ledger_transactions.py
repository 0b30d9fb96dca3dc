"""The happy path of one occurrence costs four ledger transactions, none of them the trail.

``claim_and_execute`` reads the occurrence's row (the clock check and the input digest need its
instant and revision), claims it (one transaction that decides), marks the call begun and records
the outcome (one transaction that decides the next state). The operator's ``show_occurrence``
(attempts, events, case) is never read on the way (issue 28: it was read twice).

A paced occurrence (``catchUpSpacing`` gave it a start slot, ``io.CatchUpPacing``) costs the same:
its first claim writes ``{"pacedBy": "catchUpSpacing", …}`` on the ``DISPATCHING`` event in the
claim's own transaction. Expected evidence: slot 2 × spacing 30 s = a 60 s delay.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

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
from temporalio.testing import ActivityEnvironment

import ledger
from activities import io
from activities.clock import FixedClock
from activities.ledger_activities import AlmanacActivities
from ledger import Ledger, paced_evidence, show_occurrence

pytestmark = [pytest.mark.fault]


def counted_transactions(store: Ledger, monkeypatch: pytest.MonkeyPatch) -> list[str]:
    """From now on, each ledger transaction appends ``"read"`` or ``"write"`` to the list."""
    seen: list[str] = []

    def counted(kind: str, real: Callable[..., Any]) -> Callable[..., Any]:
        def transaction(work: Callable[..., Any]) -> Any:
            seen.append(kind)
            return real(work)

        return transaction

    monkeypatch.setattr(store, "write", counted("write", store.write))
    monkeypatch.setattr(store, "read", counted("read", store.read))
    return seen


@pytest.mark.anyio
async def test_a_succeeding_occurrence_reads_one_row_and_writes_three_times(
    store: Ledger, monkeypatch: pytest.MonkeyPatch
) -> None:
    with running_sink() as sink:
        spec = publish(store, spec_data("four-transactions", sink), day(10, 8))
        first, second = due_occurrences(store, spec, (day(10, 8), day(12, 8)), day(11, 9))
        activities = AlmanacActivities(
            store, local_actions(), identity="worker", clock=FixedClock(day(11, 9))
        )
        gate = gate_view(store, spec.schedule_id)

        async def run(occurrence_id: str) -> io.ClaimAndExecuteResult:
            request = io.ClaimAndExecuteInput(occurrence_id, gate, 1, 3, day(11, 9))
            return await ActivityEnvironment().run(activities.claim_and_execute, request)

        assert (await run(first.occurrence_id)).state == "SUCCEEDED"  # loads the spec once
        seen = counted_transactions(store, monkeypatch)
        monkeypatch.setattr(ledger, "show_occurrence", None)  # never the operator's full read
        result = await run(second.occurrence_id)
        effects = sink.effects()
    assert result.claimed and result.attempt is not None
    assert result.attempt.state == "SUCCEEDED"
    assert seen == ["read", "write", "write", "write"]
    assert len(effects) == 2


@pytest.mark.anyio
async def test_a_paced_claim_records_its_slot_without_a_transaction_of_its_own(
    store: Ledger, monkeypatch: pytest.MonkeyPatch
) -> None:
    with running_sink() as sink:
        spec = publish(store, spec_data("paced-claim", sink), day(10, 8))
        [occurrence] = due_occurrences(store, spec, (day(10, 8), day(11, 8)), day(10, 9))
        activities = AlmanacActivities(
            store, local_actions(), identity="worker", clock=FixedClock(day(10, 10))
        )
        pacing = io.CatchUpPacing(slot=2, spacing_seconds=30.0, until_utc=day(10, 10))
        request = io.ClaimAndExecuteInput(
            occurrence.occurrence_id,
            gate_view(store, spec.schedule_id),
            1,
            3,
            day(10, 10),
            pacing=pacing,
        )
        activities._spec(spec.schedule_id, spec.revision)  # the spec cache, as a warm worker has
        seen = counted_transactions(store, monkeypatch)
        result = await ActivityEnvironment().run(activities.claim_and_execute, request)
        monkeypatch.undo()
    assert result.claimed and result.attempt is not None
    assert result.attempt.state == "SUCCEEDED"
    assert seen == ["read", "write", "write", "write"]
    events = show_occurrence(store, occurrence.occurrence_id).events
    claims = [e for e in events if e.to_state == "DISPATCHING"]
    assert [paced_evidence(e.why) for e in claims] == [
        {"pacedBy": "catchUpSpacing", "delaySeconds": 60.0, "spacingSeconds": 30.0, "slot": 2}
    ]
    assert all(paced_evidence(e.why) is None for e in events if e.to_state != "DISPATCHING")
    assert ledger.paced_evidence("attempt 1 claimed by w (alias default)") is None
