"""Every error an activity can raise is bounded, recorded on the schedule, and survived.

Fakes under the real activity names (the production activities, with a fault plan in front of
selected calls) raise each error class the activity can raise: the deterministic ones
(``activities.ledger_activities.DETERMINISTIC_ERRORS``: refused transitions, missing rows, invalid
specs, lost compare-and-sets, integrity errors) and the transient one (``LedgerUnavailable``).

What must hold (issue 10, "nothing retries forever"): a deterministic error is tried once, never
retried; the transient one is retried exactly ``LEDGER_RETRY.maximum_attempts`` times, then given
up; each deterministic error becomes an ``ACTIVITY_REJECTED`` schedule event and a
``almanac_schedule_rejections_total`` increment; the schedule workflow keeps running its other
work (later occurrences succeed, its run completes at the simulation stop, not as a failure); and
an update whose change fails is answered (``ChangeNotApplied``), never left waiting.
"""

from __future__ import annotations

import asyncio
import functools
from collections import Counter
from collections.abc import AsyncIterator, Callable
from concurrent.futures import ThreadPoolExecutor
from contextlib import asynccontextmanager
from dataclasses import dataclass, field
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import pytest
from prometheus_client import CollectorRegistry
from temporal_env import eventually, start_time_skipping
from temporalio import activity
from temporalio.client import WorkflowExecutionStatus, WorkflowUpdateFailedError
from temporalio.exceptions import ApplicationError
from temporalio.testing import WorkflowEnvironment
from temporalio.worker import Worker

import ledger
from activities import io
from activities.actions import ActionRegistry, EgressPolicy
from activities.clock import SystemClock
from activities.ledger_activities import AlmanacActivities
from activities.metrics import AlmanacMetrics
from almanac.gates import simulation
from almanac.gates.simulated_clock import SimulatedClock
from almanac.gates.simulation import SimulatedScheduleInput, SimulatedScheduleWorkflow
from almanac.registration import register_search_attributes
from almanac.stack.sink import Sink
from ledger.migrate import upgrade
from timecontract import InvalidSpec, SpecError, TzdbReleaseNotFound
from workflows import ScheduleWorkflow, schedule_workflow_id
from workflows.contracts import LEDGER_RETRY, DeleteInput, DisableInput
from workflows.occurrence import ACTION_RETRY

pytestmark = [pytest.mark.anyio, pytest.mark.temporal, pytest.mark.slow]

DAY = datetime(2026, 12, 1, tzinfo=UTC)
OID = "faults.r1.20261201T010000.f0"
STOP_DEADLINE_SECONDS = 150
"""Wall-clock seconds the simulated day may take (a retry without bound never ends it)."""


def transient() -> Exception:
    return ledger.LedgerUnavailable("connection refused (injected)")


