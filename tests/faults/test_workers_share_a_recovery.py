"""Two worker processes share one recovery: each does work, nothing runs twice.

The rules (``almanac.gates.work_shares``, also checked by ``bench/scale.py --workers K``) are
first tried on fabricated facts, one breach at a time, so each rule is seen to fire.

Then real processes: a headless dev server, two ``python -m worker`` processes (``share-a``,
``share-b``) on one task queue, one ledger (PostgreSQL when server binaries exist, else a SQLite
file) and the sink. The ledger is left as the fleet scenario leaves it (``almanac.gates.fleet``):
at T0 = now − 7 days, ``SCHEDULES`` daily schedules (first instant T0 + 12 h, ``CATCH_UP_BOUNDED``
with ``maxCatchUp`` 2) published and 14 days materialized. Both workers start — both run the
start-up catch-up, racing through the gate lock — and once both poll, the schedule workflows are
started. By the rule each schedule runs its 2 latest missed days and expires the 5 earlier ones.

Expected: 2 SUCCEEDED and 5 MISFIRE_EXPIRED per schedule; both workers claimed attempts; every
SUCCEEDED occurrence has one successful attempt and one effect at the sink, no key was delivered
more often than attempted, no logical slot dispatched twice. (The in-process twin of this, two
workers and two schedule runs racing on the simulated calendar, is
``test_two_materializers_at_once.py``.)
"""

from __future__ import annotations

from collections import Counter
from datetime import UTC, datetime
from functools import partial
from pathlib import Path

import anyio
import pytest
from chaoskit import chaos_ledger_url
from faultkit import (
    WorkerProcess,
    await_until,
    first_poll,
    running_sink,
    server_address,
    spawn_worker,
    worker_env,
)
from temporal_env import start_dev_server

import ledger
from almanac.gates import fleet
from almanac.gates.work_shares import AttemptFact, read_shares, violations
from ledger import Ledger, OccurrenceState
from timecontract import load_spec
from workflows import ScheduleInput, schedule_workflow_id

SCHEDULES = 8
"""16 caught-up runs, each an occurrence workflow whose first task goes to either worker."""
WORKERS = ("share-a", "share-b")


def fact(occurrence: str, worker: str, outcome: str | None = "SUCCEEDED") -> AttemptFact:
    """An attempt of ``occurrence`` (its own logical slot ``slot-<occurrence>``)."""
    return AttemptFact(occurrence, ("s", f"slot-{occurrence}"), worker, outcome)


CLEAN = [fact("o1", "a"), fact("o2", "b"), fact("o3", "a", "LOST"), fact("o3", "b")]
"""Three occurrences on two workers; o3 was lost by ``a`` and redelivered by ``b``."""


def test_a_clean_share_breaks_no_rule() -> None:
    assert violations(CLEAN, {"o1", "o2", "o3"}, {"o1": 1, "o2": 1, "o3": 2}, ["a", "b"]) == []


@pytest.mark.parametrize(
    ("attempts", "succeeded", "deliveries", "breach"),
    [
        # A third worker that never claimed anything.
        (CLEAN, {"o1", "o2", "o3"}, {"o1": 1, "o2": 1, "o3": 2}, "1 of 3 workers claimed no"),
        # A SUCCEEDED occurrence whose effect never reached the sink.
        (CLEAN, {"o1", "o2", "o3"}, {"o1": 1, "o3": 2}, "1 SUCCEEDED occurrences have no effect"),
        # An effect for an occurrence that is not SUCCEEDED.
        (CLEAN, {"o1", "o3"}, {"o1": 1, "o2": 1, "o3": 2}, "1 effects for occurrences not"),
        # Two successful attempts of one occurrence, on two workers.
        (
            [*CLEAN, fact("o1", "b")],
            {"o1", "o2", "o3"},
            {"o1": 2, "o2": 1, "o3": 2},
            "1 occurrences with two SUCCEEDED attempts: ['o1']",
        ),
        # One attempt, two deliveries: an action posted twice.
        (CLEAN, {"o1", "o2", "o3"}, {"o1": 2, "o2": 1, "o3": 2}, "o1 (2 > 1)"),
        # Two occurrences of one logical slot both dispatched.
        (
            [*CLEAN, AttemptFact("o4", ("s", "slot-o1"), "b", "FAILED")],
            {"o1", "o2", "o3"},
            {"o1": 1, "o2": 1, "o3": 2},
            "1 logical slots dispatched twice: ['s/slot-o1']",
        ),
    ],
)
def test_each_rule_reports_its_breach(
    attempts: list[AttemptFact], succeeded: set[str], deliveries: dict[str, int], breach: str
) -> None:
    workers = ["a", "b", "c"] if "workers claimed" in breach else ["a", "b"]
    found = violations(attempts, succeeded, deliveries, workers)
    assert len(found) == 1 and breach in found[0], found


