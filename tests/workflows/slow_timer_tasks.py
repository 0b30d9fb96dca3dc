"""A schedule workflow whose timer-setting workflow tasks are slow, as on a busy worker.

Registered under the production type name in place of ``almanac.gates.simulation``'s schedule (the
loop, activities and clock seams are all inherited). Kept in a module of its own: the sandbox
re-imports a workflow's module for every instance, so it must hold nothing but the workflow.
"""

from __future__ import annotations

import time
from datetime import datetime, timedelta

from temporalio import workflow

from activities import io
from almanac.gates.simulation import SimulatedScheduleInput, SimulatedScheduleWorkflow

SLOW_TASK = timedelta(milliseconds=300)
"""How long a workflow task that sets a timer for an instant keeps working after computing the
timer (a busy worker: the trial saw up to 0.5 s at load 5–7). Longer than ``io.RELEASE_LEAD``, so
the timer fires after its instant; well inside ``io.RELEASE_GRACE`` and the SDK's 2 s deadlock
detector."""


@workflow.defn(name="AlmanacSchedule")
class SlowTimerTaskScheduleWorkflow(SimulatedScheduleWorkflow):
    """The simulated schedule, with every task that sets a timer for an instant ``SLOW_TASK`` long.

    Temporal starts a timer when the task that asks for it completes, and the loop computes the
    timer from the task's start (``workflow.now()``): blocking here delays the timer as a busy
    worker's slow task does.
    """

    @workflow.run
    async def run(self, params: SimulatedScheduleInput) -> io.ScheduleStatus:
        """Run the simulated schedule's loop."""
        return await super().run(params)

    def _sleep_for(self, wake: datetime, enabled: bool) -> tuple[timedelta, datetime | None]:
        delay, timer_for = super()._sleep_for(wake, enabled)
        if timer_for is not None:
            with workflow.unsafe.sandbox_unrestricted():  # the busy worker; never in production
                time.sleep(SLOW_TASK.total_seconds())
        return delay, timer_for
