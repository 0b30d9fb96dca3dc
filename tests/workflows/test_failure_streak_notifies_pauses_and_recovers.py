"""A failure streak notifies once through a registered action, pauses, and recovery notifies.

Time-skipping server, the real workflows and the ``http`` action against the stack's sink (the
egress policy allows it; the sink records each idempotency key's first delivery). Hourly at :00
UTC from 09:00 on 2026-12-01; the sink answers 400 (a non-retryable failure: FAILED at once) to
the occurrences named in each case. Expectations come from the policy, counted by hand:

- ``notifyAfter: 3, recoverAfter: 2``: 09, 10, 11 fail → one ``streak`` notification keyed by the
  09:00 occurrence, listing the three; 12 and 13 succeed → one ``recovery`` notification.
- a notify that always gets 503: the notification is tried ``NOTIFY_RETRY``'s three
  times, recorded FAILED after 3 attempts, and the schedule keeps running (14:00 succeeds; the
  run ends at its stop, not as a failure).
- ``pause: true, notifyAfter: 2``: 09 and 10 fail → the schedule is disabled through the gate
  (``by: failure-streak``); 11:00 and later never run.
"""

from __future__ import annotations

from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import pytest
from stack import Stack, record_history, running_stack
from temporal_env import start_time_skipping
from temporalio.client import WorkflowExecutionStatus

from ledger import OccurrenceState, get_gate, list_occurrences
from ledger.schedule_trail import schedule_events
from ledger.streak_facts import NotifyState, StreakKind, streak_facts
from workflows.contracts import NOTIFY_RETRY

pytestmark = [pytest.mark.anyio, pytest.mark.temporal, pytest.mark.slow]

DAY = datetime(2026, 12, 1, tzinfo=UTC)


def oid(sid: str, hour: int) -> str:
    return f"{sid}.r1.20261201T{hour:02d}0000.f0"


def spec(stack: Stack, sid: str, notify_path: str = "effects", **policy: Any) -> dict[str, Any]:
    notify = {"name": "http", "parameters": {"url": f"{stack.sink.url}/{notify_path}"}}
    return stack.spec(
        {
            "schema": "scheduleSpec.v1",
            "scheduleId": sid,
            "revision": 1,
            "timeZone": "UTC",
            "tzdbVersion": "2026a",
            "rule": "FREQ=HOURLY",
            "start": "2026-12-01T09:00:00",
            "misfirePolicy": "SKIP",
            "cutoverAt": "2026-11-30T00:00:00Z",
            "failureStreak": {"action": notify, **policy},
        }
    )


async def run(stack: Stack, data: dict[str, Any], failing: list[int], stop_hour: int) -> Any:
    # A notification's key holds its streak's first occurrence ID: the first rule matching a key
    # decides, so notifications meet this pass-through (or a case's own rule) first.
    stack.sink.add_fault(match="failure-streak:", failTimes=0)
    for hour in failing:
        stack.sink.add_fault(match=oid(data["scheduleId"], hour), failTimes=100, status=400)
    handle = await stack.start_schedule(
        data,
        simulate_from=DAY + timedelta(hours=8, minutes=30),
        stop_after=DAY + timedelta(hours=stop_hour, minutes=30),
        refresh_seconds=timedelta(hours=6).total_seconds(),
        horizon_seconds=timedelta(hours=8).total_seconds(),  # a small history to replay
    )
    await handle.result()
    assert (await handle.describe()).status is WorkflowExecutionStatus.COMPLETED
    return handle


def states(stack: Stack, sid: str) -> dict[int, OccurrenceState]:
    rows = list_occurrences(stack.ledger, sid, to_utc=DAY + timedelta(hours=16))
    return {r.instant_utc.hour: r.state for r in rows if r.instant_utc is not None}


