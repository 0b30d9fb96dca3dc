"""Beyond the materialized horizon: the console shows the next run ``almanac status`` projects
from the published spec, marked not yet materialized, and says so on a month it has not reached.

Golden values from the calendar: after 2026-10-22 the next 29 February is in 2028 (a leap year;
2027 is not), and London keeps GMT (+00:00) in February.
"""

from __future__ import annotations

import pytest
from scenario import NOW, console_holding, spec
from starlette.testclient import TestClient
from test_console_pages import text

from almanac.console import ConsoleSettings
from almanac.readings import read_status
from almanac.settings import AlmanacSettings
from ledger import Ledger

pytestmark = pytest.mark.filterwarnings("ignore:Using `httpx`:DeprecationWarning")

LEAP = "leap-day"


@pytest.fixture
def client(
    ledger: Ledger, settings: AlmanacSettings, console_settings: ConsoleSettings
) -> TestClient:
    leap = spec(
        scheduleId=LEAP,
        timeZone="Europe/London",
        rule="FREQ=YEARLY;BYMONTH=2;BYMONTHDAY=29;BYHOUR=8;BYMINUTE=0",
    )
    return console_holding(ledger, settings, console_settings, leap)


NEXT = "2028-02-29 08:00:00 +00:00 2028-02-29T08:00:00Z"


def test_the_overview_shows_the_projected_next_run_marked_not_materialized(
    client: TestClient, ledger: Ledger
) -> None:
    page = text(client.get("/schedules").text)
    assert f"{NEXT} beyond the horizon, not yet materialized" in page
    # The instant ``almanac status`` shows for it.
    status = read_status(ledger, LEAP, NOW)
    assert not status.next_materialized
    assert status.next_instant_utc is not None
    assert status.next_instant_utc.isoformat() == "2028-02-29T08:00:00+00:00"


def test_the_schedule_page_shows_the_projected_next_run(client: TestClient) -> None:
    page = text(client.get(f"/schedules/{LEAP}").text)
    assert "none materialized" not in page
    assert "2028-02-29 08:00:00 +00:00 · 2028-02-29T08:00:00Z · beyond the horizon" in page


def test_a_month_beyond_the_horizon_says_so_and_lists_its_projected_runs(
    client: TestClient,
) -> None:
    page = text(client.get(f"/schedules/{LEAP}?month=2028-02").text)
    assert "2028-02 lies beyond the materialized horizon: not yet materialized" in page
    assert "Projected from the published spec" in page
    assert "2028-02-29 08:00:00 +00:00 · 2028-02-29T08:00:00Z · r1" in page


def test_a_month_beyond_the_horizon_without_runs_says_it_runs_nothing(
    client: TestClient,
) -> None:
    for view in ("month", "list"):
        page = text(client.get(f"/schedules/{LEAP}?month=2027-02&view={view}").text)
        assert "2027-02 lies beyond the materialized horizon: not yet materialized" in page
        assert "The published spec runs nothing in it." in page


def test_a_past_month_is_not_called_unmaterialized(client: TestClient) -> None:
    page = text(client.get(f"/schedules/{LEAP}?month=2026-09").text)
    assert "lies beyond the materialized horizon" not in page


def test_a_month_past_the_calendars_years_says_it_cannot_be_projected(
    ledger: Ledger, settings: AlmanacSettings, console_settings: ConsoleSettings
) -> None:
    # holidays-0.108's NYSE calendar covers 1970–2200 (the release's own data): 2201-01 is past
    # it, so the month is said to be unprojectable, as `almanac preview` refuses such a window.
    nyse = spec(
        scheduleId="nyse-month-end",
        rule="FREQ=MONTHLY;BYDAY=MO,TU,WE,TH,FR;BYSETPOS=-1;BYHOUR=16;BYMINUTE=30",
        calendar={"name": "NYSE", "release": "holidays-0.108"},
        businessDaysOnly=True,
    )
    client = console_holding(ledger, settings, console_settings, nyse)
    for view in ("month", "list"):
        answer = client.get(f"/schedules/nyse-month-end?month=2201-01&view={view}")
        assert answer.status_code == 200
        page = text(answer.text)
        assert "2201-01 lies beyond the materialized horizon: not yet materialized" in page
        assert "It cannot be projected: calendar.release='holidays-0.108'" in page
        assert "covers 1970–2200, not 2201-01-01" in page


def test_a_month_holding_the_horizon_end_says_after_it(
    ledger: Ledger, settings: AlmanacSettings, console_settings: ConsoleSettings
) -> None:
    # Published 2026-10-20T12:00Z and materialized 14 days: the last run placed is 3 November,
    # 08:00 in London (GMT after 25 October) = 08:00Z, itself materialized.
    daily = spec(
        scheduleId="daily-london", timeZone="Europe/London", rule="FREQ=DAILY;BYHOUR=8;BYMINUTE=0"
    )
    client = console_holding(ledger, settings, console_settings, daily)
    page = text(client.get("/schedules/daily-london?month=2026-11").text)
    assert "After 2026-11-03T08:00:00Z, 2026-11 lies beyond the materialized horizon" in page
    assert "From 2026-11-03T08:00:00Z on" not in page
    # A month wholly beyond it is unmaterialized from its first instant.
    later = text(client.get("/schedules/daily-london?month=2026-12").text)
    assert "From 2026-12-01T00:00:00Z on, 2026-12 lies beyond the materialized horizon" in later
