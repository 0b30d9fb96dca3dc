"""Manual runs from the client: ``trigger`` (one occurrence now).

``AlmanacClient.trigger`` delegates here. A trigger starts the ``AlmanacManualRun`` workflow
(``workflows.manual``), which records the occurrence in the ledger through an activity (the client
never writes the ledger) and runs it as the child workflow ``<scheduleId>.manual.<requestId>``.

The request ID makes it idempotent: the same request ID twice runs one occurrence. The manual
run's workflow ID is derived from it and started with ``REJECT_DUPLICATE``, so a repeat is refused
by Temporal (``started=False``), and the ledger records the occurrence once whatever Temporal
keeps. A repeat still reports the existing occurrence: with ``wait`` it waits for the existing run
and returns its outcome, and :class:`almanac.client.AlmanacClient` adds the ledger's state now.
Without one, the request ID is :func:`ledger.default_request_id` of the schedule, the caller,
the reason and the minute of the request (documented: a repeat within a minute runs once, a
trigger next week runs again). That minute is read here, at the edge, unless the caller gives it.
"""

from __future__ import annotations

import getpass
import socket
from dataclasses import dataclass
from datetime import UTC, datetime
from typing import TYPE_CHECKING

from temporalio.client import Client, WorkflowFailureError
from temporalio.common import WorkflowIDReusePolicy
from temporalio.exceptions import WorkflowAlreadyStartedError

import ledger
from almanac.client_errors import TriggerRefused
from almanac.settings import AlmanacSettings
from workflows import ManualRunInput, ManualRunResult, ManualRunWorkflow, manual_workflow_id

if TYPE_CHECKING:
    from lifecycle import GateView
    from workflows import OccurrenceOutcome


@dataclass(frozen=True)
class TriggerReport:
    """What ``trigger`` did.

    Attributes:
        occurrence_id: ``<scheduleId>.manual.<requestId>``.
        request_id: the request ID used (given or default).
        workflow_id: the manual run's workflow ID.
        started: ``False`` when this request ID was triggered before (nothing new runs).
        outcome: the occurrence's outcome when waited for: of this run, or of the existing run of
            the same request ID.
        ledger_state: the occurrence's state in the ledger when the report was made (``None``:
            not read, e.g. no ledger on this machine, or not yet recorded).

    """

    occurrence_id: str
    request_id: str
    workflow_id: str
    started: bool
    outcome: OccurrenceOutcome | None = None
    ledger_state: str | None = None

    @property
    def state(self) -> str | None:
        """The ledger's state when read, else the waited-for outcome's state, else ``None``."""
        if self.ledger_state is not None:
            return self.ledger_state
        return self.outcome.state if self.outcome is not None else None


def caller_identity() -> str:
    """Who triggers, for the ledger's events: ``<user>@<host>`` of this process."""
    try:
        user = getpass.getuser()
    except (KeyError, OSError):
        user = "unknown"
    return f"{user}@{socket.gethostname()}"


def check_request(schedule_id: str, reason: str, request_id: str | None) -> None:
    """Refuse a manual run's malformed input before anything is sent.

    Raises:
        ValueError: an empty reason, or a request ID that is not 1-64 of ``a-z 0-9 -``.
    """
    if not reason.strip():
        raise ValueError("reason: a manual run needs a non-empty reason")
    if request_id is not None:
        ledger.manual_occurrence_id(schedule_id, request_id)  # raises for a malformed one


async def trigger(
    client: Client,
    settings: AlmanacSettings,
    schedule_id: str,
    *,
    reason: str,
    request_id: str | None = None,
    by: str | None = None,
    wait: bool = False,
    requested_at_utc: datetime | None = None,
) -> TriggerReport:
    """Run one manual occurrence of ``schedule_id`` now (module docstring).

    Args:
        client: a connected Temporal client.
        settings: the task queue the manual run starts on.
        schedule_id: the schedule.
        reason: why (recorded on the occurrence's events); must not be empty.
        request_id: the idempotency token (``a-z 0-9 -``, 1-64); default
            :func:`ledger.default_request_id` of ``(schedule_id, reason, by, requested_at_utc)``.
        by: who (default :func:`caller_identity`).
        wait: wait for the occurrence's outcome.
        requested_at_utc: when the request was made (aware UTC; default: this process's clock
            now), for the default request ID only; the occurrence's instant is the ledger's.

    Returns:
        The occurrence ID, whether this call started it and, when waited for, the outcome (a
        repeated request ID waits for the existing run instead of reporting nothing).

    Raises:
        ValueError: an empty reason or a malformed request ID (nothing was sent).
        RuntimeError: waited, and the manual run failed (e.g. no such schedule), with the cause.
        temporalio.service.RPCError: Temporal failed the call.

    """
    check_request(schedule_id, reason, request_id)
    who = by or caller_identity()
    # An empty --request-id is refused (below), not replaced by the derived one.
    rid = (
        request_id
        if request_id is not None
        else ledger.default_request_id(
            schedule_id, reason.strip(), who, requested_at_utc or datetime.now(UTC)
        )
    )
    occurrence_id = ledger.manual_occurrence_id(schedule_id, rid)
    workflow_id = manual_workflow_id(occurrence_id)
    params = ManualRunInput(schedule_id, rid, reason.strip(), who)
    try:
        handle = await client.start_workflow(
            ManualRunWorkflow.run,
            params,
            id=workflow_id,
            task_queue=settings.temporal.task_queue,
            id_reuse_policy=WorkflowIDReusePolicy.REJECT_DUPLICATE,
        )
        started = True
    except WorkflowAlreadyStartedError:
        # The same request ID ran (or runs) already: nothing new starts, but the caller still
        # gets the existing run's outcome when it waits (REJECT_DUPLICATE keeps the closed run).
        handle = client.get_workflow_handle(workflow_id, result_type=ManualRunResult)
        started = False
    if not wait:
        return TriggerReport(occurrence_id, rid, workflow_id, started=started)
    try:
        result: ManualRunResult = await handle.result()
    except WorkflowFailureError as exc:
        raise RuntimeError(f"manual run {workflow_id} failed: {exc.cause or exc}") from exc
    return TriggerReport(occurrence_id, rid, workflow_id, started=started, outcome=result.outcome)


__all__ = ["TriggerReport", "caller_identity", "check_request", "trigger"]


def refuse_closed_gate(schedule_id: str, gate: GateView | None) -> None:
    """Raise :class:`TriggerRefused` if the ledger's gate of ``schedule_id`` is closed.

    No gate yet: the schedule was applied a moment ago and its first publication is under way.
    """
    if gate is None:
        return
    if gate.deleted_at_utc is not None:
        raise TriggerRefused(f"schedule {schedule_id!r} is deleted: nothing was started")
    if gate.disabled:
        raise TriggerRefused(
            f"schedule {schedule_id!r} is disabled ({gate.disabled_reason}): enable it first; "
            "nothing was started"
        )
