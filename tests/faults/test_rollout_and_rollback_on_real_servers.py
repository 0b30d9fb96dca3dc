"""Issue 12's proof on the real servers: shadow, canary, a 5 % rollout, a rollback under a kill.

Real processes: a Temporal dev server, a throwaway PostgreSQL ledger, the sink, and two worker
pools of the production worker (``python -m worker``): ``v1`` (schedules and its alias's queue)
and ``v2`` (``--no-schedules``: its alias's queue only). Forty-one schedules run on the real clock:
``internal-noop`` (the ``noop`` action, every 5 s) and ``fleet-00`` … ``fleet-39`` (POST to the
sink; the three a 5 % rollout selects every 10 s, the others every 30 s). Gates start on ``v1``
(the alias of the pool that publishes them).

0. **Shadow**: two more schedules, published under a ``v1`` gate with four weeks (3 to 31 October
   2026: Sydney's spring-forward gap, London's fall-back fold) in the live ledger, as the live
   materializer writes them; ``almanac shadow run --alias v2`` over those weeks, then ``almanac
   shadow report`` → every occurrence matched, zero mismatches; and nothing live moved: every
   row of every live table (gates and their epochs, occurrences, slots, attempts, events) as it
   was, no effect at the sink, no occurrence workflow started.
1. **Canary**: ``almanac rollout v2 --schedule internal-noop`` → its occurrences run on ``v2``
   only: every attempt at the new epoch is the ``v2`` worker's, with alias ``v2``; the occurrence
   workflows start on ``<queue>.v2``, and only the ``v2`` worker ever picks up their tasks.
2. **5 %**: ``--dry-run`` then ``almanac rollout v2 --percent 5`` → the printed set is the one the
   documented rule gives (SHA-256, computed here), and exactly those gates (plus the canary) move;
   their next occurrences run on ``v2``, the others' stay on ``v1``.
3. **Rollback under a kill**: while a ``v2`` attempt is RUNNING (the sink holds the answer), the
   ``v2`` worker is SIGKILLed; once an occurrence is DUE and not started, ``almanac rollback --to
   v1 --all``; then a new ``v2`` worker starts (the pool finishes what had won dispatch).
   Expected: the requeued set equals the not-started occurrences at the switch (of what the
   switch sorted out, exactly those with no claim before its epoch; what it listed as not
   requeued had started), it holds every occurrence not started just before the command, and
   they run on ``v1``; every occurrence in flight at the rollback ends SUCCEEDED or
   UNKNOWN_EFFECT (reconciled or queued); nothing is left DUE; no SUCCEEDED occurrence gets
   another delivery or attempt; at most one effect per logical slot, and only for occurrences
   that succeeded (or whose effect is unknown); no ``v2`` claim at or after the rollback's epoch.
"""

from __future__ import annotations

import time
from datetime import UTC, datetime, timedelta
from pathlib import Path

import anyio
import pytest
from chaoskit import chaos_ledger_url
from faultkit import WorkerProcess, await_until, running_sink, server_address
from rolloutkit import (
    ACTION_TIMEOUT_SECONDS,
    Pools,
    details,
    dst_spec,
    every,
    expected_canary,
    http_spec,
    identities,
    live_tables,
    noop_spec,
    not_started,
    start_schedule,
    started_input,
    started_on,
    unsettled,
)
from stack import record_history
from temporal_env import start_dev_server
from temporalio.client import Client, WorkflowHistory
from temporalio.service import RPCError, RPCStatusCode
from temporalio.worker import Replayer

import ledger
from almanac.stack.sink import Sink
from ledger import Ledger, OccurrenceState
from ledger.rollout import switches
from timecontract import load_spec
from workflows import OccurrenceWorkflow, ScheduleWorkflow, schedule_workflow_id

