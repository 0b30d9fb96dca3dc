"""A window larger than one materialization call is written call after call, a second apart.

A schedule whose revision was published 48 hours before its workflow first runs at 00:30 (as
after an outage: the ledger holds nothing since) has 48 hourly occurrences overdue and 3 ahead
in its first window. With the bound lowered to 10 occurrences a call (and a transaction), the
window is written in six calls: each stops at its bound (``truncated``), and the loop refreshes
again at its next wake-up (``almanac-bounded-materialize``), not an hour later. While the overdue
set is incomplete nothing is decided; once it is, ``misfirePolicy: CATCH_UP_BOUNDED`` with
``maxCatchUp: 1`` runs exactly one (the most recent, 00:00) and expires the other 47 — a release
per chunk would run one of each chunk. Expected values from the spec's arithmetic (hourly at :00
UTC; lateness PT5M).
"""

from __future__ import annotations

from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import pytest
from stack import record_history, running_stack
from temporal_env import eventually, start_time_skipping

import activities.ledger_activities
import ledger.materialization
from ledger import OccurrenceState, publish_revision, show_occurrence
from timecontract import load_spec

pytestmark = [pytest.mark.anyio, pytest.mark.temporal, pytest.mark.slow]

DAY = datetime(2026, 12, 3, tzinfo=UTC)
BOUND = 10


def spec() -> dict[str, Any]:
    return {
        "schema": "scheduleSpec.v1",
        "scheduleId": "behind",
        "revision": 1,
        "timeZone": "UTC",
        "tzdbVersion": "2026a",
        "rule": "FREQ=HOURLY;BYMINUTE=0",
        "misfirePolicy": "CATCH_UP_BOUNDED",
        "maxCatchUp": 1,
        "lateness": "PT5M",
        "cutoverAt": "2026-11-30T00:00:00Z",
    }


async def test_a_window_beyond_the_bound_is_written_at_once_and_decided_whole(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(activities.ledger_activities, "MATERIALIZE_LIMIT", BOUND)
    monkeypatch.setattr(ledger.materialization, "CHUNK_OCCURRENCES", BOUND)
    env = await start_time_skipping()
    try:
        async with running_stack(env, tmp_path, "bounded") as stack:
            data = stack.spec(spec())
            published = DAY - timedelta(days=2) + timedelta(minutes=30)
            publish_revision(stack.ledger, load_spec(data), published, by="test")
            handle = await stack.start_schedule(
                data,
                simulate_from=DAY + timedelta(minutes=30),
                stop_after=DAY + timedelta(hours=2),
                horizon_seconds=timedelta(hours=3).total_seconds(),
            )

            def decided() -> dict[str, int]:
                counts: dict[str, int] = {}
                for row in stack.occurrences("behind", to_utc=DAY + timedelta(minutes=30)):
                    counts[row.state.value] = counts.get(row.state.value, 0) + 1
                return counts

            async def probe() -> dict[str, int]:
                return decided()

            found = await eventually(
                probe,
                lambda c: c.get("MISFIRE_EXPIRED") == 47 and c.get("SUCCEEDED") == 1,
                timeout=60.0,
            )
            assert sum(found.values()) == 48  # nothing else: one run, the rest expired
            latest = f"behind.r1.{DAY:%Y%m%dT%H%M%S}.f0"
            assert show_occurrence(stack.ledger, latest).occurrence.state is (
                OccurrenceState.SUCCEEDED
            )
            # Every call a second after the previous one: decided minutes, not hours, after the
            # first wake-up (00:30); without the patch the rest waited for the hourly refresh.
            runs = show_occurrence(stack.ledger, latest).events
            released_at = next(e.at_utc for e in runs if e.to_state == "DUE")
            assert released_at - (DAY + timedelta(minutes=30)) < timedelta(minutes=1)
            await handle.result()  # the run ends at its simulation stop (02:00)
            await record_history(stack.client, handle.id, "schedule-bounded-materialize")
    finally:
        await env.shutdown()
