"""A simulated clock for the schedule and occurrence workflows: tests and the gates harness.

Production workflows read ``workflow.now()`` and a schedule's loop never ends. A simulation runs a
fixed calendar in skipped time (or maps one onto a dev server's real clock) and must end. Its
workflows are subclasses registered under the production workflow type names (``AlmanacSchedule``,
``AlmanacOccurrence``) whose inputs add two controls:

- ``clock_offset_seconds``: added to ``workflow.now()`` for every instant stamped on an activity
  call; the schedule hands it on to the occurrences it starts. The activities record instants of
  work on the same calendar through ``almanac.gates.simulated_clock.SimulatedClock``, which the
  harness injects with these workflows;
- ``stop_after_utc``: the schedule's loop returns its status once the simulated clock passes it.

A worker runs them in place of the production ones (:mod:`almanac.gates.simulated_worker`, in
process or as ``python -m tests.faults.simulated_worker``). Production workers never register
them, and the production input contract knows nothing of them. Everything else (the loop, signals,
activities, retries, reconciliation) is the production code, inherited unchanged.
"""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass
from datetime import datetime, timedelta

from temporalio import workflow

from workflows.manual import ManualRunWorkflow
from workflows.occurrence import OccurrenceWorkflow
from workflows.schedule import ScheduleWorkflow

with workflow.unsafe.imports_passed_through():
    from activities import io
    from workflows.contracts import OccurrenceInput, OccurrenceOutcome, ScheduleInput


@dataclass(frozen=True)
class SimulatedScheduleInput(ScheduleInput):
    """A schedule input plus the simulation's clock controls."""

    clock_offset_seconds: float = 0.0
    """Added to ``workflow.now()``: the simulated calendar's instant minus the server's."""
    stop_after_utc: datetime | None = None
    """End the workflow once the simulated clock passes this instant (``None``: never)."""


@dataclass(frozen=True)
class SimulatedOccurrenceInput(OccurrenceInput):
    """An occurrence input plus the simulation's clock offset."""

    clock_offset_seconds: float = 0.0
    """Added to ``workflow.now()``: the simulated calendar's instant minus the server's."""


@workflow.defn(name="AlmanacOccurrence")
class SimulatedOccurrenceWorkflow(OccurrenceWorkflow):
    """``OccurrenceWorkflow`` on a simulated clock."""

    def __init__(self) -> None:
        """Start on the server's clock until ``run`` reads the offset."""
        super().__init__()
        self._offset = timedelta()

    @workflow.run
    async def run(self, params: SimulatedOccurrenceInput) -> OccurrenceOutcome:  # type: ignore[override]
        """Run the production workflow with the input's clock offset."""
        self._offset = timedelta(seconds=params.clock_offset_seconds)
        return await super().run(params)

    def _now(self) -> datetime:
        return workflow.now() + self._offset


@workflow.defn(name="AlmanacSchedule")
class SimulatedScheduleWorkflow(ScheduleWorkflow):
    """``ScheduleWorkflow`` on a simulated clock, ending at the input's stop instant."""

    @workflow.init
    def __init__(self, params: SimulatedScheduleInput) -> None:
        """Keep the clock controls; the rest is the production workflow's."""
        super().__init__(params)
        self._offset = timedelta(seconds=params.clock_offset_seconds)
        self._stop_after_utc = params.stop_after_utc

    @workflow.run
    async def run(self, params: SimulatedScheduleInput) -> io.ScheduleStatus:  # type: ignore[override]
        """Run the production loop until the stop instant."""
        return await super().run(params)

    def _now(self) -> datetime:
        return workflow.now() + self._offset

    def _end_utc(self) -> datetime | None:
        return self._stop_after_utc

    def _occurrence_input(
        self, occurrence: io.UpcomingOccurrence, gate: io.GateSnapshot
    ) -> OccurrenceInput:
        production = super()._occurrence_input(occurrence, gate)
        fields = {f.name: getattr(production, f.name) for f in dataclasses.fields(production)}
        return SimulatedOccurrenceInput(**fields, clock_offset_seconds=self._offset.total_seconds())


WORKFLOWS = (SimulatedScheduleWorkflow, SimulatedOccurrenceWorkflow, ManualRunWorkflow)
"""What a simulated worker registers instead of the production workflows (a manual run is on the
host's clock: it is requested now, so it has no simulated calendar)."""

__all__ = [
    "WORKFLOWS",
    "SimulatedOccurrenceInput",
    "SimulatedOccurrenceWorkflow",
    "SimulatedScheduleInput",
    "SimulatedScheduleWorkflow",
]
