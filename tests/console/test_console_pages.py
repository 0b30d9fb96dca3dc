"""The console's read pages over a ledger with real facts, on SQLite and PostgreSQL."""

from __future__ import annotations

import re
from datetime import timedelta

import pytest
from scenario import NOW, PUBLISHED, SCHEDULE, Facts, spec
from starlette.testclient import TestClient

from almanac.console import ConsoleSettings, create_app
from almanac.settings import AlmanacSettings
from ledger import Ledger, materialize, publish_revision

pytestmark = pytest.mark.filterwarnings("ignore:Using `httpx`:DeprecationWarning")


@pytest.fixture
def client(
    ledger: Ledger,
    facts: Facts,
    settings: AlmanacSettings,
    console_settings: ConsoleSettings,
    now: list,
) -> TestClient:
    return TestClient(create_app(ledger, settings, console_settings, clock=lambda: now[0]))


def text(html: str) -> str:
    """The page's visible text, tags removed and whitespace collapsed."""
    flat = re.sub(r"\s+", " ", re.sub(r"<[^>]+>", " ", html)).replace("&#39;", "'")
    return re.sub(r" ([:,])", r"\1", flat)


def cell(html: str, date: str) -> str:
    found = re.search(rf'data-date="{date}">(.*?)</td>', html, re.S)
    assert found, date
    return text(found.group(1))


def test_schedules_show_gate_revisions_next_run_counts_and_cases(client: TestClient) -> None:
    page = text(client.get("/schedules").text)
    assert SCHEDULE in page
    assert "enabled" in page and "generation 0" in page
    assert "r1 active since 2026-10-01T00:00:00Z" in page
    assert "r2 pending, cutover 2027-01-01T00:00:00Z" in page
    # The next PLANNED after 2026-10-22T12:00Z: 10-23 01:30 EDT, in local time and in UTC.
    assert "2026-10-23 01:30:00 -04:00 2026-10-23T05:30:00Z" in page
    assert "UNKNOWN_EFFECT: 1" in page and "SUCCEEDED: 1" in page
    assert "1 open" in page


def test_fold_night_shows_both_occurrences_with_their_offsets(
    client: TestClient, facts: Facts
) -> None:
    html = client.get(f"/schedules/{SCHEDULE}?month=2026-11").text
    day = cell(html, "2026-11-01")
    assert "DST night: clocks back 1h" in day
    assert "DST fold" in day
    assert "01:30:00 -04:00 r1" in day and "FOLD_FIRST" in day
    assert "01:30:00 -05:00 r1" in day and "FOLD_SECOND" in day
    assert f"/occurrences/{facts.fold[0]}" in html and f"/occurrences/{facts.fold[1]}" in html
    assert "DST" not in cell(html, "2026-11-02")


def test_gap_night_shows_the_skipped_time_and_the_cutover_day(client: TestClient) -> None:
    march = client.get(f"/schedules/{SCHEDULE}?month=2027-03").text
    day = cell(march, "2027-03-14")
    assert "DST night: clocks forward 1h" in day and "DST gap" in day
    assert "02:30:00 r2" in day and "SKIPPED_GAP" in day and "GAP_SKIPPED" in day
    # r2's cutover, 2027-01-01T00:00Z, is 2026-12-31 19:00 in New York.
    december = client.get(f"/schedules/{SCHEDULE}?month=2026-12").text
    assert "Cutover: r2 owns from 2027-01-01T00:00:00Z" in cell(december, "2026-12-31")


def test_month_navigation_keeps_filters(client: TestClient) -> None:
    html = client.get(f"/schedules/{SCHEDULE}?month=2026-10&state=MISFIRE_EXPIRED").text
    assert "month=2026-09&amp;state=MISFIRE_EXPIRED" in html
    assert "month=2026-11&amp;state=MISFIRE_EXPIRED" in html
    day = cell(html, "2026-10-21")
    assert "MISFIRE_EXPIRED" in day and "UNKNOWN_EFFECT" not in day


def test_list_view_pages_through_a_month_with_filters(client: TestClient) -> None:
    url = f"/schedules/{SCHEDULE}?view=list&month=2026-10&limit=2"
    seen: list[str] = []
    for _ in range(40):
        html = client.get(url).text
        seen += re.findall(r'<td><a href="/occurrences/([^"]+)">', html)
        found = re.search(r'rel="next" href="\?([^"]+)">Next page', html)
        if not found:
            break
        url = f"/schedules/{SCHEDULE}?" + found.group(1).replace("&amp;", "&")
    # 10-21 … 10-31, two a day: every one once, in order.
    assert len(seen) == len(set(seen)) == 22
    assert seen == sorted(seen)
    html = client.get(f"/schedules/{SCHEDULE}?view=list&month=2027-01&revision=1").text
    assert "No occurrences match." in html
    html = client.get(f"/schedules/{SCHEDULE}?view=list&month=2027-01&revision=2").text
    listed = html[html.index('id="list"') :]
    assert "ops-report.r2.20270101T013000.f0" in listed and "ops-report.r1." not in listed


