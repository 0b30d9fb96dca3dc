"""Small fixtures the acceptance gates share (the package never imports from ``tests/``).

Every gate runs on a simulated calendar (2027-01-10, UTC), on fresh SQLite ledgers in a folder the
harness gives it; nothing reads the wall clock.
"""

from __future__ import annotations

from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import ledger
from activities import io
from activities.ledger_activities import gate_payload
from ledger.migrate import upgrade
from timecontract import parse_spec

RELEASE = "2026a"
"""The tz database release every gate's specs pin."""
DAY = datetime(2027, 1, 10, tzinfo=UTC)
"""The gates' simulated calendar day."""
UNUSED_URL = "http://127.0.0.1:9"
"""A downstream for specs whose action the gate never invokes (the discard port)."""


def at(hour: int, minute: int = 0) -> datetime:
    """An instant on 2027-01-10, UTC (the gates' simulated calendar)."""
    return DAY.replace(hour=hour, minute=minute)


def spec(schedule_id: str, rule: str, policy: str, bound: int) -> dict[str, object]:
    """A revision-1 UTC spec (no action) with ``rule`` and the misfire ``policy`` and ``bound``."""
    return {
        "schema": "scheduleSpec.v1",
        "scheduleId": schedule_id,
        "revision": 1,
        "timeZone": "UTC",
        "tzdbVersion": RELEASE,
        "rule": rule,
        "misfirePolicy": policy,
        "maxCatchUp": bound,
        "cutoverAt": "2027-01-01T00:00:00Z",
    }


def http_spec(schedule_id: str, sink_url: str, **parameters: Any) -> dict[str, Any]:
    """A daily 09:00 UTC spec with the http action on the sink (``parameters`` override)."""
    action = {
        "url": f"{sink_url}/effects",
        "resultUrl": f"{sink_url}/effects/{{idempotencyKey}}",
        "timeoutSeconds": 10,
    }
    action.update(parameters)
    return {
        **spec(schedule_id, "FREQ=DAILY;BYHOUR=9;BYMINUTE=0", "CATCH_UP_BOUNDED", 2),
        "action": {
            "name": "http",
            "parameters": {k: v for k, v in action.items() if v is not None},
        },
    }


def due(
    store: ledger.Ledger, data: dict[str, Any]
) -> tuple[ledger.OccurrenceView, io.GateSnapshot]:
    """Publish ``data`` at 08:00, materialize the day, release at 09:00: the DUE row and gate."""
    parsed = parse_spec(data)
    ledger.publish_revision(store, parsed, at(8), by="gate")
    ledger.materialize(store, parsed, at(8), at(8) + timedelta(days=1), at(8), by="gate")
    ledger.release_due(store, parsed.schedule_id, at(9), by="gate")
    (row,) = ledger.list_occurrences(store, parsed.schedule_id, states=[ledger.OccurrenceState.DUE])
    view = gate_payload(ledger.get_gate(store, parsed.schedule_id))
    return row, view


def fresh_ledger(folder: Path, name: str) -> ledger.Ledger:
    """A migrated SQLite ledger in a new file ``folder / name``."""
    url = f"sqlite:///{folder / name}"
    upgrade(url)
    return ledger.Ledger.from_url(url)
