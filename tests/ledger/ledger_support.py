"""Helpers shared by the ledger tests (fixtures live in conftest.py)."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta
from typing import Any

from ledger import (
    ClaimResult,
    Ledger,
    OccurrenceState,
    claim,
    get_gate,
    materialize,
    publish_revision,
    release_due,
)
from timecontract import ScheduleSpecV1, parse_spec

T0 = datetime(2026, 11, 1, 0, 0, tzinfo=UTC)
"""A fixed "now" for tests: 2026-11-01T00:00:00Z (America/New_York falls back at 06:00Z)."""


BASE_SPEC: dict[str, Any] = {
    "schema": "scheduleSpec.v1",
    "scheduleId": "daily-ops-summary",
    "revision": 1,
    "timeZone": "America/New_York",
    "tzdbVersion": "2026a",
    "rule": "FREQ=DAILY;BYHOUR=2;BYMINUTE=30",
    "gapPolicy": "SKIP",
    "foldPolicy": "FIRST_ONLY",
    "misfirePolicy": "CATCH_UP_BOUNDED",
    "maxCatchUp": 2,
    "cutoverAt": "2026-10-01T00:00:00Z",
}


def make_spec(**overrides: Any) -> ScheduleSpecV1:
    """A daily 02:30 America/New_York spec, revision 1, cutover 2026-10-01Z, with overrides."""
    return parse_spec({**BASE_SPEC, **overrides})


WORKER = "worker-1"
ALIAS = "default"


def due_occurrence(ledger: Ledger, spec: ScheduleSpecV1 | None = None) -> str:
    """Publish ``spec`` (default: :func:`make_spec`) at T0, materialize 3 days, release the first.

    Returns the first occurrence's ID, DUE at its instant.
    """
    spec = spec or make_spec()
    publish_revision(ledger, spec, T0, by="test")
    result = materialize(ledger, spec, T0, T0 + timedelta(days=3), T0)
    first = next(r for r in result.rows if r.state is OccurrenceState.PLANNED)
    assert first.instant_utc is not None
    released = release_due(ledger, spec.schedule_id, first.instant_utc)
    assert first.occurrence_id in released.released
    return first.occurrence_id


def claim_now(ledger: Ledger, occurrence_id: str, now: datetime, **kw: Any) -> ClaimResult:
    """Claim with a fresh gate read, as a worker would."""
    schedule_id = occurrence_id.split(".r")[0]
    gate = kw.pop("gate", None) or get_gate(ledger, schedule_id)
    return claim(
        ledger,
        occurrence_id,
        gate,
        worker_identity=kw.pop("worker_identity", WORKER),
        implementation_alias=kw.pop("implementation_alias", ALIAS),
        input_digest=kw.pop("input_digest", "sha256:input"),
        now_utc=now,
    )
