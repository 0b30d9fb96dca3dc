"""The Python client: apply, disable, enable, status and upcoming, over a Temporal client.

The command line uses it; so can your code::

    client = await AlmanacClient.connect(AlmanacSettings())
    await client.apply(load_spec(Path("examples/every-10-seconds.yaml")))
    print(await client.status("every-10-seconds"))

Applying a spec starts the schedule's long-lived workflow (ID ``almanac-schedule-<scheduleId>``),
which publishes the spec as its first revision, or, when it runs already, publishes the new revision
by signal. A revision that does not increase is refused here, with the reason, before anything is
sent (and the ledger refuses it again, should two clients race). The client needs Temporal only;
every ledger write happens in the worker's activities.
"""

from __future__ import annotations

from dataclasses import dataclass

from temporalio.client import Client, WorkflowHandle
from temporalio.common import WorkflowIDConflictPolicy
from temporalio.service import RPCError, RPCStatusCode

from activities import io
from almanac.settings import AlmanacSettings
from timecontract import AlmanacError, ScheduleSpecV1
from workflows import ScheduleInput, ScheduleWorkflow, schedule_workflow_id


class RevisionRejected(AlmanacError, ValueError):
    """A spec cannot be applied: no action, or a revision that does not increase."""


class ScheduleNotRunning(AlmanacError, LookupError):
    """No schedule workflow runs for this scheduleId (apply its spec first)."""

    def __init__(self, schedule_id: str) -> None:
        super().__init__(f"schedule {schedule_id!r} is not running (apply its spec first)")
        self.schedule_id = schedule_id


@dataclass(frozen=True)
class ApplyResult:
    """What ``apply`` did: ``started`` a new schedule workflow or ``published`` a revision."""

    schedule_id: str
    revision: int
    action: str
    workflow_id: str


async def connect_temporal(settings: AlmanacSettings) -> Client:
    """Connect to the Temporal frontend named by the settings (address, namespace, TLS, API key)."""
    temporal = settings.temporal
    return await Client.connect(
        temporal.address,
        namespace=temporal.namespace,
        tls=temporal.tls,
        api_key=temporal.api_key,
    )


class AlmanacClient:
    """Start and steer schedule workflows; read their status (module docstring)."""

    def __init__(self, client: Client, settings: AlmanacSettings) -> None:
        """Wrap a connected Temporal client; ``settings`` names the task queue."""
        self._client = client
        self._settings = settings

    @classmethod
    async def connect(cls, settings: AlmanacSettings) -> AlmanacClient:
        """Connect to the Temporal frontend named by ``settings``."""
        return cls(await connect_temporal(settings), settings)

    def handle(self, schedule_id: str) -> WorkflowHandle[ScheduleWorkflow, io.ScheduleStatus]:
        """The schedule workflow's handle (it may not exist)."""
        return self._client.get_workflow_handle_for(
            ScheduleWorkflow.run, schedule_workflow_id(schedule_id)
        )

    async def apply(self, spec: ScheduleSpecV1) -> ApplyResult:
        """Start the schedule with ``spec``, or publish it as the schedule's next revision.

        Raises:
            RevisionRejected: the spec has no action, or its revision does not exceed the
                schedule's active revision (nothing is sent).
        """
        if spec.action is None:
            raise RevisionRejected(f"{spec.schedule_id} r{spec.revision}: a spec needs an action")
        workflow_id = schedule_workflow_id(spec.schedule_id)
        try:
            status = await self.status(spec.schedule_id)
        except ScheduleNotRunning:
            await self._client.start_workflow(
                ScheduleWorkflow.run,
                ScheduleInput(schedule_id=spec.schedule_id, initial_spec=spec.resolved()),
                id=workflow_id,
                task_queue=self._settings.temporal.task_queue,
                id_conflict_policy=WorkflowIDConflictPolicy.USE_EXISTING,
            )
            return ApplyResult(spec.schedule_id, spec.revision, "started", workflow_id)
        latest = status.gate.active_revision if status.gate else 0
        if spec.revision <= latest:
            raise RevisionRejected(
                f"{spec.schedule_id}: revision {spec.revision} does not increase "
                f"(latest published is {latest})"
            )
        await self._signal(spec.schedule_id, "publish_revision", spec.resolved())
        return ApplyResult(spec.schedule_id, spec.revision, "published", workflow_id)

    async def disable(self, schedule_id: str, reason: str) -> None:
        """Disable a schedule by signal (the ledger gate flips; racing claims lose)."""
        await self._signal(schedule_id, "disable", {"reason": reason})

    async def enable(self, schedule_id: str) -> None:
        """Enable a disabled schedule by signal."""
        await self._signal(schedule_id, "enable", {})

    async def status(self, schedule_id: str) -> io.ScheduleStatus:
        """The schedule workflow's ``status`` query."""
        try:
            return await self.handle(schedule_id).query(ScheduleWorkflow.status)
        except RPCError as exc:
            raise self._not_running(schedule_id, exc) from exc

    async def upcoming(self, schedule_id: str, n: int = 10) -> list[io.UpcomingOccurrence]:
        """The schedule workflow's ``upcoming`` query (at most 20)."""
        try:
            return await self.handle(schedule_id).query(ScheduleWorkflow.upcoming, n)
        except RPCError as exc:
            raise self._not_running(schedule_id, exc) from exc

    async def _signal(self, schedule_id: str, name: str, payload: object) -> None:
        try:
            await self.handle(schedule_id).signal(name, payload)
        except RPCError as exc:
            raise self._not_running(schedule_id, exc) from exc

    @staticmethod
    def _not_running(schedule_id: str, exc: RPCError) -> Exception:
        if exc.status == RPCStatusCode.NOT_FOUND:
            return ScheduleNotRunning(schedule_id)
        return exc
