"""A lost acknowledgement is reconciled by asking the downstream, in skipped time; never re-sent.

A daily 09:00 UTC schedule posts to the sink with a one-second timeout and a result URL. The sink
records the 09:00 delivery, then holds its answer for ten minutes (a lost ack: the effect
happened, the caller times out). Expectations, from DESIGN §4 (UNKNOWN_EFFECT → reconciliation):

- the attempt ends UNKNOWN_EFFECT (a read timeout after sending is not a failure);
- the occurrence workflow waits, asks the result URL, learns the effect exists, and the occurrence
  becomes SUCCEEDED with its case resolved SUCCEEDED;
- the sink saw exactly one delivery of the key (nothing was re-sent), one attempt in the ledger.
"""

from __future__ import annotations

from datetime import UTC, datetime, timedelta
from pathlib import Path

import pytest
from stack import record_history, running_stack
from temporal_env import eventually, start_time_skipping

from ledger import (
    Ledger,
    OccurrenceDetail,
    OccurrenceState,
    ReconciliationResolution,
    show_occurrence,
)

pytestmark = [pytest.mark.anyio, pytest.mark.temporal, pytest.mark.slow]

SCHEDULE_ID = "lost-ack-daily"
DAY = datetime(2026, 12, 1, tzinfo=UTC)
OCCURRENCE = f"{SCHEDULE_ID}.r1.20261201T090000.f0"


async def test_lost_ack_is_reconciled_by_the_result_query(tmp_path: Path) -> None:
    env = await start_time_skipping()
    try:
        async with running_stack(env, tmp_path, "lost-ack") as stack:
            spec = {
                "schema": "scheduleSpec.v1",
                "scheduleId": SCHEDULE_ID,
                "revision": 1,
                "timeZone": "Etc/UTC",
                "tzdbVersion": "2026a",
                "rule": "FREQ=DAILY;BYHOUR=9;BYMINUTE=0",
                "cutoverAt": "2026-11-30T00:00:00Z",
                "action": {
                    "name": "http",
                    "parameters": {
                        "url": f"{stack.sink.url}/effects",
                        "resultUrl": f"{stack.sink.url}/effects/{{idempotencyKey}}",
                        "timeoutSeconds": 1,
                    },
                },
            }
            stack.sink.add_fault(match=OCCURRENCE, delay=600, delayTimes=1)
            handle = await stack.start_schedule(
                spec,
                simulate_from=DAY + timedelta(hours=8, minutes=30),
                stop_after=DAY.replace(hour=10),
            )
            await handle.result()
            child = stack.client.get_workflow_handle(OCCURRENCE)
            outcome = await child.result()
            assert (outcome["state"], outcome["detail"]) == ("SUCCEEDED", "reconciliation")

            detail = await eventually(
                lambda: _detail(stack.ledger, OCCURRENCE),
                lambda d: d.occurrence.state is OccurrenceState.SUCCEEDED,
            )
            assert len(detail.attempts) == 1
            assert (
                detail.case is not None
                and detail.case.resolution is ReconciliationResolution.SUCCEEDED
            )
            [effect] = stack.sink.effects()
            assert (effect.idempotency_key, effect.delivery_count) == (OCCURRENCE, 1)

            await record_history(stack.client, OCCURRENCE, "occurrence-reconciled-by-query")
    finally:
        await env.shutdown()


async def _detail(ledger_: Ledger, occurrence_id: str) -> OccurrenceDetail:
    return show_occurrence(ledger_, occurrence_id)
