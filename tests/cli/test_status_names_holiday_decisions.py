"""``almanac status`` names each holiday decision ahead: the holiday and the calendar release.

A SQLite ledger holds two NYSE schedules materialized with the ledger's own functions; the status
command renders the ledger's reading (Temporal replaced by a client answering from that reading).
Expected: NYSE is closed on Good Friday, 26 March 2027 (nyse.com holiday list); 09:00 New York is
13:00Z (EDT, UTC−4, from 14 March 2027); PRECEDING runs it on Thursday 25 March.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Iterator
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import pytest
from typer.testing import Result

import ledger
from almanac import readings
from almanac.cli import control
from almanac.schedule_reader import LiveStatus
from ledger.migrate import upgrade
from timecontract import parse_spec

NOW = datetime(2027, 3, 20, tzinfo=UTC)


def _spec(schedule_id: str, policy: str) -> Any:
    return parse_spec(
        {
            "schema": "scheduleSpec.v1",
            "scheduleId": schedule_id,
            "revision": 1,
            "timeZone": "America/New_York",
            "tzdbVersion": "2026a",
            "rule": "FREQ=WEEKLY;BYDAY=FR;BYHOUR=9",
            "calendar": {"name": "NYSE", "release": "holidays-0.108"},
            "holidayPolicy": policy,
            "cutoverAt": "2027-03-01T00:00:00Z",
        }
    )


class _ReadingClient:
    """The client's ``status`` and ``upcoming`` answered from the ledger's reading at NOW."""

    def __init__(self, handle: ledger.Ledger) -> None:
        self.handle = handle

    async def status(self, schedule_id: str) -> LiveStatus:
        live = LiveStatus(schedule_id, None, None)
        live.take(readings.read_status(self.handle, schedule_id, NOW))
        return live

    async def upcoming(self, schedule_id: str, n: int) -> list[readings.Upcoming]:
        return []


@pytest.fixture
def ledger_now(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[ledger.Ledger]:
    url = f"sqlite:///{tmp_path / 'ledger.sqlite3'}"
    upgrade(url)
    handle = readings.open_ledger(url)
    assert handle is not None
    for schedule_id, policy in (("good-friday-skip", "SKIP"), ("good-friday-move", "PRECEDING")):
        spec = _spec(schedule_id, policy)
        ledger.publish_revision(handle, spec, NOW, by="test")
        ledger.materialize(handle, spec, NOW, NOW + timedelta(days=14), NOW)

    async def connect() -> _ReadingClient:
        return _ReadingClient(handle)

    monkeypatch.setattr(control, "_connect", connect)
    yield handle
    handle.dispose()


def test_status_text_names_a_skipped_holiday_and_its_calendar_release(
    ledger_now: ledger.Ledger, run: Callable[..., Result]
) -> None:
    result = run("status", "good-friday-skip", "-n", "0")
    assert result.exit_code == 0, result.output
    assert "holiday decisions ahead:" in result.output
    line = '2027-03-26T13:00:00Z HOLIDAY_SKIPPED "Good Friday" (NYSE@holidays-0.108)'
    assert line in result.output


def test_status_text_names_a_moved_occurrence_with_its_nominal_time(
    ledger_now: ledger.Ledger, run: Callable[..., Result]
) -> None:
    result = run("status", "good-friday-move", "-n", "0")
    assert result.exit_code == 0, result.output
    assert (
        '2027-03-25T13:00:00Z HOLIDAY_PRECEDING "Good Friday" (NYSE@holidays-0.108) '
        "PLANNED, nominal 2027-03-26T09:00:00"
    ) in result.output


def test_status_json_carries_the_holiday_decisions(
    ledger_now: ledger.Ledger, run: Callable[..., Result]
) -> None:
    result = run("status", "good-friday-skip", "-n", "0", "--json")
    assert result.exit_code == 0, result.output
    shown = json.loads(result.stdout)["status"]["holidays"]
    assert shown == [
        {
            "occurrenceId": "good-friday-skip.r1.20270326T090000.f0",
            "nominalLocal": "2027-03-26T09:00:00",
            "instant": "2027-03-26T13:00:00Z",
            "state": "SKIPPED_HOLIDAY",
            "reason": "HOLIDAY_SKIPPED",
            "holiday": "Good Friday",
            "calendar": "NYSE@holidays-0.108",
        }
    ]
