"""The occurrence workflow's activities: claim, run one attempt, reconcile an unknown effect.

Thin adapters (DESIGN §2): the ledger decides the claim (``ledger.claim_for_dispatch``: the
acceptance point, cancel-on-refusal, the gate re-check, adopting an earlier claim) and the
attempt's outcome (``ledger.record_outcome``: next state and backoff from the retry policy); the
action adapter makes the downstream call. An attempt's metrics are recorded once, from what the
ledger recorded (:meth:`OccurrenceActivities._observe_attempt`).

Every instant recorded is the clock's at that moment, never an input's ``now_utc`` (which a retry
after a crash carries unchanged). A Temporal retry of an attempt (a lost worker or completion)
finds the occurrence ``RUNNING`` when the downstream may have the call already: an idempotent
downstream then gets the same key again, as a new attempt; any other makes the occurrence
``UNKNOWN_EFFECT`` — never a blind resend.
"""

from __future__ import annotations

import asyncio
import hashlib
import json
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from typing import TYPE_CHECKING

from temporalio import activity
from temporalio.exceptions import ApplicationError

import ledger
from activities import io
from activities.actions import ActionContext, ActionError, QueryOutcomeKind
from activities.clock import Clock
from activities.clock_skew import CLOCK_SKEW_ERROR
from activities.common import ActivitiesBase, bounded, schedule_of
from activities.heartbeat import heartbeating
from ledger import OccurrenceState, OccurrenceView, ScheduleEventKind
from lifecycle import OutcomeKind
from timecontract import ScheduleSpecV1, SpecError, format_instant

if TYPE_CHECKING:
    from ledger import AttemptReport, RetryPolicy

S = OccurrenceState
_IN_DISPATCH = (S.DISPATCHING, S.RUNNING)
LOST_DETAIL = "the worker stopped after the call began (lost acknowledgement)"


class _LastReading:
    """A clock for the ledger to read inside a transaction; keeps the reading it took last.

    The last reading is the one the committed transaction recorded (a retried transaction reads
    again), so a metric can use the very instant the ledger holds.
    """

    def __init__(self, clock: Clock) -> None:
        self._clock = clock
        self.last = datetime.min.replace(tzinfo=UTC)

    def __call__(self) -> datetime:
        self.last = self._clock.now()
        return self.last


@dataclass(frozen=True, slots=True)
class _Attempt:
    """How to run one attempt: the occurrence, its spec, the claim and its retry policy."""

    occurrence: OccurrenceView
    spec: ScheduleSpecV1
    claim_generation: int
    claim_number: int
    policy: RetryPolicy


