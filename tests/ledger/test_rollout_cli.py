"""``almanac rollout`` / ``almanac rollback`` on a ledger (both backends, through ``--url``).

The canary set is computed here independently (SHA-256 of the scheduleId, first 16 hex digits as
an integer, mod 10000, below P × 100), so the command's printed list is checked against the rule,
not against itself.
"""

from __future__ import annotations

import hashlib
import json
from datetime import timedelta

import pytest
from ledger_support import T0, make_spec
from typer.testing import CliRunner

from almanac.cli import app
from ledger import (
    Ledger,
    OccurrenceState,
    get_gate,
    list_occurrences,
    materialize,
    publish_revision,
    release_due,
)

pytest_plugins = ["ledger_fixtures"]

SCHEDULES = [f"fleet-{n:02d}" for n in range(40)]


def _expected(percent: float) -> list[str]:
    def bucket(s: str) -> int:
        return int(hashlib.sha256(s.encode()).hexdigest()[:16], 16) % 10000

    return sorted(s for s in SCHEDULES if bucket(s) < percent * 100)


@pytest.fixture
def fleet(ledger: Ledger) -> Ledger:
    for schedule_id in SCHEDULES:
        spec = make_spec(scheduleId=schedule_id, maxCatchUp=10, lateness="P10D")
        publish_revision(ledger, spec, T0, by="t", implementation_alias="v1")
        materialize(ledger, spec, T0, T0 + timedelta(days=3), T0)
        release_due(ledger, schedule_id, T0 + timedelta(days=1))
    return ledger


def _run(database_url: str, *args: str) -> dict:  # type: ignore[type-arg]
    result = CliRunner().invoke(app, [*args, "--url", database_url, "--json"])
    assert result.exit_code == 0, result.output
    return json.loads(result.output)  # type: ignore[no-any-return]


def test_rollout_percent_moves_exactly_the_printed_deterministic_set(
    fleet: Ledger, database_url: str
) -> None:
    expected = _expected(5)
    dry = _run(database_url, "rollout", "v2", "--percent", "5", "--dry-run")
    assert dry["selected"] == dry["moving"] == expected and dry["dryRun"]
    assert {get_gate(fleet, s).implementation_alias for s in SCHEDULES} == {"v1"}

    moved = _run(database_url, "rollout", "v2", "--percent", "5", "--id-formats", "1", "--no-start")
    assert moved["moving"] == expected
    on_v2 = sorted(s for s in SCHEDULES if get_gate(fleet, s).implementation_alias == "v2")
    assert on_v2 == expected
    for switch in moved["switches"]:
        due = list_occurrences(fleet, switch["scheduleId"], states=[OccurrenceState.DUE])
        assert switch["requeued"] == sorted(o.occurrence_id for o in due)

    again = _run(database_url, "rollout", "v2", "--percent", "5", "--id-formats", "1", "--no-start")
    assert again["selected"] == expected and again["moving"] == []
    assert not any(s["changed"] for s in again["switches"])
    # A larger percentage only adds schedules.
    assert set(expected) <= set(
        _run(database_url, "rollout", "v2", "--percent", "25", "--dry-run")["selected"]
    )


def test_rollback_all_returns_every_moved_schedule_and_needs_a_reason(
    fleet: Ledger, database_url: str
) -> None:
    _run(database_url, "rollout", "v2", "--schedule", "fleet-07", "--id-formats", "1", "--no-start")
    epoch = get_gate(fleet, "fleet-07").execution_epoch
    back = _run(
        database_url, "rollback", "--to", "v1", "--all", "--reason", "v2 bug",
        "--id-formats", "1", "--no-start",
    )  # fmt: skip
    assert back["moving"] == ["fleet-07"]
    gate = get_gate(fleet, "fleet-07")
    assert gate.implementation_alias == "v1" and gate.execution_epoch == epoch + 1
    assert {get_gate(fleet, s).execution_epoch for s in SCHEDULES if s != "fleet-07"} == {0}
    missing = CliRunner().invoke(app, ["rollback", "--to", "v1", "--all", "--url", database_url])
    assert missing.exit_code == 2 and "--reason" in missing.output
    unregistered = CliRunner().invoke(
        app, ["rollback", "--to", "v9", "--all", "--reason", "x", "--url", database_url]
    )
    assert unregistered.exit_code == 2 and "v9" in unregistered.output


def test_shadow_report_without_a_shadow_run_is_an_error_naming_the_alias(
    fleet: Ledger, database_url: str
) -> None:
    # Zero schedules compared is not zero mismatches: a mistyped alias must not pass the rollout.
    result = CliRunner().invoke(
        app, ["shadow", "report", "--alias", "nosuch", "--url", database_url]
    )
    assert result.exit_code == 2
    assert "--alias='nosuch': no shadow run" in result.output


def test_a_dry_run_that_selects_nothing_says_so_without_a_dangling_colon(
    ledger: Ledger, database_url: str
) -> None:
    result = CliRunner().invoke(
        app, ["rollout", "v2", "--percent", "5", "--dry-run", "--url", database_url]
    )
    assert result.exit_code == 0, result.output
    assert result.output == "0 schedules selected; 0 would move to v2\n"
