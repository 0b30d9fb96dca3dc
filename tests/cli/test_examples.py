"""``examples/``: each validates, previews as its comment says and fits ``almanac schema``.

A command an example's comment quotes (```almanac preview examples/leap-day.yaml …```, naming an
example file) runs as written from the repository's root.

Expected instants are worked out by hand from the zones' published rules (noted per test), not
taken from the code.
"""

from __future__ import annotations

import json
import re
import shlex
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import pytest
from typer.testing import CliRunner

from almanac.cli import app
from timecontract.spec_file import read_spec_data

ROOT = Path(__file__).resolve().parents[2]
EXAMPLES = ROOT / "examples"
SEED = EXAMPLES / "daily-ops-summary.yaml"
ADDED = [
    "business-day-report.yaml",
    "every-10-seconds.yaml",
    "hourly-both-folds.yaml",
    "leap-day.yaml",
    "lord-howe-half-hour.yaml",
    "month-end.yaml",
    "nyse-month-end.yaml",
    "one-off-run.yaml",
]
# DESIGN §3, the seed's example, byte for byte.
SEED_TEXT = """\
schema: scheduleSpec.v1
scheduleId: daily-ops-summary
revision: 7
timeZone: America/New_York
tzdbVersion: 2026a
rule: "FREQ=DAILY;BYHOUR=2;BYMINUTE=30"
gapPolicy: SKIP
foldPolicy: FIRST_ONLY
misfirePolicy: CATCH_UP_BOUNDED
maxCatchUp: 2
cutoverAt: 2026-11-01T06:00:00Z
"""


