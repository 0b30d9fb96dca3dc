"""The metrics snapshot counts occurrences that never ran by state and recorded reason.

A daily 02:30 America/New_York schedule (gapPolicy SKIP) materialized over 2027-03-13..16: the
US rule makes 2027-03-14 02:00–03:00 a gap (second Sunday of March), so exactly one record is
SKIPPED_GAP with reason GAP_SKIPPED; the other three days are PLANNED and not counted.
"""

from __future__ import annotations

from datetime import UTC, datetime

from ledger_support import T0, make_spec

from activities.snapshot import ledger_snapshot
from ledger import Ledger, materialize, publish_revision

pytest_plugins = ["ledger_fixtures"]  # ledger, backend and the PostgreSQL cluster


def test_a_skipped_gap_is_counted_with_its_reason(ledger: Ledger) -> None:
    spec = make_spec()
    publish_revision(ledger, spec, T0, by="test")
    window = (datetime(2027, 3, 13, tzinfo=UTC), datetime(2027, 3, 17, tzinfo=UTC))
    materialize(ledger, spec, *window, window[0])

    snapshot = ledger_snapshot(ledger, window[1])
    assert snapshot.skips == {(spec.schedule_id, "SKIPPED_GAP", "GAP_SKIPPED"): 1}
