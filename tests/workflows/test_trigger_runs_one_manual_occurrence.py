"""``almanac trigger`` on a real (dev) server: one manual occurrence now, once per request ID.

Expectations come from the contract (README "Trigger now"), not from the code: the ID is
``<scheduleId>.manual.<requestId>``; the default request ID is ``m`` + the first 16 hex digits of
sha256("<scheduleId>\\n<by>\\n<reason>\\n<UTC minute of the request>"), computed here with
hashlib; the sink (which records one effect per idempotency key and counts deliveries) sees
exactly one delivery per request ID.
"""

from __future__ import annotations

import hashlib
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import pytest
from stack import Stack, record_history, running_stack
from temporal_env import eventually
from temporalio.testing import WorkflowEnvironment

import ledger
from almanac.client import AlmanacClient
from almanac.settings import AlmanacSettings, TemporalSettings
from ledger import OccurrenceState
from workflows import search_attributes as sa
from workflows.manual import manual_workflow_id

pytestmark = [pytest.mark.anyio, pytest.mark.temporal]

SCHEDULE_ID = "nightly-report"
HISTORY = "manual-run"


def _client(stack: Stack, tmp_path: Path) -> AlmanacClient:
    settings = AlmanacSettings(
        data_dir=tmp_path, temporal=TemporalSettings(task_queue=stack.task_queue)
    )
    return AlmanacClient(stack.client, settings, read_ledger=False)


async def _succeeded(stack: Stack, occurrence_id: str) -> ledger.OccurrenceView:
    async def state() -> ledger.OccurrenceView | None:
        try:
            return ledger.show_occurrence(stack.ledger, occurrence_id).occurrence
        except ledger.OccurrenceNotFound:
            return None

    found = await eventually(
        state, lambda o: o is not None and o.state is OccurrenceState.SUCCEEDED, timeout=30
    )
    assert found is not None
    return found


async def _start_yearly(stack: Stack, now: datetime) -> Any:
    """Start the schedule (once a year, far from now: no calendar occurrence runs in a test)."""
    spec = stack.spec(
        {
            "schema": "scheduleSpec.v1",
            "scheduleId": SCHEDULE_ID,
            "revision": 1,
            "timeZone": "Europe/Paris",
            "tzdbVersion": "2026a",
            "rule": "FREQ=YEARLY;BYMONTH=1;BYMONTHDAY=1;BYHOUR=3",
            "cutoverAt": "2026-01-01T00:00:00Z",
        }
    )
    schedule = await stack.start_schedule(
        spec, simulate_from=now, stop_after=now + timedelta(hours=1)
    )
    await eventually(
        lambda: _gate(stack), lambda gate: gate is not None and gate.active_revision == 1
    )
    return schedule


async def test_trigger_runs_once_per_request_id_in_its_own_namespace(
    dev_env: WorkflowEnvironment, tmp_path: Path, task_queue: str
) -> None:
    async with running_stack(dev_env, tmp_path, task_queue) as stack:
        now = await dev_env.get_current_time()
        schedule = await _start_yearly(stack, now)
        client = _client(stack, tmp_path)

        first = await client.trigger(
            SCHEDULE_ID, reason="rerun after fix", request_id="fix-42", by="alice@ops"
        )
        assert first.started and first.occurrence_id == f"{SCHEDULE_ID}.manual.fix-42"
        again = await client.trigger(SCHEDULE_ID, reason="rerun after fix", request_id="fix-42")
        assert not again.started and again.occurrence_id == first.occurrence_id
        row = await _succeeded(stack, first.occurrence_id)

        # Its own slot and reason: never a calendar occurrence's ID or slot (those hold "@").
        assert row.reason == "MANUAL" and row.logical_slot_id == first.occurrence_id
        assert row.revision == 1 and row.tzdb_version == "2026a"
        assert row.instant_utc is not None and abs(row.instant_utc - now) < timedelta(minutes=1)
        detail = ledger.show_occurrence(stack.ledger, first.occurrence_id)
        released = next(e for e in detail.events if e.to_state == "DUE")
        assert "rerun after fix" in released.why and "fix-42" in released.why
        assert released.by == detail.events[0].by == "alice@ops"

        # The default request ID: (schedule, caller, reason, the request's UTC minute). A repeat
        # within the minute runs once; the same trigger a week later runs again.
        by = "ops@example"
        asked = datetime(2027, 1, 11, 9, 30, 5, tzinfo=UTC)
        text = f"{SCHEDULE_ID}\n{by}\nlate data\n20270111T0930Z"
        expected = "m" + hashlib.sha256(text.encode()).hexdigest()[:16]
        one = await client.trigger(SCHEDULE_ID, reason="late data", by=by, requested_at_utc=asked)
        two = await client.trigger(
            SCHEDULE_ID, reason="late data", by=by, requested_at_utc=asked + timedelta(seconds=50)
        )
        assert one.request_id == two.request_id == expected
        assert (one.started, two.started) == (True, False)
        await _succeeded(stack, one.occurrence_id)
        assert ledger.show_occurrence(stack.ledger, one.occurrence_id).events[0].by == by
        later = await client.trigger(
            SCHEDULE_ID, reason="late data", by=by, requested_at_utc=asked + timedelta(days=7)
        )
        assert later.started and later.request_id != expected
        await _succeeded(stack, later.occurrence_id)

        effects = {e.idempotency_key: e.delivery_count for e in stack.sink.effects()}
        assert effects == {first.occurrence_id: 1, one.occurrence_id: 1, later.occurrence_id: 1}
        manual = [o for o in stack.occurrences(SCHEDULE_ID) if o.reason == "MANUAL"]
        assert sorted(o.occurrence_id for o in manual) == sorted(effects)
        await schedule.terminate("test over")