async def test_a_streak_notifies_once_and_recovery_notifies_once(tmp_path: Path) -> None:
    sid = "streaky"
    env = await start_time_skipping()
    try:
        async with running_stack(env, tmp_path, "streaks") as stack:
            data = spec(stack, sid, notifyAfter=3, recoverAfter=2)
            handle = await run(stack, data, [9, 10, 11], stop_hour=13)
            got = states(stack, sid)
            assert [got[h] for h in (9, 10, 11)] == [OccurrenceState.FAILED] * 3
            assert [got[h] for h in (12, 13)] == [OccurrenceState.SUCCEEDED] * 2
            facts = {f.kind: f for f in streak_facts(stack.ledger, sid)}
            assert set(facts) == {StreakKind.STREAK, StreakKind.RECOVERED}
            assert all(f.notify_state is NotifyState.DELIVERED for f in facts.values())
            start = oid(sid, 9)
            notes = {
                e.idempotency_key: e
                for e in stack.sink.effects()
                if e.idempotency_key.startswith("failure-streak:")
            }
            streak_key = f"failure-streak:{sid}:{start}:streak"
            recovery_key = f"failure-streak:{sid}:{start}:recovery"
            assert set(notes) == {streak_key, recovery_key}
            assert all(e.delivery_count == 1 for e in notes.values())
            body = notes[streak_key].body["data"]
            assert (body["kind"], body["scheduleId"], body["threshold"]) == ("streak", sid, 3)
            assert body["occurrenceIds"] == [oid(sid, h) for h in (9, 10, 11)]
            recovery = notes[recovery_key].body["data"]
            assert (recovery["kind"], recovery["threshold"]) == ("recovery", 2)
            assert recovery["occurrenceIds"] == [oid(sid, 12), oid(sid, 13)]
            assert not get_gate(stack.ledger, sid).disabled
            await record_history(env.client, handle.id, "schedule-failure-streaks")
    finally:
        await env.shutdown()


async def test_a_notify_that_always_fails_is_bounded_recorded_and_the_schedule_runs_on(
    tmp_path: Path,
) -> None:
    sid = "streaky-mute"
    env = await start_time_skipping()
    try:
        async with running_stack(env, tmp_path, "streaks-mute") as stack:
            stack.sink.add_fault(match="failure-streak:", failTimes=1000, status=503)
            data = spec(stack, sid, notifyAfter=2)
            await run(stack, data, [9, 10], stop_hour=14)
            got = states(stack, sid)
            assert [got[h] for h in (11, 12, 13, 14)] == [OccurrenceState.SUCCEEDED] * 4
            (fact,) = [f for f in streak_facts(stack.ledger, sid) if f.kind is StreakKind.STREAK]
            assert fact.notify_state is NotifyState.FAILED
            assert fact.notify_attempts == NOTIFY_RETRY.maximum_attempts == 3
            assert fact.notify_detail is not None and "503" in fact.notify_detail
            rule = stack.sink.server.faults.rules[0]
            # Three deliveries tried per notification (the streak's, then the recovery's), no more.
            assert rule.seen[f"failure-streak:{sid}:{oid(sid, 9)}:streak"] == 3
            assert set(rule.seen.values()) == {3}
    finally:
        await env.shutdown()


async def test_pause_disables_the_schedule_through_the_gate(tmp_path: Path) -> None:
    sid = "streaky-pause"
    env = await start_time_skipping()
    try:
        async with running_stack(env, tmp_path, "streaks-pause") as stack:
            data = spec(stack, sid, notifyAfter=2, pause=True)
            await run(stack, data, [9, 10], stop_hour=13)
            gate = get_gate(stack.ledger, sid)
            assert gate.disabled and gate.disabled_reason is not None
            assert oid(sid, 9) in gate.disabled_reason
            disables = [e for e in schedule_events(stack.ledger, sid) if e.kind == "DISABLED"]
            assert [e.by for e in disables] == ["failure-streak"]
            got = states(stack, sid)
            assert all(got[h] is not OccurrenceState.SUCCEEDED for h in (11, 12, 13))
            (fact,) = streak_facts(stack.ledger, sid)
            assert fact.paused and fact.notify_state is NotifyState.DELIVERED
    finally:
        await env.shutdown()
