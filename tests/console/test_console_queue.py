"""The human queue: open cases oldest first, and the one write — resolve — authenticated,
CSRF-protected, validated like the CLI, and recorded with the operator's identity."""

from __future__ import annotations

import re
from datetime import timedelta

import pytest
from scenario import NOW, SCHEDULE, TOKEN, Facts
from starlette.testclient import TestClient

from almanac.console import ConsoleSettings, create_app
from almanac.console.forms import MAX_FIELD
from almanac.settings import AlmanacSettings
from ledger import Ledger, OccurrenceState, ReconciliationResolution, show_occurrence

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


def csrf(html: str) -> str:
    found = re.search(r'name="csrf" value="([^"]+)"', html)
    assert found
    return found.group(1)


def sign_in(client: TestClient, token: str = TOKEN) -> TestClient:
    form = client.get("/login").text
    response = client.post(
        "/login",
        data={"csrf": csrf(form), "operator": "alice", "token": token},
        follow_redirects=False,
    )
    assert response.status_code == 303, response.text
    return client


def resolve(client: TestClient, occurrence_id: str, **fields: str) -> object:
    page = client.get("/preview").text  # every page with a form carries the session's token
    data = {"csrf": csrf(page), "occurrenceId": occurrence_id, **fields}
    return client.post("/queue/resolve", data=data, follow_redirects=False)


def test_queue_shows_age_against_the_30_minute_deadline(
    client: TestClient, facts: Facts, now: list
) -> None:
    # The case opened at 2026-10-21T12:01:30Z; NOW is a day later: past its deadline.
    page = client.get("/queue").text
    assert facts.unknown in page and "IN HUMAN QUEUE" in page
    assert "ReadTimeout: no answer within 30s" in page and "worker-7" in page
    assert "Sign in" in page and 'action="/queue/resolve"' not in page
    now[0] = NOW.replace(day=21, hour=12, minute=11, second=30)
    early = client.get("/queue").text
    assert "reconciling" in early and "(20 min left of 30)" in early and "IN HUMAN" not in early


def test_resolve_records_the_operator_and_moves_the_occurrence(
    client: TestClient, facts: Facts, ledger: Ledger
) -> None:
    sign_in(client)
    response = resolve(client, facts.unknown, outcome="SUCCEEDED", reason="seen in the CRM")
    assert response.status_code == 303
    assert response.headers["location"] == f"/queue?resolved={facts.unknown}"
    shown = client.get(response.headers["location"]).text
    assert f"Resolved {facts.unknown}: SUCCEEDED by console:alice" in shown
    detail = show_occurrence(ledger, facts.unknown)
    assert detail.occurrence.state is OccurrenceState.SUCCEEDED
    assert detail.case is not None
    assert detail.case.resolution is ReconciliationResolution.SUCCEEDED
    assert detail.case.resolved_by == "console:alice"
    assert detail.case.note == "seen in the CRM"
    assert detail.events[-1].by == "console:alice"
    assert "No open UNKNOWN_EFFECT cases." in client.get("/queue").text
    again = resolve(client, facts.unknown, outcome="SUCCEEDED", reason="twice")
    assert again.status_code == 409  # one CAS: the case is closed


def test_not_applied_ends_failed(client: TestClient, facts: Facts, ledger: Ledger) -> None:
    sign_in(client)
    resolve(client, facts.unknown, outcome="NOT_APPLIED", reason="downstream has no record")
    assert show_occurrence(ledger, facts.unknown).occurrence.state is OccurrenceState.FAILED


@pytest.mark.parametrize(
    ("fields", "message"),
    [
        ({"reason": "x"}, "outcome='': one of SUCCEEDED, NOT_APPLIED"),
        ({"outcome": "HUMAN", "reason": "x"}, "outcome='HUMAN': one of SUCCEEDED, NOT_APPLIED"),
        ({"outcome": "SUCCEEDED", "reason": "  "}, "reason='': say why"),
    ],
)
def test_bad_form_input_is_one_line_and_writes_nothing(
    client: TestClient, facts: Facts, ledger: Ledger, fields: dict[str, str], message: str
) -> None:
    sign_in(client)
    response = resolve(client, facts.unknown, **fields)
    assert response.status_code == 400  # type: ignore[attr-defined]
    problem = re.search(r'id="problem">(.*?)</p>', response.text)  # type: ignore[attr-defined]
    assert problem is not None
    assert problem.group(1).replace("&#39;", "'").startswith(message)
    detail = show_occurrence(ledger, facts.unknown)
    assert detail.occurrence.state is OccurrenceState.UNKNOWN_EFFECT
    assert detail.case is not None and detail.case.resolved_by is None


