"""``almanac.readings``: status and upcoming as the SQLite ledger says them at a given "now".

No Temporal here (the real-server test is in ``tests/cli/test_control.py``): a ledger migrated in a
temporary file, a revision published and materialized with the ledger's own functions, then read.
Expected instants are hand-computed from the rules (UTC zone, so wall time is UTC).
"""

from __future__ import annotations

from collections.abc import Iterator
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import pytest

import ledger
from almanac import readings
from ledger.migrate import upgrade
from timecontract import parse_spec

T0 = datetime(2026, 11, 1, 0, 0, tzinfo=UTC)


def spec(**overrides: Any) -> Any:
    data: dict[str, Any] = {
        "schema": "scheduleSpec.v1",
        "scheduleId": "month-end",
        "revision": 1,
        "timeZone": "Etc/UTC",
        "tzdbVersion": "2026a",
        "rule": "FREQ=MONTHLY;BYMONTHDAY=-1;BYHOUR=23",
        "cutoverAt": "2026-10-01T00:00:00Z",
    }
    data.update(overrides)
    return parse_spec(data)


@pytest.fixture
def handle(tmp_path: Path) -> Iterator[ledger.Ledger]:
    url = f"sqlite:///{tmp_path / 'ledger.sqlite3'}"
    upgrade(url)
    opened = readings.open_ledger(url)
    assert opened is not None
    yield opened
    opened.dispose()


def test_a_missing_sqlite_file_is_not_created(tmp_path: Path) -> None:
    path = tmp_path / "nowhere" / "ledger.sqlite3"
    assert readings.open_ledger(f"sqlite:///{path}") is None
    assert not path.exists()


def test_upcoming_beyond_the_horizon_is_projected_and_marked(handle: ledger.Ledger) -> None:
    month_end = spec()
    ledger.publish_revision(handle, month_end, T0, by="test")
    # A 14-day horizon from 2026-11-01 holds no month end: the ledger has nothing open.
    ledger.materialize(handle, month_end, T0, T0 + timedelta(days=14), T0)
    rows = readings.read_upcoming(handle, "month-end", T0, 3)
    assert [(r.instant_utc, r.materialized, r.state) for r in rows] == [
        (datetime(2026, 11, 30, 23, tzinfo=UTC), False, None),
        (datetime(2026, 12, 31, 23, tzinfo=UTC), False, None),
        (datetime(2027, 1, 31, 23, tzinfo=UTC), False, None),
    ]
    assert rows[0].occurrence_id == "month-end.r1.20261130T230000.f0"


def test_materialized_rows_come_first_with_their_state_then_projected_ones(
    handle: ledger.Ledger,
) -> None:
    month_end = spec()
    ledger.publish_revision(handle, month_end, T0, by="test")
    ledger.materialize(handle, month_end, T0, T0 + timedelta(days=40), T0)  # holds 11-30
    rows = readings.read_upcoming(handle, "month-end", T0, 2)
    assert [(r.instant_utc, r.materialized, r.state) for r in rows] == [
        (datetime(2026, 11, 30, 23, tzinfo=UTC), True, "PLANNED"),
        (datetime(2026, 12, 31, 23, tzinfo=UTC), False, None),
    ]


def test_a_later_revision_projects_only_what_it_owns(handle: ledger.Ledger) -> None:
    ledger.publish_revision(handle, spec(), T0, by="test")
    # r2 runs at 22:00 from 2027-01-01; r1 still owns November and December.
    later = spec(
        revision=2, rule="FREQ=MONTHLY;BYMONTHDAY=-1;BYHOUR=22", cutoverAt="2027-01-01T00:00:00Z"
    )
    ledger.publish_revision(handle, later, T0, by="test")
    rows = readings.read_upcoming(handle, "month-end", T0, 4)
    assert [(r.revision, r.instant_utc) for r in rows] == [
        (1, datetime(2026, 11, 30, 23, tzinfo=UTC)),
        (1, datetime(2026, 12, 31, 23, tzinfo=UTC)),
        (2, datetime(2027, 1, 31, 22, tzinfo=UTC)),
        (2, datetime(2027, 2, 28, 22, tzinfo=UTC)),
    ]


def test_a_rule_that_ended_yields_fewer(handle: ledger.Ledger) -> None:
    ended = spec(rule="FREQ=MONTHLY;BYMONTHDAY=-1;BYHOUR=23;COUNT=3", start="2026-10-01T00:00:00")
    ledger.publish_revision(handle, ended, T0, by="test")
    rows = readings.read_upcoming(handle, "month-end", T0, 5)
    # COUNT=3 from 2026-10-01: Oct 31 (before now), Nov 30, Dec 31.
    assert [r.instant_utc for r in rows] == [
        datetime(2026, 11, 30, 23, tzinfo=UTC),
        datetime(2026, 12, 31, 23, tzinfo=UTC),
    ]


