"""STREAK and RECOVERED facts (issue 30) are recorded once, from ledger facts, on both databases.

Daily 02:30 America/New_York with ``failureStreak: {notifyAfter: 3, recoverAfter: 2}``. Days 1-3
end FAILED: the third failure makes a streak of 3 (= N), so one STREAK fact keyed by day 1. A
fourth failure extends the same streak: no second fact. Days 5 and 6 SUCCEED: after day 6 (two
consecutive successes = M) one RECOVERED fact keyed by day 1. Counts by hand from the policy.
"""

from __future__ import annotations

import threading
from datetime import datetime, timedelta
from typing import Any

from ledger_support import T0, WORKER, claim_now, make_spec

from ledger import (
    Ledger,
    OccurrenceState,
    ScheduleEventKind,
    enable,
    failed,
    get_gate,
    mark_running,
    materialize,
    publish_revision,
    release_due,
    succeeded,
)
from ledger.schedule_trail import schedule_events
from ledger.streak_facts import (
    PAUSED_BY,
    NotifyState,
    StreakKind,
    decide_failure_streak,
    finish_notification,
    start_notification,
    streak_facts,
)

pytest_plugins = ["ledger_fixtures"]  # ledger, backend and the PostgreSQL cluster

SID = "daily-ops-summary"
NOTIFY = {"name": "noop"}


def policy(**overrides: Any) -> dict[str, Any]:
    return {"notifyAfter": 3, "recoverAfter": 2, "action": NOTIFY, **overrides}


def days(ledger: Ledger, **streak: Any) -> list[tuple[str, datetime]]:
    spec = make_spec(failureStreak=policy(**streak))
    publish_revision(ledger, spec, T0, by="test")
    rows = materialize(ledger, spec, T0, T0 + timedelta(days=8), T0).rows
    found = [(r.occurrence_id, r.instant_utc) for r in rows if r.state is OccurrenceState.PLANNED]
    return [(o, i) for o, i in found if i is not None]


def end(ledger: Ledger, day: tuple[str, datetime], *, ok: bool) -> None:
    occurrence_id, instant = day
    release_due(ledger, SID, instant)
    attempt = claim_now(ledger, occurrence_id, instant + timedelta(seconds=1)).attempt
    assert attempt is not None
    generation = attempt.claim_generation
    mark_running(ledger, occurrence_id, generation, instant + timedelta(seconds=2), by=WORKER)
    at = instant + timedelta(seconds=3)
    if ok:
        succeeded(ledger, occurrence_id, generation, at, by=WORKER)
    else:
        failed(ledger, occurrence_id, generation, at, by=WORKER, error_class="E", error_message="x")


def decide(ledger: Ledger, day: tuple[str, datetime]) -> list[Any]:
    return decide_failure_streak(ledger, SID, day[1] + timedelta(minutes=1), by=WORKER).recorded


def test_a_streak_of_n_records_one_streak_fact_and_m_successes_one_recovery(
    ledger: Ledger,
) -> None:
    d = days(ledger)
    for day in d[:2]:
        end(ledger, day, ok=False)
        assert decide(ledger, day) == []
    end(ledger, d[2], ok=False)
    (fact,) = decide(ledger, d[2])
    assert (fact.kind, fact.streak_start_occurrence_id, fact.threshold) == (
        StreakKind.STREAK,
        d[0][0],
        3,
    )
    assert fact.occurrence_ids == (d[0][0], d[1][0], d[2][0])
    assert fact.notify_state is NotifyState.PENDING and not fact.paused
    assert decide(ledger, d[2]) == []  # decided again: nothing twice
    end(ledger, d[3], ok=False)
    assert decide(ledger, d[3]) == []  # the same streak, longer
    assert not get_gate(ledger, SID).disabled

    end(ledger, d[4], ok=True)
    assert decide(ledger, d[4]) == []  # one success < recoverAfter
    end(ledger, d[5], ok=True)
    (recovered,) = decide(ledger, d[5])
    assert (recovered.kind, recovered.streak_start_occurrence_id) == (StreakKind.RECOVERED, d[0][0])
    assert recovered.occurrence_ids == (d[4][0], d[5][0])
    assert decide(ledger, d[5]) == []
    assert [f.kind for f in streak_facts(ledger, SID)] == [StreakKind.RECOVERED, StreakKind.STREAK]


