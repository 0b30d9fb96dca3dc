"""Temporal workflows: orchestration only — timers, signals, queries, child starts (DESIGN §6).

Workflow code never computes zones or RRULEs and never reads the wall clock; occurrences reach it
as activity results.
"""

from workflows.occurrence import OccurrenceInput, OccurrenceOutcome, OccurrenceWorkflow
from workflows.schedule import ScheduleInput, ScheduleWorkflow, schedule_workflow_id

__all__ = [
    "OccurrenceInput",
    "OccurrenceOutcome",
    "OccurrenceWorkflow",
    "ScheduleInput",
    "ScheduleWorkflow",
    "schedule_workflow_id",
]
