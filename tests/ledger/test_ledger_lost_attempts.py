"""A lost attempt is recorded as lost — found at T by worker W — never as a finish nobody saw."""

from __future__ import annotations

from dataclasses import replace
from datetime import timedelta

import pytest
from ledger_support import T0, claim_now, due_occurrence
from sqlalchemy import text

from ledger import (
    LOST_ACKNOWLEDGEMENT,
    AttemptOutcome,
    Ledger,
    LedgerIntegrityError,
    OccurrenceState,
    mark_running,
    redeliver,
    show_occurrence,
    succeeded,
    unknown_effect,
)

pytest_plugins = ["ledger_fixtures"]  # ledger, backend and the PostgreSQL cluster

NOW = T0 + timedelta(hours=8)


def _running(ledger: Ledger) -> str:
    occurrence_id = due_occurrence(ledger)
    claim_now(ledger, occurrence_id, NOW)
    mark_running(ledger, occurrence_id, 1, NOW, by="worker-a")
    return occurrence_id


def test_redelivery_records_the_earlier_attempt_lost_with_its_finder(ledger: Ledger) -> None:
    occurrence_id = _running(ledger)
    found = NOW + timedelta(seconds=40)
    redeliver(ledger, occurrence_id, 1, found, by="worker-b", input_digest="d")
    succeeded(ledger, occurrence_id, 2, found + timedelta(seconds=1), by="worker-b")

    first, second = show_occurrence(ledger, occurrence_id).attempts
    assert (first.outcome, first.error_class) == (AttemptOutcome.LOST.value, LOST_ACKNOWLEDGEMENT)
    assert first.finished_at_utc is None  # nobody saw it end
    assert (first.lost_detected_at_utc, first.lost_detected_by) == (found, "worker-b")
    assert first.worker_identity == "worker-1"  # the claimer (ledger_support.claim_now)
    assert (second.outcome, second.worker_identity) == (AttemptOutcome.SUCCEEDED.value, "worker-b")
    assert (second.lost_detected_at_utc, second.lost_detected_by) == (None, None)


def test_a_lost_call_to_a_downstream_without_a_key_is_lost_and_unknown(ledger: Ledger) -> None:
    occurrence_id = _running(ledger)
    found = NOW + timedelta(seconds=40)
    unknown_effect(
        ledger, occurrence_id, 1, found, by="worker-b", error_class=LOST_ACKNOWLEDGEMENT,
        error_message="the worker stopped after the call began", lost=True,
    )  # fmt: skip

    detail = show_occurrence(ledger, occurrence_id)
    assert detail.occurrence.state is OccurrenceState.UNKNOWN_EFFECT
    [attempt] = detail.attempts
    assert (attempt.outcome, attempt.finished_at_utc) == (AttemptOutcome.LOST.value, None)
    assert (attempt.lost_detected_at_utc, attempt.lost_detected_by) == (found, "worker-b")
    assert detail.case is not None and detail.case.deadline_utc == found + timedelta(minutes=30)


@pytest.mark.parametrize(
    "values",
    [
        # LOST with a finish time nobody observed
        "outcome = 'LOST', finished_at_utc = started_at_utc, "
        "lost_detected_at_utc = started_at_utc, lost_detected_by = 'w'",
        # LOST without its finder
        "outcome = 'LOST', lost_detected_at_utc = started_at_utc",
        # a finding on an attempt that is not LOST
        "outcome = 'UNKNOWN', finished_at_utc = started_at_utc, "
        "lost_detected_at_utc = started_at_utc, lost_detected_by = 'w'",
    ],
)
def test_database_refuses_a_lost_attempt_that_is_not_as_recorded(
    ledger: Ledger, values: str
) -> None:
    occurrence_id = _running(ledger)
    with pytest.raises(LedgerIntegrityError):
        ledger.write(
            lambda c: c.execute(
                text(f"UPDATE attempts SET {values} WHERE occurrence_id = :i"), {"i": occurrence_id}
            )
        )
    [attempt] = show_occurrence(ledger, occurrence_id).attempts
    assert attempt == replace(attempt, outcome=None, finished_at_utc=None)