@pytest.fixture(autouse=True)
def data_dir(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    folder = tmp_path / "data"
    monkeypatch.setenv("ALMANAC_DATA_DIR", str(folder))
    monkeypatch.delenv("ALMANAC_TZDB_DIR", raising=False)
    return folder


def run(*args: str):
    return CliRunner().invoke(app, list(args))


def preview(name: str, start: str, end: str) -> list[dict[str, Any]]:
    result = run("preview", str(EXAMPLES / name), "--from", start, "--to", end, "--json")
    assert result.exit_code == 0, result.output
    records: list[dict[str, Any]] = json.loads(result.stdout)
    return records


def test_examples_are_the_expected_set() -> None:
    assert sorted(p.name for p in EXAMPLES.glob("*.yaml")) == sorted([SEED.name, *ADDED]), (
        "a new example needs its expectations here"
    )


def test_seed_example_is_verbatim() -> None:
    assert SEED.read_text(encoding="utf-8") == SEED_TEXT


def test_every_example_validates() -> None:
    files = sorted(str(p) for p in EXAMPLES.iterdir() if p.suffix in {".yaml", ".yml", ".json"})
    result = run("validate", *files)
    assert result.exit_code == 0, result.output
    assert result.stdout.count("✓") == len(files) == 1 + len(ADDED)


_QUOTED_COMMAND = re.compile(r"`almanac ([^`]+)`")


def quoted_commands(text: str) -> list[list[str]]:
    """The arguments of each ```almanac …``` quoted in a ``#`` comment line of ``text``.

    Only a quote naming an example file is a command to run; one naming no file (```almanac
    status```) names a command in prose.
    """
    return [
        shlex.split(quoted)
        for line in text.splitlines()
        if line.lstrip().startswith("#")
        for quoted in _QUOTED_COMMAND.findall(line)
        if "examples/" in quoted
    ]


def test_the_command_finder_reads_comments_only() -> None:
    text = (
        "# see `almanac preview examples/a.yaml --to 2030-01-01T00:00:00Z` and `almanac status`\n"
        "rule: x  # `almanac validate examples/b.yaml` is not a comment line\n"
    )
    assert quoted_commands(text) == [["preview", "examples/a.yaml", "--to", "2030-01-01T00:00:00Z"]]


def test_commands_quoted_in_example_comments_run(monkeypatch: pytest.MonkeyPatch) -> None:
    commands = [
        command
        for path in sorted(EXAMPLES.glob("*.yaml"))
        for command in quoted_commands(path.read_text(encoding="utf-8"))
    ]
    assert any("examples/leap-day.yaml" in command for command in commands)
    monkeypatch.chdir(ROOT)
    for command in commands:
        result = run(*command)
        assert result.exit_code == 0, f"almanac {shlex.join(command)}: {result.output}"


@pytest.mark.parametrize("name", ADDED)
def test_added_examples_follow_the_conventions(name: str) -> None:
    text = (EXAMPLES / name).read_text(encoding="utf-8")
    lines = text.splitlines()
    assert lines[0].startswith("# ") and not lines[1].startswith("#"), "one-line comment first"
    data = read_spec_data(EXAMPLES / name)
    assert data["tzdbVersion"] == "2026a"
    assert data["scheduleId"] == name.removesuffix(".yaml")
    assert data["action"] == {
        "name": "http",
        "parameters": {"url": "http://127.0.0.1:8765/effects"},
    }
    assert data["revision"] == 1
    # A first revision's cutover may lie in the past; none is later than the seed's.
    cutover = datetime.fromisoformat(data["cutoverAt"])
    assert cutover <= datetime(2026, 11, 1, 6, tzinfo=UTC)


def test_seed_example_records_the_2027_spring_forward_as_skipped_gap() -> None:
    # US DST starts on the second Sunday of March at 02:00 EST (07:00Z): 2027-03-14.
    records = preview("daily-ops-summary.yaml", "2027-03-13T00:00:00Z", "2027-03-16T00:00:00Z")
    by_local = {r["nominalLocal"]: r for r in records}
    assert list(by_local) == ["2027-03-13T02:30:00", "2027-03-14T02:30:00", "2027-03-15T02:30:00"]
    gap = by_local["2027-03-14T02:30:00"]
    assert gap["disposition"] == "SKIPPED_GAP"
    assert gap["reason"] == "GAP_SKIPPED"
    assert gap["instant"] is None and gap["utcOffset"] is None and gap["logicalSlotId"] is None
    assert gap["gapAt"] == "2027-03-14T07:00:00Z"
    assert gap["tzdbVersion"] == "2026a"
    assert by_local["2027-03-13T02:30:00"]["instant"] == "2027-03-13T07:30:00Z"  # EST -05:00
    assert by_local["2027-03-15T02:30:00"]["instant"] == "2027-03-15T06:30:00Z"  # EDT -04:00


def test_seed_example_default_preview_shows_the_gap() -> None:
    # Default window: cutoverAt (2026-11-01T06:00Z) + 366 days, which contains 2027-03-14.
    result = run("preview", str(SEED), "--json")
    assert result.exit_code == 0, result.output
    gaps = [r for r in json.loads(result.stdout) if r["disposition"] == "SKIPPED_GAP"]
    assert [g["nominalLocal"] for g in gaps] == ["2027-03-14T02:30:00"]


def test_hourly_both_folds_runs_the_repeated_hour_twice() -> None:
    # 2026-11-01: 02:00 EDT (06:00Z) falls back to 01:00 EST; 01:00 local is 05:00Z and 06:00Z.
    records = preview("hourly-both-folds.yaml", "2026-11-01T04:00:00Z", "2026-11-01T08:00:00Z")
    got = [(r["nominalLocal"], r["fold"], r["instant"], r["utcOffset"]) for r in records]
    assert got == [
        ("2026-11-01T00:00:00", 0, "2026-11-01T04:00:00Z", "-04:00"),
        ("2026-11-01T01:00:00", 0, "2026-11-01T05:00:00Z", "-04:00"),
        ("2026-11-01T01:00:00", 1, "2026-11-01T06:00:00Z", "-05:00"),
        ("2026-11-01T02:00:00", 0, "2026-11-01T07:00:00Z", "-05:00"),
    ]


def test_hourly_both_folds_spring_forward_collision_is_recorded() -> None:
    # 2027-03-14 02:00 does not exist; shifted forward it is 03:00 EDT = 07:00Z, the instant of
    # the natural 03:00, which keeps the slot; the shifted one is recorded, not dropped.
    records = preview("hourly-both-folds.yaml", "2027-03-14T06:00:00Z", "2027-03-14T08:00:00Z")
    by_local = {r["nominalLocal"]: r for r in records}
    assert by_local["2027-03-14T03:00:00"]["instant"] == "2027-03-14T07:00:00Z"
    assert by_local["2027-03-14T03:00:00"]["reason"] == "UNAMBIGUOUS"
    assert by_local["2027-03-14T02:00:00"]["reason"] == "GAP_SHIFT_COLLISION"
    assert by_local["2027-03-14T02:00:00"]["logicalSlotId"] is None


def test_month_end_is_the_last_day_of_each_month() -> None:
    # Europe/London: GMT until 2027-03-28 01:00Z, then BST (+01:00).
    records = preview("month-end.yaml", "2026-11-01T00:00:00Z", "2027-05-01T00:00:00Z")
    got = [(r["nominalLocal"], r["instant"]) for r in records]
    assert got == [
        ("2026-11-30T23:00:00", "2026-11-30T23:00:00Z"),
        ("2026-12-31T23:00:00", "2026-12-31T23:00:00Z"),
        ("2027-01-31T23:00:00", "2027-01-31T23:00:00Z"),
        ("2027-02-28T23:00:00", "2027-02-28T23:00:00Z"),
        ("2027-03-31T23:00:00", "2027-03-31T22:00:00Z"),
        ("2027-04-30T23:00:00", "2027-04-30T22:00:00Z"),
    ]


def test_leap_day_only_on_february_29() -> None:
    # Europe/Berlin in February: CET, +01:00.
    records = preview("leap-day.yaml", "2026-11-01T00:00:00Z", "2037-01-01T00:00:00Z")
    assert [r["instant"] for r in records] == [
        "2028-02-29T08:00:00Z",
        "2032-02-29T08:00:00Z",
        "2036-02-29T08:00:00Z",
    ]


def test_lord_howe_half_hour_gap_shifts_forward_by_30_minutes() -> None:
    # Australia/Lord_Howe: +10:30, DST +11:00 from the first Sunday of October at 02:00
    # (2027-10-03; 02:00 → 02:30). 02:15 read with the offset before the gap: 02:15+10:30 =
    # 15:45Z on 2027-10-02, shown as 02:45 +11:00.
    records = preview("lord-howe-half-hour.yaml", "2027-10-01T00:00:00Z", "2027-10-04T00:00:00Z")
    got = [(r["nominalLocal"], r["instant"], r["utcOffset"], r["reason"]) for r in records]
    assert got == [
        ("2027-10-02T02:15:00", "2027-10-01T15:45:00Z", "+10:30", "UNAMBIGUOUS"),
        ("2027-10-03T02:15:00", "2027-10-02T15:45:00Z", "+11:00", "GAP_SHIFTED_FORWARD"),
        ("2027-10-04T02:15:00", "2027-10-03T15:15:00Z", "+11:00", "UNAMBIGUOUS"),
    ]


def test_every_10_seconds() -> None:
    records = preview("every-10-seconds.yaml", "2026-11-01T00:00:00Z", "2026-11-01T00:01:00Z")
    assert [r["instant"] for r in records] == [
        f"2026-11-01T00:00:{s:02d}Z" for s in (0, 10, 20, 30, 40, 50)
    ]


def test_validate_bad_file_exits_2_and_prints_every_problem(tmp_path: Path) -> None:
    bad = tmp_path / "bad.yaml"
    bad.write_text(
        "schema: scheduleSpec.v1\n"
        "scheduleId: Bad_Id\n"
        "revision: 0\n"
        "timeZone: America/New_York\n"
        "tzdbVersion: 2026a\n"
        'rule: "FREQ=DAILY;INTERVAL=0"\n'
        "gapPolicy: MAYBE\n"
        "cutoverAt: 2026-11-01T06:00:00\n"
        "colour: blue\n"
    )
    result = run("validate", str(bad), str(SEED))
    assert result.exit_code == 2
    for field in ("scheduleId", "revision", "rule", "gapPolicy", "cutoverAt", "colour"):
        assert re.search(rf"\b{field}\b", result.stderr), f"{field} not reported"
    assert "Bad_Id" in result.stderr and "MAYBE" in result.stderr
    assert "daily-ops-summary r7" in result.stdout  # the good file is still checked


# --- almanac schema ----------------------------------------------------------------------------
# The `jsonschema` package is not a dependency; this checks the keywords the schema uses.


def _check(schema: dict[str, Any], value: Any, root: dict[str, Any], where: str) -> list[str]:
    if "$ref" in schema:
        name = schema["$ref"].removeprefix("#/$defs/")
        return _check(root["$defs"][name], value, root, where)
    problems: list[str] = []
    if "anyOf" in schema:
        options = [_check(option, value, root, where) for option in schema["anyOf"]]
        if all(options):
            problems.append(f"{where}: matches no anyOf option")
        if set(schema) <= {"anyOf", "description", "title", "default"}:
            return problems  # a pure union; otherwise the other keywords apply as well
    kinds = {
        "string": str,
        "integer": int,
        "object": dict,
        "null": type(None),
        "array": list,
        "boolean": bool,
    }
    kind = schema.get("type")
    if kind and not isinstance(value, kinds[kind]):
        return [f"{where}: {value!r} is not {kind}"]
    if "const" in schema and value != schema["const"]:
        problems.append(f"{where}: {value!r} != {schema['const']!r}")
    if "enum" in schema and value not in schema["enum"]:
        problems.append(f"{where}: {value!r} not in {schema['enum']}")
    if "pattern" in schema and not re.search(schema["pattern"], value):
        problems.append(f"{where}: {value!r} !~ {schema['pattern']}")
    if "minLength" in schema and len(value) < schema["minLength"]:
        problems.append(f"{where}: too short")
    if "minimum" in schema and value < schema["minimum"]:
        problems.append(f"{where}: below minimum")
    if "maximum" in schema and value > schema["maximum"]:
        problems.append(f"{where}: above maximum")
    if kind == "object" or (kind is None and isinstance(value, dict) and "required" in schema):
        properties = schema.get("properties", {})
        problems += [f"{where}.{k}: required" for k in schema.get("required", []) if k not in value]
        for key, item in value.items():
            if key in properties:
                problems += _check(properties[key], item, root, f"{where}.{key}")
            elif schema.get("additionalProperties") is False:
                problems.append(f"{where}.{key}: not allowed")
            elif isinstance(schema.get("additionalProperties"), dict):
                problems += _check(schema["additionalProperties"], item, root, f"{where}.{key}")
    return problems


@pytest.fixture(scope="module")
def json_schema() -> dict[str, Any]:
    result = CliRunner().invoke(app, ["schema"])
    assert result.exit_code == 0, result.output
    document: dict[str, Any] = json.loads(result.stdout)
    return document


def test_schema_is_a_json_schema_of_the_contract(json_schema: dict[str, Any]) -> None:
    assert json_schema["$schema"] == "https://json-schema.org/draft/2020-12/schema"
    assert json_schema["type"] == "object"
    assert json_schema["additionalProperties"] is False
    assert set(json_schema["required"]) == {
        "schema", "scheduleId", "revision", "timeZone", "tzdbVersion", "cutoverAt",
    }  # fmt: skip
    # Issue 13: one of rule (calendar) and interval (elapsed time) must be given; issue 29: or
    # rdates (one-off dates) alone.
    assert [branch["required"] for branch in json_schema["anyOf"]] == [
        ["rule"],
        ["interval"],
        ["rdates"],
    ]


@pytest.mark.parametrize("name", [SEED.name, *ADDED])
def test_schema_validates_each_example(json_schema: dict[str, Any], name: str) -> None:
    assert _check(json_schema, read_spec_data(EXAMPLES / name), json_schema, "$") == []


def test_schema_rejects_what_validate_rejects(json_schema: dict[str, Any]) -> None:
    data = read_spec_data(SEED)
    assert _check(json_schema, {**data, "colour": "blue"}, json_schema, "$") == [
        "$.colour: not allowed"
    ]
    assert _check(json_schema, {**data, "tzdbVersion": "latest"}, json_schema, "$")
    assert _check(json_schema, {**data, "foldPolicy": "LAST"}, json_schema, "$")
    assert _check(json_schema, {**data, "action": {"name": "http", "x": 1}}, json_schema, "$")
    missing = {k: v for k, v in data.items() if k != "cutoverAt"}
    assert _check(json_schema, missing, json_schema, "$") == ["$.cutoverAt: required"]
    no_rule = {k: v for k, v in data.items() if k != "rule"}
    assert _check(json_schema, no_rule, json_schema, "$") == ["$: matches no anyOf option"]
    assert _check(json_schema, {**no_rule, "interval": "PT2H"}, json_schema, "$") == []


def test_nyse_month_end_is_the_last_nyse_trading_day() -> None:
    # NYSE holidays (nyse.com): 2027-05-31 Memorial Day, 2026-12-31 is a Thursday and open.
    # 16:30 EST = 21:30Z, EDT = 20:30Z (New York DST 2027-03-14 … 2027-11-07).
    records = preview("nyse-month-end.yaml", "2026-12-01T00:00:00Z", "2027-07-01T00:00:00Z")
    assert [r["instant"] for r in records] == [
        "2026-12-31T21:30:00Z",
        "2027-01-29T21:30:00Z",
        "2027-02-26T21:30:00Z",
        "2027-03-31T20:30:00Z",
        "2027-04-30T20:30:00Z",
        "2027-05-28T20:30:00Z",
        "2027-06-30T20:30:00Z",
    ]


def test_one_off_run_runs_once() -> None:
    # Europe/Berlin in January: CET, +01:00.
    records = preview("one-off-run.yaml", "2026-11-01T00:00:00Z", "2030-01-01T00:00:00Z")
    assert [(r["nominalLocal"], r["instant"]) for r in records] == [
        ("2027-01-04T08:00:00", "2027-01-04T07:00:00Z")
    ]


def test_business_day_report_records_holidays_by_name_and_the_exclusion() -> None:
    # Thanksgiving 2026 is Thursday 26 November; Christmas Day Friday 25 December (NYSE closed).
    records = preview("business-day-report.yaml", "2026-11-25T00:00:00Z", "2026-12-29T00:00:00Z")
    skipped = [
        (r["nominalLocal"][:10], r["disposition"], r.get("holiday"))
        for r in records
        if r["disposition"] != "PLANNED"
    ]
    assert skipped == [
        ("2026-11-26", "SKIPPED_HOLIDAY", "Thanksgiving Day"),
        ("2026-12-24", "EXCLUDED", None),
        ("2026-12-25", "SKIPPED_HOLIDAY", "Christmas Day"),
    ]
    assert {r.get("calendar") for r in records if r.get("holiday")} == {"NYSE@holidays-0.108"}
