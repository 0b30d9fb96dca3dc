"""``catchUpSpacing`` spreads a catch-up's starts, in skipped time (issue 30, flyte#4538).

Two hourly UTC schedules, published a day before their workflows first run at 00:30Z (as after a
one-day outage), ``CATCH_UP_BOUNDED`` with ``maxCatchUp: 3`` and ``lateness: PT5M``: 24
occurrences are overdue; the three most recent (22:00, 23:00, 00:00) run and 21 expire (the
spec's arithmetic). ``paced`` has ``catchUpSpacing: PT10M``, ``plain`` has none.

- ``paced``: its three start no earlier than the release + 0, 10 and 20 minutes (the slots), so
  10 minutes apart (less only by how late a claim follows its slot), and the two delayed claims
  record ``{"pacedBy": "catchUpSpacing", "delaySeconds": 600 × slot, …}``; the first is not
  delayed.
- The lateness rule: the slots reach 20 minutes, past ``lateness``, yet exactly the same
  occurrences run and expire as in ``plain`` (lateness is judged at the release, from the
  resolved instant), and every paced one SUCCEEDS.
- The on-time 01:00 occurrence, released alone, is not paced.
"""

from __future__ import annotations

from datetime import UTC, datetime, timedelta
from itertools import pairwise
from pathlib import Path
from typing import Any

import pytest
from stack import Stack, record_history, running_stack
from temporal_env import eventually, start_time_skipping

from ledger import OccurrenceState, paced_evidence, publish_revision, show_occurrence
from timecontract import load_spec

pytestmark = [pytest.mark.anyio, pytest.mark.temporal, pytest.mark.slow]

DAY = datetime(2026, 12, 3, tzinfo=UTC)
SPACING = timedelta(minutes=10)
CLAIM_LATENCY = timedelta(seconds=5)
"""How late after its slot a claim may start on a busy machine (never before it)."""
CAUGHT_UP = [DAY - timedelta(hours=2), DAY - timedelta(hours=1), DAY]
ON_TIME = DAY + timedelta(hours=1)


def spec(schedule_id: str, **extra: Any) -> dict[str, Any]:
    return {
        "schema": "scheduleSpec.v1",
        "scheduleId": schedule_id,
        "revision": 1,
        "timeZone": "UTC",
        "tzdbVersion": "2026a",
        "rule": "FREQ=HOURLY;BYMINUTE=0",
        "misfirePolicy": "CATCH_UP_BOUNDED",
        "maxCatchUp": 3,
        "lateness": "PT5M",
        "cutoverAt": "2026-11-30T00:00:00Z",
        **extra,
    }


def oid(schedule_id: str, instant: datetime) -> str:
    return f"{schedule_id}.r1.{instant:%Y%m%dT%H%M%S}.f0"


async def test_caught_up_starts_are_spaced_and_lateness_is_unchanged(tmp_path: Path) -> None:
    env = await start_time_skipping()
    try:
        async with running_stack(env, tmp_path, "pacing") as stack:
            handles = []
            for sid, extra in (("paced", {"catchUpSpacing": "PT10M"}), ("plain", {})):
                data = stack.spec(spec(sid, **extra))
                published = DAY - timedelta(days=1) + timedelta(minutes=30)
                publish_revision(stack.ledger, load_spec(data), published, by="test")
                handles.append(
                    await stack.start_schedule(
                        data,
                        simulate_from=DAY + timedelta(minutes=30),
                        stop_after=DAY + timedelta(hours=1, minutes=10),
                        horizon_seconds=timedelta(hours=3).total_seconds(),
                    )
                )
            for handle in handles:
                await handle.result()  # each run ends at its simulation stop (01:10Z)
            wanted = {*CAUGHT_UP, ON_TIME}

            async def decided() -> dict[str, dict[datetime, OccurrenceState]]:
                return {sid: _states(stack, sid) for sid in ("paced", "plain")}

            states = await eventually(
                decided,
                lambda s: all(
                    {i for i, st in s[sid].items() if st is OccurrenceState.SUCCEEDED} == wanted
                    for sid in s
                ),
                timeout=60.0,
            )
            # The lateness rule: pacing changes no misfire decision.
            assert states["paced"] == states["plain"]
            expired = [
                i for i, st in states["paced"].items() if st is OccurrenceState.MISFIRE_EXPIRED
            ]
            assert len(expired) == 21

            starts, released = [], []
            for slot, instant in enumerate(CAUGHT_UP):
                detail = show_occurrence(stack.ledger, oid("paced", instant))
                [attempt] = detail.attempts
                claim = next(e for e in detail.events if e.to_state == "DISPATCHING")
                due = next(e for e in detail.events if e.to_state == "DUE")
                starts.append(attempt.started_at_utc)
                released.append(due.at_utc)
                if slot == 0:
                    assert paced_evidence(claim.why) is None
                else:
                    assert paced_evidence(claim.why) == {
                        "pacedBy": "catchUpSpacing",
                        "delaySeconds": slot * SPACING.total_seconds(),
                        "spacingSeconds": SPACING.total_seconds(),
                        "slot": slot,
                    }
            assert len(set(released)) == 1  # one release handed out all three
            for slot, started in enumerate(starts):
                assert started >= released[0] + slot * SPACING  # never before its slot
            # Two claims are a spacing apart but for how late the earlier one claimed after its
            # slot (a workflow and an activity task, real time: milliseconds, seconds when busy).
            for earlier, later in pairwise(starts):
                assert later - earlier >= SPACING - CLAIM_LATENCY
            # Past lateness (PT5M) and still run: the release decided, the slot only waited.
            assert starts[2] - CAUGHT_UP[2] > timedelta(minutes=5) + 2 * SPACING

            on_time = show_occurrence(stack.ledger, oid("paced", ON_TIME))
            claim = next(e for e in on_time.events if e.to_state == "DISPATCHING")
            assert paced_evidence(claim.why) is None
            assert on_time.attempts[0].started_at_utc - ON_TIME < timedelta(minutes=1)

            await record_history(stack.client, handles[0].id, "schedule-catch-up-pacing")
            await record_history(stack.client, oid("paced", CAUGHT_UP[1]), "occurrence-paced")
    finally:
        await env.shutdown()


def _states(stack: Stack, schedule_id: str) -> dict[datetime, OccurrenceState]:
    rows = stack.occurrences(schedule_id, to_utc=DAY + timedelta(hours=1, minutes=1))
    return {row.instant_utc: row.state for row in rows if row.instant_utc is not None}
