"""``overlapPolicy`` in ``release_due`` on SQLite and PostgreSQL: several overdue at once.

A daily 02:30 America/New_York schedule (EDT until 2026-11-01 06:00Z, then EST) released once at
T0 + 3 days with ``CATCH_UP_BOUNDED``/``maxCatchUp: 3`` and a lateness of 3 days, so the three
occurrences of 2026-11-01, -02 and -03 come due in one release, oldest first. Temporal's
vocabulary decides (timecontract.OverlapPolicy's docstring): under SKIP the first runs and the
others are skipped naming it; BUFFER_ALL releases all three and holds the two younger ones;
BUFFER_ONE holds one and skips the third; CANCEL_OTHER runs only the newest.
"""

from __future__ import annotations

from datetime import timedelta

import pytest
from ledger_support import T0, make_spec

from ledger import (
    Ledger,
    OccurrenceState,
    list_occurrences,
    materialize,
    publish_revision,
    release_due,
)

pytest_plugins = ["ledger_fixtures"]

S = OccurrenceState
IDS = [f"daily-ops-summary.r1.2026110{d}T023000.f0" for d in (1, 2, 3)]


def _release(ledger: Ledger, policy: str) -> tuple[dict[str, S], tuple[str, ...], tuple[str, ...]]:
    spec = make_spec(
        overlapPolicy=policy, maxCatchUp=3, lateness="P3D", misfirePolicy="CATCH_UP_BOUNDED"
    )
    publish_revision(ledger, spec, T0, by="test")
    materialize(ledger, spec, T0, T0 + timedelta(days=3), T0)
    result = release_due(ledger, spec.schedule_id, T0 + timedelta(days=3))
    rows = list_occurrences(ledger, spec.schedule_id, to_utc=T0 + timedelta(days=3))
    return {r.occurrence_id: r.state for r in rows}, result.held, result.skipped


@pytest.mark.parametrize(
    ("policy", "states", "held"),
    [
        ("ALLOW_ALL", [S.DUE, S.DUE, S.DUE], []),
        ("SKIP", [S.DUE, S.SKIPPED_OVERLAP, S.SKIPPED_OVERLAP], []),
        ("BUFFER_ALL", [S.DUE, S.DUE, S.DUE], IDS[1:]),
        ("BUFFER_ONE", [S.DUE, S.DUE, S.SKIPPED_OVERLAP], IDS[1:2]),
        ("CANCEL_OTHER", [S.CANCELLED, S.CANCELLED, S.DUE], []),
    ],
)
def test_a_catch_up_of_three_obeys_the_overlap_policy(
    ledger: Ledger, policy: str, states: list[S], held: list[str]
) -> None:
    got, got_held, skipped = _release(ledger, policy)
    assert [got[i] for i in IDS] == states
    assert list(got_held) == held
    assert list(skipped) == [i for i, s in zip(IDS, states, strict=True) if s is S.SKIPPED_OVERLAP]