pytestmark = [
    pytest.mark.anyio,
    pytest.mark.temporal,
    pytest.mark.postgres,
    pytest.mark.fault,
    pytest.mark.slow,
    pytest.mark.timeout(420),
]

S = OccurrenceState
NOOP = "internal-noop"
FLEET = [f"fleet-{n:02d}" for n in range(40)]
CANARY = expected_canary(FLEET, 5)
V1, V2A, V2B = "pool-v1", "pool-v2-a", "pool-v2-b"
SHADOWED = {
    # scheduleId: (zone, rule). Neither is in the 5 % a --percent 5 rollout selects.
    "shadow-sydney": ("Australia/Sydney", "FREQ=DAILY;BYHOUR=2,9;BYMINUTE=30"),  # gap 4 Oct
    "shadow-london": ("Europe/London", "FREQ=DAILY;BYHOUR=1,9;BYMINUTE=30"),  # fold 25 Oct
}
SHADOW_FROM, SHADOW_TO = datetime(2026, 10, 3, tzinfo=UTC), datetime(2026, 10, 31, tzinfo=UTC)
"""The four shadowed weeks: fixed instants (simulated, not lived), so no test reads the date."""
LIVE_AT = datetime(2026, 9, 1, tzinfo=UTC)
"""When the v1 build published and materialized the shadowed schedules (before the window)."""


async def test_canary_five_percent_and_rollback_under_a_kill(
    request: pytest.FixtureRequest, tmp_path: Path, task_queue: str
) -> None:
    assert len(CANARY) == 3  # the rules below give the canaries a shorter period
    url = chaos_ledger_url(request, tmp_path)
    assert url.startswith("postgresql"), "the proof runs on PostgreSQL"
    store = Ledger.from_url(url)
    env = await start_dev_server(dev_server_extra_args=["--sqlite-pragma", "journal_mode=wal"])
    pools: Pools | None = None
    began = time.monotonic()
    try:
        with running_sink() as sink:
            # The canary schedules' effects take 3 s to answer: attempts are RUNNING for a while.
            for schedule_id in sorted(CANARY):
                sink.add_fault(match=schedule_id, delay=3)
            pools = Pools(server_address(env.client), task_queue, url, tmp_path, tmp_path / "w.log")
            _, v2 = await _spawn_both(pools)
            await _shadow_four_weeks(env.client, pools, store, sink)
            await _canary_noop(env.client, pools, store, sink, task_queue)
            rollout = await _five_percent(pools, store)
            await _rollback_under_a_kill(env.client, pools, store, sink, v2, rollout)
            await _record_routed_schedule_history(env.client)
    finally:
        # Every worker the pools started, the replacement too, even when an assertion failed.
        for process in pools.spawned if pools is not None else []:
            process.stop()
        await env.shutdown()
        store.dispose()
    assert time.monotonic() - began < 400


async def _spawn_both(pools: Pools) -> tuple[WorkerProcess, WorkerProcess]:
    spawned: dict[str, WorkerProcess] = {}

    async def one(alias: str, identity: str, schedules: bool) -> None:
        spawned[alias] = await anyio.to_thread.run_sync(
            lambda: pools.spawn(alias, identity, schedules=schedules)
        )

    async with anyio.create_task_group() as group:
        group.start_soon(one, "v1", V1, True)
        group.start_soon(one, "v2", V2A, False)
    return spawned["v1"], spawned["v2"]


