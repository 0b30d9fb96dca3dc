"""``ledger.last_placed_at``: where a schedule's materialized occurrences end, as one aggregate.

Golden instants from the rule (daily 02:30 America/New_York, RFC 5545 with the spec's SKIP
gap policy): the last of 14 days from 2026-11-01T00:00Z is 2026-11-14 02:30 EST = 07:30Z; on
2027-03-14 02:30 does not exist (clocks jump 02:00 → 03:00 EST → EDT at 07:00Z), so that day's
record is SKIPPED_GAP, placed at its gap, 07:00Z.
"""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

from ledger_support import T0, make_spec

from ledger import (
    Ledger,
    OccurrenceState,
    last_placed_at,
    list_occurrences,
    materialize,
    publish_revision,
)

pytest_plugins = ["ledger_fixtures"]  # ledger, backend and the PostgreSQL cluster

LAST_NOVEMBER = datetime(2026, 11, 14, 7, 30, tzinfo=UTC)
GAP_2027 = datetime(2027, 3, 14, 7, 0, tzinfo=UTC)


def test_the_last_placed_instant_at_or_after_a_bound(ledger: Ledger) -> None:
    spec = make_spec()
    publish_revision(ledger, spec, T0, by="test")
    materialize(ledger, spec, T0, T0 + timedelta(days=14), T0)
    sid = spec.schedule_id
    assert last_placed_at(ledger, sid, T0) == LAST_NOVEMBER
    assert last_placed_at(ledger, sid, LAST_NOVEMBER) == LAST_NOVEMBER  # inclusive
    assert last_placed_at(ledger, sid, LAST_NOVEMBER + timedelta(seconds=1)) is None
    assert last_placed_at(ledger, "no-such-schedule", T0) is None


def test_a_skipped_gap_is_placed_at_its_gap(ledger: Ledger) -> None:
    spec = make_spec()
    publish_revision(ledger, spec, T0, by="test")
    now = datetime(2027, 3, 13, 0, 0, tzinfo=UTC)
    materialize(ledger, spec, now, datetime(2027, 3, 14, 12, 0, tzinfo=UTC), now)
    rows = list_occurrences(ledger, spec.schedule_id, from_utc=now)
    assert rows[-1].state is OccurrenceState.SKIPPED_GAP
    assert last_placed_at(ledger, spec.schedule_id, now) == GAP_2027
