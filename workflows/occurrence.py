"""``OccurrenceWorkflow``: one calendar occurrence, workflow ID = occurrenceId.

claim (ledger CAS against the gate view its releaser read) → action attempts → SUCCEEDED; a
retryable failure → RETRY_WAIT, a durable backoff timer, a new claim and attempt; non-retryable or
exhausted → FAILED; an outcome that cannot be confirmed → UNKNOWN_EFFECT → reconciliation: ask the
downstream (when it can answer) until the result is known or 30 minutes have passed, then the human
queue. Never a blind resend: re-sending is decided by the activity from what the adapter declares.

Workflow code only orchestrates: every decision about time, zones and state lives in activities
and the ledger (DESIGN §6). ``_now()`` is the instant stamped on each call: ``workflow.now()`` in
production, a simulated calendar in tests (``almanac.gates.simulation`` overrides it); timers run on
workflow time. The ledger records the activities' own clock at the moment of work, which follows
the same calendar (``activities.clock``).
"""

from __future__ import annotations

from datetime import datetime, timedelta

from temporalio import workflow
from temporalio.common import RetryPolicy

from workflows import search_attributes as sa

with workflow.unsafe.imports_passed_through():
    from activities import io
    from activities.ledger_activities import AlmanacActivities
    from lifecycle import OccurrenceState as S
    from workflows.contracts import (
        LEDGER_RETRY,
        LEDGER_TIMEOUT,
        NON_RETRYABLE_ERROR_TYPES,
        OCCURRENCE_WORKFLOW,
        OccurrenceInput,
        OccurrenceOutcome,
    )

ATTEMPT_HEARTBEAT_TIMEOUT = timedelta(seconds=10)
"""An attempt activity heartbeats every second (``activities.heartbeat``): one silent this long
is lost (its worker died, or its task never reached one) and Temporal retries it, instead of
waiting out the action's whole start-to-close timeout (no stall after a restart)."""
# An action attempt may be retried by Temporal only after a worker crash or lost completion; the
# activity then sees its own RUNNING attempt and decides (idempotent adapters re-send with the same
# key, others become UNKNOWN_EFFECT). Business retries are explicit attempts, below.
ACTION_RETRY = RetryPolicy(
    initial_interval=timedelta(seconds=2),
    maximum_attempts=5,
    non_retryable_error_types=NON_RETRYABLE_ERROR_TYPES,
)
RECONCILE_FIRST_WAIT = timedelta(seconds=30)
# The last query and the escalation itself take time: stop asking this long before the case's
# deadline, so the human queue has it by the deadline.
ESCALATION_MARGIN = timedelta(minutes=1)
RECONCILE_MAX_WAIT = timedelta(minutes=5)
# Deprecated patches (docs/operating/upgrades.md): ``workflow.deprecate_patch`` records each
# marker where ``workflow.patched`` did; the calls go in the next release.
CLAIM_IN_ATTEMPT = "almanac-claim-in-attempt"
"""Patch ID: the claim and the attempt in one activity (``claim_and_execute``); the transient
RUNNING state is not upserted as a search attribute (only states that last)."""
JITTER_PATCH = "almanac-jitter"
"""Patch ID: an occurrence's recorded dispatch delay is waited on a durable timer first."""
CATCH_UP_PACING = "almanac-catch-up-pacing"
"""Patch ID: an occurrence given a start slot (``catchUpSpacing``) waits for it on a durable
timer before its first claim, and that claim records the slot as evidence."""


