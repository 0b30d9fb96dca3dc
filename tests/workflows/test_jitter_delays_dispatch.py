"""``jitter`` delays the dispatch, in skipped time: the occurrence is released at its instant and
claimed only after its recorded delay; the ID and the lateness instant do not move.

The expected delay is the README's formula computed here with hashlib, independently of
``timecontract.jitter``: ``(first 8 bytes of sha256(occurrenceId), big-endian) mod 30,000`` ms.
"""

from __future__ import annotations

import hashlib
from datetime import UTC, datetime, timedelta
from pathlib import Path

import pytest
from stack import Stack, record_history, running_stack
from temporal_env import eventually, start_time_skipping

import ledger
from ledger import OccurrenceState

pytestmark = [pytest.mark.anyio, pytest.mark.temporal, pytest.mark.slow]

SCHEDULE_ID = "jittered"
START = datetime(2027, 1, 10, 9, 0, 30, tzinfo=UTC)
STOP = datetime(2027, 1, 10, 9, 4, tzinfo=UTC)
IDS = [f"{SCHEDULE_ID}.r1.20270110T09{m:02d}00.f0" for m in (1, 2)]


def _expected_delay(occurrence_id: str) -> timedelta:
    digest = hashlib.sha256(occurrence_id.encode()).digest()
    return timedelta(milliseconds=int.from_bytes(digest[:8], "big") % 30_000)


async def test_each_occurrence_is_claimed_after_its_recorded_delay(tmp_path: Path) -> None:
    env = await start_time_skipping()
    try:
        async with running_stack(env, tmp_path, "jitter") as stack:
            spec = stack.spec(
                {
                    "schema": "scheduleSpec.v1",
                    "scheduleId": SCHEDULE_ID,
                    "revision": 1,
                    "timeZone": "UTC",
                    "tzdbVersion": "2026a",
                    "rule": "FREQ=MINUTELY",
                    "start": "2027-01-10T09:01:00",
                    "end": "2027-01-10T09:02:00",
                    "jitter": "PT30S",
                    "lateness": "PT1M",
                    "cutoverAt": "2027-01-01T00:00:00Z",
                }
            )
            handle = await stack.start_schedule(spec, simulate_from=START, stop_after=STOP)
            await handle.result()
            rows = await eventually(
                lambda: _rows(stack),
                lambda r: [o.state for o in r] == [OccurrenceState.SUCCEEDED] * 2,
                timeout=30,
            )
            assert [o.occurrence_id for o in rows] == IDS
            for row in rows:
                delay = _expected_delay(row.occurrence_id)
                assert row.jitter == delay
                assert row.instant_utc == datetime(2027, 1, 10, 9, int(row.occurrence_id[-7:-5]),
                                                   tzinfo=UTC)  # fmt: skip
                detail = ledger.show_occurrence(stack.ledger, row.occurrence_id)
                released = next(e.at_utc for e in detail.events if e.to_state == "DUE")
                [attempt] = detail.attempts
                # Released at its instant (misfire planning measured from it), claimed after the
                # delay: the wait is the recorded one, not a multiple or a fresh random one.
                assert released - row.instant_utc < timedelta(seconds=1)
                waited = attempt.started_at_utc - released
                assert delay <= waited < delay + timedelta(seconds=2)
            await record_history(stack.client, IDS[0], "occurrence-jitter")
    finally:
        await env.shutdown()


async def _rows(stack: Stack) -> list[ledger.OccurrenceView]:
    return stack.occurrences(SCHEDULE_ID)