async def _gate(stack: Stack) -> ledger.GateView | None:
    try:
        return ledger.get_gate(stack.ledger, SCHEDULE_ID)
    except ledger.ScheduleNotFound:
        return None


async def test_a_malformed_request_id_is_refused_before_anything_is_sent(
    dev_env: WorkflowEnvironment, tmp_path: Path, task_queue: str
) -> None:
    async with running_stack(dev_env, tmp_path, task_queue) as stack:
        with pytest.raises(ValueError, match="Not_A_Slug"):
            await _client(stack, tmp_path).trigger(SCHEDULE_ID, reason="x", request_id="Not_A_Slug")
        with pytest.raises(ValueError, match="reason"):
            await _client(stack, tmp_path).trigger(SCHEDULE_ID, reason="  ")


async def test_a_repeated_request_id_reports_the_existing_occurrences_outcome(
    dev_env: WorkflowEnvironment, tmp_path: Path, task_queue: str
) -> None:
    # README "Trigger now": the same request ID twice runs once; the repeat reports that run's
    # result (the trial saw "already triggered" with no outcome and "state": null).
    async with running_stack(dev_env, tmp_path, task_queue) as stack:
        now = await dev_env.get_current_time()
        schedule = await _start_yearly(stack, now)
        settings = AlmanacSettings(
            data_dir=tmp_path, temporal=TemporalSettings(task_queue=stack.task_queue)
        )
        client = AlmanacClient(stack.client, settings)  # reads the stack's ledger file
        try:
            first = await client.trigger(SCHEDULE_ID, reason="r", request_id="req-1", wait=True)
            assert first.started and first.state == "SUCCEEDED"
            again = await client.trigger(SCHEDULE_ID, reason="r", request_id="req-1", wait=True)
            assert not again.started
            assert again.outcome is not None and again.outcome.state == "SUCCEEDED"
            assert again.state == "SUCCEEDED"
            plain = await client.trigger(SCHEDULE_ID, reason="r", request_id="req-1")
            assert not plain.started and plain.state == "SUCCEEDED"  # the ledger, without waiting
        finally:
            client.close()
        assert {e.idempotency_key: e.delivery_count for e in stack.sink.effects()} == {
            first.occurrence_id: 1
        }
        await schedule.terminate("test over")


async def test_a_manual_run_carries_the_schedules_search_attributes(
    dev_env: WorkflowEnvironment, tmp_path: Path, task_queue: str
) -> None:
    # README's query for a schedule (ScheduleId="…") must find manual runs too (DESIGN §5).
    async with running_stack(dev_env, tmp_path, task_queue) as stack:
        now = await dev_env.get_current_time()
        schedule = await _start_yearly(stack, now)
        client = _client(stack, tmp_path)
        run = await client.trigger(SCHEDULE_ID, reason="visible", request_id="seen-1", wait=True)
        assert run.started and run.state == "SUCCEEDED"
        await record_history(stack.client, manual_workflow_id(run.occurrence_id), HISTORY)
        described = await stack.client.get_workflow_handle(run.occurrence_id).describe()
        attributes = described.typed_search_attributes
        assert attributes.get(sa.SCHEDULE_ID) == SCHEDULE_ID
        assert attributes.get(sa.REVISION) == 1
        assert attributes.get(sa.NOMINAL_LOCAL) is not None
        await schedule.terminate("test over")
