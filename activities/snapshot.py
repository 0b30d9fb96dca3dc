"""The ledger, read for metrics: state counts, skips, open cases, deadline misses, streaks.

Metrics describe the ledger; they never replace it. The scrape happens at the edge (the worker's
metrics endpoint), which is where ``now`` is read.
"""

from __future__ import annotations

from datetime import datetime

import ledger
from activities.metrics import LedgerSnapshot
from ledger.deadlines import count_deadline_misses
from ledger.queries import known_schedules
from ledger.shadow import latest_mismatches
from ledger.streak_facts import streak_thresholds
from ledger.streaks import failure_streaks


def ledger_snapshot(ledger_: ledger.Ledger, now_utc: datetime) -> LedgerSnapshot:
    """Read the known schedules, state counts and open cases (ages in seconds at ``now_utc``)."""
    counts = {
        (schedule_id, state.value): n
        for (schedule_id, state), n in ledger.counts_by_schedule_and_state(ledger_).items()
    }
    # Grouped by the occurrence row's schedule_id, not parsed from its ID: a manual run's
    # ``<scheduleId>.manual.<requestId>`` once failed the whole read (and every gauge with it).
    open_unknown = {
        schedule_id: (count, (now_utc - oldest_opened_utc).total_seconds())
        for schedule_id, (count, oldest_opened_utc) in ledger.open_cases_by_schedule(
            ledger_
        ).items()
    }
    return LedgerSnapshot(
        schedules=frozenset(known_schedules(ledger_)),
        counts=counts,
        open_unknown=open_unknown,
        shadow_mismatches=latest_mismatches(ledger_),
        skips=ledger.skips_by_schedule_state_and_reason(ledger_),
        deadline_misses=ledger_.read(count_deadline_misses),
        failure_streaks=ledger_.read(failure_streaks),
        streak_thresholds=ledger_.read(streak_thresholds),
    )