async def _shadow_four_weeks(client: Client, pools: Pools, store: Ledger, sink: Sink) -> None:
    """Phase 0: v2 shadows four weeks across two DST changes: 0 mismatches, nothing live moves."""
    for schedule_id, (zone, rule) in SHADOWED.items():
        # The live side, as v1 keeps it: published under a v1 gate, the window materialized
        # by the live materializer (a real-clock pool cannot live four weeks in a test).
        spec = load_spec(dst_spec(schedule_id, sink, zone, rule))
        ledger.publish_revision(store, spec, LIVE_AT, by=V1, implementation_alias="v1")
        ledger.materialize(store, spec, SHADOW_FROM, SHADOW_TO, LIVE_AT, by=V1)
    live = details(store, SHADOWED)
    count = {s: sum(d.occurrence.schedule_id == s for d in live.values()) for s in SHADOWED}
    assert count == {"shadow-sydney": 56, "shadow-london": 57}  # 28 days × 2, + a fold's second
    # The window crosses both changes: Sydney's 02:30 on 4 October does not exist (SKIP), and
    # London's 01:30 on 25 October happens twice (BOTH: 00:30Z in BST, then 01:30Z in GMT).
    on = {
        (d.occurrence.schedule_id, d.occurrence.fold, d.occurrence.state, d.occurrence.instant_utc)
        for d in live.values()
        if d.occurrence.nominal_local
        in (datetime(2026, 10, 4, 2, 30), datetime(2026, 10, 25, 1, 30))
    }
    assert on == {
        ("shadow-sydney", 0, S.SKIPPED_GAP, None),
        ("shadow-london", 0, S.PLANNED, datetime(2026, 10, 25, 0, 30, tzinfo=UTC)),
        ("shadow-london", 1, S.PLANNED, datetime(2026, 10, 25, 1, 30, tzinfo=UTC)),
    }
    before = live_tables(store)
    gates = {
        g.schedule_id: (g.implementation_alias, g.execution_epoch) for g in ledger.list_gates(store)
    }
    assert gates == {s: ("v1", gates[s][1]) for s in SHADOWED}
    assert sink.effects() == []
    window = ("--since", "2026-10-03T00:00:00Z", "--until", "2026-10-31T00:00:00Z")
    selected = [arg for s in SHADOWED for arg in ("--schedule", s)]
    ran = await anyio.to_thread.run_sync(
        lambda: pools.almanac("shadow", "run", "--alias", "v2", *selected, *window)
    )
    assert ran == [{"scheduleId": s, "records": count[s], "mismatches": 0} for s in SHADOWED]
    # The command exits 1 on any mismatch (Pools.almanac fails the test on that).
    report = await anyio.to_thread.run_sync(
        lambda: pools.almanac("shadow", "report", "--alias", "v2")
    )
    assert report["schedules"] == sorted(SHADOWED)
    assert (report["matched"], report["mismatches"]) == (len(live), 0), report
    assert report["onlyLive"]["count"] == report["onlyShadow"]["count"] == 0
    assert report["differing"]["count"] == 0
    # Nothing live touched: every row of every live table (gates with their alias and epoch,
    # occurrences, slots, attempts, events) as it was; no effect at the sink; and no occurrence
    # workflow started for any shadowed occurrence (describe is consistent, unlike a listing).
    assert live_tables(store) == before
    assert {
        g.schedule_id: (g.implementation_alias, g.execution_epoch) for g in ledger.list_gates(store)
    } == gates
    assert sink.effects() == []
    for occurrence_id in live:
        with pytest.raises(RPCError) as raised:
            await client.get_workflow_handle(occurrence_id).describe()
        assert raised.value.status is RPCStatusCode.NOT_FOUND, occurrence_id


