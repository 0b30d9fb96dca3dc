"""A paced occurrence's claim records its pacing evidence in the claim's own transaction.

``catchUpSpacing`` gives a released occurrence a start slot (``io.CatchUpPacing``); its first
claim writes ``{"pacedBy": "catchUpSpacing", …}`` on the ``DISPATCHING`` event, so the happy path
still costs one read and three writes (as ``test_one_occurrence_costs_four_ledger_transactions``
pins for an unpaced one). Expected evidence: slot 2 × spacing 30 s = a 60 s delay.
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
        seen: list[str] = []

        def counted(kind: str, real: Callable[..., Any]) -> Callable[..., Any]:
            def transaction(work: Callable[..., Any]) -> Any:
                seen.append(kind)
                return real(work)

            return transaction

        activities._spec(spec.schedule_id, spec.revision)  # the spec cache, as a warm worker has
        monkeypatch.setattr(store, "write", counted("write", store.write))
        monkeypatch.setattr(store, "read", counted("read", store.read))
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
