"""The ``noop`` action: no downstream at all; the ledger's record is the whole effect.

For the seed's first rollout step: "take over one internal schedule with no external effects".
An occurrence whose spec names ``noop`` is claimed, attempted and recorded exactly like any other
(attempt rows, events, ``SUCCEEDED``), so a canary exercises the whole path — materialize,
release, claim against the gate, attempt, outcome — on the candidate implementation's workers,
and nothing leaves the worker.

Parameters (camelCase, all optional)::

    note:  free text carried in the attempt's result (e.g. "canary for v2")

Contract: idempotent by construction (there is nothing to repeat) and queryable (the answer is
always FOUND: the effect is the ledger's own record).
"""

from __future__ import annotations

from typing import ClassVar

from pydantic import BaseModel

from activities.actions.base import (
    ActionAdapter,
    ActionContext,
    Outcome,
    OutcomeKind,
    QueryOutcome,
    QueryOutcomeKind,
)
from activities.actions.parameters import NoopParameters


class NoopAction(ActionAdapter[NoopParameters]):
    """Confirm at once, with no external effect (the ledger records the attempt)."""

    name: ClassVar[str] = "noop"
    parameters_model: ClassVar[type[BaseModel]] = NoopParameters
    accepts_idempotency_key: ClassVar[bool] = True
    can_query_result: ClassVar[bool] = True

    async def invoke(self, ctx: ActionContext) -> Outcome:
        """Confirm: the result names the occurrence and attempt; nothing is sent anywhere."""
        params = self.validate(ctx.parameters)
        result = {"noop": True, "occurrenceId": ctx.occurrence_id, "attempt": ctx.attempt}
        if params.note:
            result["note"] = params.note
        return Outcome(OutcomeKind.CONFIRMED, result=result, detail="noop: no external effect")

    async def query_result(self, ctx: ActionContext) -> QueryOutcome:
        """FOUND: a noop's effect is its ledger record."""
        self.validate(ctx.parameters)
        return QueryOutcome(QueryOutcomeKind.FOUND, {"noop": True}, "noop: no external effect")
