"""An occurrence still waiting out its jitter has not started: it overlaps nothing (issue 33).

Every 10 seconds, ``jitter: PT25S``. Occurrence A is released (DUE) at its instant; B comes due
10 s later. A's recorded delay decides whether A had started by then: 25 s (a row materialized
before delays were capped at the gap to the next occurrence; written here by hand) puts its
dispatch after B's instant, so under SKIP, BUFFER_ONE and CANCEL_OTHER B is simply released and A
is left alone. With a 5 s delay A dispatched before B was due and is in flight: SKIP skips B,
naming A (the rule before this change, for every delay).
"""

from __future__ import annotations

from datetime import timedelta

import pytest
from ledger_support import T0, make_spec
from sqlalchemy import text

from ledger import (
    Ledger,
    OccurrenceState,
    list_occurrences,
    materialize,
    publish_revision,
    release_due,
    show_occurrence,
)

pytest_plugins = ["ledger_fixtures"]

S = OccurrenceState


def _a_then_b(ledger: Ledger, policy: str, a_delay_ms: int) -> tuple[S, S, str]:
    spec = make_spec(
        timeZone="UTC", rule="FREQ=SECONDLY;INTERVAL=10", jitter="PT25S", overlapPolicy=policy
    )
    publish_revision(ledger, spec, T0, by="test")
    materialize(ledger, spec, T0, T0 + timedelta(seconds=30), T0)
    a, b, *_ = list_occurrences(ledger, spec.schedule_id)
    assert a.instant_utc is not None and b.instant_utc is not None
    assert a.occurrence_id in release_due(ledger, spec.schedule_id, a.instant_utc).released
    ledger.write(
        lambda c: c.execute(
            text("UPDATE occurrences SET jitter_ms = :ms WHERE occurrence_id = :i"),
            {"ms": a_delay_ms, "i": a.occurrence_id},
        )
    )
    release_due(ledger, spec.schedule_id, b.instant_utc)
    after_b = show_occurrence(ledger, b.occurrence_id)
    trail = after_b.events[-1].why
    return (
        show_occurrence(ledger, a.occurrence_id).occurrence.state,
        after_b.occurrence.state,
        trail,
    )


@pytest.mark.parametrize("policy", ["SKIP", "BUFFER_ONE", "CANCEL_OTHER"])
def test_a_run_still_waiting_out_its_jitter_is_not_in_flight(ledger: Ledger, policy: str) -> None:
    a, b, why = _a_then_b(ledger, policy, a_delay_ms=25_000)
    assert (a, b) == (S.DUE, S.DUE)
    assert why == "released"


def test_a_run_whose_jitter_has_elapsed_is_in_flight(ledger: Ledger) -> None:
    a, b, why = _a_then_b(ledger, "SKIP", a_delay_ms=5_000)
    assert (a, b) == (S.DUE, S.SKIPPED_OVERLAP)
    assert why.startswith("overlap: ") and "is DUE (overlapPolicy SKIP)" in why
