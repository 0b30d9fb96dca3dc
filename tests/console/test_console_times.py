"""Local times in the console carry their seconds, as the CLI's local times do.

A run at 15:33:10 UTC (``BYSECOND=10``) in the ``UTC`` zone: its local time is 15:33:10 at offset
+00:00 (the offset as ``almanac ledger show`` writes it), never ``15:33``. Times read from a clock
(events, attempts) are shown to the second too, their fraction cut, never ``15:33:10.250000Z``.
"""

from __future__ import annotations

import re
from datetime import UTC, datetime

import pytest
from scenario import console_holding, spec
from starlette.testclient import TestClient
from test_console_pages import cell, text

from almanac.console import ConsoleSettings
from almanac.settings import AlmanacSettings
from ledger import Ledger, claim, get_gate, mark_running, release_due, succeeded

pytestmark = pytest.mark.filterwarnings("ignore:Using `httpx`:DeprecationWarning")

SECONDS = "on-the-second"


@pytest.fixture
def client(
    ledger: Ledger, settings: AlmanacSettings, console_settings: ConsoleSettings
) -> TestClient:
    odd = spec(
        scheduleId=SECONDS,
        timeZone="UTC",
        rule="FREQ=DAILY;BYHOUR=15;BYMINUTE=33;BYSECOND=10",
    )
    return console_holding(ledger, settings, console_settings, odd)


def test_the_next_run_shows_its_seconds_in_local_time(client: TestClient) -> None:
    page = text(client.get("/schedules").text)
    assert "2026-10-22 15:33:10 +00:00 2026-10-22T15:33:10Z" in page
    upcoming = text(client.get(f"/schedules/{SECONDS}").text)
    assert "2026-10-22 15:33:10 +00:00 · 2026-10-22T15:33:10Z" in upcoming


def test_the_month_grid_shows_each_occurrences_seconds(client: TestClient) -> None:
    html = client.get(f"/schedules/{SECONDS}?month=2026-10").text
    assert "15:33:10 +00:00 r1" in cell(html, "2026-10-23")


def test_event_and_attempt_times_show_whole_seconds(ledger: Ledger, client: TestClient) -> None:
    released = release_due(ledger, SECONDS, datetime(2026, 10, 20, 15, 33, 10, 250_000, UTC))
    (run,) = released.released
    at = datetime(2026, 10, 20, 15, 33, 11, 500_000, UTC)
    won = claim(
        ledger,
        run,
        get_gate(ledger, SECONDS),
        worker_identity="worker-7",
        implementation_alias="default",
        input_digest="sha256:abc",
        now_utc=at,
    )
    assert won.won
    mark_running(ledger, run, 1, at, by="worker-7")
    succeeded(ledger, run, 1, datetime(2026, 10, 20, 15, 33, 12, 999_999, UTC), by="worker-7")
    page = text(client.get(f"/occurrences/{run}").text)
    # The attempt row: started, finished, outcome.
    assert "2026-10-20T15:33:11Z 2026-10-20T15:33:12Z SUCCEEDED" in page
    assert "2026-10-20T15:33:10Z: PLANNED → DUE" in page
    assert "2026-10-20T15:33:12Z: RUNNING → SUCCEEDED" in page
    assert not re.search(r"\d\d:\d\d:\d\d\.\d", page), page