def test_pause_disables_the_schedule_through_the_gate_with_the_streak_as_reason(
    ledger: Ledger,
) -> None:
    d = days(ledger, pause=True)
    for day in d[:3]:
        end(ledger, day, ok=False)
    (fact,) = decide(ledger, d[2])
    assert fact.paused
    gate = get_gate(ledger, SID)
    assert gate.disabled
    assert gate.disabled_reason is not None and d[0][0] in gate.disabled_reason
    assert "failure streak" in gate.disabled_reason
    disabled = [e for e in schedule_events(ledger, SID) if e.kind == ScheduleEventKind.DISABLED]
    assert [e.by for e in disabled] == [PAUSED_BY]


def test_concurrent_decisions_record_the_streak_once(ledger: Ledger) -> None:
    d = days(ledger, pause=True)
    for day in d[:3]:
        end(ledger, day, ok=False)
    barrier = threading.Barrier(4)
    recorded: list[Any] = []

    def racer() -> None:
        barrier.wait()
        recorded.extend(decide(ledger, d[2]))

    threads = [threading.Thread(target=racer) for _ in range(4)]
    for t in threads:
        t.start()
    for t in threads:
        t.join(timeout=60)
    assert len(recorded) == 1
    assert len(streak_facts(ledger, SID)) == 1


def test_notification_attempts_are_bounded_and_each_outcome_recorded(ledger: Ledger) -> None:
    d = days(ledger)
    for day in d[:3]:
        end(ledger, day, ok=False)
    (fact,) = decide(ledger, d[2])
    key = (SID, fact.streak_start_occurrence_id, fact.kind)
    now = d[2][1] + timedelta(minutes=2)
    for attempt in (1, 2):
        started = start_notification(ledger, *key, now, max_attempts=2)
        assert started is not None and started.notify_attempts == attempt
        finish_notification(ledger, *key, now, delivered=False, detail="503", final=attempt == 2)
    (failed_fact,) = streak_facts(ledger, SID)
    assert (failed_fact.notify_state, failed_fact.notify_attempts) == (NotifyState.FAILED, 2)
    assert failed_fact.notify_detail == "503"
    assert start_notification(ledger, *key, now, max_attempts=2) is None
    assert decide_failure_streak(ledger, SID, now, by=WORKER).pending == []


def test_an_attempt_lost_after_the_last_count_is_recorded_failed(ledger: Ledger) -> None:
    d = days(ledger)
    for day in d[:3]:
        end(ledger, day, ok=False)
    (fact,) = decide(ledger, d[2])
    key = (SID, fact.streak_start_occurrence_id, fact.kind)
    now = d[2][1] + timedelta(minutes=2)
    assert start_notification(ledger, *key, now, max_attempts=1) is not None  # then lost
    assert start_notification(ledger, *key, now, max_attempts=1) is None
    assert streak_facts(ledger, SID)[0].notify_state is NotifyState.FAILED


def test_a_delivered_notification_is_not_pending_and_enable_resumes(ledger: Ledger) -> None:
    d = days(ledger, pause=True)
    for day in d[:3]:
        end(ledger, day, ok=False)
    (fact,) = decide(ledger, d[2])
    key = (SID, fact.streak_start_occurrence_id, fact.kind)
    now = d[2][1] + timedelta(minutes=2)
    assert start_notification(ledger, *key, now, max_attempts=3) is not None
    finish_notification(ledger, *key, now, delivered=True, detail="200", final=False)
    assert streak_facts(ledger, SID)[0].notify_state is NotifyState.DELIVERED
    enable(ledger, SID, now, by="operator")
    assert not get_gate(ledger, SID).disabled
