"""Temporal workflows: orchestration only — timers, signals, queries, child starts (DESIGN §6).

Workflow code never computes zones or RRULEs and never reads the wall clock; occurrences reach it
as activity results. Workflows call the activities by method reference on
``activities.ledger_activities.AlmanacActivities`` (imported passed through the sandbox, never
run in it) with the payload dataclasses of ``activities.io``.
"""

from workflows.manual import ManualRunInput, ManualRunResult, ManualRunWorkflow, manual_workflow_id
from workflows.occurrence import OccurrenceInput, OccurrenceOutcome, OccurrenceWorkflow
from workflows.schedule import ScheduleInput, ScheduleState, ScheduleWorkflow, schedule_workflow_id

__all__ = [
    "ManualRunInput",
    "ManualRunResult",
    "ManualRunWorkflow",
    "OccurrenceInput",
    "OccurrenceOutcome",
    "OccurrenceWorkflow",
    "ScheduleInput",
    "ScheduleState",
    "ScheduleWorkflow",
    "manual_workflow_id",
    "schedule_workflow_id",
]