def left_down(store: Ledger, sink_url: str, ids: list[str]) -> dict[str, dict[str, object]]:
    """The fleet scenario's ledger at T0 = now − 7 days: published, 14 days materialized."""
    t0 = datetime.now(UTC).replace(microsecond=0) - fleet.OUTAGE
    datas: dict[str, dict[str, object]] = {}
    for schedule_id in ids:
        datas[schedule_id] = fleet.spec_data(schedule_id, sink_url, t0)
        spec = load_spec(datas[schedule_id])
        ledger.publish_revision(store, spec, t0, by="test")
        ledger.materialize(store, spec, t0, t0 + fleet.HORIZON, t0, by="test")
    return datas


@pytest.mark.anyio
@pytest.mark.temporal
@pytest.mark.fault
@pytest.mark.slow
@pytest.mark.timeout(420)
async def test_two_worker_processes_share_a_recovery_and_run_nothing_twice(
    request: pytest.FixtureRequest, tmp_path: Path, task_queue: str
) -> None:
    url = chaos_ledger_url(request, tmp_path)
    store = Ledger.from_url(url)
    env = await start_dev_server()
    ids = [f"share-{n:02d}" for n in range(SCHEDULES)]
    workers: list[WorkerProcess] = []
    try:
        with running_sink() as sink:
            datas = left_down(store, sink.url, ids)
            recovery_began = datetime.now(UTC)
            wenv = worker_env(server_address(env.client), task_queue, url, tmp_path)
            for identity in WORKERS:
                spawn = partial(spawn_worker, wenv, tmp_path / f"{identity}.log", identity)
                workers.append(await anyio.to_thread.run_sync(partial(spawn, module="worker")))
            for identity in WORKERS:
                await first_poll(env.client, task_queue, identity)
            for schedule_id in ids:
                await env.client.start_workflow(
                    "AlmanacSchedule",
                    ScheduleInput(schedule_id=schedule_id, initial_spec=datas[schedule_id]),
                    id=schedule_workflow_id(schedule_id),
                    task_queue=task_queue,
                )

            def overdue() -> Counter[OccurrenceState]:
                return Counter(
                    o.state
                    for s in ids
                    for o in ledger.list_occurrences(store, s, to_utc=recovery_began)
                )

            states = await await_until(
                overdue,
                lambda c: c[OccurrenceState.SUCCEEDED] == 2 * SCHEDULES,
                timeout=300,
                what="every caught-up occurrence succeeds",
            )
            deliveries = {e.idempotency_key: e.delivery_count for e in sink.effects()}
            shares = read_shares(store, "share-", deliveries, WORKERS, before=recovery_began)
    finally:
        for w in workers:
            w.stop()
        await env.shutdown()
        store.dispose()

    assert states == {
        OccurrenceState.SUCCEEDED: 2 * SCHEDULES,
        OccurrenceState.MISFIRE_EXPIRED: 5 * SCHEDULES,
    }
    assert shares.violations() == [], shares.by_worker()
    assert len(shares.succeeded) == 2 * SCHEDULES