async def _canary_noop(
    client: Client, pools: Pools, store: Ledger, sink: Sink, task_queue: str
) -> None:
    """Phase 1: one internal noop schedule moves to v2 and runs there only."""
    await start_schedule(client, task_queue, noop_spec(NOOP, every(5)))
    for schedule_id in FLEET:
        rule = every(10) if schedule_id in CANARY else every(30, offset=5)
        await start_schedule(client, task_queue, http_spec(schedule_id, sink, rule))
    # Before the rollout the schedule runs on v1 (the gate names the publishing pool's alias).
    await await_until(
        lambda: _succeeded_by(store, NOOP, "v1"),
        lambda n: n >= 1,
        timeout=60,
        what="internal-noop succeeds on v1",
    )
    output = await anyio.to_thread.run_sync(
        lambda: pools.almanac("rollout", "v2", "--schedule", NOOP, "--reason", "first canary")
    )
    [switch] = output["switches"]
    assert (switch["scheduleId"], switch["fromAlias"], switch["toAlias"]) == (NOOP, "v1", "v2")
    epoch = switch["epochAfter"]
    assert ledger.get_gate(store, NOOP).implementation_alias == "v2"

    def at_new_epoch() -> list[ledger.OccurrenceDetail]:
        return [
            d
            for d in details(store, [NOOP]).values()
            if any(a.execution_epoch == epoch for a in d.attempts)
        ]

    done = await await_until(
        at_new_epoch,
        lambda ds: sum(d.occurrence.state is S.SUCCEEDED for d in ds) >= 3,
        timeout=60,
        what="three internal-noop occurrences succeed after the rollout",
    )
    for d in done:
        assert {(a.worker_identity, a.implementation_alias) for a in d.attempts} == {(V2A, "v2")}, d
    # Temporal's side: started on the v2 queue; only the v2 worker took their tasks.
    for d in [d for d in done if d.occurrence.state is S.SUCCEEDED][:3]:
        history = await client.get_workflow_handle(d.occurrence.occurrence_id).fetch_history()
        assert started_on(history) == f"{task_queue}.v2"
        assert identities(history) == {V2A}
    # No v1 attempt on any occurrence released after the switch.
    moved_at = switches(store, [NOOP])[-1]["at_utc"]
    later = [
        d
        for d in details(store, [NOOP]).values()
        # A second's margin: the command reads its clock just before the switch commits.
        if d.occurrence.instant_utc is not None
        and d.occurrence.instant_utc > moved_at + timedelta(seconds=1)
    ]
    assert later and all(a.implementation_alias == "v2" for d in later for a in d.attempts)


def _succeeded_by(store: Ledger, schedule_id: str, alias: str) -> int:
    return sum(
        1
        for d in details(store, [schedule_id]).values()
        if d.occurrence.state is S.SUCCEEDED and d.attempts[-1].implementation_alias == alias
    )


async def _five_percent(pools: Pools, store: Ledger) -> dict[str, int]:
    """Phase 2: a deterministic 5 % moves exactly the printed set. Returns its epochs."""
    await await_until(
        lambda: {g.schedule_id for g in ledger.list_gates(store)},
        lambda ids: ids >= {NOOP, *FLEET},
        timeout=60,
        what="every schedule has a gate",
    )
    before = {g.schedule_id: g for g in ledger.list_gates(store)}
    dry = await anyio.to_thread.run_sync(
        lambda: pools.almanac("rollout", "v2", "--percent", "5", "--dry-run")
    )
    assert dry["dryRun"] and set(dry["moving"]) == CANARY
    assert {g.schedule_id: g for g in ledger.list_gates(store)} == before  # nothing moved
    output = await anyio.to_thread.run_sync(
        lambda: pools.almanac("rollout", "v2", "--percent", "5", "--reason", "5 % canary")
    )
    assert set(output["selected"]) == set(output["moving"]) == CANARY
    assert {s["scheduleId"] for s in output["switches"] if s["changed"]} == CANARY
    after = {g.schedule_id: g for g in ledger.list_gates(store)}
    on_v2 = {s for s, g in after.items() if g.implementation_alias == "v2"}
    assert on_v2 == CANARY | {NOOP}
    for schedule_id, gate in after.items():
        moved = schedule_id in CANARY
        assert gate.execution_epoch == before[schedule_id].execution_epoch + moved, schedule_id
    again = await anyio.to_thread.run_sync(
        lambda: pools.almanac("rollout", "v2", "--percent", "5", "--reason", "5 % canary")
    )
    assert set(again["selected"]) == CANARY and again["moving"] == []  # idempotent
    assert {g.schedule_id: g.execution_epoch for g in ledger.list_gates(store)} == {
        s: g.execution_epoch for s, g in after.items()
    }
    epochs = {s: after[s].execution_epoch for s in CANARY}
    # The moved schedules' next occurrences run on v2; the others' stay on v1.
    await await_until(
        lambda: {
            s
            for s in CANARY
            for d in details(store, [s]).values()
            if d.occurrence.state is S.SUCCEEDED
            and d.attempts[-1].execution_epoch == epochs[s]
            and d.attempts[-1].worker_identity == V2A
        },
        lambda ran: ran == CANARY,
        timeout=60,
        what="each moved schedule succeeds on v2",
    )
    stayed = details(store, set(FLEET) - CANARY)
    assert all(a.implementation_alias == "v1" for d in stayed.values() for a in d.attempts)
    return epochs


