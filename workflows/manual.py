"""``ManualRunWorkflow``: ``almanac trigger`` — one manual occurrence now, recorded, run once.

Workflow ID ``almanac-manual-<occurrenceId>`` (the occurrence is
``<scheduleId>.manual.<requestId>``, see ``ledger.manual``). One activity records the occurrence
(once per request ID: a repeat finds it and records nothing), then the occurrence runs as a child
``OccurrenceWorkflow`` with workflow ID = occurrenceId, like a calendar one (claim against the
gate, attempts, reconciliation), with the schedule's search attributes (``ScheduleId``,
``Revision``, ``NominalLocal``, ``OccurrenceState``) so a query for the schedule finds it. The
child is refused a second start (``REJECT_DUPLICATE``), and the schedule's own loop may have
started it first (it starts every DUE occurrence): either way it runs once, and this workflow
then reports no outcome (the ledger has it).
"""

from __future__ import annotations

from temporalio import workflow
from temporalio.common import WorkflowIDReusePolicy
from temporalio.exceptions import WorkflowAlreadyStartedError

from workflows import search_attributes as sa

with workflow.unsafe.imports_passed_through():
    from activities import io
    from activities.ledger_activities import AlmanacActivities
    from workflows.contracts import (
        LEDGER_RETRY,
        LEDGER_TIMEOUT,
        OCCURRENCE_WORKFLOW,
        ManualRunInput,
        ManualRunResult,
        OccurrenceInput,
        OccurrenceOutcome,
    )

WORKFLOW_ID_PREFIX = "almanac-manual-"
SEARCH_ATTRIBUTES_PATCH = "almanac-manual-search-attributes"
"""Deprecated patch ID (docs/operating/upgrades.md): the child is started with the schedule's
search attributes; ``workflow.deprecate_patch`` records its marker where ``patched`` did."""


def manual_workflow_id(occurrence_id: str) -> str:
    """The manual run's workflow ID: ``almanac-manual-<occurrenceId>``."""
    return WORKFLOW_ID_PREFIX + occurrence_id


@workflow.defn(name="AlmanacManualRun")
class ManualRunWorkflow:
    """Record one manual occurrence and run it as a child (module docstring)."""

    @workflow.run
    async def run(self, params: ManualRunInput) -> ManualRunResult:
        """Record, then run the occurrence and return its outcome."""
        recorded = await workflow.execute_activity_method(
            AlmanacActivities.record_trigger,
            io.RecordTriggerInput(params.schedule_id, params.request_id, params.reason, params.by),
            start_to_close_timeout=LEDGER_TIMEOUT,
            retry_policy=LEDGER_RETRY,
        )
        occurrence = recorded.occurrence
        task_queue = params.occurrence_task_queue or workflow.info().task_queue
        task_queue = io.alias_task_queue(task_queue, recorded.gate.implementation_alias)
        workflow.deprecate_patch(SEARCH_ATTRIBUTES_PATCH)
        try:
            outcome = await workflow.execute_child_workflow(
                OCCURRENCE_WORKFLOW,
                OccurrenceInput(
                    occurrence=occurrence,
                    gate=recorded.gate,
                    max_attempts=params.max_attempts,
                    action_timeout_seconds=params.action_timeout_seconds,
                    first_retry_delay_seconds=params.first_retry_delay_seconds,
                ),
                id=occurrence.occurrence_id,
                task_queue=task_queue,
                parent_close_policy=workflow.ParentClosePolicy.ABANDON,
                id_reuse_policy=WorkflowIDReusePolicy.REJECT_DUPLICATE,
                result_type=OccurrenceOutcome,
                search_attributes=sa.for_occurrence(occurrence),
            )
        except WorkflowAlreadyStartedError:
            return ManualRunResult(occurrence.occurrence_id, recorded.created, None)
        return ManualRunResult(occurrence.occurrence_id, recorded.created, outcome)


__all__ = ["ManualRunInput", "ManualRunResult", "ManualRunWorkflow", "manual_workflow_id"]
