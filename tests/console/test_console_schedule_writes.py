"""Disable, enable and trigger from a schedule's page, on a real Temporal dev server and worker.

The console connects with the Temporal settings the CLI reads (``AlmanacSettings``) and sends
what ``almanac disable``/``enable``/``trigger`` send, through ``AlmanacClient``; nothing is
mocked. Expectations from the contract (docs/console.md, DESIGN §13): a write needs an operator
and the session's CSRF token, else nothing is written; the ledger records who did it
(``console:<operator>``); a bad input is one line naming the field and value, nothing written.
Only the enable verdict's wording is checked against a given answer (``control.send`` replaced):
a real enable that decides misfires needs instants to pass while disabled.
"""

from __future__ import annotations

import re
import uuid
from collections.abc import AsyncIterator
from dataclasses import dataclass
from datetime import timedelta
from pathlib import Path
from typing import Any

import anyio
import httpx
import pytest
from scenario import NOW, SCHEDULE, TOKEN, Facts
from stack import Stack, running_stack
from temporal_env import eventually
from temporalio.testing import WorkflowEnvironment

import ledger
from activities.io import ChangeGateResult
from almanac.console import ConsoleSettings, control, create_app
from almanac.settings import AlmanacSettings, TemporalSettings
from ledger import OccurrenceState, ScheduleEventKind, get_gate, schedule_events

pytestmark = [pytest.mark.anyio, pytest.mark.temporal]


def _csrf(html: str) -> str:
    found = re.search(r'name="csrf" value="([^"]+)"', html)
    assert found
    return found.group(1)


def _problem(html: str) -> str:
    found = re.search(r'id="problem">(.*?)</p>', html, re.S)
    assert found, html
    return found.group(1).replace("&#39;", "'")


class Site:
    """The console over the stack's ledger, spoken to over ASGI in the test's event loop."""

    def __init__(self, http: httpx.AsyncClient, stack: Stack, sid: str) -> None:
        self.http, self.stack, self.sid = http, stack, sid

    async def sign_in(self) -> None:
        page = (await self.http.get("/login")).text
        data = {"csrf": _csrf(page), "operator": "alice", "token": TOKEN}
        assert (await self.http.post("/login", data=data)).status_code == 303

    async def post(self, action: str, csrf: str | None = "", **fields: str) -> httpx.Response:
        """POST a write with the session's CSRF token (``csrf=""``), none, or a forged one."""
        data = dict(fields)
        if csrf == "":
            csrf = _csrf((await self.http.get("/preview")).text)
        if csrf is not None:
            data["csrf"] = csrf
        return await self.http.post(f"/schedules/{self.sid}/{action}", data=data)


@dataclass
class Running:
    """A running schedule on the dev server with its worker, and the console app over it."""

    stack: Stack
    sid: str
    app: Any


@pytest.fixture
async def running(
    dev_env: WorkflowEnvironment, tmp_path: Path, task_queue: str
) -> AsyncIterator[Running]:
    sid = f"console-writes-{uuid.uuid4().hex[:8]}"  # the dev server is the session's
    async with running_stack(dev_env, tmp_path, task_queue) as stack:
        now = await dev_env.get_current_time()
        spec = stack.spec(
            {
                "schema": "scheduleSpec.v1",
                "scheduleId": sid,
                "revision": 1,
                "timeZone": "Europe/Paris",
                "tzdbVersion": "2026a",
                "rule": "FREQ=YEARLY;BYMONTH=1;BYMONTHDAY=1;BYHOUR=3",
                "cutoverAt": "2026-01-01T00:00:00Z",
            }
        )
        await stack.start_schedule(spec, simulate_from=now, stop_after=now + timedelta(hours=1))
        await eventually(
            lambda: _gate(stack, sid), lambda g: g is not None and g.active_revision == 1
        )
        secrets = tmp_path / "secrets"
        secrets.mkdir(exist_ok=True)
        (secrets / "console-alice").write_text(TOKEN + "\n")
        address = dev_env.client.service_client.config.target_host
        settings = AlmanacSettings(
            data_dir=tmp_path,
            secrets_dir=secrets,
            temporal=TemporalSettings(address=address, task_queue=task_queue),
        )
        console = ConsoleSettings(operators="alice=file:console-alice")  # type: ignore[arg-type]
        yield Running(stack, sid, create_app(stack.ledger, settings, console))


@pytest.fixture
async def site(running: Running) -> AsyncIterator[Site]:
    transport = httpx.ASGITransport(app=running.app)
    async with httpx.AsyncClient(transport=transport, base_url="http://console") as http:
        yield Site(http, running.stack, running.sid)


async def _gate(stack: Stack, sid: str) -> Any:
    try:
        return get_gate(stack.ledger, sid)
    except ledger.ScheduleNotFound:
        return None


