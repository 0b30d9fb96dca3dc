"""``almanac preview`` of a dense rule: a default window of about 5,000 occurrences, and a table
of at most 10,000 records (one line naming ``--to`` and the bound past it; ``--json`` streams).

The rule fires every other second of every day through BYxxx lists (the densest supported): its
period is a day, so the default window by periods would be 366 days — 15.8 million records.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest
import yaml
from typer.testing import CliRunner

from almanac.cli import app

EVERY_OTHER = ",".join(str(s) for s in range(0, 60, 2))
SPEC = {
    "schema": "scheduleSpec.v1",
    "scheduleId": "dense",
    "revision": 1,
    "timeZone": "UTC",
    "tzdbVersion": "2026a",
    "cutoverAt": "2027-01-01T00:00:00Z",
    "rule": f"FREQ=DAILY;BYHOUR={','.join(map(str, range(24)))};"
    f"BYMINUTE={','.join(map(str, range(60)))};BYSECOND={EVERY_OTHER}",
}


@pytest.fixture
def spec_file(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    monkeypatch.setenv("ALMANAC_DATA_DIR", str(tmp_path / "data"))
    monkeypatch.delenv("ALMANAC_TZDB_DIR", raising=False)
    path = tmp_path / "dense.yaml"
    path.write_text(yaml.safe_dump(SPEC))
    return path


def test_the_default_window_holds_about_five_thousand_occurrences(spec_file: Path) -> None:
    done = CliRunner().invoke(app, ["preview", str(spec_file), "--json"])
    assert done.exit_code == 0, done.output
    records = json.loads(done.stdout)
    # 5,000 at one every 2 s: 2:46:40 from cutoverAt.
    assert len(records) == 5_000
    assert records[-1]["instant"] == "2027-01-01T02:46:38Z"


def test_a_table_of_more_than_ten_thousand_records_is_refused_in_one_line(
    spec_file: Path,
) -> None:
    window = ["--from", "2027-01-01T00:00:00Z", "--to", "2027-01-02T00:00:00Z"]
    done = CliRunner().invoke(app, ["preview", str(spec_file), *window])
    assert done.exit_code == 2
    (line,) = done.stderr.strip().splitlines()
    assert "--to=2027-01-02T00:00:00Z" in line and "more than 10000 records" in line
    assert "--json" in line
