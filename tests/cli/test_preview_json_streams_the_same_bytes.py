"""``almanac preview --json`` writes its records as they are resolved (``iter_occurrences`` and a
streaming array writer) and prints exactly the bytes the whole-list ``json.dumps(..., indent=2)``
printed before: the JSON output is a contract."""

from __future__ import annotations

import io
import json
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import pytest
from typer.testing import CliRunner

import timecontract.recurrence
from almanac.cli import app
from almanac.cli.spec import write_json_array
from timecontract import iter_occurrences, load_spec, occurrences, parse_spec

EXAMPLES = Path(__file__).resolve().parents[2] / "examples"


@pytest.fixture(autouse=True)
def data_dir(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("ALMANAC_DATA_DIR", str(tmp_path / "data"))
    monkeypatch.delenv("ALMANAC_TZDB_DIR", raising=False)


@pytest.mark.parametrize(
    "items",
    [
        [],
        [{"a": 1}],
        [{"a": None, "b": "x\ny", "c": "é"}, {"d": [1, {"e": 2}], "f": {}}, {"g": []}],
    ],
)
def test_the_writer_prints_the_bytes_of_json_dumps(items: list[Any]) -> None:
    out = io.StringIO()
    write_json_array(iter(items), out)
    assert out.getvalue() == json.dumps(items, indent=2) + "\n"


BASE: dict[str, Any] = {
    "schema": "scheduleSpec.v1",
    "scheduleId": "s",
    "revision": 1,
    "timeZone": "America/New_York",
    "tzdbVersion": "2026a",
    "cutoverAt": "2026-01-01T00:00:00Z",
    "start": "2026-01-01T00:00:00",
}
SPECS = [
    {"rule": "FREQ=MINUTELY;INTERVAL=20", "gapPolicy": "SHIFT_FORWARD", "foldPolicy": "BOTH"},
    {"rule": "FREQ=HOURLY;BYMINUTE=30", "gapPolicy": "SKIP", "foldPolicy": "SECOND_ONLY"},
    {"rule": "FREQ=DAILY;BYHOUR=2;BYMINUTE=30", "jitter": "PT5M"},
    {"rule": "FREQ=HOURLY;COUNT=2000"},  # counted arithmetically
    {"rule": "FREQ=MONTHLY;BYMONTHDAY=31;COUNT=20"},  # walked from DTSTART
    {"interval": "PT7H", "rule": None},
]


@pytest.mark.parametrize("fields", SPECS, ids=lambda f: f.get("rule") or f.get("interval"))
def test_pieces_concatenate_to_the_whole_window(
    fields: dict[str, Any], monkeypatch: pytest.MonkeyPatch
) -> None:
    spec = parse_spec({k: v for k, v in {**BASE, **fields}.items() if v is not None})
    window = (datetime(2026, 2, 20, 5, 17, tzinfo=UTC), datetime(2026, 11, 10, tzinfo=UTC))
    whole = occurrences(spec, *window)
    # Small pieces: many boundaries, two of them next to the DST transitions.
    monkeypatch.setattr(timecontract.recurrence, "STREAM_PERIODS", 3)
    assert list(iter_occurrences(spec, *window)) == whole
    assert whole  # the comparison is not vacuous


@pytest.mark.parametrize(
    ("name", "start", "end"),
    [
        ("daily-ops-summary.yaml", "2027-03-01T00:00:00Z", "2027-04-01T00:00:00Z"),
        ("hourly-both-folds.yaml", "2026-10-30T00:00:00Z", "2026-11-03T00:00:00Z"),
        ("every-10-seconds.yaml", "2026-11-01T05:00:00Z", "2026-11-01T07:00:00Z"),
        ("daily-ops-summary.yaml", "2027-03-14T00:00:00Z", "2027-03-14T01:00:00Z"),  # empty
    ],
)
def test_preview_json_prints_the_bytes_of_the_whole_list(name: str, start: str, end: str) -> None:
    result = CliRunner().invoke(
        app, ["preview", str(EXAMPLES / name), "--from", start, "--to", end, "--json"]
    )
    assert result.exit_code == 0, result.output
    spec = load_spec(EXAMPLES / name)
    records = occurrences(
        spec,
        datetime.fromisoformat(start.replace("Z", "+00:00")),
        datetime.fromisoformat(end.replace("Z", "+00:00")),
    )
    assert result.stdout == json.dumps([r.to_json() for r in records], indent=2) + "\n"