# Each injection point's error classes, one per planned call (None: let that call through). A
# point is an activity the workflows call, or one of the two steps of the occurrence's combined
# activity (patch ``almanac-claim-in-attempt``):
# - ``io.CLAIM_AND_EXECUTE``: its claim step. A refusal fails the occurrence; an unreachable ledger
#   is answered as a result (``ledger_unavailable``), and the workflow claims again with
#   ``io.CLAIM``;
# - ``io.CLAIM``: that fallback claim activity, under the ledger's bounded retry policy;
# - ``io.EXECUTE_ATTEMPT``: the attempt step, inside the combined activity or the fallback
#   ``execute_attempt`` activity after a fallback claim; both under the action's retry policy;
# - ``io.MATERIALIZE``: the window's write, inside ``io.RELEASE_DUE`` before the release (a
#   refresh, patch ``almanac-materialize-in-release``) or its follow-up, or the materialize
#   activity of the older paths; all under the ledger's bounded retry policy.
# Occurrences run one at a time (hourly, each done in minutes), so the plan's order is the order
# of calls: the first occurrence through ``io.CLAIM`` (the one after the fourth
# ``io.CLAIM_AND_EXECUTE`` entry) is also the first to reach ``io.EXECUTE_ATTEMPT``.
SCHEDULE_LOOP_PLAN: dict[str, list[Exception | None]] = {
    io.MATERIALIZE: [
        None,
        ledger.ScheduleNotFound("faults"),
        InvalidSpec([SpecError("rule", "FREQ=NEVER", "injected")]),
        TzdbReleaseNotFound("1999z", ["2026a"]),
        ledger.ClaimLost("faults", "injected"),
        ledger.LedgerIntegrityError("injected"),
        transient(),
    ],
    io.RELEASE_DUE: [
        None,
        None,
        ledger.ScheduleNotFound("faults"),
        ledger.IllegalTransition(OID, ledger.OccurrenceState.PLANNED, ledger.OccurrenceState.DUE),
        ledger.ClaimLost("faults", "injected"),
        transient(),
    ],
    io.CLAIM_AND_EXECUTE: [
        ledger.OccurrenceNotFound(OID),
        ledger.IllegalTransition(OID, ledger.OccurrenceState.DUE, ledger.OccurrenceState.DUE),
        ledger.ClaimLost(OID, "injected"),
        transient(),  # → io.CLAIM: through, then the fallback execute_attempt activity
        transient(),  # → io.CLAIM: refused
        transient(),  # → io.CLAIM: unreachable past its bound
    ],
    io.CLAIM: [
        None,
        ledger.IllegalTransition(OID, ledger.OccurrenceState.DUE, ledger.OccurrenceState.DUE),
        transient(),
    ],
    io.EXECUTE_ATTEMPT: [
        ledger.OccurrenceNotFound(OID),  # in the fallback execute_attempt activity
        ledger.IllegalTransition(OID, ledger.OccurrenceState.DUE, ledger.OccurrenceState.RUNNING),
        ledger.ClaimLost(OID, "injected"),
        transient(),
    ],
}
GATE_PLAN: dict[str, list[Exception | None]] = {
    io.PUBLISH_REVISION: [None, transient()],
    io.CHANGE_GATE: [
        ledger.ScheduleNotFound("faults"),
        ledger.ClaimLost("faults", "x"),
        transient(),
    ],
    io.SET_GATE: [ledger.ScheduleNotFound("faults"), ledger.ClaimLost("faults", "x"), transient()],
    io.DELETE_SCHEDULE: [ledger.ClaimLost("faults", "x"), transient()],
}
TRANSIENT_ATTEMPTS = {
    io.MATERIALIZE: LEDGER_RETRY.maximum_attempts,
    io.RELEASE_DUE: LEDGER_RETRY.maximum_attempts,
    io.PUBLISH_REVISION: LEDGER_RETRY.maximum_attempts,
    io.SET_GATE: LEDGER_RETRY.maximum_attempts,
    io.CHANGE_GATE: LEDGER_RETRY.maximum_attempts,
    io.DELETE_SCHEDULE: LEDGER_RETRY.maximum_attempts,
    io.CLAIM: LEDGER_RETRY.maximum_attempts,
    # Answered, not raised: the workflow falls back to io.CLAIM instead of retrying this.
    io.CLAIM_AND_EXECUTE: 1,
    io.EXECUTE_ATTEMPT: ACTION_RETRY.maximum_attempts,
}
"""How many times a transient error at each injection point is tried: each caller's bound."""


@dataclass
class Raised:
    """What the fakes raised: (injection point, error class) → attempts seen."""

    attempts: Counter[tuple[str, str]] = field(default_factory=Counter)


def faulted(name: str, production: Callable[[Any, Any], Any]) -> Any:
    """The production activity ``production`` behind the fault plan, under its own name."""

    @functools.wraps(production, updated=())  # not its activity definition
    def call(self: FaultyActivities, params: Any) -> Any:
        self._fault(name, params.schedule_id)
        return production(self, params)

    return activity.defn(name=name)(call)


