"""The ``temporal`` action: start a workflow whose ID derives from the occurrenceId.

Parameters (camelCase)::

    workflowType:  the workflow type name to start                       required
    taskQueue:     the task queue its workers poll                        required
    input:         one JSON argument for the workflow (omitted when null)
    executionTimeoutSeconds:  how long the started workflow may run, 1 s to a year   default 86400

The start sets the workflow's execution timeout (all its runs, continue-as-new included) to
``executionTimeoutSeconds``: a workflow whose task queue nothing polls (a typo, workers gone) is
timed out by Temporal after a day by default instead of waiting for ever.

The workflow ID is ``<occurrenceId>.effect`` (:func:`effect_workflow_id`). The start uses
``id_conflict_policy=USE_EXISTING`` (a running workflow with that ID is returned, not a second
one) and ``id_reuse_policy=REJECT_DUPLICATE`` (a closed one is never started again), so a repeat
is idempotent by construction: starting is the effect, and a start that finds the workflow already
there is CONFIRMED too. ``query_result`` describes that workflow.

Classification of RPC errors: ``DEADLINE_EXCEEDED``, ``CANCELLED``, ``UNKNOWN`` → UNCONFIRMED (the
start may have been accepted); ``UNAVAILABLE``, ``RESOURCE_EXHAUSTED``, ``ABORTED`` → RETRYABLE;
anything else (``INVALID_ARGUMENT``, ``NOT_FOUND`` namespace, ``PERMISSION_DENIED`` …) →
NON_RETRYABLE.
"""

from __future__ import annotations

from datetime import timedelta
from typing import TYPE_CHECKING, ClassVar

from pydantic import BaseModel

from activities.actions.base import (
    ActionAdapter,
    ActionContext,
    ActionNotConfigured,
    Outcome,
    OutcomeKind,
    QueryOutcome,
    QueryOutcomeKind,
)
from activities.actions.parameters import TemporalParameters

if TYPE_CHECKING:
    # temporalio is imported where a call needs it, so checking parameters at the edge
    # (``almanac validate``) does not load the SDK.
    from temporalio.client import Client, WorkflowExecutionStatus

UNCONFIRMED_STATUSES = frozenset({"DEADLINE_EXCEEDED", "CANCELLED", "UNKNOWN"})
"""``RPCStatusCode`` names after which the start may have happened."""
RETRYABLE_STATUSES = frozenset({"UNAVAILABLE", "RESOURCE_EXHAUSTED", "ABORTED"})
"""``RPCStatusCode`` names after which nothing happened and a retry may work."""


def effect_workflow_id(occurrence_id: str) -> str:
    """The ID of the workflow the ``temporal`` action starts for ``occurrence_id``."""
    return f"{occurrence_id}.effect"


def _status_name(status: WorkflowExecutionStatus | None) -> str | None:
    return status.name if status is not None else None


class TemporalAction(ActionAdapter[TemporalParameters]):
    """Start a workflow with ID ``<occurrenceId>.effect``; idempotent and queryable."""

    name: ClassVar[str] = "temporal"
    parameters_model: ClassVar[type[BaseModel]] = TemporalParameters
    accepts_idempotency_key: ClassVar[bool] = True
    can_query_result: ClassVar[bool] = True

    def __init__(self, client: Client | None) -> None:
        """Build the adapter on ``client`` (``None``: parameters validate, invocations raise)."""
        self._client = client

    @property
    def client(self) -> Client:
        """The Temporal client the workflows are started with."""
        if self._client is None:
            raise ActionNotConfigured("the temporal action needs a Temporal client")
        return self._client

    async def invoke(self, ctx: ActionContext) -> Outcome:
        """Start (or find) the effect workflow; see the module docstring for the classification.

        Raises:
            ActionNotConfigured: the adapter was built without a client.
        """
        from temporalio.common import WorkflowIDConflictPolicy, WorkflowIDReusePolicy
        from temporalio.exceptions import WorkflowAlreadyStartedError
        from temporalio.service import RPCError

        params = self.validate(ctx.parameters)
        client = self.client
        workflow_id = effect_workflow_id(ctx.occurrence_id)
        args = [] if params.input is None else [params.input]
        try:
            handle = await client.start_workflow(
                params.workflow_type,
                args=args,
                id=workflow_id,
                task_queue=params.task_queue,
                execution_timeout=timedelta(seconds=params.execution_timeout_seconds),
                id_reuse_policy=WorkflowIDReusePolicy.REJECT_DUPLICATE,
                id_conflict_policy=WorkflowIDConflictPolicy.USE_EXISTING,
            )
        except WorkflowAlreadyStartedError as exc:
            # REJECT_DUPLICATE refused: a closed run with this ID exists, so the effect happened.
            return Outcome(
                OutcomeKind.CONFIRMED,
                result={"workflowId": workflow_id, "runId": exc.run_id, "alreadyClosed": True},
                detail="a closed run with this workflow ID exists",
            )
        except RPCError as exc:
            detail = f"{exc.status.name}: {exc.message}"
            if exc.status.name in UNCONFIRMED_STATUSES:
                return Outcome(OutcomeKind.UNCONFIRMED, detail=detail)
            if exc.status.name in RETRYABLE_STATUSES:
                return Outcome(OutcomeKind.RETRYABLE_FAILURE, detail=detail)
            return Outcome(OutcomeKind.NON_RETRYABLE_FAILURE, detail=detail)
        return Outcome(
            OutcomeKind.CONFIRMED,
            result={"workflowId": workflow_id, "runId": handle.result_run_id},
            detail="started (or found running)",
        )

    async def query_result(self, ctx: ActionContext) -> QueryOutcome:
        """Describe ``<occurrenceId>.effect``: FOUND with its run and status, or NOT_FOUND."""
        from temporalio.service import RPCError, RPCStatusCode

        self.validate(ctx.parameters)
        workflow_id = effect_workflow_id(ctx.occurrence_id)
        try:
            description = await self.client.get_workflow_handle(workflow_id).describe()
        except RPCError as exc:
            if exc.status == RPCStatusCode.NOT_FOUND:
                return QueryOutcome(QueryOutcomeKind.NOT_FOUND, detail=exc.message)
            return QueryOutcome(
                QueryOutcomeKind.QUERY_FAILED, detail=f"{exc.status.name}: {exc.message}"
            )
        return QueryOutcome(
            QueryOutcomeKind.FOUND,
            result={
                "workflowId": description.id,
                "runId": description.run_id,
                "status": _status_name(description.status),
            },
        )
