"""The console in a real browser (Debian chromium): what a person sees on each page, the resolve
form worked by keyboard, and a live update without a reload. Screenshots of each page are saved
as test artifacts (``tests/console/browser.py``)."""

from __future__ import annotations

from collections.abc import Iterator
from datetime import timedelta
from pathlib import Path
from typing import Any

import pytest
from browser import artifacts, chromium, require_browser, serve, wait_for
from scenario import NOW, SCHEDULE, TOKEN, Facts

from almanac.console import ConsoleSettings, create_app
from almanac.settings import AlmanacSettings
from ledger import (
    Ledger,
    OccurrenceState,
    ReconciliationResolution,
    resolve_reconciliation,
    show_occurrence,
)

pytestmark = pytest.mark.browser


@pytest.fixture(params=["sqlite"])
def backend(request: pytest.FixtureRequest) -> str:
    return str(request.param)


@pytest.fixture
def site(
    ledger: Ledger, facts: Facts, settings: AlmanacSettings, console_settings: ConsoleSettings
) -> Iterator[str]:
    require_browser()
    with serve(create_app(ledger, settings, console_settings, clock=lambda: NOW)) as url:
        yield url


@pytest.fixture
def browser(tmp_path: Path) -> Iterator[Any]:
    require_browser()
    with chromium(tmp_path / "profile") as driver:
        yield driver


def shot(browser: Any, name: str) -> None:
    browser.save_screenshot(str(artifacts() / f"{name}.png"))


def text_of(browser: Any, css: str) -> str:
    from selenium.webdriver.common.by import By

    return str(browser.find_element(By.CSS_SELECTOR, css).text)


def test_every_page_shows_the_ledgers_facts(site: str, browser: Any, facts: Facts) -> None:
    browser.get(f"{site}/schedules")
    row = text_of(browser, "table.schedules tbody tr")
    assert SCHEDULE in row and "enabled" in row and "2026-10-23 01:30:00 -04:00" in row
    shot(browser, "01-schedules")

    browser.get(f"{site}/schedules/{SCHEDULE}?month=2026-11")
    fold = text_of(browser, 'td[data-date="2026-11-01"]')
    assert "DST night: clocks back 1h" in fold and "DST fold" in fold
    assert "01:30:00 -04:00" in fold and "01:30:00 -05:00" in fold
    shot(browser, "02-month-fold")

    browser.get(f"{site}/schedules/{SCHEDULE}?month=2027-03")
    gap = text_of(browser, 'td[data-date="2027-03-14"]')
    assert "clocks forward 1h" in gap and "SKIPPED_GAP" in gap
    shot(browser, "03-month-gap")

    browser.get(f"{site}/schedules/{SCHEDULE}?view=list&month=2026-10&state=MISFIRE_EXPIRED")
    listed = text_of(browser, "#list tbody")
    assert "MISFIRE_EXPIRED" in listed and "SUCCEEDED" not in listed
    shot(browser, "04-list-misfire")

    browser.get(f"{site}/occurrences/{facts.unknown}")
    page = text_of(browser, "main")
    assert "UNKNOWN_EFFECT" in page and "ReadTimeout" in page and "worker-7" in page
    assert "workflow " + facts.unknown + " in the Temporal UI" in page
    shot(browser, "05-occurrence-unknown-effect")

    browser.get(f"{site}/preview")
    from selenium.webdriver.common.by import By

    browser.find_element(By.ID, "spec").send_keys(
        "schema: scheduleSpec.v1\nscheduleId: p\nrevision: 1\ntimeZone: America/New_York\n"
        'tzdbVersion: 2026a\nrule: "FREQ=DAILY;BYHOUR=1;BYMINUTE=30"\nfoldPolicy: BOTH\n'
        "cutoverAt: 2026-10-31T00:00:00Z\n"
    )
    browser.find_element(By.CSS_SELECTOR, "main form button[type=submit]").click()
    wait_for(lambda: browser.find_elements(By.ID, "records"), "the preview table")
    records = text_of(browser, "#records")
    assert "FOLD_FIRST" in records and "FOLD_SECOND" in records
    shot(browser, "06-preview")


def test_an_operator_resolves_a_case_by_keyboard(
    site: str, browser: Any, facts: Facts, ledger: Ledger
) -> None:
    from selenium.webdriver.common.by import By
    from selenium.webdriver.common.keys import Keys

    browser.get(f"{site}/queue")
    assert "IN HUMAN QUEUE" in text_of(browser, "main")
    assert not browser.find_elements(By.CSS_SELECTOR, "form.resolve")
    shot(browser, "07-queue-read-only")
    browser.get(f"{site}/login")
    browser.find_element(By.NAME, "operator").send_keys("alice")
    browser.find_element(By.NAME, "token").send_keys(TOKEN + Keys.ENTER)
    wait_for(lambda: browser.find_elements(By.ID, "operator"), "the signed-in header")
    assert TOKEN not in browser.page_source
    radio = browser.find_element(By.CSS_SELECTOR, "form.resolve input[value=NOT_APPLIED]")
    radio.send_keys(Keys.SPACE)
    radio.send_keys(Keys.TAB)
    browser.switch_to.active_element.send_keys(Keys.SHIFT + Keys.TAB)
    assert browser.switch_to.active_element.get_attribute("value") == "NOT_APPLIED"
    reason = browser.find_element(By.NAME, "reason")
    reason.send_keys("downstream has no record of it")
    shot(browser, "08-queue-resolving")
    reason.send_keys(Keys.ENTER)
    wait_for(lambda: browser.find_elements(By.ID, "resolved"), "the resolved message")
    assert f"{facts.unknown}: NOT_APPLIED by console:alice" in text_of(browser, "#resolved")
    shot(browser, "09-queue-resolved")
    detail = show_occurrence(ledger, facts.unknown)
    assert detail.occurrence.state is OccurrenceState.FAILED
    assert detail.case is not None and detail.case.resolved_by == "console:alice"


def test_a_page_updates_live_without_a_reload(
    site: str, browser: Any, facts: Facts, ledger: Ledger
) -> None:
    browser.get(f"{site}/occurrences/{facts.unknown}")
    browser.execute_script("window.almanacMarker = 'same page';")
    assert "UNKNOWN_EFFECT" in text_of(browser, "#live p")
    wait_for(lambda: browser.execute_script("return document.readyState") == "complete", "load")
    resolve_reconciliation(
        ledger,
        facts.unknown,
        ReconciliationResolution.SUCCEEDED,
        NOW + timedelta(minutes=1),
        by="reconciler",
        note="result query says done",
    )
    wait_for(lambda: "SUCCEEDED" in text_of(browser, "#live p"), "the live region to update", 20)
    assert browser.execute_script("return window.almanacMarker") == "same page"
    assert "reconciled: SUCCEEDED" in text_of(browser, "#events")
    shot(browser, "10-occurrence-live-updated")