class FaultyActivities(AlmanacActivities):
    """The production activities behind a fault plan, registered under the same names."""

    def __init__(self, *args: Any, plan: dict[str, list[Exception | None]], **kw: Any) -> None:
        super().__init__(*args, **kw)
        self.plan = {name: list(errors) for name, errors in plan.items()}
        self.raised = Raised()
        self._retrying: dict[str, Exception] = {}

    def _fault(self, name: str, schedule_id: str | None) -> None:
        info = activity.info()
        # A Temporal retry of the same call (attempt 2, 3, …) raises the same transient error
        # again. A retried local activity (the release, patch almanac-local-release) runs under
        # a new activity ID after its backoff timer, so a call is keyed by its workflow run and
        # injection point, and a retry is known by its attempt number.
        key = f"{info.workflow_run_id}/{name}"
        error = self._retrying.get(key) if info.attempt > 1 else None
        if error is None:
            planned = self.plan.get(name) or [None]
            error = planned.pop(0) if planned else None
            if error is None:
                return
            if isinstance(error, ledger.LedgerUnavailable):
                self._retrying[key] = error
        self.raised.attempts[(name, type(error).__name__)] += 1
        # Raised inside the production error mapping: recorded, classified, bounded.
        with self._domain_errors(schedule_id, name):
            raise error

    release_due = faulted(io.RELEASE_DUE, AlmanacActivities.release_due)
    publish_revision = faulted(io.PUBLISH_REVISION, AlmanacActivities.publish_revision)
    set_gate = faulted(io.SET_GATE, AlmanacActivities.set_gate)
    change_gate = faulted(io.CHANGE_GATE, AlmanacActivities.change_gate)
    delete_schedule = faulted(io.DELETE_SCHEDULE, AlmanacActivities.delete_schedule)

    def _write_window(self, params: io.MaterializeOccurrencesInput) -> tuple[datetime, int]:
        # The materialize step, wherever it runs (see the plan's comment).
        self._fault(io.MATERIALIZE, params.schedule_id)
        return super()._write_window(params)

    def _claim(self, params: io.ClaimOccurrenceInput) -> io.ClaimOccurrenceResult:
        # The claim step of almanac.claim and of almanac.claim_and_execute alike.
        self._fault(activity.info().activity_type, "faults")
        return super()._claim(params)

    async def _execute_attempt(self, params: io.ExecuteAttemptInput) -> Any:
        # The attempt step: the execute_attempt activity, or the second half of
        # almanac.claim_and_execute (both run it inside their heartbeat).
        self._fault(io.EXECUTE_ATTEMPT, "faults")
        return await super()._execute_attempt(params)


IDLE = {"timer_started_event_attributes", "workflow_execution_update_completed_event_attributes"}
"""A run's last event when it waits: its timer started (an update's answer may follow it)."""


async def wait_until_idle(handle: Any) -> None:
    """Like ``stack.wait_until_sleeping``: the test server mishandles changes mid-task."""

    async def last_event() -> str | None:
        return (await handle.fetch_history()).events[-1].WhichOneof("attributes")

    await eventually(last_event, lambda kind: kind in IDLE, timeout=20)


@asynccontextmanager
async def faulty_stack(
    env: WorkflowEnvironment, tmp_path: Path, plan: dict[str, list[Exception | None]]
) -> AsyncIterator[tuple[FaultyActivities, ledger.Ledger, Sink, str]]:
    url = f"sqlite:///{tmp_path / 'ledger.sqlite3'}"
    upgrade(url)
    store = ledger.Ledger.from_url(url)
    await register_search_attributes(env.client)
    queue = f"faults-{tmp_path.name[-12:]}"
    with Sink() as sink, ThreadPoolExecutor(max_workers=8) as executor:
        clock = SimulatedClock()  # the clock of work follows the skipped time
        activities = FaultyActivities(
            store,
            ActionRegistry.default(egress=EgressPolicy.allowing(["127.0.0.1"])),  # the sink
            plan=plan,
            identity="faulty-worker",
            metrics=AlmanacMetrics(CollectorRegistry()),
            clock=clock,
        )
        async with Worker(
            env.client,
            task_queue=queue,
            workflows=list(simulation.WORKFLOWS),
            activities=activities.all(),
            activity_executor=executor,
            interceptors=[clock],
        ):
            yield activities, store, sink, queue
    store.dispose()


def spec(sink: Sink) -> dict[str, Any]:
    return {
        "schema": "scheduleSpec.v1",
        "scheduleId": "faults",
        "revision": 1,
        "timeZone": "Etc/UTC",
        "tzdbVersion": "2026a",
        "rule": "FREQ=HOURLY;BYMINUTE=0",
        "misfirePolicy": "SKIP",
        "lateness": "PT59M",
        "cutoverAt": "2026-11-30T00:00:00Z",
        "action": {"name": "http", "parameters": {"url": f"{sink.url}/effects"}},
    }


def rejections(activities: FaultyActivities, schedule_id: str) -> dict[str, float]:
    registry = activities._metrics.registry
    found: dict[str, float] = {}
    for family in registry.collect():
        for sample in family.samples:
            ours = sample.labels.get("schedule_id") == schedule_id
            if sample.name == "almanac_schedule_rejections_total" and ours:
                found[sample.labels["error"]] = sample.value
    return found


