"""``status`` shows the failure-streak policy, the current streak and the latest facts (issue 30).

A SQLite ledger, no Temporal: daily 09:00 UTC, ``misfirePolicy: SKIP`` with lateness PT5M and
``failureStreak: {notifyAfter: 2, pause: true}``. A release on day 3 at 12:00 expires days 1-3
(MISFIRE_EXPIRED, by the policy's hand count: streak 3 >= 2), the decision records one STREAK fact
keyed by day 1 and pauses; the reading, its text line and its JSON name all of it.
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from datetime import UTC, datetime, timedelta
from pathlib import Path

import pytest

import ledger
from almanac import readings
from almanac.cli.control import _streak_line
from almanac.cli.output import print_json
from ledger.migrate import upgrade
from ledger.streak_facts import decide_failure_streak
from timecontract import parse_spec

T0 = datetime(2026, 11, 1, 0, 0, tzinfo=UTC)
SID = "streaky"


@pytest.fixture
def handle(tmp_path: Path) -> Iterator[ledger.Ledger]:
    url = f"sqlite:///{tmp_path / 'ledger.sqlite3'}"
    upgrade(url)
    opened = readings.open_ledger(url)
    assert opened is not None
    yield opened
    opened.dispose()


def test_status_names_the_policy_the_streak_and_the_last_fact(
    handle: ledger.Ledger, capsys: pytest.CaptureFixture[str]
) -> None:
    spec = parse_spec(
        {
            "schema": "scheduleSpec.v1",
            "scheduleId": SID,
            "revision": 1,
            "timeZone": "Etc/UTC",
            "tzdbVersion": "2026a",
            "rule": "FREQ=DAILY;BYHOUR=9",
            "misfirePolicy": "SKIP",
            "cutoverAt": "2026-10-01T00:00:00Z",
            "action": {"name": "noop"},
            "failureStreak": {"notifyAfter": 2, "pause": True, "action": {"name": "noop"}},
        }
    )
    ledger.publish_revision(handle, spec, T0, by="test")
    ledger.materialize(handle, spec, T0, T0 + timedelta(days=5), T0)
    later = T0 + timedelta(days=2, hours=12)
    ledger.release_due(handle, SID, later)
    decide_failure_streak(handle, SID, later, by="test")

    reading = readings.read_status(handle, SID, later).failure_streak
    assert reading is not None
    assert (reading.notify_after, reading.recover_after, reading.action, reading.pause) == (
        2,
        1,
        "noop",
        True,
    )
    assert reading.streak == 3
    (fact,) = reading.latest
    assert fact.streak_start_occurrence_id == f"{SID}.r1.20261101T090000.f0" and fact.paused
    line = _streak_line(reading)
    assert line.startswith("failure streak 3 (notify after 2 via noop, pause; recover after 1)")
    assert f"STREAK since {SID}.r1.20261101T090000.f0" in line and "PENDING (0 attempts)" in line
    print_json({"failureStreak": reading})
    shown = json.loads(capsys.readouterr().out)["failureStreak"]
    assert (shown["notifyAfter"], shown["streak"]) == (2, 3)
    assert shown["latest"][0]["kind"] == "STREAK"
    assert shown["latest"][0]["notifyState"] == "PENDING"


def test_status_without_a_policy_has_no_failure_streak(handle: ledger.Ledger) -> None:
    spec = parse_spec(
        {
            "schema": "scheduleSpec.v1",
            "scheduleId": SID,
            "revision": 1,
            "timeZone": "Etc/UTC",
            "tzdbVersion": "2026a",
            "rule": "FREQ=DAILY;BYHOUR=9",
            "cutoverAt": "2026-10-01T00:00:00Z",
        }
    )
    ledger.publish_revision(handle, spec, T0, by="test")
    assert readings.read_status(handle, SID, T0).failure_streak is None
