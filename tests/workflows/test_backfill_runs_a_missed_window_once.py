"""``almanac backfill`` on the time-skipping server: a missed window runs once, on purpose.

An hourly UTC schedule (``misfirePolicy: SKIP``, lateness PT5M), revision 1 with cutoverAt
2026-11-30T21:00Z, is applied at 2026-12-01T00:30Z. Expectations, from the contract (DESIGN §3:
applying never backfills the past; README "Backfill"), not from the code:

- 21:00, 22:00, 23:00 (Nov 30) and 00:00 were never materialized (before the apply).
- 01:00 runs. The schedule is disabled at 01:30 and enabled at 03:30: 02:00 and 03:00 came due
  while disabled and, more than 5 minutes late under SKIP, expire (MISFIRE_EXPIRED).
- At 03:30 a backfill of [21:00, 03:00) with ``--include-expired``: 4 CREATE, 01:00 SKIP
  (SUCCEEDED), 02:00 REQUEUE (03:00 lies outside the half-open window). A dry run first writes
  nothing; a bound of 4 is refused naming 5; a ``to`` after the schedule's now is refused.
- Then the 5 run exactly once each (the sink counts one delivery per idempotency key =
  occurrenceId), with the IDs the calendar gives (``<id>.r1.<YYYYMMDDTHHMMSS>.f0``); a second
  identical backfill creates nothing and reruns nothing; 03:00 stays MISFIRE_EXPIRED.
"""

from __future__ import annotations

from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import pytest
from stack import Stack, record_history, running_stack, wait_until_sleeping
from temporal_env import eventually, start_time_skipping

from almanac.client import AlmanacClient
from almanac.client_errors import ChangeRejected
from almanac.settings import AlmanacSettings, TemporalSettings
from ledger import OccurrenceState, list_occurrences

pytestmark = [pytest.mark.anyio, pytest.mark.temporal, pytest.mark.slow]

SID = "backfill-hourly"
DAY = datetime(2026, 12, 1, tzinfo=UTC)
SIMULATE_FROM = DAY + timedelta(minutes=30)
STOP = DAY + timedelta(hours=4, minutes=30)
WINDOW = (DAY - timedelta(hours=3), DAY + timedelta(hours=3))
S = OccurrenceState


def oid(hours: int) -> str:
    return f"{SID}.r1.{DAY + timedelta(hours=hours):%Y%m%dT%H%M%S}.f0"


def spec() -> dict[str, Any]:
    return {
        "schema": "scheduleSpec.v1",
        "scheduleId": SID,
        "revision": 1,
        "timeZone": "Etc/UTC",
        "tzdbVersion": "2026a",
        "rule": "FREQ=HOURLY;BYMINUTE=0",
        "misfirePolicy": "SKIP",
        "lateness": "PT5M",
        "cutoverAt": "2026-11-30T21:00:00Z",
    }


def states(stack: Stack) -> dict[str, S]:
    return {r.occurrence_id: r.state for r in list_occurrences(stack.ledger, SID)}


async def _now(value: Any) -> Any:
    return value


async def _idle(handle: Any) -> None:
    """Wait until no workflow task is in flight (the last event closes one or starts a timer)."""

    async def last_event() -> str | None:
        history = await handle.fetch_history()
        return history.events[-1].WhichOneof("attributes")

    idle = {"timer_started_event_attributes", "workflow_task_completed_event_attributes"}
    await eventually(last_event, lambda kind: kind in idle, timeout=20)


def _client(stack: Stack, tmp_path: Path) -> AlmanacClient:
    settings = AlmanacSettings(
        data_dir=tmp_path, temporal=TemporalSettings(task_queue=stack.task_queue)
    )
    return AlmanacClient(stack.client, settings, read_ledger=False)


async def test_backfill_runs_the_missed_window_once_and_never_reruns(tmp_path: Path) -> None:
    env = await start_time_skipping()
    try:
        async with running_stack(env, tmp_path, "backfill") as stack:
            handle = await stack.start_schedule(
                stack.spec(spec()),
                simulate_from=SIMULATE_FROM,
                stop_after=STOP,
                horizon_seconds=timedelta(hours=12).total_seconds(),
            )
            client = _client(stack, tmp_path)
            await env.sleep(timedelta(hours=1))  # → 01:30Z
            await eventually(lambda: _now(states(stack)), lambda s: s.get(oid(1)) is S.SUCCEEDED)
            await wait_until_sleeping(handle)
            await client.disable(SID, "maintenance")
            await env.sleep(timedelta(hours=2))  # → 03:30Z
            await wait_until_sleeping(handle)
            await client.enable(SID)
            await eventually(
                lambda: _now(states(stack)),
                lambda s: s.get(oid(2)) is s.get(oid(3)) is S.MISFIRE_EXPIRED,
            )
            assert not any(oid(h) in states(stack) for h in (-3, -2, -1, 0))
            await wait_until_sleeping(handle)

            # Refusals: nothing is written (a validator's never enters history).
            with pytest.raises(ChangeRejected) as future:
                await client.backfill(SID, WINDOW[0], DAY + timedelta(hours=5), reason="x")
            assert future.value.field == "to"
            with pytest.raises(ChangeRejected, match="5 occurrences") as bound:
                await client.backfill(
                    SID, *WINDOW, reason="x", include_expired=True, max_occurrences=4
                )
            assert bound.value.field == "max"

            before = states(stack)
            plan = await client.backfill(
                SID, *WINDOW, reason="late data", include_expired=True, dry_run=True
            )
            assert plan.dry_run and plan.released == []
            assert [(e.occurrence_id, e.action, e.state) for e in plan.entries] == [
                (oid(-3), "CREATE", None),
                (oid(-2), "CREATE", None),
                (oid(-1), "CREATE", None),
                (oid(0), "CREATE", None),
                (oid(1), "SKIP", "SUCCEEDED"),
                (oid(2), "REQUEUE", "MISFIRE_EXPIRED"),
            ]
            assert states(stack) == before
            assert {e.idempotency_key for e in stack.sink.effects()} == {oid(1)}

            await wait_until_sleeping(handle)
            done = await client.backfill(
                SID, *WINDOW, reason="late data", by="alice@ops", include_expired=True
            )
            ran = [oid(h) for h in (-3, -2, -1, 0, 2)]
            assert done.released == ran
            await eventually(
                lambda: _now(states(stack)),
                lambda s: all(s.get(i) is S.SUCCEEDED for i in ran),
                timeout=30,
            )
            effects = {e.idempotency_key: e.delivery_count for e in stack.sink.effects()}
            assert effects == dict.fromkeys([oid(1), *ran], 1)

            await _idle(handle)  # its children's ends were the last events, not a timer
            again = await client.backfill(
                SID, *WINDOW, reason="late data", by="alice@ops", include_expired=True
            )
            assert again.released == []
            assert {e.action for e in again.entries} == {"SKIP"}
            assert {e.state for e in again.entries} == {"SUCCEEDED"}

            await handle.result()  # 04:00 runs; the run ends at 04:30
            final = states(stack)
            assert final[oid(3)] is S.MISFIRE_EXPIRED
            assert final[oid(4)] is S.SUCCEEDED
            effects = {e.idempotency_key: e.delivery_count for e in stack.sink.effects()}
            assert effects == dict.fromkeys([oid(1), *ran, oid(4)], 1)
            await record_history(stack.client, handle.id, "schedule-backfill")
    finally:
        await env.shutdown()
