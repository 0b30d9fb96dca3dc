"""A requeued occurrence starts on the target alias's queue with the limits its schedule gave it.

Found by the rollout proof on the real servers: the schedule workflow gives each occurrence its
limits (action timeout, attempts, first retry delay, reconciliation deadline: ``ScheduleInput``),
but ``almanac.rollout.start_requeued`` started the requeued run with the defaults — a requeued
attempt killed mid-call waited 120 s for its retry instead of the schedule's 8 s. The requeued run
is the same occurrence on another queue: it keeps the run it replaces's limits.

Dev server, no worker: the "previous" run waits on the ``v1`` queue as the schedule started it;
the switch requeues the occurrence; ``start_requeued`` terminates that run and starts the new one
on ``<queue>.v2``. The inputs are read back from the histories (the default converter).
"""

from __future__ import annotations

from datetime import UTC, datetime, timedelta
from pathlib import Path

import pytest
from temporalio.api.enums.v1 import EventType
from temporalio.client import WorkflowExecutionStatus
from temporalio.testing import WorkflowEnvironment

import ledger
from activities import io
from almanac.rollout import start_requeued
from ledger import Ledger, OccurrenceState, SwitchKind
from ledger.migrate import upgrade
from timecontract import load_spec
from workflows import OccurrenceInput, OccurrenceWorkflow

pytestmark = [pytest.mark.anyio, pytest.mark.temporal]

T0 = datetime(2027, 1, 4, 9, 0, tzinfo=UTC)
SPEC = {
    "schema": "scheduleSpec.v1",
    "scheduleId": "requeue-limits",
    "revision": 1,
    "timeZone": "UTC",
    "tzdbVersion": "2026a",
    "rule": "FREQ=DAILY;BYHOUR=9;BYMINUTE=0",
    "gapPolicy": "SKIP",
    "foldPolicy": "FIRST_ONLY",
    "misfirePolicy": "CATCH_UP_BOUNDED",
    "maxCatchUp": 2,
    "cutoverAt": "2027-01-01T00:00:00Z",
    "action": {"name": "noop", "parameters": {}},
}


def _due_occurrence(tmp_path: Path, schedule_id: str) -> tuple[Ledger, ledger.OccurrenceView]:
    """A ledger with one DUE occurrence of ``schedule_id`` (its own: the dev server is shared)."""
    url = f"sqlite:///{tmp_path / 'ledger.sqlite3'}"
    upgrade(url)
    store = Ledger.from_url(url)
    spec = load_spec({**SPEC, "scheduleId": schedule_id})
    ledger.publish_revision(store, spec, T0, by="test", implementation_alias="v1")
    ledger.materialize(store, spec, T0 - timedelta(hours=1), T0 + timedelta(hours=1), T0, by="t")
    ledger.release_due(store, spec.schedule_id, T0, by="test")
    [due] = ledger.list_occurrences(store, spec.schedule_id, states=[OccurrenceState.DUE])
    return store, due


def _input(payloads: object) -> OccurrenceInput:
    from temporalio.converter import DataConverter

    [value] = DataConverter.default.payload_converter.from_payloads(
        list(payloads),  # type: ignore[call-overload]
        [OccurrenceInput],
    )
    return value  # type: ignore[no-any-return]


async def test_requeued_run_keeps_the_limits_of_the_run_it_replaces(
    dev_env: WorkflowEnvironment, tmp_path: Path, task_queue: str
) -> None:
    store, due = _due_occurrence(tmp_path, "requeue-limits")
    try:
        assert due.instant_utc is not None
        previous = OccurrenceInput(
            occurrence=due.upcoming(),
            gate=ledger.get_gate(store, due.schedule_id),
            max_attempts=5,
            action_timeout_seconds=8.0,
            reconcile_deadline_seconds=600.0,
            first_retry_delay_seconds=2.0,
        )
        old = await dev_env.client.start_workflow(
            OccurrenceWorkflow.run,
            previous,
            id=due.occurrence_id,
            task_queue=io.alias_task_queue(task_queue, "v1"),
        )
        result = ledger.switch_implementation(
            store,
            due.schedule_id,
            "v2",
            T0 + timedelta(minutes=1),
            kind=SwitchKind.ROLLOUT,
            by="test",
            reason="canary",
            id_formats=frozenset({1}),
        )
        assert result.requeued == (due.occurrence_id,)

        started = await start_requeued(store, dev_env.client, task_queue, [result])

        assert started == [due.occurrence_id]
        replaced = dev_env.client.get_workflow_handle(old.id, run_id=old.result_run_id)
        assert (await replaced.describe()).status is WorkflowExecutionStatus.TERMINATED
        new = dev_env.client.get_workflow_handle(due.occurrence_id)
        history = await new.fetch_history()
        first = history.events[0]
        assert first.event_type == EventType.EVENT_TYPE_WORKFLOW_EXECUTION_STARTED
        attributes = first.workflow_execution_started_event_attributes
        assert attributes.task_queue.name == f"{task_queue}.v2"
        requeued = _input(attributes.input.payloads)
        limits = (
            requeued.max_attempts,
            requeued.action_timeout_seconds,
            requeued.reconcile_deadline_seconds,
            requeued.first_retry_delay_seconds,
        )
        assert limits == (5, 8.0, 600.0, 2.0)
        assert requeued.gate.execution_epoch == result.epoch_after
        assert requeued.gate.implementation_alias == "v2"
        await new.terminate("test over")
    finally:
        store.dispose()


async def test_requeued_run_without_a_previous_run_takes_the_defaults(
    dev_env: WorkflowEnvironment, tmp_path: Path, task_queue: str
) -> None:
    """Released but not started yet (the schedule had not started its child): the defaults."""
    store, due = _due_occurrence(tmp_path, "requeue-defaults")
    try:
        result = ledger.switch_implementation(
            store,
            due.schedule_id,
            "v2",
            T0 + timedelta(minutes=1),
            kind=SwitchKind.ROLLOUT,
            by="test",
            reason="canary",
            id_formats=frozenset({1}),
        )
        assert await start_requeued(store, dev_env.client, task_queue, [result]) == [
            due.occurrence_id
        ]
        new = dev_env.client.get_workflow_handle(due.occurrence_id)
        history = await new.fetch_history()
        requeued = _input(
            history.events[0].workflow_execution_started_event_attributes.input.payloads
        )
        default = OccurrenceInput(occurrence=requeued.occurrence, gate=requeued.gate)
        assert requeued == default
        await new.terminate("test over")
    finally:
        store.dispose()
