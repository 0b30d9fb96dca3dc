"""A ledger with the facts the console must show: a DST fold and gap, a misfire, a revision
cutover, a success and an open UNKNOWN_EFFECT case (built through the ledger's own operations).

Schedule ``ops-report`` (America/New_York, 01:30 and 02:30 daily, foldPolicy BOTH, gapPolicy SKIP):

- 2026-11-01 01:30 occurs twice (EDT −04:00 at 05:30Z, EST −05:00 at 06:30Z): two occurrences;
- 2027-03-14 02:30 does not exist: r2's SKIPPED_GAP record, placed at the gap (07:00Z);
- r2 (cutover 2027-01-01T00:00Z) owns everything from its cutover on;
- released at 2026-10-21T12:00Z with lateness PT1H: the two overdue runs of 10-21 expire
  (MISFIRE_EXPIRED) but for the catch-up bound's one, which is claimed and ends UNKNOWN_EFFECT;
- the 10-22 01:30 run succeeds.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from typing import Any

from ledger import (
    Ledger,
    OccurrenceState,
    claim,
    get_gate,
    list_occurrences,
    mark_running,
    materialize,
    publish_revision,
    release_due,
    succeeded,
    unknown_effect,
)
from timecontract import ScheduleSpecV1, parse_spec

SCHEDULE = "ops-report"
PUBLISHED = datetime(2026, 10, 20, 12, 0, tzinfo=UTC)
NOW = datetime(2026, 10, 22, 12, 0, tzinfo=UTC)
"""The console's "now" in the tests."""
R2_CUTOVER = datetime(2027, 1, 1, tzinfo=UTC)
TOKEN = "op-token-4f9c2e7a1b"
"""The operator alice's console token, read from the secrets directory; never shown in a page."""

BASE: dict[str, Any] = {
    "schema": "scheduleSpec.v1",
    "scheduleId": SCHEDULE,
    "revision": 1,
    "timeZone": "America/New_York",
    "tzdbVersion": "2026a",
    "rule": "FREQ=DAILY;BYHOUR=1,2;BYMINUTE=30",
    "gapPolicy": "SKIP",
    "foldPolicy": "BOTH",
    "misfirePolicy": "CATCH_UP_BOUNDED",
    "maxCatchUp": 1,
    "lateness": "PT1H",
    "cutoverAt": "2026-10-01T00:00:00Z",
}


def spec(**overrides: Any) -> ScheduleSpecV1:
    return parse_spec({**BASE, **overrides})


@dataclass(frozen=True)
class Facts:
    fold: tuple[str, str]
    """The two occurrences of 2026-11-01 01:30 (fold 0, fold 1)."""
    gap: str
    expired: str
    unknown: str
    succeeded: str


def build(ledger: Ledger) -> Facts:
    r1, r2 = spec(), spec(revision=2, cutoverAt="2027-01-01T00:00:00Z")
    publish_revision(ledger, r1, PUBLISHED, by="test")
    materialize(ledger, r1, PUBLISHED, R2_CUTOVER, PUBLISHED)
    publish_revision(ledger, r2, PUBLISHED + timedelta(minutes=1), by="test")
    end = datetime(2027, 3, 20, tzinfo=UTC)
    materialize(ledger, r2, R2_CUTOVER, end, PUBLISHED + timedelta(minutes=1))
    released = release_due(ledger, SCHEDULE, datetime(2026, 10, 21, 12, 0, tzinfo=UTC))
    (unknown,) = released.released
    gate = get_gate(ledger, SCHEDULE)
    at = datetime(2026, 10, 21, 12, 1, tzinfo=UTC)
    won = claim(
        ledger,
        unknown,
        gate,
        worker_identity="worker-7",
        implementation_alias="default",
        input_digest="sha256:abc",
        now_utc=at,
    )
    assert won.attempt is not None
    mark_running(ledger, unknown, 1, at, by="worker-7")
    unknown_effect(
        ledger,
        unknown,
        1,
        at + timedelta(seconds=30),
        by="worker-7",
        error_class="ReadTimeout",
        error_message="no answer within 30s",
    )
    due = release_due(ledger, SCHEDULE, datetime(2026, 10, 22, 5, 31, tzinfo=UTC))
    ok = due.released[0]
    at = datetime(2026, 10, 22, 5, 31, tzinfo=UTC)
    assert claim(
        ledger,
        ok,
        get_gate(ledger, SCHEDULE),
        worker_identity="worker-7",
        implementation_alias="default",
        input_digest="sha256:def",
        now_utc=at,
    ).won
    mark_running(ledger, ok, 1, at, by="worker-7")
    succeeded(ledger, ok, 1, at + timedelta(seconds=2), by="worker-7")
    rows = list_occurrences(ledger, SCHEDULE)
    fold = [r.occurrence_id for r in rows if r.nominal_local == datetime(2026, 11, 1, 1, 30)]
    gap = next(r.occurrence_id for r in rows if r.state is OccurrenceState.SKIPPED_GAP)
    expired = next(r.occurrence_id for r in rows if r.state is OccurrenceState.MISFIRE_EXPIRED)
    assert len(fold) == 2
    return Facts((fold[0], fold[1]), gap, expired, unknown, ok)


def console_holding(
    ledger: Ledger, settings: Any, console_settings: Any, one: ScheduleSpecV1
) -> Any:
    """A console test client at :data:`NOW` over ``ledger`` holding ``one`` schedule.

    ``one`` is published at :data:`PUBLISHED` and materialized 14 days from there, as a worker
    leaves a new schedule. Returns a ``starlette.testclient.TestClient``.
    """
    from starlette.testclient import TestClient

    from almanac.console import create_app

    publish_revision(ledger, one, PUBLISHED, by="test")
    materialize(ledger, one, PUBLISHED, PUBLISHED + timedelta(days=14), PUBLISHED)
    return TestClient(create_app(ledger, settings, console_settings, clock=lambda: NOW))
