"""``almanac db upgrade`` and ``almanac ledger list|show|materialize`` on a SQLite file."""

from __future__ import annotations

import json
import os
from datetime import timedelta
from pathlib import Path

import pytest
from ledger_support import T0, claim_now, due_occurrence
from typer.testing import CliRunner

from almanac.cli import app
from ledger import Ledger, mark_running, show_occurrence, unknown_effect

pytest_plugins = ["ledger_fixtures"]  # ledger, backend and the PostgreSQL cluster


EXAMPLE = Path(__file__).parents[2] / "examples" / "daily-ops-summary.yaml"


@pytest.fixture
def run(tmp_path: Path, monkeypatch: pytest.MonkeyPatch):  # type: ignore[no-untyped-def]
    monkeypatch.setenv("ALMANAC_DATA_DIR", str(tmp_path / "data"))
    monkeypatch.delenv("ALMANAC_LEDGER_URL", raising=False)
    runner = CliRunner()
    return lambda *args: runner.invoke(app, list(args))


def test_ledger_cli_materialize_list_show(run) -> None:  # type: ignore[no-untyped-def]
    assert run("ledger", "list", "daily-ops-summary").exit_code == 1  # not migrated yet
    assert run("db", "upgrade").exit_code == 0
    made = run(
        "ledger",
        "materialize",
        str(EXAMPLE),
        "--from",
        "2026-11-01T00:00:00Z",
        "--to",
        "2026-11-05T00:00:00Z",
        "--now",
        "2026-10-30T00:00:00Z",
        "--json",
    )
    assert made.exit_code == 0, made.output
    payload = json.loads(made.output)
    assert len(payload["created"]) == 4
    listed = run("ledger", "list", "daily-ops-summary", "--state", "PLANNED", "--json")
    rows = json.loads(listed.output)
    assert [r["instant"] for r in rows][:2] == ["2026-11-01T07:30:00Z", "2026-11-02T07:30:00Z"]
    shown = run("ledger", "show", rows[0]["occurrenceId"], "--json")
    detail = json.loads(shown.output)
    assert detail["events"][0]["to"] == "PLANNED" and detail["attempts"] == []
    assert "events" in run("ledger", "show", rows[0]["occurrenceId"]).output
    # A window before the revision's publication is clamped, and the header says so.
    early = run(
        "ledger", "materialize", str(EXAMPLE), "--from", "2026-10-01T00:00:00Z",
        "--to", "2026-10-03T00:00:00Z", "--now", "2026-10-30T00:00:00Z",
    )  # fmt: skip
    assert early.exit_code == 0, early.output
    words = " ".join(early.output.split())
    assert "asked 2026-10-01T00:00:00Z → 2026-10-03T00:00:00Z: clamped" in words


