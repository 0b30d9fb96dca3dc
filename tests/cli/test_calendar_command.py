"""``almanac calendar list | add | add-file | diff`` and the pinned release a worker reads.

The diff's expectation comes from the data change itself: a second release of the NYSE calendar
that also closes Wednesday 2027-03-31 (as an exchange closes for a national day of mourning)
moves the last NYSE business day of March 2027 to Tuesday the 30th; nothing else changes.
"""

from __future__ import annotations

import json
from datetime import UTC, datetime
from pathlib import Path

import pytest
from typer.testing import CliRunner

from almanac.cli import app
from timecontract import load_spec, occurrences
from timecontract.calendars import store_path

LIBRARY = "holidays-0.108"
SPEC = """schema: scheduleSpec.v1
scheduleId: nyse-month-end
revision: 1
timeZone: America/New_York
tzdbVersion: 2026a
rule: "FREQ=MONTHLY;BYDAY=MO,TU,WE,TH,FR;BYSETPOS=-1;BYHOUR=16;BYMINUTE=30"
calendar: {name: NYSE, release: holidays-0.108}
businessDaysOnly: true
cutoverAt: 2027-01-01T00:00:00Z
"""
WINDOW = ["--from", "2027-01-01T00:00:00Z", "--until", "2028-01-01T00:00:00Z"]


@pytest.fixture(autouse=True)
def store(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    monkeypatch.setenv("ALMANAC_DATA_DIR", str(tmp_path / "data"))
    monkeypatch.delenv("ALMANAC_TZDB_DIR", raising=False)
    return tmp_path / "data" / "tzdb"


def _run(*args: str) -> object:
    return CliRunner().invoke(app, list(args))


def test_add_stores_the_installed_release_which_outlives_the_library(
    store: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    result = _run("calendar", "add", "NYSE")
    assert result.exit_code == 0, result.output  # type: ignore[attr-defined]
    assert store_path(store, "NYSE", LIBRARY).is_file()
    # A later library release is installed: the pinned one is read from the store.
    monkeypatch.setattr("timecontract.calendars.installed_release", lambda: "holidays-9.9")
    (tmp_path / "s.yaml").write_text(SPEC)
    spec = load_spec(tmp_path / "s.yaml", store)
    may, june = datetime(2027, 5, 1, tzinfo=UTC), datetime(2027, 6, 1, tzinfo=UTC)
    found = occurrences(spec, may, june, tzdb_store=store)
    assert [r.nominal_local.day for r in found] == [28]


def test_calendar_diff_lists_exactly_the_occurrences_a_new_release_changes(
    store: Path, tmp_path: Path
) -> None:
    assert _run("calendar", "add", "NYSE").exit_code == 0  # type: ignore[attr-defined]
    document = json.loads(store_path(store, "NYSE", LIBRARY).read_text())
    document["release"] = "holidays-0.109"
    document["holidays"]["2027-03-31"] = "National Day of Mourning"
    store_path(store, "NYSE", "holidays-0.109").write_text(json.dumps(document))
    (tmp_path / "s.yaml").write_text(SPEC)
    result = _run(
        "calendar", "diff", str(tmp_path / "s.yaml"), "--to", "holidays-0.109", *WINDOW, "--json"
    )
    assert result.exit_code == 0, result.output  # type: ignore[attr-defined]
    changes = json.loads(result.stdout)  # type: ignore[attr-defined]
    assert [(c["occurrenceId"], c["from"], c["to"]) for c in changes] == [
        ("nyse-month-end.r1.20270330T163000.f0", None, changes[0]["to"]),
        ("nyse-month-end.r1.20270331T163000.f0", changes[1]["from"], None),
    ]
    assert changes[0]["to"]["instant"] == "2027-03-30T20:30:00Z"
    assert changes[1]["from"]["instant"] == "2027-03-31T20:30:00Z"


def test_two_versions_of_a_calendar_file_diff_with_the_holiday_named(
    store: Path, tmp_path: Path
) -> None:
    first = tmp_path / "acme.yaml"
    first.write_text("name: acme\nholidays:\n  - {date: 2027-12-24, name: Winter Break}\n")
    second = tmp_path / "acme2.yaml"
    second.write_text(first.read_text() + "  - {date: 2027-12-31, name: Year End}\n")
    releases = []
    for path in (first, second):
        result = _run("calendar", "add-file", str(path))
        assert result.exit_code == 0, result.output  # type: ignore[attr-defined]
        releases.append(result.output.split("release ")[1].split()[0])  # type: ignore[attr-defined]
    spec = (
        SPEC.replace("scheduleId: nyse-month-end", "scheduleId: acme-daily")
        .replace(
            '"FREQ=MONTHLY;BYDAY=MO,TU,WE,TH,FR;BYSETPOS=-1;BYHOUR=16;BYMINUTE=30"',
            "FREQ=DAILY;BYHOUR=9",
        )
        .replace("{name: NYSE, release: holidays-0.108}", f"{{name: acme, release: {releases[0]}}}")
        .replace("businessDaysOnly: true", "holidayPolicy: SKIP")
    )
    (tmp_path / "s.yaml").write_text(spec)
    window = ["--from", "2027-12-01T00:00:00Z", "--until", "2028-01-01T00:00:00Z"]
    result = _run("calendar", "diff", str(tmp_path / "s.yaml"), "--to", releases[1], *window)
    assert result.exit_code == 0, result.output  # type: ignore[attr-defined]
    assert "2027-12-31T09:00:00" in result.output  # type: ignore[attr-defined]
    assert 'HOLIDAY_SKIPPED "Year End"' in result.output  # type: ignore[attr-defined]
    assert "1 occurrence of acme-daily r1 change" in result.output  # type: ignore[attr-defined]


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (("calendar", "add", "XNOPE"), "calendar.name='XNOPE': no such market or country"),
        (
            ("calendar", "add-file", "/nonexistent/acme.yaml"),
            "calendar file='/nonexistent/acme.yaml'",
        ),
    ],
)
def test_bad_input_is_one_line_and_exit_2(args: tuple[str, ...], message: str) -> None:
    result = _run(*args)
    assert result.exit_code == 2  # type: ignore[attr-defined]
    assert message in result.output  # type: ignore[attr-defined]
    assert len(result.output.strip().splitlines()) == 1  # type: ignore[attr-defined]