def expected_attempts(plan: dict[str, list[Exception | None]]) -> Counter[tuple[str, str]]:
    expected: Counter[tuple[str, str]] = Counter()
    for name, errors in plan.items():
        for error in errors:
            if error is None:
                continue
            retried = isinstance(error, ledger.LedgerUnavailable)
            expected[(name, type(error).__name__)] += TRANSIENT_ATTEMPTS[name] if retried else 1
    return expected


def deterministic(plan: dict[str, list[Exception | None]]) -> Counter[str]:
    return Counter(
        type(e).__name__
        for errors in plan.values()
        for e in errors
        if e is not None and not isinstance(e, ledger.LedgerUnavailable)
    )


async def start_faults_schedule(
    env: WorkflowEnvironment, sink: Any, queue: str, stop_after: datetime
) -> Any:
    """Start the ``faults`` schedule, its clock at DAY 00:30, ending at ``stop_after``."""
    offset = (DAY + timedelta(minutes=30) - await env.get_current_time()).total_seconds()
    return await env.client.start_workflow(
        SimulatedScheduleWorkflow.run,
        SimulatedScheduleInput(
            schedule_id="faults",
            initial_spec=spec(sink),
            clock_offset_seconds=offset,
            stop_after_utc=stop_after,
            horizon_seconds=timedelta(hours=24).total_seconds(),
        ),
        id=schedule_workflow_id("faults"),
        task_queue=queue,
    )


async def test_the_schedule_loop_and_its_occurrences_survive_every_error_class(
    tmp_path: Path,
) -> None:
    env = await start_time_skipping()
    try:
        async with faulty_stack(env, tmp_path, SCHEDULE_LOOP_PLAN) as (acts, store, sink, queue):
            handle = await start_faults_schedule(
                env, sink, queue, DAY + timedelta(hours=20, minutes=30)
            )
            # Time skips; the loop must reach its stop (in about 15 s here). A retry without
            # bound never lets it: fail then, rather than hang.
            final = await asyncio.wait_for(handle.result(), timeout=STOP_DEADLINE_SECONDS)
            assert (await handle.describe()).status is WorkflowExecutionStatus.COMPLETED

            assert acts.raised.attempts == expected_attempts(SCHEDULE_LOOP_PLAN)
            assert all(not errors for errors in acts.plan.values())  # every fault was hit
            events = ledger.schedule_events(store, "faults")
            recorded = Counter(
                e.detail.split(": ")[1] for e in events if e.kind == "ACTIVITY_REJECTED"
            )
            assert recorded == deterministic(SCHEDULE_LOOP_PLAN)
            assert rejections(acts, "faults") == {
                k: float(v) for k, v in deterministic(SCHEDULE_LOOP_PLAN).items()
            }
            # The loop's own steps (materialize, release) that failed for good, as the status says.
            loop_steps = {io.MATERIALIZE, io.RELEASE_DUE}
            assert final.rejections == sum(
                1
                for name in loop_steps
                for e in SCHEDULE_LOOP_PLAN[name]
                if e is not None and not isinstance(e, ledger.LedgerUnavailable)
            )
            assert final.last_error
            # Its other work went on: the last hours ran, each effect delivered once.
            rows = {
                o.instant_utc.hour: o.state
                for o in ledger.list_occurrences(store, "faults", to_utc=DAY + timedelta(hours=21))
                if o.instant_utc is not None
            }
            assert [rows[h] for h in (18, 19, 20)] == [ledger.OccurrenceState.SUCCEEDED] * 3
            assert all(e.delivery_count == 1 for e in sink.effects())
    finally:
        await env.shutdown()