@workflow.defn(name=OCCURRENCE_WORKFLOW)
class OccurrenceWorkflow:
    """Runs one occurrence at most once in effect (see the module docstring)."""

    def __init__(self) -> None:
        """Start with no state: everything durable is in the ledger and in history."""
        self._state: S = S.DUE

    @workflow.query
    def state(self) -> str:
        """The occurrence's last known ledger state."""
        return self._state

    @workflow.run
    async def run(self, params: OccurrenceInput) -> OccurrenceOutcome:
        """Claim, attempt, retry, reconcile; return the final (or human-queued) state."""
        occurrence_id = params.occurrence.occurrence_id
        attempts = 0
        await self._wait_jitter(params.occurrence)
        pacing = await self._wait_pacing(params.pacing)
        while True:
            workflow.deprecate_patch(CLAIM_IN_ATTEMPT)
            first = attempts == 0  # only the first claim waited for the slot: it alone records it
            both = await self._claim_and_execute(params, attempts + 1, pacing if first else None)
            if not both.claimed or both.attempt is None:
                self._set_state(both.state)
                return OccurrenceOutcome(occurrence_id, both.state, attempts, both.refusal or "")
            attempts += 1
            result = both.attempt
            self._set_state(result.state)
            if result.state == S.RETRY_WAIT:
                # A durable timer: the retry may run after the next period's occurrence started;
                # that one is another workflow with another ID, so the two never mix.
                await workflow.sleep(timedelta(seconds=max(result.retry_after_seconds, 1.0)))
                continue
            if result.state == S.UNKNOWN_EFFECT:
                final = await self._reconcile(params, result)
                if final == S.RETRY_WAIT:
                    continue
                return OccurrenceOutcome(occurrence_id, final, attempts, "reconciliation")
            return OccurrenceOutcome(occurrence_id, result.state, attempts, result.detail)

    async def _claim_and_execute(
        self, params: OccurrenceInput, claim_number: int, pacing: io.CatchUpPacing | None
    ) -> io.ClaimAndExecuteResult:
        """One activity: the claim (the ledger's CAS) and, if won, the attempt.

        If the ledger could not be reached before the claim, claim with the ledger's retry
        policy first (``LEDGER_RETRY``: minutes of an unreachable ledger, not the action's
        attempts), then run the attempt: the action's bounded retry policy never decides that an
        occurrence is abandoned because the ledger was down.
        """
        both = await workflow.execute_activity_method(
            AlmanacActivities.claim_and_execute,
            io.ClaimAndExecuteInput(
                occurrence_id=params.occurrence.occurrence_id,
                gate=params.gate,
                claim_number=claim_number,
                max_attempts=params.max_attempts,
                now_utc=self._now(),
                first_retry_delay_seconds=params.first_retry_delay_seconds,
                pacing=pacing,
            ),
            start_to_close_timeout=timedelta(seconds=params.action_timeout_seconds),
            heartbeat_timeout=ATTEMPT_HEARTBEAT_TIMEOUT,
            retry_policy=ACTION_RETRY,
        )
        if not both.ledger_unavailable:
            return both
        claim = await self._claim(params, pacing)
        if not claim.claimed:
            return io.ClaimAndExecuteResult(False, claim.state, claim.refusal)
        self._state = S.RUNNING
        result = await self._execute_attempt(params, claim.claim_generation, claim_number)
        return io.ClaimAndExecuteResult(True, result.state, attempt=result)

    async def _execute_attempt(
        self, params: OccurrenceInput, claim_generation: int, claim_number: int
    ) -> io.ExecuteAttemptResult:
        return await workflow.execute_activity_method(
            AlmanacActivities.execute_attempt,
            io.ExecuteAttemptInput(
                occurrence_id=params.occurrence.occurrence_id,
                claim_generation=claim_generation,
                claim_number=claim_number,
                max_attempts=params.max_attempts,
                now_utc=self._now(),
                first_retry_delay_seconds=params.first_retry_delay_seconds,
                schedule_id=params.occurrence.schedule_id,
            ),
            start_to_close_timeout=timedelta(seconds=params.action_timeout_seconds),
            heartbeat_timeout=ATTEMPT_HEARTBEAT_TIMEOUT,
            retry_policy=ACTION_RETRY,
        )

    async def _wait_jitter(self, occurrence: io.UpcomingOccurrence) -> None:
        """Wait the occurrence's recorded dispatch delay (``jitter``) on a durable timer.

        The delay comes from the ledger row (``jitter_seconds``, written at materialization from
        ``timecontract.jitter_delay``), never recomputed here. It moves only the dispatch: the ID,
        the slot and the instant misfire planning measured lateness from are unchanged. Only an
        occurrence with a delay records the marker, as the patch did.
        """
        delay = occurrence.jitter_seconds
        if delay > 0:
            workflow.deprecate_patch(JITTER_PATCH)
            await workflow.sleep(timedelta(seconds=delay))

    async def _wait_pacing(self, pacing: io.CatchUpPacing | None) -> io.CatchUpPacing | None:
        """Wait for the start slot ``catchUpSpacing`` gave this occurrence (durable timer).

        The slot is workflow time (the releasing schedule's), so the wait is what is left of it
        when this run gets there. Returns the pacing to record with the first claim, or ``None``
        (not paced, or a history from before the patch).
        """
        if pacing is None or not workflow.patched(CATCH_UP_PACING):
            return None
        remaining = pacing.until_utc - workflow.now()
        if remaining > timedelta(0):
            await workflow.sleep(remaining)
        return pacing

    async def _claim(
        self, params: OccurrenceInput, pacing: io.CatchUpPacing | None
    ) -> io.ClaimOccurrenceResult:
        return await workflow.execute_activity_method(
            AlmanacActivities.claim,
            io.ClaimOccurrenceInput(
                occurrence_id=params.occurrence.occurrence_id,
                gate=params.gate,
                now_utc=self._now(),
                pacing=pacing,
            ),
            start_to_close_timeout=LEDGER_TIMEOUT,
            retry_policy=LEDGER_RETRY,
        )

    async def _reconcile(self, params: OccurrenceInput, result: io.ExecuteAttemptResult) -> S:
        """Ask the downstream until the effect is known or the deadline passes; then a human.

        The deadline is the ledger case's (opened + 30 minutes), read back into workflow time and
        less a margin, so the escalation lands by it, not 30 minutes after the activity returned.
        """
        can_query = result.can_query_result
        occurrence_id = params.occurrence.occurrence_id
        schedule_id = params.occurrence.schedule_id
        deadline = workflow.now() + timedelta(seconds=params.reconcile_deadline_seconds)
        if result.reconcile_deadline_utc is not None:
            # The deadline is in the ledger's clock (``_now``); timers run on workflow time.
            ledger_ahead = self._now() - workflow.now()
            deadline = min(
                deadline, result.reconcile_deadline_utc - ledger_ahead - ESCALATION_MARGIN
            )
        wait = RECONCILE_FIRST_WAIT
        while can_query and workflow.now() < deadline:
            await workflow.sleep(min(wait, max(deadline - workflow.now(), timedelta(seconds=1))))
            answer = await workflow.execute_activity_method(
                AlmanacActivities.query_effect,
                io.QueryEffectInput(occurrence_id, self._now(), schedule_id=schedule_id),
                start_to_close_timeout=LEDGER_TIMEOUT,
                retry_policy=LEDGER_RETRY,
            )
            if answer.known:
                self._set_state(answer.state)
                return answer.state
            wait = min(wait * 2, RECONCILE_MAX_WAIT)
        why = "deadline passed without a confirmed result" if can_query else "no result query"
        await workflow.execute_activity_method(
            AlmanacActivities.escalate,
            io.EscalateInput(occurrence_id, why, self._now(), schedule_id=schedule_id),
            start_to_close_timeout=LEDGER_TIMEOUT,
            retry_policy=LEDGER_RETRY,
        )
        return S.UNKNOWN_EFFECT

    def _set_state(self, state: S) -> None:
        self._state = state
        workflow.upsert_search_attributes([sa.OCCURRENCE_STATE.value_set(state)])

    def _now(self) -> datetime:
        """The ledger's clock: the instant activities are told it is (a simulation overrides it)."""
        return workflow.now()