def test_status_counts_the_state_the_ledger_holds_now(handle: ledger.Ledger) -> None:
    every_minute = spec(scheduleId="minutely", rule="FREQ=MINUTELY")
    ledger.publish_revision(handle, every_minute, T0, by="test")
    ledger.materialize(handle, every_minute, T0, T0 + timedelta(minutes=5), T0)
    first = T0  # the rule's first instant at or after the publication
    ledger.release_due(handle, "minutely", first)
    gate = ledger.get_gate(handle, "minutely")
    occurrence_id = "minutely.r1.20261101T000000.f0"
    won = ledger.claim(
        handle,
        occurrence_id,
        gate,
        worker_identity="w",
        implementation_alias="default",
        input_digest="sha256:x",
        now_utc=first,
    )
    assert won.attempt is not None
    generation = won.attempt.claim_generation
    ledger.mark_running(handle, occurrence_id, generation, first, by="test")
    ledger.succeeded(handle, occurrence_id, generation, first + timedelta(seconds=2), by="test")

    reading = readings.read_status(handle, "minutely", first + timedelta(seconds=3))
    assert reading.counts_by_state["SUCCEEDED"] == 1
    assert reading.counts_by_state["PLANNED"] == 4
    assert reading.next_instant_utc == T0 + timedelta(minutes=1)
    assert reading.gate is not None and reading.gate.active_revision == 1
    upcoming = readings.read_upcoming(handle, "minutely", first + timedelta(seconds=3), 2)
    assert [r.occurrence_id for r in upcoming] == [
        "minutely.r1.20261101T000100.f0",
        "minutely.r1.20261101T000200.f0",
    ]


def test_status_of_an_unknown_schedule_has_no_gate(handle: ledger.Ledger) -> None:
    reading = readings.read_status(handle, "never-applied", T0)
    assert reading.gate is None and set(reading.counts_by_state.values()) == {0}


def test_an_interval_spec_is_projected_beyond_the_horizon(handle: ledger.Ledger) -> None:
    # interval P1D, phase PT6H: one instant a day at 06:00Z (epoch + 6h + k days), no RRULE.
    daily = spec(scheduleId="pump-check", rule=None, interval="P1D", phase="PT6H")
    ledger.publish_revision(handle, daily, T0, by="test")
    ledger.materialize(handle, daily, T0, T0 + timedelta(hours=12), T0)  # holds 11-01 06:00Z
    rows = readings.read_upcoming(handle, "pump-check", T0, 3)
    assert [(r.occurrence_id, r.materialized, r.state) for r in rows] == [
        ("pump-check.r1.20261101T060000Z", True, "PLANNED"),
        ("pump-check.r1.20261102T060000Z", False, None),
        ("pump-check.r1.20261103T060000Z", False, None),
    ]


def test_status_projects_the_next_instant_beyond_the_horizon(handle: ledger.Ledger) -> None:
    month_end = spec()
    ledger.publish_revision(handle, month_end, T0, by="test")
    ledger.materialize(handle, month_end, T0, T0 + timedelta(days=14), T0)  # no month end
    reading = readings.read_status(handle, "month-end", T0)
    assert (reading.next_instant_utc, reading.next_materialized) == (
        datetime(2026, 11, 30, 23, tzinfo=UTC),
        False,
    )


def test_a_revision_is_active_only_from_its_cutover(handle: ledger.Ledger) -> None:
    ledger.publish_revision(handle, spec(), T0, by="test")
    later = spec(revision=2, cutoverAt="2027-01-01T00:00:00Z")
    ledger.publish_revision(handle, later, T0, by="test")
    cutover = datetime(2027, 1, 1, tzinfo=UTC)
    before = readings.read_status(handle, "month-end", T0)
    assert before.gate is not None and before.gate.active_revision == 2  # the latest published
    assert before.revision_now == 1
    assert before.pending == (readings.PendingRevision(2, cutover),)
    at = readings.read_status(handle, "month-end", cutover)  # half-open: r2 owns its cutover
    assert (at.revision_now, at.pending) == (2, ())


def test_status_names_the_deadline_of_the_revision_that_owns_now(handle: ledger.Ledger) -> None:
    ledger.publish_revision(handle, spec(deadline="PT30M"), T0, by="test")
    later = spec(revision=2, cutoverAt="2027-01-01T00:00:00Z")  # no deadline from its cutover
    ledger.publish_revision(handle, later, T0, by="test")
    assert readings.read_status(handle, "month-end", T0).deadline == "PT30M"
    at = readings.read_status(handle, "month-end", datetime(2027, 1, 1, tzinfo=UTC))
    assert at.deadline is None