async def test_a_failed_change_is_answered_and_the_schedule_keeps_running(
    tmp_path: Path,
) -> None:
    env = await start_time_skipping()
    try:
        async with faulty_stack(env, tmp_path, GATE_PLAN) as (acts, store, sink, queue):
            handle = await start_faults_schedule(env, sink, queue, DAY + timedelta(hours=12))

            async def update(call: Any) -> Any:
                # A transient fault retries on durable backoff timers: skip time meanwhile.
                task = asyncio.ensure_future(call)
                while not task.done():
                    await asyncio.wait({task}, timeout=0.5)
                    if not task.done():
                        await env.sleep(timedelta(minutes=1))
                return await task

            async def not_applied(call: Any, error: str) -> None:
                await wait_until_idle(handle)
                with pytest.raises(WorkflowUpdateFailedError) as failed:
                    await update(call)
                cause = failed.value.cause
                assert isinstance(cause, ApplicationError) and cause.type == "ChangeNotApplied"
                assert error in cause.message

            later = {**spec(sink), "revision": 2, "cutoverAt": "2026-12-02T00:00:00Z"}
            publish = ScheduleWorkflow.publish_revision_update
            await not_applied(handle.execute_update(publish, later), "LedgerUnavailable")
            for error in ("ScheduleNotFound", "ClaimLost", "LedgerUnavailable"):
                await not_applied(
                    handle.execute_update(ScheduleWorkflow.disable_update, DisableInput("x")), error
                )
            for error, attempts in (
                ("ScheduleNotFound", 1),
                ("ClaimLost", 1),
                ("LedgerUnavailable", LEDGER_RETRY.maximum_attempts),
            ):
                await wait_until_idle(handle)
                await handle.signal("disable", {"reason": "by signal"})
                deadline = asyncio.get_running_loop().time() + 60
                while acts.raised.attempts[(io.SET_GATE, error)] < attempts:
                    assert asyncio.get_running_loop().time() < deadline, acts.raised
                    await env.sleep(timedelta(minutes=1))  # skip the retry backoff
                    await asyncio.sleep(0.2)
                status = await eventually(
                    lambda: handle.query(ScheduleWorkflow.status),
                    lambda s, e=error: e in s.last_error,
                )
                assert status.gate is not None and not status.gate.disabled
            for error in ("ClaimLost", "LedgerUnavailable"):
                await not_applied(
                    handle.execute_update(ScheduleWorkflow.delete_update, DeleteInput("x")), error
                )
            # Every fault spent, the same changes now go through: the schedule kept running.
            await wait_until_idle(handle)
            assert (await update(handle.execute_update(publish, later))).accepted
            off = await update(
                handle.execute_update(ScheduleWorkflow.disable_update, DisableInput("x"))
            )
            assert off.changed and off.gate.disabled
            gone = await update(
                handle.execute_update(ScheduleWorkflow.delete_update, DeleteInput("done"))
            )
            assert gone.deleted
            final = await handle.result()
            assert final.deleted
            assert acts.raised.attempts == expected_attempts(GATE_PLAN)
            recorded = Counter(
                e.detail.split(": ")[1]
                for e in ledger.schedule_events(store, "faults")
                if e.kind == "ACTIVITY_REJECTED"
            )
            assert recorded == deterministic(GATE_PLAN)
    finally:
        await env.shutdown()


@pytest.mark.parametrize(
    ("call", "error"),
    [
        ("query_effect", "OccurrenceNotFound"),
        ("escalate", "CaseNotFound"),
        ("claim", "OccurrenceNotFound"),
    ],
)
async def test_reconciliation_activities_refuse_without_retry_and_record_it(
    tmp_path: Path, call: str, error: str
) -> None:
    """The occurrence-level activities a schedule run rarely reaches, called directly."""
    url = f"sqlite:///{tmp_path / 'ledger.sqlite3'}"
    upgrade(url)
    store = ledger.Ledger.from_url(url)
    metrics = AlmanacMetrics(CollectorRegistry())
    acts = AlmanacActivities(
        store, ActionRegistry.default(), identity="w", metrics=metrics, clock=SystemClock()
    )
    missing = "faults.r1.20261201T010000.f0"
    inputs: dict[str, Any] = {
        "query_effect": io.QueryEffectInput(missing, DAY),
        "escalate": io.EscalateInput(missing, "deadline", DAY),
        "claim": io.ClaimOccurrenceInput(
            missing,
            io.GateSnapshot("faults", 1, False, None, 0, 0, "default", DAY),
            DAY,
        ),
    }
    method = getattr(acts, call)
    with pytest.raises(ApplicationError) as refused:
        result = method(inputs[call])
        if asyncio.iscoroutine(result):
            await result
    assert (refused.value.type, refused.value.non_retryable) == (error, True)
    [event] = ledger.schedule_events(store, "faults")
    assert event.kind == "ACTIVITY_REJECTED" and error in event.detail
    store.dispose()
