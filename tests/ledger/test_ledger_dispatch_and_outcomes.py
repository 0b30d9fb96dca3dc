"""The lifecycle decides in the ledger, one transaction each (DESIGN §2), on SQLite and PostgreSQL.

``claim_for_dispatch``: the claim, cancel-on-refusal, the gate re-check after a revision was
published, adopting an earlier claim. ``record_outcome``: the next state and backoff from the
outcome and the retry policy (DESIGN §6; backoff 10 s doubling to at most 10 minutes, the retry
policy's documented contract). ``read_occurrence``: one row.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from contextlib import contextmanager
from datetime import timedelta
from typing import Any

import pytest
from ledger_support import ALIAS, T0, WORKER, due_occurrence, make_spec

from ledger import (
    AttemptReport,
    ClaimRefusal,
    Ledger,
    OccurrenceNotFound,
    OccurrenceState,
    RetryPolicy,
    claim_for_dispatch,
    disable,
    enable,
    get_gate,
    mark_running,
    open_cases,
    publish_revision,
    read_occurrence,
    record_outcome,
    show_occurrence,
)
from lifecycle import GateView, OutcomeKind

pytest_plugins = ["ledger_fixtures"]

S = OccurrenceState
SCHEDULE = "daily-ops-summary"


@contextmanager
def transactions(ledger: Ledger) -> Iterator[list[str]]:
    """Record each transaction the ledger runs (``"write"``/``"read"``) while inside."""
    seen: list[str] = []
    real_write, real_read = ledger.write, ledger.read

    def counted(kind: str, real: Callable[..., Any]) -> Callable[..., Any]:
        def run(work: Callable[..., Any]) -> Any:
            seen.append(kind)
            return real(work)

        return run

    ledger.write = counted("write", real_write)  # type: ignore[method-assign]
    ledger.read = counted("read", real_read)  # type: ignore[method-assign]
    try:
        yield seen
    finally:
        ledger.write, ledger.read = real_write, real_read  # type: ignore[method-assign]


def _claim(ledger: Ledger, oid: str, view: GateView, **kw: Any) -> Any:
    return claim_for_dispatch(
        ledger,
        oid,
        view,
        worker_identity=WORKER,
        implementation_alias=kw.pop("implementation_alias", ALIAS),
        input_digest="sha256:input",
        now_utc=T0 + timedelta(days=1),
        **kw,
    )


def test_a_won_claim_is_one_transaction_and_returns_the_dispatching_row(ledger: Ledger) -> None:
    oid = due_occurrence(ledger)
    view = get_gate(ledger, SCHEDULE)
    with transactions(ledger) as seen:
        decision = _claim(ledger, oid, view)
    assert seen == ["write"]
    assert decision.claimed and not decision.adopted and decision.attempt is not None
    assert decision.occurrence.state is S.DISPATCHING
    assert decision.claim_generation == decision.attempt.claim_generation == 1


def test_a_refusal_the_gate_means_cancels_in_the_same_transaction(ledger: Ledger) -> None:
    # A retry waiting (a disable cancels DUE occurrences itself, not RETRY_WAIT ones) whose
    # releaser's view predates a disable and an enable: DISABLE_GENERATION_CHANGED.
    oid = _running(ledger)
    _record(ledger, oid, AttemptReport(OutcomeKind.RETRYABLE_FAILURE, "503"))
    stale = get_gate(ledger, SCHEDULE)
    disable(ledger, SCHEDULE, T0, by="op", reason="maintenance")
    enable(ledger, SCHEDULE, T0, by="op")
    with transactions(ledger) as seen:
        decision = _claim(ledger, oid, stale)
    assert seen == ["write"]
    assert decision.refusal is ClaimRefusal.DISABLE_GENERATION_CHANGED
    assert decision.occurrence.state is S.CANCELLED
    last = show_occurrence(ledger, oid).events[-1]
    assert (last.from_state, last.to_state) == ("RETRY_WAIT", "CANCELLED")
    assert last.why.startswith("claim refused: DISABLE_GENERATION_CHANGED")


def test_a_refusal_of_another_alias_leaves_the_occurrence_due(ledger: Ledger) -> None:
    oid = due_occurrence(ledger)
    decision = _claim(ledger, oid, get_gate(ledger, SCHEDULE), implementation_alias="canary")
    assert decision.refusal is ClaimRefusal.IMPLEMENTATION_ALIAS_MISMATCH
    assert decision.occurrence.state is S.DUE
    assert read_occurrence(ledger, oid).state is S.DUE


def test_a_newer_revision_that_does_not_own_the_instant_does_not_end_the_claim(
    ledger: Ledger,
) -> None:
    oid = due_occurrence(ledger)
    stale = get_gate(ledger, SCHEDULE)
    # Revision 2 takes over only from 2026-11-03: the occurrence's instant stays revision 1's.
    publish_revision(ledger, make_spec(revision=2, cutoverAt="2026-11-03T00:00:00Z"), T0, by="test")
    decision = _claim(ledger, oid, stale)
    assert decision.claimed, (decision.refusal, decision.detail)
    assert decision.occurrence.state is S.DISPATCHING


def test_a_retried_claim_adopts_the_claim_its_earlier_try_won(ledger: Ledger) -> None:
    oid = due_occurrence(ledger)
    view = get_gate(ledger, SCHEDULE)
    first = _claim(ledger, oid, view)
    assert first.claimed
    other = _claim(ledger, oid, view)  # a first try from elsewhere: refused, nothing cancelled
    assert other.refusal is ClaimRefusal.NOT_CLAIMABLE
    assert other.occurrence.state is S.DISPATCHING
    again = _claim(ledger, oid, view, retried=True)
    assert again.claimed and again.adopted and again.attempt is None
    assert again.claim_generation == first.claim_generation
    assert len(show_occurrence(ledger, oid).attempts) == 1


def _running(ledger: Ledger) -> str:
    oid = due_occurrence(ledger)
    won = _claim(ledger, oid, get_gate(ledger, SCHEDULE))
    mark_running(ledger, oid, won.claim_generation, T0 + timedelta(days=1), by=WORKER)
    return oid


def _record(
    ledger: Ledger, oid: str, report: AttemptReport, claim_number: int = 1, max_attempts: int = 3
) -> Any:
    return record_outcome(
        ledger,
        oid,
        1,
        report,
        claim_number=claim_number,
        policy=RetryPolicy(max_attempts),
        now_utc=T0 + timedelta(days=1, minutes=1),
        by=WORKER,
    )


def test_retry_policy_backoff_doubles_from_ten_seconds_to_at_most_ten_minutes() -> None:
    policy = RetryPolicy(9)
    delays = [policy.delay(n).total_seconds() for n in range(1, 9)]
    assert delays == [10, 20, 40, 80, 160, 320, 600, 600]


@pytest.mark.parametrize(
    ("kind", "claim_number", "state", "why"),
    [
        (OutcomeKind.CONFIRMED, 1, S.SUCCEEDED, "attempt 1 succeeded"),
        (OutcomeKind.RETRYABLE_FAILURE, 1, S.RETRY_WAIT, "retry scheduled"),
        (
            OutcomeKind.RETRYABLE_FAILURE,
            3,
            S.FAILED,
            "failed: RETRYABLE_FAILURE: retries exhausted",
        ),
        (OutcomeKind.NON_RETRYABLE_FAILURE, 1, S.FAILED, "failed: NON_RETRYABLE_FAILURE: 4"),
        (OutcomeKind.UNCONFIRMED, 1, S.UNKNOWN_EFFECT, "outcome unknown: UNCONFIRMED"),
    ],
)
def test_the_ledger_decides_the_next_state_from_the_outcome_and_the_policy(
    ledger: Ledger, kind: OutcomeKind, claim_number: int, state: OccurrenceState, why: str
) -> None:
    oid = _running(ledger)
    with transactions(ledger) as seen:
        recorded = _record(ledger, oid, AttemptReport(kind, "403 refused"), claim_number)
    assert seen == ["write"]
    assert recorded.state is state
    assert read_occurrence(ledger, oid).state is state
    assert why in show_occurrence(ledger, oid).events[-1].why


def test_retry_wait_stores_the_backoff_or_the_downstreams_longer_retry_after(
    ledger: Ledger,
) -> None:
    oid = _running(ledger)
    report = AttemptReport(OutcomeKind.RETRYABLE_FAILURE, "503", retry_after=timedelta(minutes=1))
    recorded = _record(ledger, oid, report, claim_number=2)
    assert recorded.retry_after == timedelta(minutes=1)  # longer than the second backoff, 20 s
    assert read_occurrence(ledger, oid).next_attempt_at_utc == recorded.at_utc + timedelta(
        minutes=1
    )
    other = _running_second(ledger)
    shorter = AttemptReport(OutcomeKind.RETRYABLE_FAILURE, "503", retry_after=timedelta(seconds=1))
    assert _record(ledger, other, shorter, claim_number=2).retry_after == timedelta(seconds=20)


def _running_second(ledger: Ledger) -> str:
    """The schedule's second occurrence, claimed and running (the first is taken already)."""
    second = make_spec(scheduleId="second-schedule")
    oid = due_occurrence(ledger, second)
    won = _claim(ledger, oid, get_gate(ledger, "second-schedule"))
    mark_running(ledger, oid, won.claim_generation, T0 + timedelta(days=1), by=WORKER)
    return oid


def test_an_unconfirmed_outcome_opens_a_case_due_in_thirty_minutes(ledger: Ledger) -> None:
    oid = _running(ledger)
    recorded = _record(ledger, oid, AttemptReport(OutcomeKind.UNCONFIRMED, "timeout"))
    assert recorded.reconcile_deadline_utc == recorded.at_utc + timedelta(minutes=30)
    (case,) = open_cases(ledger)
    assert case.deadline_utc == recorded.reconcile_deadline_utc


def test_read_occurrence_reads_one_row(ledger: Ledger) -> None:
    oid = due_occurrence(ledger)
    with transactions(ledger) as seen:
        row = read_occurrence(ledger, oid)
    assert seen == ["read"]
    assert (row.occurrence_id, row.state) == (oid, S.DUE)
    with pytest.raises(OccurrenceNotFound):
        read_occurrence(ledger, "daily-ops-summary.r1.20990101T000000.f0")
