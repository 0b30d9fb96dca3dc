"""The metrics snapshot counts open UNKNOWN_EFFECT cases of every occurrenceId form.

A manual run's ID (``<scheduleId>.manual.<requestId>``) once made the snapshot raise
``ValueError: not an occurrenceId``: ``almanac_ledger_snapshot_up`` fell to 0 and every
``almanac_occurrences`` series vanished while the case stayed open. The expectations below are
counted by hand from what the test records, not read back from the code under test.
"""

from __future__ import annotations

from datetime import timedelta

from ledger_support import T0, claim_now, due_occurrence

from activities.metrics import LedgerCollector
from activities.snapshot import ledger_snapshot
from ledger import Ledger, get_gate, mark_running, record_trigger, unknown_effect
from timecontract import occurrence_schedule_id

pytest_plugins = ["ledger_fixtures"]  # ledger, backend and the PostgreSQL cluster

SID = "daily-ops-summary"


def _unknown(ledger: Ledger, occurrence_id: str, at: object) -> None:
    attempt = claim_now(ledger, occurrence_id, at, gate=get_gate(ledger, SID)).attempt
    assert attempt is not None
    mark_running(ledger, occurrence_id, attempt.claim_generation, at, by="w")
    unknown_effect(
        ledger, occurrence_id, attempt.claim_generation, at, by="w", error_class="Timeout",
        error_message="",
    )  # fmt: skip


def test_manual_unknown_effect_is_counted_and_keeps_every_gauge(ledger: Ledger) -> None:
    calendar = due_occurrence(ledger)  # 2026-11-01 02:30 New York = 06:30Z
    _unknown(ledger, calendar, T0 + timedelta(hours=7))
    manual_at = T0 + timedelta(hours=8)
    manual = record_trigger(ledger, SID, "u3", manual_at, by="alice", reason="hang test")
    assert manual.occurrence.occurrence_id == f"{SID}.manual.u3"
    _unknown(ledger, manual.occurrence.occurrence_id, manual_at)

    snapshot = ledger_snapshot(ledger, T0 + timedelta(hours=9))

    # Two open cases of one schedule; the oldest was opened at 07:00Z, two hours before 09:00Z.
    assert snapshot.open_unknown == {SID: (2, 7200.0)}
    assert snapshot.counts[(SID, "UNKNOWN_EFFECT")] == 2
    families = {f.name: f for f in LedgerCollector(lambda: snapshot).collect()}
    assert families["almanac_ledger_snapshot_up"].samples[0].value == 1.0
    assert {(s.labels["state"], s.value) for s in families["almanac_occurrences"].samples} >= {
        ("UNKNOWN_EFFECT", 2.0)
    }


def test_occurrence_schedule_id_knows_the_manual_form() -> None:
    assert occurrence_schedule_id("hang-test.manual.u3") == "hang-test"
    assert occurrence_schedule_id("pump-check.r3.20260308T070000Z") == "pump-check"
    assert occurrence_schedule_id("daily-ops-summary.r7.20261101T013000.f0") == "daily-ops-summary"
