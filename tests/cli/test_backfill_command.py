"""``almanac backfill``: the plan's output and the exit codes (0 ok, 2 refused input, naming it).

Against the real dev server and an ``almanac worker`` subprocess (the ``control`` fixture of
``test_control.py``). The spec runs every 10 seconds from a cutoverAt a minute back, and applying
never materializes the past (DESIGN §3), so a 30-second window after the cutover holds exactly
three never-materialized occurrences: three CREATE rows.
"""

from __future__ import annotations

import uuid
from datetime import UTC, datetime, timedelta

import pytest
from test_control import Control, _wait, _z, control
from typer.testing import CliRunner

from almanac.cli import app

__all__ = ["control"]


def test_a_naive_instant_exits_2_naming_the_option_before_anything_is_sent() -> None:
    result = CliRunner().invoke(
        app, ["backfill", "x", "--from", "2026-12-01T00:00:00", "--to", "2026-12-01T01:00:00Z"]
    )
    assert result.exit_code == 2
    assert result.stderr == (
        "error: --from='2026-12-01T00:00:00': an instant needs a UTC offset (end it in Z)\n"
    )


@pytest.mark.temporal
@pytest.mark.slow
def test_backfill_prints_the_plan_refuses_with_exit_2_and_runs_once(control: Control) -> None:
    sid = f"bf-{uuid.uuid4().hex[:6]}"
    cutover = datetime.now(UTC).replace(microsecond=0) - timedelta(minutes=1)
    applied = control.json("apply", str(control.spec_file(sid, cutoverAt=_z(cutover))))
    assert applied["action"] == "started"
    window = ["--from", _z(cutover), "--to", _z(cutover + timedelta(seconds=30))]

    dry = control.run("backfill", sid, *window, "--dry-run", "--reason", "late data")
    assert dry.returncode == 0, dry.stderr
    assert "dry run, nothing written" in dry.stdout
    assert dry.stdout.count("\nCREATE ") == 3
    assert "3 creates, 0 requeues, 0 skips (bound 1000); dry run" in dry.stdout
    planned = control.json("backfill", sid, *window, "--dry-run")
    assert [e["action"] for e in planned["entries"]] == ["CREATE"] * 3
    assert planned["released"] == [] and planned["dryRun"] is True

    over = control.run("backfill", sid, *window, "--max", "2")
    assert over.returncode == 2 and over.stdout == ""
    assert "max=2" in over.stderr and "3 occurrences" in over.stderr
    future = _z(datetime.now(UTC) + timedelta(hours=1))
    late = control.run("backfill", sid, "--from", _z(cutover), "--to", future)
    assert late.returncode == 2 and "to=" in late.stderr and "schedule's now" in late.stderr
    before = control.run("backfill", sid, "--from", _z(cutover - timedelta(hours=1)), *window[2:])
    assert before.returncode == 2 and "cutoverAt" in before.stderr
    assert "Traceback" not in over.stderr + late.stderr + before.stderr

    ran = control.json("backfill", sid, *window, "--reason", "late data")
    ids = [e["occurrenceId"] for e in planned["entries"]]
    assert ran["released"] == ids
    _wait(
        lambda: set(ids) <= {e.idempotency_key for e in control.sink.effects()},
        "the three backfilled occurrences reach the sink",
    )
    again = control.run("backfill", sid, *window)
    assert again.returncode == 0, again.stderr
    assert "0 creates, 0 requeues, 3 skips" in again.stdout
    assert "0 occurrences released" in again.stdout
    effects = [e for e in control.sink.effects() if e.idempotency_key in ids]
    assert sorted(e.idempotency_key for e in effects) == ids
    assert all(e.delivery_count == 1 for e in effects)