async def _rollback_under_a_kill(
    client: Client,
    pools: Pools,
    store: Ledger,
    sink: Sink,
    v2: WorkerProcess,
    epochs: dict[str, int],
) -> None:
    """Phase 3: rollback --all with the v2 worker SIGKILLed mid-attempt, then a new v2 worker."""
    on_v2 = CANARY | {NOOP}

    def running_on_v2() -> list[str]:
        return [
            oid
            for oid, d in details(store, CANARY).items()
            if d.occurrence.state is S.RUNNING and d.attempts[-1].worker_identity == V2A
        ]

    await await_until(running_on_v2, bool, timeout=60, what="a v2 attempt is RUNNING")
    v2.kill()
    # Nothing serves the v2 queue now: what the schedules release for v2 stays DUE, unclaimed.
    await await_until(
        lambda: not_started(store, on_v2), bool, timeout=60, what="a v2 occurrence is DUE"
    )
    before = details(store, [NOOP, *FLEET])
    waiting = not_started(store, on_v2)
    succeeded = {oid for oid, d in before.items() if d.occurrence.state is S.SUCCEEDED}
    deliveries = {e.idempotency_key: e.delivery_count for e in sink.effects()}
    output = await anyio.to_thread.run_sync(
        lambda: pools.almanac("rollback", "--to", "v1", "--all", "--reason", "v2 under suspicion")
    )
    await anyio.to_thread.run_sync(lambda: pools.spawn("v2", V2B, schedules=False))
    moved = {s["scheduleId"]: s for s in output["switches"] if s["changed"]}
    assert set(moved) == on_v2
    assert all(g.implementation_alias == "v1" for g in ledger.list_gates(store))
    rollback_epochs = {s: m["epochAfter"] for s, m in moved.items()}
    requeued = {oid for s in moved.values() for oid in s["requeued"]}
    listed = {n["occurrenceId"]: n["state"] for s in moved.values() for n in s["notRequeued"]}
    in_flight = {oid for oid, state in listed.items() if state in ("DISPATCHING", "RUNNING")}
    assert not requeued & listed.keys(), requeued & listed.keys()
    assert in_flight, "the killed attempt was in flight at the rollback"
    # The requeued set is exactly what had not started at the switch. The schedules kept
    # releasing occurrences while the command started, so the set is read off the switch's own
    # sorting (every in-flight occurrence at its commit: requeued or listed), each checked
    # against the ledger: started means claimed under an epoch before the rollback's, which
    # only a claim before the switch can be (a later one is refused).
    claimed_before = {
        oid
        for oid, d in details(store, on_v2).items()
        if any(a.execution_epoch < rollback_epochs[d.occurrence.schedule_id] for a in d.attempts)
    }
    assert requeued == (requeued | listed.keys()) - claimed_before, (requeued, claimed_before)
    assert listed.keys() <= claimed_before, listed.keys() - claimed_before
    assert set(listed.values()) <= {"DISPATCHING", "RUNNING", "RETRY_WAIT", "UNKNOWN_EFFECT"}
    # What was not started just before the command was still not started at its commit
    # (nothing served the v2 queue, and the default overlap policy skips nothing).
    assert waiting <= requeued, (waiting - requeued, requeued)
    assert set(output["started"]) <= requeued
    # The ledger's requeue events are the printed ones, each naming its rollback.
    marked = {
        e.occurrence_id
        for d in details(store, on_v2).values()
        for e in d.events
        if e.from_state == e.to_state == S.DUE and "rollback #" in e.why
    }
    assert marked == requeued
    until = max(w["at_utc"] for w in switches(store, sorted(on_v2))) + timedelta(seconds=1)
    await await_until(
        lambda: unsettled(store, on_v2, until),
        lambda left: not left,
        timeout=120,
        what="every occurrence up to the rollback is settled",
    )
    after = details(store, [NOOP, *FLEET])
    for oid in requeued:
        d = after[oid]
        trail = [e.to_state for e in d.events]
        mark = next(i for i, e in enumerate(d.events) if "rollback #" in e.why)
        assert S.DISPATCHING not in trail[:mark], (oid, trail)  # not started before the requeue
        assert d.occurrence.state is S.SUCCEEDED, oid
        schedule_id = d.occurrence.schedule_id
        assert {(a.implementation_alias, a.execution_epoch) for a in d.attempts} == {
            ("v1", rollback_epochs[schedule_id])
        }, oid
    # Requeued runs start on v1's queue with the limits their schedule gave them (a fix).
    for oid in sorted(requeued)[:: max(1, len(requeued) // 4)]:
        history = await client.get_workflow_handle(oid).fetch_history()
        assert started_on(history) == f"{pools.task_queue}.v1", oid
        assert started_input(history).action_timeout_seconds == ACTION_TIMEOUT_SECONDS, oid
    for oid in in_flight:
        d = after[oid]
        assert d.occurrence.state in (S.SUCCEEDED, S.UNKNOWN_EFFECT), (oid, d.occurrence.state)
    # No v2 claim at or after a rollback's epoch; no SUCCEEDED occurrence touched again.
    for oid, d in after.items():
        for attempt in d.attempts:
            if attempt.implementation_alias == "v2":
                assert attempt.execution_epoch < rollback_epochs[d.occurrence.schedule_id], oid
        if oid in succeeded:
            assert d.attempts == before[oid].attempts, oid
    effects = {e.idempotency_key: e for e in sink.effects() if e.idempotency_key in after}
    for key, count in deliveries.items():
        if key in succeeded:
            assert effects[key].delivery_count == count, f"{key} was re-sent after SUCCEEDED"
    # At most one effect per logical slot, and only for occurrences that may have one.
    slots = [after[key].occurrence.logical_slot_id for key in effects]
    assert len(slots) == len(set(slots))
    window = [
        after[key].occurrence
        for key in effects
        if after[key].occurrence.instant_utc is not None
        and after[key].occurrence.instant_utc <= until
    ]
    assert window and all(o.state in (S.SUCCEEDED, S.UNKNOWN_EFFECT) for o in window)
    assert epochs  # the rollout's epochs were bumped again by the rollback
    assert all(rollback_epochs[s] == epochs[s] + 1 for s in CANARY)


async def _record_routed_schedule_history(client: Client) -> None:
    """The canary schedule's run (routed to v1, then v2, then v1 again) replays; record it."""
    handle = client.get_workflow_handle(schedule_workflow_id(NOOP))
    await handle.terminate("the proof is over")
    history = await handle.fetch_history()
    replayer = Replayer(workflows=[ScheduleWorkflow, OccurrenceWorkflow])
    result = await replayer.replay_workflow(
        WorkflowHistory.from_json(handle.id, history.to_json()), raise_on_replay_failure=True
    )
    assert result.replay_failure is None
    await record_history(client, handle.id, "schedule-routed-by-alias")
