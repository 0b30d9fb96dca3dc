"""Preview of a spec it cannot resolve: HTTP 400 and the problem as one line, never a 500.

A spec with problems is bad form input (docs/console.md: 400). The spec text is a form field,
``spec``: a problem never names the server's temporary file.
"""

from __future__ import annotations

import re
from pathlib import Path

import httpx
import pytest
from starlette.testclient import TestClient

from almanac.calendars import add_file
from almanac.console import ConsoleSettings, create_app
from almanac.settings import AlmanacSettings
from ledger import Ledger, gates_page

pytestmark = pytest.mark.filterwarnings("ignore:Using `httpx`:DeprecationWarning")

SPEC = """\
schema: scheduleSpec.v1
scheduleId: acme-daily
revision: 1
timeZone: UTC
tzdbVersion: 2026a
rule: "FREQ=DAILY;BYHOUR=9;BYMINUTE=0"
calendar: {{name: acme, release: {release}}}
holidayPolicy: FOLLOWING
cutoverAt: 2026-12-01T00:00:00Z
"""


@pytest.fixture(params=["sqlite"])
def backend(request: pytest.FixtureRequest) -> str:
    return str(request.param)


@pytest.fixture
def client(ledger: Ledger, settings: AlmanacSettings) -> TestClient:
    return TestClient(create_app(ledger, settings, ConsoleSettings()))


def post(client: TestClient, **data: str) -> httpx.Response:
    form = client.get("/preview").text
    token = re.search(r'name="csrf" value="([^"]+)"', form)
    assert token
    return client.post("/preview", data={"csrf": token.group(1), **data})


def _problems(response: httpx.Response) -> list[str]:
    text = response.text.replace("&#39;", "'")
    return re.findall(r"<li><code>([^<]+)</code>=([^<]*)</li>", text)


def test_a_window_past_the_calendar_files_years_is_400_naming_the_release(
    client: TestClient, settings: AlmanacSettings, ledger: Ledger, tmp_path: Path
) -> None:
    (tmp_path / "cal1.yaml").write_text("name: acme\nholidays:\n  - {date: 2026-12-25, name: X}\n")
    _, release, _ = add_file(settings.tzdb_store, tmp_path / "cal1.yaml")
    window = {"from": "2026-12-30T00:00:00Z", "to": "2027-01-05T00:00:00Z"}
    response = post(client, spec=SPEC.format(release=release), **window)
    assert response.status_code == 400, response.text
    [(field, said)] = _problems(response)
    assert field == "calendar.release" and release in said and "2026–2026" in said, said
    inside = {"from": "2026-12-20T00:00:00Z", "to": "2026-12-31T00:00:00Z"}
    assert post(client, spec=SPEC.format(release=release), **inside).status_code == 200
    assert gates_page(ledger) == []  # nothing applied


def test_unparsable_yaml_is_400_on_the_spec_field_without_a_server_path(
    client: TestClient,
) -> None:
    response = post(client, spec="schema: [unclosed\n")
    assert response.status_code == 400, response.text
    [(field, said)] = _problems(response)
    assert field == "spec" and "not valid YAML" in said, said
    assert "almanac-preview-" not in response.text and "/tmp" not in response.text


def test_a_spec_with_problems_is_400(client: TestClient) -> None:
    response = post(
        client, spec=SPEC.format(release="holidays-0.108").replace("UTC\n", "Mars/Base\n")
    )
    assert response.status_code == 400
    assert ("timeZone", "'Mars/Base'") in [(f, s.split(":")[0]) for f, s in _problems(response)]