def test_resolve_needs_an_operator(client: TestClient, facts: Facts, ledger: Ledger) -> None:
    response = resolve(client, facts.unknown, outcome="SUCCEEDED", reason="r")
    assert response.status_code == 401  # type: ignore[attr-defined]
    assert show_occurrence(ledger, facts.unknown).occurrence.state is OccurrenceState.UNKNOWN_EFFECT


def test_resolve_needs_the_sessions_csrf_token(
    client: TestClient, facts: Facts, ledger: Ledger
) -> None:
    sign_in(client)
    data = {"occurrenceId": facts.unknown, "outcome": "SUCCEEDED", "reason": "r"}
    for token in (None, "forged-token"):
        sent = data if token is None else {**data, "csrf": token}
        response = client.post("/queue/resolve", data=sent, follow_redirects=False)
        assert response.status_code == 403
    assert show_occurrence(ledger, facts.unknown).occurrence.state is OccurrenceState.UNKNOWN_EFFECT


def test_wrong_token_is_refused_and_never_shown(client: TestClient) -> None:
    form = client.get("/login").text
    wrong = "not-" + TOKEN
    response = client.post("/login", data={"csrf": csrf(form), "operator": "alice", "token": wrong})
    assert response.status_code == 401
    assert "operator='alice': name or token not accepted" in response.text.replace("&#39;", "'")
    assert wrong not in response.text and TOKEN not in response.text
    queue = sign_in(client).get("/queue").text
    assert "Signed in as" in queue and TOKEN not in queue


def test_a_session_expires(client: TestClient, now: list) -> None:
    sign_in(client)
    assert "Signed in as" in client.get("/queue").text
    now[0] = NOW + timedelta(hours=13)
    assert "Signed in as" not in client.get("/queue").text


def test_a_trusted_proxy_header_names_the_operator(
    ledger: Ledger, facts: Facts, settings: AlmanacSettings
) -> None:
    console = ConsoleSettings(user_header="X-Forwarded-User")
    client = TestClient(create_app(ledger, settings, console, clock=lambda: NOW))
    client.headers["X-Forwarded-User"] = "bob@example.org"
    response = resolve(client, facts.unknown, outcome="SUCCEEDED", reason="proxy says bob")
    assert response.status_code == 303  # type: ignore[attr-defined]
    case = show_occurrence(ledger, facts.unknown).case
    assert case is not None and case.resolved_by == "console:bob@example.org"


def test_signing_in_issues_a_new_csrf_token(client: TestClient) -> None:
    before = csrf(client.get("/preview").text)
    sign_in(client)
    after = csrf(client.get("/preview").text)
    assert before != after


def test_the_resolved_notice_comes_from_the_ledger_not_the_url(
    client: TestClient, facts: Facts
) -> None:
    # A crafted link cannot claim a resolution: the case is still open, so nothing is said.
    page = client.get(f"/queue?resolved={facts.unknown}").text
    assert 'id="resolved"' not in page
    assert 'id="resolved"' not in client.get("/queue?resolved=no.such.occurrence").text


def test_every_reason_field_admits_what_the_server_admits(client: TestClient) -> None:
    # A browser stops typing at maxlength: a reason the server accepts must fit in the form.
    sign_in(client)
    pages = [client.get("/queue").text, client.get(f"/schedules/{SCHEDULE}").text]
    lengths = [re.findall(r'name="reason"[^>]*maxlength="(\d+)"', page) for page in pages]
    assert all(lengths), "each page has a reason field with a maxlength"
    assert {int(n) for found in lengths for n in found} == {MAX_FIELD}


def test_without_operators_the_queue_says_resolving_needs_one_configured(
    ledger: Ledger, facts: Facts, settings: AlmanacSettings, monkeypatch: pytest.MonkeyPatch
) -> None:
    # The header says "Read only (no operators configured)": nobody can sign in, so the page
    # must not tell the reader to.
    monkeypatch.delenv("ALMANAC_CONSOLE_OPERATORS", raising=False)
    client = TestClient(create_app(ledger, settings, ConsoleSettings(), clock=lambda: NOW))
    for path, doing in (
        ("/queue", "resolve this case"),
        (f"/schedules/{SCHEDULE}", "disable, enable or trigger this schedule"),
    ):
        page = re.sub(r"\s+", " ", re.sub(r"<[^>]+>", " ", client.get(path).text))
        assert "Read only (no operators configured)" in page
        assert "Sign in" not in page, path
        assert (
            f"To {doing}, an operator must sign in, and none is configured: set "
            "ALMANAC_CONSOLE_OPERATORS (docs/console.md, “Operators”)."
        ) in page, path


def test_with_operators_the_queue_offers_to_sign_in(client: TestClient) -> None:
    page = re.sub(r"\s+", " ", re.sub(r"<[^>]+>", " ", client.get("/queue").text))
    assert "Sign in to resolve this case." in page
