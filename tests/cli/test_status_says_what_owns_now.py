"""``almanac status`` renders the ledger's reading: the active revision is the one owning now.

The reading itself is tested in ``test_readings_are_the_ledger_now.py``; here, what the text,
the all-schedules table and ``--json`` make of it (no Temporal: the renderers are fed a status).
"""

from __future__ import annotations

from datetime import UTC, datetime

from activities import io
from almanac import readings
from almanac.cli import control
from almanac.cli.output import json_object
from almanac.schedule_reader import LiveStatus, ScheduleSummary

NOW = datetime(2026, 11, 1, tzinfo=UTC)
CUTOVER = datetime(2027, 1, 1, tzinfo=UTC)
BEYOND = datetime(2026, 11, 30, 23, tzinfo=UTC)


def status() -> LiveStatus:
    gate = io.GateSnapshot("month-end", 2, False, None, 0, 0, "default", NOW)
    live = LiveStatus("month-end", gate, None)
    live.take(
        readings.LedgerReading(
            gate=gate,
            counts_by_state={"PLANNED": 0},
            next_instant_utc=BEYOND,
            read_at_utc=NOW,
            next_materialized=False,
            revision_now=1,
            pending=(readings.PendingRevision(2, CUTOVER),),
        )
    )
    return live


def test_a_revision_before_its_cutover_is_pending_not_active() -> None:
    said = control._revisions(status())
    assert said == "active revision r1, r2 pending from 2027-01-01T00:00:00Z"


def test_the_next_instant_beyond_the_horizon_is_shown_everywhere() -> None:
    assert control._next(status()).startswith("2026-11-30T23:00:00Z (beyond the horizon")
    table = control._schedules_table([ScheduleSummary("month-end", "w", status())])
    cells = [list(column.cells) for column in table.columns]
    assert cells[2] == ["active revision r1, r2 pending from 2027-01-01T00:00:00Z"]
    assert cells[3][0].startswith("2026-11-30T23:00:00Z")
    shown = json_object(status())
    assert shown["nextInstant"] == BEYOND and shown["nextMaterialized"] is False
    assert shown["revisionNow"] == 1
    assert [json_object(p) for p in shown["pending"]] == [{"revision": 2, "cutoverAt": CUTOVER}]
