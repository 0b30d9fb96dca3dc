"""A dense schedule's materialization is bounded in occurrences: per horizon, call and transaction.

The schedule fires every other second of every day through BYxxx lists (30 a minute, the densest
supported; its rule period is a day, so 2,000 periods would be 2,000 days). Expected values are
the rule's arithmetic (one occurrence every 2 s from a whole minute):

- The horizon holds ``HORIZON_OCCURRENCES`` = 5,000 occurrences: it ends 10,000 s (2:46:40) after
  the decision instant, not 14 days (604,800 occurrences) later.
- After a week's outage the window from the last materialization holds 302,400: one call writes
  ``MATERIALIZE_LIMIT`` = 10,000 of them (the next 20,000 s, with no hole) and says where it
  stopped; the next call continues from there.
- No transaction writes more than ``CHUNK_OCCURRENCES`` = 1,000 occurrences.
"""

from __future__ import annotations

from datetime import timedelta
from typing import Any

import pytest
from faultkit import day, local_actions, publish, spec_data

import ledger
from activities import io
from activities.clock import FixedClock
from activities.ledger_activities import HORIZON_OCCURRENCES, MATERIALIZE_LIMIT, AlmanacActivities
from ledger import Ledger, MaterializeResult
from ledger.materialization import CHUNK_OCCURRENCES

pytestmark = [pytest.mark.fault]

EVERY_OTHER = ",".join(str(s) for s in range(0, 60, 2))
RULE = (
    f"FREQ=DAILY;BYHOUR={','.join(map(str, range(24)))};"
    f"BYMINUTE={','.join(map(str, range(60)))};BYSECOND={EVERY_OTHER}"
)
APPLIED = day(1, 0)
FOURTEEN_DAYS = timedelta(days=14).total_seconds()


def transaction_sizes(store: Ledger, monkeypatch: pytest.MonkeyPatch) -> list[int]:
    """Record how many occurrences each materialization transaction created."""
    sizes: list[int] = []
    write = store.write

    def counting(work: Any) -> Any:
        result = write(work)
        if isinstance(result, MaterializeResult):
            sizes.append(len(result.created))
        return result

    monkeypatch.setattr(store, "write", counting)
    return sizes


def test_horizon_call_and_transaction_are_bounded_in_occurrences(
    store: Ledger, monkeypatch: pytest.MonkeyPatch
) -> None:
    publish(store, spec_data("dense", rule=RULE, cutoverAt="2026-12-01T00:00:00Z"), APPLIED)
    sizes = transaction_sizes(store, monkeypatch)
    at_apply = AlmanacActivities(store, local_actions(), identity="t", clock=FixedClock(APPLIED))
    first = at_apply.materialize(io.MaterializeOccurrencesInput("dense", APPLIED, FOURTEEN_DAYS))
    assert HORIZON_OCCURRENCES == 5_000
    assert first.materialized_through_utc == APPLIED + timedelta(seconds=10_000)
    assert first.inserted == 5_000

    week_later = APPLIED + timedelta(days=7)
    after = AlmanacActivities(store, local_actions(), identity="t", clock=FixedClock(week_later))
    resumed = io.MaterializeOccurrencesInput(
        "dense", week_later, FOURTEEN_DAYS, from_utc=first.materialized_through_utc
    )
    second = after.materialize(resumed)
    assert MATERIALIZE_LIMIT == 10_000
    assert second.inserted == 10_000
    assert second.materialized_through_utc == first.materialized_through_utc + timedelta(
        seconds=20_000
    )
    written = ledger.list_occurrences(
        store, "dense", from_utc=APPLIED, to_utc=second.materialized_through_utc, limit=20_000
    )
    assert len(written) == 15_000  # every other second of [APPLIED, through): no hole

    third = after.materialize(
        io.MaterializeOccurrencesInput(
            "dense", week_later, FOURTEEN_DAYS, from_utc=second.materialized_through_utc
        )
    )
    assert third.inserted == 10_000
    assert sizes and max(sizes) <= CHUNK_OCCURRENCES == 1_000
