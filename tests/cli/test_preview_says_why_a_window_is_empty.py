"""A preview window outside the series (before cutoverAt or start, after its end) says why.

The rule (DESIGN: a revision owns ``[cutoverAt, next cutover)``; cli.md's preview contract: records
placed at or after ``cutoverAt``): a window ``[from, to)`` with ``to <= cutoverAt`` owns nothing;
nor does one a day or more before ``start``, or after the spec's ``end``, the rule's ``UNTIL``
(RFC 5545: both inclusive) or the last of ``rdates`` alone.
The table names the bound; ``--json`` keeps its contract, a bare array.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path

import pytest
import yaml
from typer.testing import Result

HOURLY = {
    "schema": "scheduleSpec.v1",
    "scheduleId": "hourly-later",
    "revision": 3,
    "timeZone": "Europe/Berlin",
    "tzdbVersion": "2026a",
    "rule": "FREQ=HOURLY",
    "cutoverAt": "2026-06-01T00:00:00Z",
}
NOTE = "the window ends before cutoverAt 2026-06-01T00:00:00Z: revision r3 owns nothing there"


@pytest.fixture
def spec(tmp_path: Path) -> Path:
    path = tmp_path / "hourly.yaml"
    path.write_text(yaml.safe_dump(HOURLY))
    return path


@pytest.mark.parametrize("to", ["2026-05-31T23:00:00Z", "2026-06-01T00:00:00Z"])
def test_a_window_ending_by_the_cutover_names_it(
    run: Callable[..., Result], spec: Path, to: str
) -> None:
    shown = run("preview", str(spec), "--from", "2026-05-31T20:00:00Z", "--to", to)
    assert shown.exit_code == 0, shown.output
    assert shown.stdout.splitlines()[-2:] == [
        "0 records, 0 decided by a DST policy (highlighted)",
        NOTE,
    ]
    as_json = run("preview", str(spec), "--from", "2026-05-31T20:00:00Z", "--to", to, "--json")
    assert as_json.exit_code == 0 and json.loads(as_json.stdout) == []


def test_a_window_reaching_past_the_cutover_has_no_note(
    run: Callable[..., Result], spec: Path
) -> None:
    # [23:00Z, 01:00Z) holds the 00:00Z instant, the first the revision owns.
    shown = run(
        "preview", str(spec), "--from", "2026-05-31T23:00:00Z", "--to", "2026-06-01T01:00:00Z"
    )
    assert shown.exit_code == 0, shown.output
    assert "cutoverAt" not in shown.stdout and "2026-06-01T00:00:00Z  PLANNED" in shown.stdout


# Europe/Berlin is UTC+2 in summer 2026: the last hour the rule's end lets through,
# 2026-06-30T23:00 local, is 21:00Z (RFC 5545: end and UNTIL are inclusive).
ENDED = {**HOURLY, "end": "2026-06-30T23:00:00", "cutoverAt": "2026-01-01T00:00:00Z"}
UNTIL = {
    **HOURLY,
    "rule": "FREQ=HOURLY;UNTIL=20260630T210000Z",
    "cutoverAt": "2026-01-01T00:00:00Z",
}


RDATES = {**{k: v for k, v in HOURLY.items() if k != "rule"}, "rdates": ["2026-06-30T09:00:00"]}
STARTS_LATER = {**HOURLY, "start": "2026-07-03T00:00:00"}


@pytest.mark.parametrize(
    ("fields", "note"),
    [
        (ENDED, "the window starts after end 2026-06-30T23:00:00 (Europe/Berlin)"),
        (UNTIL, "the window starts after UNTIL 2026-06-30T21:00:00Z"),
        # 09:00 CEST (+02:00) is 07:00Z, before the window.
        (RDATES, "the window starts after the last rdate 2026-06-30T09:00:00 (Europe/Berlin)"),
        # The first nominal time, 00:00 CEST on 3 July, is 2026-07-02T22:00Z: after the window.
        (STARTS_LATER, "the window ends before start 2026-07-03T00:00:00 (Europe/Berlin)"),
    ],
)
def test_a_window_outside_the_series_names_its_bound(
    run: Callable[..., Result], tmp_path: Path, fields: dict[str, object], note: str
) -> None:
    path = tmp_path / "bounded.yaml"
    path.write_text(yaml.safe_dump(fields))
    window = ["--from", "2026-07-01T00:00:00Z", "--to", "2026-07-02T00:00:00Z"]
    shown = run("preview", str(path), *window)
    assert shown.exit_code == 0, shown.output
    assert shown.stdout.splitlines()[-2:] == [
        "0 records, 0 decided by a DST policy (highlighted)",
        f"{note}: revision r3 owns nothing there",
    ]
    as_json = run("preview", str(path), *window, "--json")
    assert as_json.exit_code == 0 and json.loads(as_json.stdout) == []


@pytest.mark.parametrize("fields", [ENDED, UNTIL])
def test_the_window_holding_the_last_record_has_it_and_no_note(
    run: Callable[..., Result], tmp_path: Path, fields: dict[str, object]
) -> None:
    path = tmp_path / "ended.yaml"
    path.write_text(yaml.safe_dump(fields))
    last = run(
        "preview", str(path), "--from", "2026-06-30T21:00:00Z", "--to", "2026-07-01T00:00:00Z"
    )
    assert last.exit_code == 0, last.output
    assert "starts after" not in last.stdout and "2026-06-30T21:00:00Z  PLANNED" in last.stdout