async def test_disable_then_enable_records_the_operator_and_the_verdict(site: Site) -> None:
    await site.sign_in()
    before = get_gate(site.stack.ledger, site.sid).disable_generation
    page = await site.post("disable", reason="downstream maintenance")
    assert page.status_code == 200, page.text
    assert "Disabled as console:alice" in page.text and 'id="verdict"' in page.text
    gate = get_gate(site.stack.ledger, site.sid)
    assert gate.disabled and gate.disable_generation == before + 1
    assert gate.disabled_reason == "downstream maintenance"
    (event,) = schedule_events(site.stack.ledger, site.sid, kind=ScheduleEventKind.DISABLED)
    assert (event.by, "downstream maintenance" in event.detail) == ("console:alice", True)
    assert f'action="/schedules/{site.sid}/enable"' in page.text  # the form that applies now

    refused = await site.post("trigger", reason="while disabled")  # the gate refuses it
    assert refused.status_code == 409
    assert "is disabled (downstream maintenance)" in _problem(refused.text)

    page = await site.post("enable")
    assert page.status_code == 200, page.text
    assert "Enabled as console:alice" in page.text
    gate = get_gate(site.stack.ledger, site.sid)
    assert not gate.disabled and gate.disable_generation == before + 2
    (enabled,) = schedule_events(site.stack.ledger, site.sid, kind=ScheduleEventKind.ENABLED)
    assert enabled.by == "console:alice"


async def test_trigger_runs_one_manual_occurrence_recorded_as_the_operator(site: Site) -> None:
    await site.sign_in()
    page = await site.post("trigger", reason="rerun after the fix", requestId="fix-7")
    assert page.status_code == 200, page.text
    occurrence_id = f"{site.sid}.manual.fix-7"
    assert f'Triggered <a href="/occurrences/{occurrence_id}">' in page.text

    async def state() -> OccurrenceState | None:
        try:
            return ledger.show_occurrence(site.stack.ledger, occurrence_id).occurrence.state
        except ledger.OccurrenceNotFound:
            return None

    await eventually(state, lambda s: s is OccurrenceState.SUCCEEDED, timeout=30)
    detail = ledger.show_occurrence(site.stack.ledger, occurrence_id)
    assert detail.occurrence.reason == "MANUAL"
    assert detail.events[0].by == "console:alice"
    assert any("rerun after the fix" in e.why for e in detail.events)
    again = await site.post("trigger", reason="rerun after the fix", requestId="fix-7")
    assert "Already triggered (same request ID)" in again.text
    effect = site.stack.sink.effect(occurrence_id)
    assert effect is not None and effect.delivery_count == 1


async def test_writes_need_an_operator_and_the_sessions_csrf_token(site: Site) -> None:
    generation = get_gate(site.stack.ledger, site.sid).disable_generation
    refused = await site.post("disable", reason="no operator")
    assert refused.status_code == 401
    await site.sign_in()
    for action, fields in (("disable", {"reason": "x"}), ("trigger", {"reason": "x"})):
        for token in (None, "forged-token"):
            assert (await site.post(action, csrf=token, **fields)).status_code == 403
    gate = get_gate(site.stack.ledger, site.sid)
    assert not gate.disabled and gate.disable_generation == generation
    assert not [
        o for o in ledger.list_occurrences(site.stack.ledger, site.sid) if o.reason == "MANUAL"
    ]


@pytest.mark.parametrize(
    ("action", "fields", "message"),
    [
        ("disable", {"reason": "  "}, "reason='': disabling needs a non-empty reason"),
        ("trigger", {"reason": ""}, "reason: a manual run needs a non-empty reason"),
        ("trigger", {"reason": "x", "requestId": "Bad_ID"}, "request ID 'Bad_ID': use 1-64"),
    ],
)
async def test_bad_input_is_one_line_and_writes_nothing(
    site: Site, action: str, fields: dict[str, str], message: str
) -> None:
    await site.sign_in()
    generation = get_gate(site.stack.ledger, site.sid).disable_generation
    page = await site.post(action, **fields)
    assert page.status_code == 400
    assert _problem(page.text).startswith(message)
    assert get_gate(site.stack.ledger, site.sid).disable_generation == generation
    assert not [
        o for o in ledger.list_occurrences(site.stack.ledger, site.sid) if o.reason == "MANUAL"
    ]


async def test_temporal_unavailable_is_a_one_line_page_and_nothing_is_written(
    ledger: ledger.Ledger,
    facts: Facts,
    settings: AlmanacSettings,
    console_settings: ConsoleSettings,
) -> None:
    down = settings.model_copy(update={"temporal": TemporalSettings(address="127.0.0.1:1")})
    app = create_app(ledger, down, console_settings, clock=lambda: NOW)
    transport = httpx.ASGITransport(app=app)
    async with httpx.AsyncClient(transport=transport, base_url="http://console") as http:
        site = Site(http, None, SCHEDULE)  # type: ignore[arg-type]
        await site.sign_in()
        page = await site.post("disable", reason="maintenance")
    assert page.status_code == 503
    assert _problem(page.text).startswith("Temporal unreachable at 127.0.0.1:1 (namespace default)")
    assert "Traceback" not in page.text
    assert not get_gate(ledger, SCHEDULE).disabled


