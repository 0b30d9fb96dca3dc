"""The baseline: a bare workflow running one activity that POSTs to the sink, nothing else.

Run by ``python -m bench._bare_worker`` (a workflow module must not be ``__main__``: the sandbox
re-imports it).

The activity sends what Almanac's http action sends (the same JSON body shape, an
``Idempotency-Key`` header, a fresh connection per call through httpx) and nothing Almanac adds:
no ledger, no claim, no search attributes, no parent workflow. The worker runs with the SDK's
defaults and the same activity concurrency as Almanac's (32), sandbox on.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from datetime import timedelta

from temporalio import activity, workflow

with workflow.unsafe.imports_passed_through():  # as Almanac imports its activity code
    import httpx


@dataclass(frozen=True)
class PostInput:
    """Where to POST and the occurrence it describes."""

    url: str
    key: str
    schedule_id: str
    nominal_local: str
    instant_utc: str


@activity.defn(name="bench.post")
async def post(params: PostInput) -> int:
    """POST the occurrence body once; return the HTTP status."""
    body = {
        "occurrenceId": params.key,
        "idempotencyKey": params.key,
        "scheduleId": params.schedule_id,
        "revision": 1,
        "nominalLocal": params.nominal_local,
        "instantUtc": params.instant_utc,
        "attempt": 1,
        "data": None,
    }
    async with httpx.AsyncClient(timeout=10, follow_redirects=False, trust_env=False) as client:
        reply = await client.post(
            params.url,
            content=json.dumps(body, separators=(",", ":")),
            headers={"Content-Type": "application/json", "Idempotency-Key": params.key},
        )
    reply.raise_for_status()
    return reply.status_code


@workflow.defn(name="BenchBare")
class BareWorkflow:
    """One activity, then done."""

    @workflow.run
    async def run(self, params: PostInput) -> int:
        """Run the POST activity."""
        return await workflow.execute_activity(
            post, params, start_to_close_timeout=timedelta(seconds=120)
        )