def test_list_view_marks_the_cutover_after_the_last_row_of_the_old_revision(
    client: TestClient,
) -> None:
    # r2 owns from 2027-01-01T00:00Z, 2026-12-31 19:00 in New York: inside December, after
    # r1's last occurrence (12-31 02:30) and before r2's first (01-01 01:30, in January).
    page = text(client.get(f"/schedules/{SCHEDULE}?view=list&month=2026-12&limit=500").text)
    boundary = page.index("Cutover: r2 owns from 2027-01-01T00:00:00Z")
    assert page.rindex("2026-12-31 02:30:00 -05:00", 0, boundary) < boundary
    # Paged two rows at a time, the marker is on the last page only, once.
    url, markers = f"/schedules/{SCHEDULE}?view=list&month=2026-12&limit=2", 0
    for _ in range(40):
        html = client.get(url).text
        markers += html.count("Cutover: r2")
        found = re.search(r'rel="next" href="\?([^"]+)">Next page', html)
        if not found:
            break
        url = f"/schedules/{SCHEDULE}?" + found.group(1).replace("&amp;", "&")
    assert markers == 1


def test_occurrence_page_shows_identity_attempts_trail_and_links(
    client: TestClient, facts: Facts
) -> None:
    html = client.get(f"/occurrences/{facts.unknown}").text
    page = text(html)
    for expected in (
        "Nominal local time 2026-10-21T02:30:00",
        "Fold 0",
        "UTC offset -04:00",
        "Resolved instant 2026-10-21T06:30:00Z",
        "tzdb release 2026a",
        "Policy reason UNAMBIGUOUS",
        f"Idempotency key {facts.unknown}",
        "worker-7",
        "sha256:abc",
        "ReadTimeout",
    ):
        assert expected in page, expected
    assert f'href="http://127.0.0.1:8233/namespaces/default/workflows/{facts.unknown}"' in html
    trail = re.findall(r"(\w+|\(created\)) → (\w+) by", page)
    assert trail == [
        ("(created)", "PLANNED"),
        ("PLANNED", "DUE"),
        ("DUE", "DISPATCHING"),
        ("DISPATCHING", "RUNNING"),
        ("RUNNING", "UNKNOWN_EFFECT"),
    ]
    gap = text(client.get(f"/occurrences/{facts.gap}").text)
    assert "none (gap at 2027-03-14T07:00:00Z)" in gap and "no workflow: it never ran" in gap


@pytest.mark.parametrize(
    ("query", "message"),
    [
        ("state=BOGUS", "state='BOGUS': unknown state (one of PLANNED"),
        ("revision=0", "revision='0': a revision number"),
        ("month=2026-13", "month='2026-13': a month as YYYY-MM"),
        ("view=list&after=xyz", "after='xyz': not a page cursor of this console"),
        ("view=grid", "view='grid': month or list"),
    ],
)
def test_bad_query_input_is_one_line_naming_field_and_value(
    client: TestClient, query: str, message: str
) -> None:
    response = client.get(f"/schedules/{SCHEDULE}?{query}")
    assert response.status_code == 400
    problem = re.search(r'id="problem">(.*?)</p>', response.text, re.S)
    assert problem is not None and "\n" not in problem.group(1)
    assert text(problem.group(1)).strip().startswith(message)


@pytest.mark.parametrize("after", ["zzz", "Bad_ID"])
def test_a_schedules_cursor_naming_no_schedule_is_400_naming_it(
    client: TestClient, after: str
) -> None:
    response = client.get(f"/schedules?after={after}")
    assert response.status_code == 400
    problem = re.search(r'id="problem">(.*?)</p>', response.text, re.S)
    assert problem is not None and "\n" not in problem.group(1)
    assert text(problem.group(1)).strip().startswith(f"after='{after}': not a page cursor")
    assert client.get("/schedules", params={"after": SCHEDULE}).status_code == 200


def test_unknown_ids_are_404_naming_them(client: TestClient) -> None:
    assert "nope" in client.get("/schedules/nope").text
    response = client.get("/occurrences/nope.r1.20260101T000000.f0")
    assert response.status_code == 404


def test_a_misspelt_schedule_id_is_told_the_close_one(client: TestClient) -> None:
    # One edit from the scenario's "ops-report" (timecontract.nearest's rule); "nope" is far.
    misspelt = client.get("/schedules/ops-reprt")
    assert misspelt.status_code == 404
    assert "did you mean ops-report?" in text(misspelt.text)
    assert "did you mean" not in text(client.get("/schedules/nope").text)


def test_a_holiday_decision_shows_its_holiday(
    ledger: Ledger, settings: AlmanacSettings, console_settings: ConsoleSettings
) -> None:
    # NYSE calendar: Thanksgiving 2026 is Thursday 26 November (the holidays package's data).
    nyse = spec(
        scheduleId="nyse-open",
        rule="FREQ=DAILY;BYHOUR=9;BYMINUTE=0",
        calendar={"name": "NYSE", "release": "holidays-0.108"},
    )
    publish_revision(ledger, nyse, PUBLISHED, by="test")
    materialize(ledger, nyse, PUBLISHED, PUBLISHED + timedelta(days=40), PUBLISHED)
    client = TestClient(create_app(ledger, settings, console_settings, clock=lambda: NOW))
    html = client.get("/schedules/nyse-open?month=2026-11").text
    day = cell(html, "2026-11-26")
    assert "SKIPPED_HOLIDAY" in day and "HOLIDAY_SKIPPED “Thanksgiving Day”" in day


def test_the_live_stamp_moves_with_a_schedule_fact_that_moves_no_occurrence(
    client: TestClient, ledger: Ledger
) -> None:
    from ledger import ScheduleEventKind, record_schedule_event

    before = client.get("/live/stamp").json()["event"]
    assert client.get("/live/stamp").json()["event"] == before  # nothing recorded: no refresh
    record_schedule_event(
        ledger, SCHEDULE, ScheduleEventKind.REVISION_REJECTED, NOW, by="t", detail="rule: bad"
    )
    assert client.get("/live/stamp").json()["event"] != before