def test_db_upgrade_says_what_it_did(run, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    from alembic import command
    from sqlalchemy import create_engine

    from ledger.migrate import alembic_config, head

    newest = head()
    assert f"ledger schema created at {newest} " in run("db", "upgrade").output
    assert f"ledger schema already at {newest} " in run("db", "upgrade").output
    engine = create_engine(f"sqlite:///{tmp_path / 'data' / 'ledger.sqlite3'}")
    command.downgrade(alembic_config(engine), "0009")
    engine.dispose()
    upgraded = run("db", "upgrade", "--json")
    assert json.loads(upgraded.output) | {"url": ""} == {
        "revision": newest, "from": "0009", "url": ""
    }  # fmt: skip


def test_ledger_cli_exit_codes(run) -> None:  # type: ignore[no-untyped-def]
    assert run("db", "upgrade").exit_code == 0
    assert run("ledger", "show", "nope").exit_code == 2
    unknown = run("ledger", "list", "nope")  # an unknown scheduleId, like `show`: exit 2
    assert unknown.exit_code == 2 and "nope" in unknown.output
    assert run("ledger", "list", "x", "--from", "yesterday").exit_code == 2
    assert run("ledger", "list", "x", "--state", "DONE").exit_code == 2
    url = "postgresql+psycopg://u:s3cret@127.0.0.1:1/x?sslpassword=q5ecret"
    unreachable = run("ledger", "list", "x", "--url", url)
    assert unreachable.exit_code == 1
    # One line that names the ledger, its password hidden.
    [line] = unreachable.output.strip().splitlines()
    assert line.startswith("error: ledger postgresql+psycopg://u:***@127.0.0.1:1/x unavailable: ")
    assert "s3cret" not in unreachable.output and "q5ecret" not in unreachable.output
    refused = run("db", "upgrade", "--url", url)
    assert refused.exit_code == 1
    [line] = refused.output.strip().splitlines()
    assert "ledger postgresql+psycopg://u:***@127.0.0.1:1/x unavailable: " in line
    assert "s3cret" not in refused.output and "q5ecret" not in refused.output


def test_ledger_cli_unknown_effect_queue_and_resolution_by_hand(run, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    assert run("db", "upgrade").exit_code == 0
    handle = Ledger.from_url(f"sqlite:///{tmp_path / 'data' / 'ledger.sqlite3'}")
    try:
        occurrence_id = due_occurrence(handle)
        attempt = claim_now(handle, occurrence_id, T0 + timedelta(days=1)).attempt
        assert attempt is not None
        later = T0 + timedelta(days=1, minutes=1)
        mark_running(handle, occurrence_id, attempt.claim_generation, later, by="w")
        unknown_effect(
            handle,
            occurrence_id,
            attempt.claim_generation,
            later,
            by="w",
            error_class="UNCONFIRMED",
            error_message="timeout after DATA",
        )
    finally:
        handle.dispose()
    early = (later + timedelta(minutes=10)).isoformat()
    listed = json.loads(run("ledger", "unknown", "--now", early, "--json").output)
    assert [(c["occurrenceId"], c["humanQueue"]) for c in listed] == [(occurrence_id, False)]
    past = (later + timedelta(minutes=30)).isoformat()
    listed = json.loads(run("ledger", "unknown", "--now", past, "--json").output)
    assert [(c["occurrenceId"], c["humanQueue"]) for c in listed] == [(occurrence_id, True)]
    assert run("ledger", "resolve", occurrence_id, "--outcome", "MAYBE", "--by", "a").exit_code == 2
    for blank in ("", "   "):  # who decided is the case's record: a blank --by is refused
        refused = run("ledger", "resolve", occurrence_id, "--outcome", "SUCCEEDED", "--by", blank)
        assert refused.exit_code == 2, refused.output
        assert "--by" in refused.output and len(refused.output.strip().splitlines()) == 1
    untouched = json.loads(run("ledger", "show", occurrence_id, "--json").output)
    assert untouched["occurrence"]["state"] == "UNKNOWN_EFFECT"
    assert untouched["reconciliationCase"]["resolvedBy"] is None
    resolved = run(
        "ledger", "resolve", occurrence_id, "--outcome", "SUCCEEDED", "--by", "alice", "--json"
    )
    assert resolved.exit_code == 0, resolved.output
    case = json.loads(resolved.output)
    assert (case["occurrenceId"], case["resolution"], case["resolvedBy"]) == (
        occurrence_id,
        "SUCCEEDED",
        "alice",
    )
    shown = json.loads(run("ledger", "show", occurrence_id, "--json").output)
    assert shown["occurrence"]["state"] == "SUCCEEDED"
    assert json.loads(run("ledger", "unknown", "--json").output) == []


def test_ledger_show_prints_the_trail_in_the_ledger_s_sequence_not_by_time(
    run, tmp_path: Path
) -> None:  # type: ignore[no-untyped-def]
    assert run("db", "upgrade").exit_code == 0
    handle = Ledger.from_url(f"sqlite:///{tmp_path / 'data' / 'ledger.sqlite3'}")
    try:
        occurrence_id = due_occurrence(handle)
        attempt = claim_now(handle, occurrence_id, T0 + timedelta(days=1)).attempt
        assert attempt is not None
        # A worker whose clock is a day behind records the call's start: earlier than the claim.
        mark_running(handle, occurrence_id, attempt.claim_generation, T0, by="behind")
    finally:
        handle.dispose()
    shown = json.loads(run("ledger", "show", occurrence_id, "--json").output)
    trail = [(e["sequence"], e["to"], e["by"]) for e in shown["events"]]
    assert trail == [
        (1, "PLANNED", "materializer"),
        (2, "DUE", "materializer"),
        (3, "DISPATCHING", "worker-1"),
        (4, "RUNNING", "behind"),
    ]
    assert shown["events"][3]["at"] < shown["events"][2]["at"]
    table = run("ledger", "show", occurrence_id).output
    trail_table = table[table.index("\nevents") :]
    numbers = [line.split("│")[1].strip() for line in trail_table.splitlines() if "│" in line]
    assert numbers == ["1", "2", "3", "4"]


def test_ledger_list_never_wraps_an_occurrence_id(run) -> None:  # type: ignore[no-untyped-def]
    # The trial copied IDs out of a terminal's table: Rich had folded them across two rows.
    from rich.console import Console

    from almanac.cli.ledger import _table
    from ledger import list_occurrences

    assert run("db", "upgrade").exit_code == 0
    window = ("--from", "2026-11-01T00:00:00Z", "--to", "2026-11-03T00:00:00Z")
    made = run("ledger", "materialize", str(EXAMPLE), *window, "--now", "2026-10-30T00:00:00Z")
    assert made.exit_code == 0, made.output
    listed = json.loads(run("ledger", "list", "daily-ops-summary", "--json").output)
    ids = [r["occurrenceId"] for r in listed]
    assert len(ids) == 2
    handle = Ledger.from_url(f"sqlite:///{Path(os.environ['ALMANAC_DATA_DIR']) / 'ledger.sqlite3'}")
    try:
        rows = list_occurrences(handle, "daily-ops-summary")
    finally:
        handle.dispose()
    console = Console(width=100, record=True, color_system=None)
    console.print(_table("occurrences", rows))
    lines = console.export_text().splitlines()
    assert all(any(i in line for line in lines) for i in ids), "\n".join(lines)


def test_ledger_materialize_refuses_a_window_beyond_the_bound_writing_nothing(run) -> None:  # type: ignore[no-untyped-def]
    # Every 10 s for two days: 17,280 occurrences, past the 10,000 one materialization writes.
    assert run("db", "upgrade").exit_code == 0
    dense = Path(__file__).parents[2] / "examples" / "every-10-seconds.yaml"
    window = ["--from", "2027-01-01T00:00:00Z", "--to", "2027-01-03T00:00:00Z"]
    refused = run("ledger", "materialize", str(dense), *window, "--now", "2026-12-31T00:00:00Z")
    assert refused.exit_code == 2
    [line] = refused.output.strip().splitlines()
    assert "--to='2027-01-03T00:00:00Z'" in line and "more than 10000 occurrences" in line
    assert run("ledger", "list", "every-10-seconds").exit_code == 2  # nothing published


def test_ledger_show_names_a_missed_deadline_in_text_and_json(run, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    from ledger_support import make_spec

    from ledger.deadlines import sweep_deadlines

    assert run("db", "upgrade").exit_code == 0
    handle = Ledger.from_url(f"sqlite:///{tmp_path / 'data' / 'ledger.sqlite3'}")
    try:
        occurrence_id = due_occurrence(handle, make_spec(deadline="PT30M"))
        instant = show_occurrence(handle, occurrence_id).occurrence.instant_utc
        assert instant is not None
        sweep_deadlines(handle, "daily-ops-summary", instant + timedelta(hours=1), by="sweeper")
    finally:
        handle.dispose()
    shown = json.loads(run("ledger", "show", occurrence_id, "--json").output)
    deadline = (instant + timedelta(minutes=30)).strftime("%Y-%m-%dT%H:%M:%SZ")
    assert shown["occurrence"]["state"] == "DUE"
    assert (shown["deadlineMiss"]["deadline"], shown["deadlineMiss"]["stateAtDeadline"]) == (
        deadline,
        "DUE",
    )
    text = run("ledger", "show", occurrence_id).output
    assert f"deadline missed: {deadline} (DUE at the deadline)" in text


def test_ledger_events_lists_a_schedules_own_trail(run, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    from ledger import disable, enable

    assert run("db", "upgrade").exit_code == 0
    window = ("--from", "2026-11-01T00:00:00Z", "--to", "2026-11-02T00:00:00Z")
    made = run("ledger", "materialize", str(EXAMPLE), *window, "--now", "2026-10-30T00:00:00Z")
    assert made.exit_code == 0, made.output
    handle = Ledger.from_url(f"sqlite:///{tmp_path / 'data' / 'ledger.sqlite3'}")
    try:
        disable(handle, "daily-ops-summary", T0, by="ops:carol", reason="vendor outage")
        enable(handle, "daily-ops-summary", T0 + timedelta(hours=1), by="ops:carol")
    finally:
        handle.dispose()
    events = json.loads(run("ledger", "events", "daily-ops-summary", "--json").output)
    assert [e["kind"] for e in events] == ["PUBLISHED", "DISABLED", "ENABLED"]
    assert events[1]["by"] == "ops:carol" and "vendor outage" in events[1]["detail"]
    assert events[1]["at"] == T0.strftime("%Y-%m-%dT%H:%M:%SZ")
    newest = run("ledger", "events", "daily-ops-summary", "--limit", "1", "--json").output
    assert [e["kind"] for e in json.loads(newest)] == ["ENABLED"]
    only = run("ledger", "events", "daily-ops-summary", "--kind", "disabled", "--json").output
    assert [e["kind"] for e in json.loads(only)] == ["DISABLED"]
    text = " ".join(run("ledger", "events", "daily-ops-summary").output.split())
    assert "DISABLED" in text and "vendor outage" in text
    bad = run("ledger", "events", "daily-ops-summary", "--kind", "PAUSED")
    assert bad.exit_code == 2 and "--kind='PAUSED'" in bad.output
    assert run("ledger", "events", "no-such-schedule").exit_code == 2
