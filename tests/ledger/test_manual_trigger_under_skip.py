"""A manual trigger under ``overlapPolicy: SKIP`` runs beside a running occurrence (decided).

Temporal's ``TriggerImmediately`` obeys the schedule's overlap policy; Almanac's trigger is an
explicit operator decision with its own request ID, so it is recorded ``DUE`` and claimed even
while a calendar occurrence runs (README "Trigger now"). It still counts as in flight for the
calendar occurrences that come due after it: under SKIP the next one is ``SKIPPED_OVERLAP``
naming it. On SQLite and PostgreSQL.
"""

from __future__ import annotations

from datetime import datetime, timedelta

from ledger_support import claim_now, due_occurrence, make_spec

import ledger as ledger_
from ledger import Ledger, OccurrenceState, get_gate, record_trigger, release_due

pytest_plugins = ["ledger_fixtures"]


def test_a_trigger_under_skip_runs_beside_a_running_occurrence(ledger: Ledger) -> None:
    spec = make_spec(overlapPolicy="SKIP", lateness="P1D")
    running = due_occurrence(ledger, spec)
    at = instant_of(ledger, running)
    won = claim_now(ledger, running, at)
    assert won.attempt is not None
    ledger_.mark_running(ledger, running, won.attempt.claim_generation, at, by="test")

    manual = record_trigger(
        ledger, spec.schedule_id, "beside", at + timedelta(minutes=1), by="op", reason="now"
    )
    assert manual.created and manual.occurrence.state is OccurrenceState.DUE
    claimed = claim_now(
        ledger,
        manual.occurrence.occurrence_id,
        at + timedelta(minutes=1),
        gate=get_gate(ledger, spec.schedule_id),
    )
    assert claimed.attempt is not None  # not refused for the running calendar occurrence

    # The next calendar occurrence (a day later) yields to both in-flight ones under SKIP.
    released = release_due(ledger, spec.schedule_id, at + timedelta(days=1))
    assert released.released == () and len(released.skipped) == 1


def instant_of(handle: Ledger, occurrence_id: str) -> datetime:
    instant = ledger_.show_occurrence(handle, occurrence_id).occurrence.instant_utc
    assert instant is not None
    return instant
