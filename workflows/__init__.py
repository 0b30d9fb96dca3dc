"""Temporal workflows: orchestration only — timers, signals, queries, child starts (DESIGN §6).

Workflow code never computes zones or RRULEs and never reads the wall clock; occurrences reach it
as activity results. Workflows call the activities by method reference on
``activities.ledger_activities.AlmanacActivities`` (imported passed through the sandbox, never
run in it) with the payload dataclasses of ``activities.io``; the workflows' own inputs, results and
shared activity options are in ``workflows.contracts`` (also passed through).
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from workflows.contracts import (
        ManualRunInput,
        ManualRunResult,
        OccurrenceInput,
        OccurrenceOutcome,
        ScheduleInput,
        ScheduleState,
    )
    from workflows.manual import ManualRunWorkflow, manual_workflow_id
    from workflows.occurrence import OccurrenceWorkflow
    from workflows.schedule import ScheduleWorkflow, schedule_workflow_id

_HOMES = {
    "ManualRunInput": "workflows.contracts",
    "ManualRunResult": "workflows.contracts",
    "ManualRunWorkflow": "workflows.manual",
    "manual_workflow_id": "workflows.manual",
    "OccurrenceInput": "workflows.contracts",
    "OccurrenceOutcome": "workflows.contracts",
    "OccurrenceWorkflow": "workflows.occurrence",
    "ScheduleInput": "workflows.contracts",
    "ScheduleState": "workflows.contracts",
    "ScheduleWorkflow": "workflows.schedule",
    "schedule_workflow_id": "workflows.schedule",
}


def __getattr__(name: str) -> Any:
    """Import a public name's module on first use (PEP 562).

    Why lazily: the workflow sandbox re-imports a workflow's module, and so its package, for
    every new workflow instance; importing every workflow module here would make each instance
    run the others too. Each instance runs its own module and what that imports. Outside the
    sandbox a name is imported once and then cached here.
    """
    home = _HOMES.get(name)
    if home is None:
        raise AttributeError(f"module 'workflows' has no attribute {name!r}")
    value = getattr(importlib.import_module(home), name)
    globals()[name] = value
    return value


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