class OccurrenceActivities(ActivitiesBase):
    """``claim``, ``claim_and_execute``, ``execute_attempt``, ``query_effect``, ``escalate``."""

    @activity.defn(name=io.CLAIM)
    def claim(self, params: io.ClaimOccurrenceInput) -> io.ClaimOccurrenceResult:
        """Claim against the releaser's gate view; the ledger cancels where the gate refuses."""
        decision = self._claim(params)
        state = decision.occurrence.state
        if decision.claimed:
            return io.ClaimOccurrenceResult(True, decision.claim_generation, None, state)
        return io.ClaimOccurrenceResult(False, 0, _refusal(decision), state)

    def _claim(self, params: io.ClaimOccurrenceInput) -> ledger.DispatchClaim:
        """The acceptance point of the activities (``claim`` and ``claim_and_execute``).

        The worker's clock is checked first (``activities.clock_skew``), against the
        occurrence's instant (one row read); the ledger then decides in one transaction. A
        retry of this activity (its earlier try may have committed) adopts its own claim.
        """
        retried = activity.in_activity() and activity.info().attempt >= 2
        with self._domain_errors(params.gate.schedule_id, io.CLAIM):
            occurrence = ledger.read_occurrence(self._ledger, params.occurrence_id)
            if self._clock_guard is not None:
                scheduled = (
                    activity.info().current_attempt_scheduled_time
                    if activity.in_activity()
                    else None
                )
                self._clock_guard.check_claim(occurrence.instant_utc, scheduled)
            spec = self._spec(occurrence.schedule_id, occurrence.revision)
            return ledger.claim_for_dispatch(
                self._ledger,
                params.occurrence_id,
                params.gate,
                worker_identity=self._identity,
                implementation_alias=self._alias,
                input_digest=_input_digest(occurrence.occurrence_id, spec),
                now_utc=self._clock.now,  # read once the claim holds its locks
                retried=retried,
                paced=None if params.pacing is None else params.pacing.evidence(),
            )

    @activity.defn(name=io.CLAIM_AND_EXECUTE)
    async def claim_and_execute(self, params: io.ClaimAndExecuteInput) -> io.ClaimAndExecuteResult:
        """Claim (the same acceptance point as :meth:`claim`) and, if won, run one attempt.

        A Temporal retry of this activity (a lost worker or completion) finds its earlier try's
        work: an outcome already recorded is returned as it is (a RETRY_WAIT keeps its remaining
        backoff); a claim it won (DISPATCHING/RUNNING) is continued, exactly as a retried
        ``execute_attempt`` does. A ledger that cannot be reached before the claim (or a claim
        held for clock skew) is a result, not a failure, so the workflow claims again with the
        ledger's retry policy rather than this activity's bounded one. It heartbeats while it
        runs (``activities.heartbeat``).
        """
        async with heartbeating():
            return await self._claim_and_execute(params)

    async def _claim_and_execute(self, params: io.ClaimAndExecuteInput) -> io.ClaimAndExecuteResult:
        if activity.info().attempt >= 2:
            settled = await self._read(params.occurrence_id, params.gate.schedule_id)
            if settled.state is S.RETRY_WAIT and settled.next_attempt_at_utc:
                # The remaining backoff, from the clock of work: a retry's ``now_utc`` is stale.
                wait = (settled.next_attempt_at_utc - self._clock.now()).total_seconds()
                attempt = io.ExecuteAttemptResult(S.RETRY_WAIT, max(wait, 0.0), detail="recorded")
                return io.ClaimAndExecuteResult(True, S.RETRY_WAIT, None, attempt=attempt)
            if settled.state in _IN_DISPATCH:
                # This workflow's earlier try won the dispatch (one workflow per occurrenceId): a
                # won dispatch is never refused or cancelled, even after a rollback bumped the
                # epoch (seed); the attempt redelivers with the key or records UNKNOWN_EFFECT.
                return await self._attempt_after_claim(params, settled)
        request = io.ClaimOccurrenceInput(
            params.occurrence_id, params.gate, params.now_utc, pacing=params.pacing
        )
        try:
            decision = await asyncio.to_thread(self._claim, request)
        except ledger.LedgerUnavailable as exc:
            return io.ClaimAndExecuteResult(False, S.DUE, str(exc), ledger_unavailable=True)
        except ApplicationError as exc:
            if exc.type != CLOCK_SKEW_ERROR:
                raise
            # Held for clock skew (nothing written): like an unreachable ledger, the workflow
            # claims again under the ledger's retry policy, on this or another worker.
            return io.ClaimAndExecuteResult(False, S.DUE, str(exc), ledger_unavailable=True)
        if not decision.claimed:
            state = decision.occurrence.state
            return io.ClaimAndExecuteResult(False, state, _refusal(decision))
        return await self._attempt_after_claim(params, decision.occurrence)

    async def _attempt_after_claim(
        self, params: io.ClaimAndExecuteInput, occurrence: OccurrenceView
    ) -> io.ClaimAndExecuteResult:
        policy = ledger.RetryPolicy(
            params.max_attempts, first_delay=timedelta(seconds=params.first_retry_delay_seconds)
        )
        result = await self._execute(
            occurrence, occurrence.claim_generation, params.claim_number, policy
        )
        return io.ClaimAndExecuteResult(True, result.state, None, attempt=result)

    @activity.defn(name=io.EXECUTE_ATTEMPT)
    async def execute_attempt(self, params: io.ExecuteAttemptInput) -> io.ExecuteAttemptResult:
        """Run the action once for the claimed attempt and record the outcome.

        A retry that finds the outcome recorded returns it. It heartbeats while it runs
        (``activities.heartbeat``).
        """
        async with heartbeating():
            occurrence = await self._read(params.occurrence_id, params.schedule_id)
            policy = ledger.RetryPolicy(
                params.max_attempts,
                first_delay=timedelta(seconds=params.first_retry_delay_seconds),
            )
            return await self._execute(
                occurrence, params.claim_generation, params.claim_number, policy
            )

    async def _execute(
        self,
        occurrence: OccurrenceView,
        claim_generation: int,
        claim_number: int,
        policy: RetryPolicy,
    ) -> io.ExecuteAttemptResult:
        """Run one attempt of a claimed occurrence (read in the claim's transaction or after)."""
        if occurrence.state not in _IN_DISPATCH:
            return io.ExecuteAttemptResult(occurrence.state, detail="already recorded")
        spec = self._spec(occurrence.schedule_id, occurrence.revision)
        assert spec.action is not None  # published specs always have one
        attempt = _Attempt(occurrence, spec, claim_generation, claim_number, policy)
        try:
            capabilities = self._actions.validate(spec.action.name, spec.action.parameters)
        except (SpecError, ActionError) as exc:
            # This worker cannot run the action at all (an adapter it lacks, parameters its
            # adapter refuses): the attempt fails for good, recorded; retrying cannot help.
            return await self._fail_unrunnable(attempt, exc)
        can_query = capabilities.can_query_result
        if occurrence.state is S.RUNNING and not capabilities.accepts_idempotency_key:
            lost = ledger.AttemptReport(OutcomeKind.UNCONFIRMED, LOST_DETAIL, lost=True)
            generation = occurrence.claim_generation
            return await self._record(attempt, generation, lost, can_query)
        generation, started = await self._start(attempt)
        outcome = await self._actions.invoke(
            spec.action.name, _context(occurrence, spec, generation)
        )
        retry_after = outcome.retry_after_seconds
        report = ledger.AttemptReport(
            outcome.kind,
            outcome.detail,
            timedelta(seconds=retry_after) if retry_after else None,
        )
        return await self._record(attempt, generation, report, can_query, started)

    async def _start(self, attempt: _Attempt) -> tuple[int, datetime]:
        """Mark the call begun: ``DISPATCHING → RUNNING``, or a redelivery of a ``RUNNING`` one.

        Returns the attempt's generation and the instant its start was recorded (the dispatch
        lag is measured from it).
        """
        occurrence, oid = attempt.occurrence, attempt.occurrence.occurrence_id
        if occurrence.state is S.RUNNING:
            redelivery = await asyncio.to_thread(
                ledger.redeliver,
                self._ledger,
                oid,
                occurrence.claim_generation,
                self._clock.now,  # read once the redelivery holds its locks
                by=self._identity,
                input_digest=_input_digest(oid, attempt.spec),
            )
            return redelivery.claim_generation, redelivery.started_at_utc
        reading = _LastReading(self._clock)
        await asyncio.to_thread(
            ledger.mark_running,
            self._ledger,
            oid,
            attempt.claim_generation,
            reading,
            by=self._identity,
        )
        return attempt.claim_generation, reading.last  # the RUNNING event's instant

    async def _record(
        self,
        attempt: _Attempt,
        generation: int,
        report: AttemptReport,
        can_query: bool,
        started: datetime | None = None,
    ) -> io.ExecuteAttemptResult:
        """Hand the outcome to the ledger, which decides the next state; observe it once."""
        recorded = await asyncio.to_thread(
            ledger.record_outcome,
            self._ledger,
            attempt.occurrence.occurrence_id,
            generation,
            report,
            claim_number=attempt.claim_number,
            policy=attempt.policy,
            now_utc=self._clock.now,
            by=self._identity,
        )
        self._observe_attempt(attempt.occurrence, recorded.state, started)
        return io.ExecuteAttemptResult(
            recorded.state,
            recorded.retry_after.total_seconds(),
            can_query_result=can_query and recorded.state is S.UNKNOWN_EFFECT,
            detail=report.detail,
            reconcile_deadline_utc=recorded.reconcile_deadline_utc,
        )

    async def _fail_unrunnable(self, attempt: _Attempt, exc: Exception) -> io.ExecuteAttemptResult:
        occurrence = attempt.occurrence
        kind, message = type(exc).__name__, bounded(str(exc))
        generation = (
            occurrence.claim_generation
            if occurrence.state is S.RUNNING
            else attempt.claim_generation
        )
        with self._domain_errors(occurrence.schedule_id, io.EXECUTE_ATTEMPT):
            await asyncio.to_thread(
                ledger.failed,
                self._ledger,
                occurrence.occurrence_id,
                generation,
                self._clock.now(),
                by=self._identity,
                error_class=kind,
                error_message=message,
            )
        self._record_rejection(
            occurrence.schedule_id,
            ScheduleEventKind.ACTIVITY_REJECTED,
            kind,
            f"{io.EXECUTE_ATTEMPT}: {occurrence.occurrence_id}: {kind}: {message}",
        )
        self._observe_attempt(occurrence, S.FAILED)
        return io.ExecuteAttemptResult(S.FAILED, detail=f"{kind}: {message}")

    def _observe_attempt(
        self, occurrence: OccurrenceView, state: OccurrenceState, started: datetime | None = None
    ) -> None:
        """An attempt's metrics, once: its recorded outcome and, if it called, its dispatch lag.

        The lag is exactly the recorded start of the call (the RUNNING event, or the redelivered
        attempt's start) minus the occurrence's instant.
        """
        if started is not None and occurrence.instant_utc is not None:
            lag = (started - occurrence.instant_utc).total_seconds()
            self._metrics.observe_dispatch_lag(occurrence.schedule_id, lag)
        self._metrics.count_attempt(occurrence.schedule_id, state)

    @activity.defn(name=io.QUERY_EFFECT)
    async def query_effect(self, params: io.QueryEffectInput) -> io.QueryEffectResult:
        """Ask the downstream about an UNKNOWN_EFFECT; resolve the case when the answer is known."""
        occurrence = await self._read(params.occurrence_id, params.schedule_id)
        if occurrence.state is not S.UNKNOWN_EFFECT:
            return io.QueryEffectResult(True, occurrence.state, "already resolved")
        spec = self._spec(occurrence.schedule_id, occurrence.revision)
        assert spec.action is not None
        with self._domain_errors(occurrence.schedule_id, io.QUERY_EFFECT):
            self._actions.validate(spec.action.name, spec.action.parameters)
        answer = await self._actions.query_result(
            spec.action.name, _context(occurrence, spec, occurrence.claim_generation)
        )
        if answer.kind is QueryOutcomeKind.FOUND:
            resolution = ledger.ReconciliationResolution.SUCCEEDED
        elif answer.kind is QueryOutcomeKind.NOT_FOUND:
            resolution = ledger.ReconciliationResolution.NOT_APPLIED
        else:
            return io.QueryEffectResult(False, occurrence.state, answer.detail)
        await asyncio.to_thread(
            ledger.resolve_reconciliation,
            self._ledger,
            occurrence.occurrence_id,
            resolution,
            self._clock.now(),
            by=self._identity,
            note=f"downstream answered {answer.kind.value}: {answer.detail}".strip(),
        )
        after = await self._read(occurrence.occurrence_id, occurrence.schedule_id)
        return io.QueryEffectResult(True, after.state, answer.detail)

    @activity.defn(name=io.ESCALATE)
    def escalate(self, params: io.EscalateInput) -> None:
        """Put an unresolved UNKNOWN_EFFECT case in the human queue."""
        schedule_id = params.schedule_id or schedule_of(params.occurrence_id)
        with self._domain_errors(schedule_id, io.ESCALATE):
            ledger.resolve_reconciliation(
                self._ledger,
                params.occurrence_id,
                ledger.ReconciliationResolution.HUMAN,
                self._clock.now(),
                by=self._identity,
                note=params.why,
            )

    async def _read(self, occurrence_id: str, schedule_id: str | None = None) -> OccurrenceView:
        """One occurrence's row; an error is recorded on ``schedule_id``.

        ``None`` (an input recorded before activities were given the scheduleId): the one the
        occurrence ID names.
        """
        schedule_id = schedule_id or schedule_of(occurrence_id)
        with self._domain_errors(schedule_id, "almanac.read_occurrence"):
            return await asyncio.to_thread(ledger.read_occurrence, self._ledger, occurrence_id)


def _refusal(decision: ledger.DispatchClaim) -> str:
    assert decision.refusal is not None
    return f"{decision.refusal.value}: {decision.detail}"


def _context(
    occurrence: OccurrenceView, spec: ScheduleSpecV1, claim_generation: int
) -> ActionContext:
    assert spec.action is not None and occurrence.instant_utc is not None
    return ActionContext(
        occurrence_id=occurrence.occurrence_id,
        schedule_id=occurrence.schedule_id,
        revision=occurrence.revision,
        nominal_local=occurrence.nominal_local.isoformat(),
        instant_utc=format_instant(occurrence.instant_utc),
        attempt=claim_generation,
        parameters=dict(spec.action.parameters),
    )


def _input_digest(occurrence_id: str, spec: ScheduleSpecV1) -> str:
    """``sha256:`` of what an attempt sends: the occurrence's identity and the action."""
    action = spec.action.model_dump(mode="json") if spec.action else None
    payload = {"occurrenceId": occurrence_id, "action": action}
    text = json.dumps(payload, sort_keys=True, separators=(",", ":"))
    return "sha256:" + hashlib.sha256(text.encode()).hexdigest()
