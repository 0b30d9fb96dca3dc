"""Preview: every problem of a pasted spec, or its window with DST reasons; nothing applied."""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

import pytest
from starlette.testclient import TestClient

from almanac.console import ConsoleSettings, create_app
from almanac.settings import AlmanacSettings
from ledger import Ledger, gates_page

pytestmark = pytest.mark.filterwarnings("ignore:Using `httpx`:DeprecationWarning")

SPEC = """\
schema: scheduleSpec.v1
scheduleId: preview-me
revision: 1
timeZone: America/New_York
tzdbVersion: 2026a
rule: "FREQ=DAILY;BYHOUR=1,2;BYMINUTE=30"
gapPolicy: SHIFT_FORWARD
foldPolicy: BOTH
misfirePolicy: SKIP
cutoverAt: 2026-10-31T00:00:00Z
"""


@pytest.fixture(params=["sqlite"])
def backend(request: pytest.FixtureRequest) -> str:
    return str(request.param)


@pytest.fixture
def client(ledger: Ledger, settings: AlmanacSettings) -> TestClient:
    return TestClient(create_app(ledger, settings, ConsoleSettings()))


def post(client: TestClient, **data: str) -> str:
    form = client.get("/preview").text
    token = re.search(r'name="csrf" value="([^"]+)"', form)
    assert token
    response = client.post("/preview", data={"csrf": token.group(1), **data})
    return response.text.replace("&#39;", "'")


def test_every_problem_is_listed_naming_its_field(client: TestClient) -> None:
    bad = SPEC.replace("2026a", "1999z").replace("SHIFT_FORWARD", "SIDEWAYS")
    html = post(client, spec=bad.replace("FREQ=DAILY", "FREQ=SOMETIMES"))
    problems = re.findall(r"<li><code>([^<]+)</code>=", html)
    assert {"gapPolicy", "rule"} <= set(problems), problems
    assert "SIDEWAYS" in html


def test_a_missing_field_is_listed_without_a_value_and_null_as_null(client: TestClient) -> None:
    html = post(client, spec=SPEC.replace("cutoverAt: 2026-10-31T00:00:00Z\n", ""))
    assert "<li><code>cutoverAt</code>: is required</li>" in html
    html = post(client, spec=SPEC.replace("misfirePolicy: SKIP", "misfirePolicy: null"))
    assert re.search(r"<li><code>misfirePolicy</code>=null: ", html), html


def test_a_literal_secret_is_never_shown(client: TestClient) -> None:
    secret = "sk_live_51HcQ2eLkTqV9xZpA7rW3mN8b"
    spec = SPEC + (
        "action:\n  name: http\n  parameters:\n    url: https://example.org/hook\n"
        f"    headers:\n      Authorization: Bearer {secret}\n"
    )
    html = post(client, spec=spec)
    problems = html[html.index('id="problems"') :]
    assert "action.parameters.headers.Authorization" in problems and secret not in html


def test_a_valid_spec_shows_fold_and_gap_reasons(client: TestClient, ledger: Ledger) -> None:
    html = post(client, spec=SPEC, **{"from": "2026-10-31T00:00:00Z", "to": "2026-11-03T00:00:00Z"})
    rows = re.findall(
        r"<tr[^>]*><td>(2026-11-01T01:30:00)</td><td>(\d)</td><td>([-+:\d]+)</td>", html
    )
    assert rows == [("2026-11-01T01:30:00", "0", "-04:00"), ("2026-11-01T01:30:00", "1", "-05:00")]
    assert "FOLD_FIRST" in html and "FOLD_SECOND" in html
    march = post(
        client, spec=SPEC, **{"from": "2027-03-13T00:00:00Z", "to": "2027-03-16T00:00:00Z"}
    )
    assert "GAP_SHIFTED_FORWARD" in march
    assert gates_page(ledger) == []  # nothing applied


def test_bad_window_is_one_line(client: TestClient) -> None:
    html = post(client, spec=SPEC, **{"from": "yesterday"})
    assert "from='yesterday': not an ISO 8601 instant like 2026-11-01T00:00:00Z" in html


@pytest.mark.parametrize(
    ("given", "meant"),
    [
        ("2037-01-01", "2037-01-01T00:00:00Z"),
        ("2037-01-01Z", "2037-01-01T00:00:00Z"),
        ("2037-01-01+01:00", "2037-01-01T00:00:00+01:00"),
    ],
)
def test_a_date_is_told_the_instant_of_its_midnight_as_the_cli_tells_it(
    client: TestClient, given: str, meant: str
) -> None:
    # ISO 8601 has no instant without a time of day; its midnight in the given offset is one.
    html = post(client, spec=SPEC, **{"to": given})
    assert (
        f"to={given!r}: not an ISO 8601 instant like 2026-11-01T00:00:00Z; did you mean {meant}?"
    ) in html


def test_a_local_time_without_an_offset_is_told_to_end_in_z(client: TestClient) -> None:
    html = post(client, spec=SPEC, **{"from": "2026-11-01T00:00:00"})
    assert (
        "from='2026-11-01T00:00:00': an instant needs a UTC offset (end it in Z)"
        in html.replace("&#39;", "'")
    )


def upload(client: TestClient, name: str, text: str, media_type: str) -> Any:
    """POST ``text`` to the preview as an uploaded file called ``name``."""
    form = client.get("/preview").text
    token = re.search(r'name="csrf" value="([^"]+)"', form)
    assert token
    return client.post(
        "/preview", data={"csrf": token.group(1)}, files={"file": (name, text.encode(), media_type)}
    )


def test_upload_is_read_like_the_textarea(client: TestClient, tmp_path: Path) -> None:
    response = upload(client, "spec.yaml", SPEC, "application/yaml")
    assert "preview-me r1" in response.text


@pytest.mark.parametrize(
    ("text", "problem"),
    [
        # A trailing comma: YAML's flow mapping takes it, JSON (RFC 8259) does not.
        (
            '{"schema": "scheduleSpec.v1", "revision": 1,}',
            "not valid JSON: line 1, column 44: a comma before '}'",
        ),
        ('{"schema": "scheduleSpec.v1", "revision": NaN}', "NaN is no JSON number"),
    ],
)
def test_an_uploaded_json_file_is_read_as_json_as_validate_reads_it(
    client: TestClient, text: str, problem: str
) -> None:
    response = upload(client, "spec.json", text, "application/json")
    assert response.status_code == 400
    assert problem in response.text.replace("&#39;", "'")