@pytest.mark.parametrize(
    ("overdue", "expired", "decided"),
    [
        # The runbook's example of what enable says (docs/operating/runbook.md).
        (0, 2, "3 occurrences came due while disabled; "),
        (1, 3, "3 occurrences came due while disabled, and 1 overdue from before the disable; "),
    ],
    ids=["came-due", "and-overdue"],
)
async def test_the_enable_verdict_says_what_the_misfire_policy_decided_as_the_cli_does(
    ledger: ledger.Ledger,
    facts: Facts,
    settings: AlmanacSettings,
    console_settings: ConsoleSettings,
    monkeypatch: pytest.MonkeyPatch,
    overdue: int,
    expired: int,
    decided: str,
) -> None:
    # The worker's answer is given (its counts are the ledger's, tested with the updates); the
    # page must word it as `almanac enable` does: "...; under <policy>: N run now, M expire".
    gate = get_gate(ledger, SCHEDULE)
    policy = "CATCH_UP_BOUNDED (maxCatchUp 1), lateness PT5M"

    async def answered(request: control.Write, *_: Any) -> control.Verdict:
        answer = ChangeGateResult(
            SCHEDULE, False, True, gate, came_due=3, due_before_disable=overdue,
            released=1, expired=expired, misfire_policy=policy,
        )  # fmt: skip
        return control.Verdict(request.action, request.by, answer)

    monkeypatch.setattr(control, "send", answered)
    app = create_app(ledger, settings, console_settings, clock=lambda: NOW)
    transport = httpx.ASGITransport(app=app)
    async with httpx.AsyncClient(transport=transport, base_url="http://console") as http:
        site = Site(http, None, SCHEDULE)  # type: ignore[arg-type]
        await site.sign_in()
        page = await site.post("enable")
    assert page.status_code == 200, page.text
    found = re.search(r'id="verdict">(.*?)</p>', page.text, re.S)
    assert found, page.text
    assert " ".join(found.group(1).split()) == (
        f"Enabled as console:alice: gate generation {gate.disable_generation}; {decided}"
        f"under {policy}: 1 run now, {expired} expire (MISFIRE_EXPIRED)."
    )


@pytest.mark.browser
async def test_an_operator_disables_and_enables_by_keyboard_in_a_browser(
    running: Running, tmp_path: Path
) -> None:
    from browser import artifacts, chromium, require_browser, serve, wait_for
    from selenium.webdriver.common.by import By
    from selenium.webdriver.common.keys import Keys

    require_browser()

    def work(browser: Any, url: str) -> None:
        # Blocking browser calls run in a thread: the worker lives on this test's event loop.
        def shot(name: str) -> None:
            browser.save_screenshot(str(artifacts() / f"{name}.png"))

        browser.get(f"{url}/login")
        browser.find_element(By.NAME, "operator").send_keys("alice")
        browser.find_element(By.NAME, "token").send_keys(TOKEN + Keys.ENTER)
        wait_for(lambda: browser.find_elements(By.ID, "operator"), "the signed-in header")
        browser.get(f"{url}/schedules/{running.sid}")
        reason = browser.find_element(By.CSS_SELECTOR, "form.write input[name=reason]")
        reason.send_keys("maintenance window")
        shot("11-schedule-disabling")
        reason.send_keys(Keys.ENTER)
        # The live refresh may swap the region in at any moment: each read finds it again.
        wait_for(lambda: browser.find_elements(By.ID, "verdict"), "the disable verdict", 60)
        wait_for(
            lambda: (
                "Disabled as console:alice" in browser.find_element(By.ID, "verdict").text
                and "disabled" in browser.find_element(By.CSS_SELECTOR, "#live .gate").text
            ),
            "the verdict and the gate to say disabled",
        )
        shot("12-schedule-disabled")

        def enable() -> bool:
            button = browser.find_element(By.CSS_SELECTOR, "form.write button[type=submit]")
            assert button.text == "Enable as alice"
            button.send_keys(Keys.ENTER)
            return True

        wait_for(enable, "the enable button")
        wait_for(
            lambda: "Enabled as" in browser.find_element(By.ID, "verdict").text,
            "the enable verdict",
            60,
        )
        shot("13-schedule-enabled")

    with serve(running.app) as url, chromium(tmp_path / "profile") as browser:
        await anyio.to_thread.run_sync(work, browser, url)
    gate = get_gate(running.stack.ledger, running.sid)
    assert not gate.disabled
    (event,) = schedule_events(running.stack.ledger, running.sid, kind=ScheduleEventKind.DISABLED)
    assert (event.by, "maintenance window" in event.detail) == ("console:alice", True)
