"""The ledger, read for metrics: state counts per schedule and open UNKNOWN_EFFECT cases.

Metrics describe the ledger; they never replace it. The scrape happens at the edge (the worker's
metrics endpoint), which is where ``now`` is read.
"""

from __future__ import annotations

from datetime import datetime

import ledger
from activities.metrics import LedgerSnapshot
from ledger.shadow import latest_mismatches
from timecontract import occurrence_schedule_id


def ledger_snapshot(ledger_: ledger.Ledger, now_utc: datetime) -> LedgerSnapshot:
    """Read state counts and open reconciliation cases (ages in seconds at ``now_utc``)."""
    counts = {
        (schedule_id, state.value): n
        for (schedule_id, state), n in ledger.counts_by_schedule_and_state(ledger_).items()
    }
    open_unknown: dict[str, tuple[int, float]] = {}
    for case in ledger.open_cases(ledger_):
        schedule_id = occurrence_schedule_id(case.occurrence_id)
        count, oldest = open_unknown.get(schedule_id, (0, 0.0))
        age = (now_utc - case.opened_at_utc).total_seconds()
        open_unknown[schedule_id] = (count + 1, max(oldest, age))
    return LedgerSnapshot(
        counts=counts,
        open_unknown=open_unknown,
        shadow_mismatches=latest_mismatches(ledger_),
    )
