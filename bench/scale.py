"""Scale: N daily schedules on one dev server + PostgreSQL, then a simulated 7-day outage.

    .venv/bin/python bench/scale.py [--schedules 1000] [--ledger postgresql|sqlite] [--json]
                                    [--before REF] [--workers K] [--no-bytecode] [--profile P]
    .venv/bin/python bench/scale.py --schedules 10000        # the issue's size (not run in CI)

Stack: a headless dev server (``bench/_stack.py``), a throwaway PostgreSQL cluster on the local
server binaries (``tests/ledger/ledger_pg.py``, as the ledger tests start it; ``--ledger sqlite``
for a SQLite file), the sink, and one ``python -m worker`` process (the production worker).

How time is moved (no clock is faked inside Temporal or the worker): the outage is placed in the
past through the ledger's injected clock. At ``T0 = now − 7 days`` (the ``now_utc`` argument of
every ledger call) the bench publishes N daily schedules (``FREQ=DAILY``, first instant T0 + 12 h,
``CATCH_UP_BOUNDED`` with ``maxCatchUp`` 2, cutover T0) and materializes each one's 14-day horizon
— the state a ledger is in when its workers stopped at T0. Then the production worker starts, on
the real clock, and the N schedule workflows are started (what ``almanac apply`` does): each
materializes from its high-water mark to now + 14 days and releases its overdue set, in which the
misfire policy runs the most recent 2 of the 7 missed days and expires 5.

Phases timed (wall seconds):

- ``publish``: N ``publish_revision`` calls (ledger only);
- ``materialize``: N 14-day horizons at T0 (ledger only);
- ``materialized`` (the seed's gate, "completion of materialization within five minutes after
  fault recovery"): from the worker's launch (the scheduler coming back: its start-up, and so its
  catch-up of missed occurrences, ``almanac.catch_up``, included; the N schedule workflows are
  started right after the launch) until every schedule's horizon reaches
  now + 13 days (re-materialized) and no occurrence whose instant passed is PLANNED (each decided:
  released to run within the catch-up bound, or MISFIRE_EXPIRED); with the worker and server CPU
  spent until then;
- ``first run``: until the first caught-up occurrence is SUCCEEDED;
- ``recovery`` (end to end): until, moreover, none is DUE, DISPATCHING, RUNNING or RETRY_WAIT —
  every caught-up occurrence has run (``--until materialized`` stops at the first milestone);
- ``floor`` (after the recovery, on the same server and sink): as many bare workflows with one
  activity (``bench/_bare.py``) as occurrences were caught up, from their worker's launch until
  all completed; ``recovery / floor`` is the end-to-end figure's ratio to it (``--no-floor``
  skips it).

Also: worker RSS (MiB) when idle (a worker of the same tree polling an empty ledger's queue, read
once it polls and its RSS settles), at the materialized milestone, after the recovery (the steady
state: no occurrence in flight, the schedules' instances cached up to the cache size) and at its
peak (``VmHWM``), the growth per schedule (over K idle bases with ``--workers K``; ``--keep`` also
writes the RSS sampled every second, ``rss.txt``), worker CPU seconds since its launch (imports
included) and server CPU seconds over the recovery (the worker's split by thread: the event loop,
the SDK core's Rust threads, the synchronous activities' pool), and the one-minute load average;
runs per second and the cores the workers and the server used over the recovery (CPU seconds ÷
recovery seconds). ``--workers K`` runs K worker processes on the task queue (CPU and RSS summed,
each one's CPU listed; the thread split is the first one's). After an end-to-end run the bench
checks the work shares (``almanac.gates.work_shares``, attempts per worker identity): every worker
claimed attempts, every caught-up SUCCEEDED occurrence has one successful attempt and one effect at
the sink, no key was delivered more often than attempted, no logical slot dispatched twice; a
violation is printed and the bench exits 1. ``--before REF`` first runs the whole scenario with the
worker of git revision REF (its own database and dev server), then with this tree's. The issue's
aims: ≤ 60 s for 1,000 and ≤ 300 s for 10,000 (the seed's gate).
"""

from __future__ import annotations

import argparse
import asyncio
import ctypes.util
import json
import os
import shutil
import socket
import sys
import tempfile
import time
import uuid
from collections import Counter
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from temporalio.client import Client

import ledger
from almanac.gates import fleet, work_shares
from almanac.stack.sink import Sink
from bench import _stack, history_anatomy
from bench._bare import BareWorkflow, PostInput
from bench._counted_worker import Counts, new_counts_file, read_counts
from ledger.migrate import upgrade
from timecontract import load_spec
from workflows import ScheduleInput, schedule_workflow_id

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "tests" / "ledger"))

OUTAGE, HORIZON = fleet.OUTAGE, fleet.HORIZON
WAITERS = 100
"""The floor's concurrent waits for a workflow's result."""
spec_data, progress = fleet.spec_data, fleet.progress


async def run(
    args: argparse.Namespace, url: str, folder: Path, tree: Path = _stack.ROOT
) -> dict[str, float]:
    """Everything after the ledger exists, the worker from ``tree``: returns the figures."""
    store = ledger.Ledger.from_url(url)
    n = args.schedules
    prefix = f"scale-{uuid.uuid4().hex[:6]}-"
    ids = [f"{prefix}{i:05d}" for i in range(n)]
    figures: dict[str, float] = {"schedules": float(n)}
    with _stack.dev_server(folder) as server, Sink() as sink:
        t0 = datetime.now(UTC).replace(microsecond=0) - OUTAGE
        specs = [load_spec(spec_data(s, sink.url, t0)) for s in ids]
        began = time.monotonic()
        for spec in specs:
            ledger.publish_revision(store, spec, t0, by="bench")
        figures["publish s"] = time.monotonic() - began
        began = time.monotonic()
        for spec in specs:
            ledger.materialize(store, spec, t0, t0 + HORIZON, t0, by="bench")
        figures["materialize s"] = time.monotonic() - began
        print(
            f"published {figures['publish s']:.1f} s, materialized {figures['materialize s']:.1f} s"
        )
        queue = f"scale-{uuid.uuid4().hex[:6]}"
        env = _stack.almanac_worker_env(server.address, queue, url, folder / "worker")
        module = "worker"
        if args.profile:
            env, module = profiled(env, Path(args.profile).resolve())
        # --anatomy: each worker counts its ledger transactions, in all and by activity
        # (bench/_counted_worker.py, bench/_anatomy_worker.py).
        script = _stack.ROOT / "bench" / "_anatomy_worker.py" if args.anatomy else None
        by_activity = [folder / f"worker{i}.by-activity.json" for i in range(args.workers)]
        txn_files = [
            new_counts_file(folder / f"worker{i}.transactions") for i in range(args.workers)
        ]
        # Idle RSS: a worker of the same tree on an empty ledger and queue, once it polls.
        idle_folder = folder / "idle"
        idle_folder.mkdir()
        idle_url = f"sqlite:///{idle_folder / 'idle.sqlite3'}"
        idle_env = _stack.almanac_worker_env(server.address, f"idle-{queue}", idle_url, idle_folder)
        if args.profile:  # profiled alike, its output kept apart from the run's
            idle_env, _ = profiled(idle_env, idle_folder / "profile")
        idle = _stack.WorkerProcess(
            tree,
            idle_env,
            module=module,
            log=folder / "idle-worker.log",
            args=args.worker_args,
        )
        idle_rss = await settled_rss(idle, folder / "idle-worker.log")
        idle.stop()
        # Timed from the workers' launch, the scheduler coming back (start-up included: a
        # worker decides missed occurrences before it polls, ``almanac.catch_up``).
        cpu_s = _stack.cpu_seconds(server.pid)
        began = time.monotonic()
        now = datetime.now(UTC)
        workers = [
            _stack.WorkerProcess(
                tree,
                {
                    **env,
                    "BENCH_TXN_COUNTS": str(txn_files[i]),
                    "BENCH_TXN_BY_ACTIVITY": str(by_activity[i]),
                },
                module=module,
                script=script,
                log=folder / f"worker{i}.log",
                args=args.worker_args,
            )
            for i in range(args.workers)
        ]
        worker = workers[0]
        try:
            figures["load before"] = os.getloadavg()[0]
            client = await Client.connect(server.address)

            async def start(schedule_id: str, data: dict[str, Any]) -> None:
                await client.start_workflow(
                    "AlmanacSchedule",
                    ScheduleInput(schedule_id=schedule_id, initial_spec=data),
                    id=schedule_workflow_id(schedule_id),
                    task_queue=queue,
                )

            datas = [spec_data(s, sink.url, t0) for s in ids]
            for chunk in range(0, n, 50):
                await asyncio.gather(
                    *(
                        start(s, d)
                        for s, d in zip(
                            ids[chunk : chunk + 50], datas[chunk : chunk + 50], strict=True
                        )
                    )
                )
            figures["start all s"] = time.monotonic() - began
            last_print = 0.0
            timeline: list[tuple[float, float]] = []
            while True:
                reading = progress(store, prefix, now)
                elapsed = time.monotonic() - began
                if "first run s" not in figures and reading.succeeded:
                    figures["first run s"] = elapsed
                rss = sum(_stack.rss_mib(w.pid) for w in workers)
                timeline.append((elapsed, rss))
                if "materialized s" not in figures and reading.materialized(n):
                    figures["materialized s"] = elapsed
                    figures["worker RSS at materialized MiB"] = rss
                    figures["worker CPU s to materialized"] = sum(
                        _stack.cpu_seconds(w.pid) for w in workers
                    )
                    figures["server CPU s to materialized"] = _stack.cpu_seconds(server.pid) - cpu_s
                    if args.anatomy:
                        figures["ledger txns to materialized"] = transactions(txn_files).begins
                stop = reading.materialized(n) if args.until == "materialized" else False
                if stop or reading.recovered(n):
                    break
                if elapsed - last_print > 10:
                    print(
                        f"  {elapsed:.0f} s: {reading.planned_overdue} passed undecided, "
                        f"{reading.open_overdue} not final, {reading.succeeded} succeeded, "
                        f"{reading.horizons}/{n} horizons, worker RSS {rss:.0f} MiB"
                    )
                    last_print = elapsed
                if elapsed > args.timeout or any(w.process.poll() is not None for w in workers):
                    raise SystemExit(f"not done after {elapsed:.0f} s: {reading}")
                await asyncio.sleep(1.0)
            figures["recovery s"] = time.monotonic() - began
            (folder / "rss.txt").write_text("".join(f"{t:.1f} {m:.1f}\n" for t, m in timeline))
            figures["worker CPU s"] = sum(_stack.cpu_seconds(w.pid) for w in workers)
            if args.anatomy:
                counted = transactions(txn_files)
                figures["ledger txns begun"] = counted.begins
                figures["ledger txns committed"] = counted.commits
                figures["ledger txns rolled back"] = counted.rollbacks
            if len(workers) > 1:
                for i, w in enumerate(workers):
                    figures[f"  worker {i} CPU s"] = _stack.cpu_seconds(w.pid)
            figures["server CPU s"] = _stack.cpu_seconds(server.pid) - cpu_s
            figures["worker CPU ms/schedule"] = 1000 * figures["worker CPU s"] / n
            for kind, seconds in _stack.thread_cpu_seconds(worker.pid).items():
                figures[f"  of which {kind} thread(s) s"] = seconds
            figures["worker RSS MiB"] = sum(_stack.rss_mib(w.pid) for w in workers)
            figures["worker RSS peak MiB"] = sum(_stack.rss_mib(w.pid, "VmHWM") for w in workers)
            figures["worker RSS idle MiB"] = idle_rss
            # Each worker process holds its own idle base.
            figures["worker RSS growth KiB/schedule"] = (
                1024 * (figures["worker RSS MiB"] - len(workers) * idle_rss) / n
            )
            figures["load after"] = os.getloadavg()[0]
            counts: dict[str, int] = {}
            for s in ids:
                for state, k in ledger.counts_by_state(store, s).items():
                    counts[state.value] = counts.get(state.value, 0) + k
            print("states:", {k: v for k, v in counts.items() if v})
            figures["succeeded"] = float(counts.get("SUCCEEDED", 0))
            figures["expired"] = float(counts.get("MISFIRE_EXPIRED", 0))
            figures["runs/s"] = figures["succeeded"] / figures["recovery s"]
            figures["worker cores"] = figures["worker CPU s"] / figures["recovery s"]
            figures["server cores"] = figures["server CPU s"] / figures["recovery s"]
            if args.until == "recovered":
                figures |= shares(store, prefix, now, sink, workers)
        finally:
            for w in workers:
                w.stop()
            store.dispose()
        bare_queue = f"bare-{uuid.uuid4().hex[:6]}"
        if args.until == "recovered" and args.floor:
            runs = int(figures["succeeded"])
            figures |= await bare_floor(server, sink, folder, runs, args.timeout, bare_queue)
            figures["worker CPU ms/run"] = 1000 * figures["worker CPU s"] / runs
            figures["server CPU ms/run"] = 1000 * figures["server CPU s"] / runs
            figures["recovery / floor"] = figures["recovery s"] / figures["floor s"]
        if args.anatomy:
            await anatomy(server, (queue, bare_queue), figures, folder, by_activity)
    return figures


def transactions(files: list[Path]) -> Counts:
    """The ledger transactions the workers counted so far, summed."""
    total = Counts(0, 0, 0)
    for path in files:
        counted = read_counts(path)
        total = Counts(
            total.begins + counted.begins,
            total.commits + counted.commits,
            total.rollbacks + counted.rollbacks,
        )
    return total


async def anatomy(
    server: _stack.DevServer,
    queues: tuple[str, str],
    figures: dict[str, float],
    folder: Path,
    by_activity: list[Path],
) -> None:
    """Count the run's histories (``bench/history_anatomy.py``) and print them per caught-up run.

    ``queues``: the workers' task queue and the floor's. Almanac: every workflow on the workers'
    queue (the schedules and their occurrence children), divided by the caught-up runs
    (SUCCEEDED); the floor: the bare workflows, one each. Ledger transactions: the workers'
    counts over the whole run (start-up catch-up, every wake-up, every occurrence), then by what
    began them (``bench/_anatomy_worker.py``) against the executions the histories record.
    Writes ``anatomy.json`` in ``folder``.
    """
    client = await Client.connect(server.address)
    found = await history_anatomy.count(client, f"TaskQueue = '{queues[0]}'")
    floor = await history_anatomy.count(client, f"TaskQueue = '{queues[1]}'")
    history_anatomy.print_table(found | floor)
    runs = figures["succeeded"]
    columns: dict[str, dict[str, float]] = {k: a.per(runs) for k, a in found.items()}
    columns["almanac"] = {
        name: sum(c[name] for c in columns.values()) for name in next(iter(columns.values()))
    } | {"ledger transactions": figures.get("ledger txns begun", float("nan")) / runs}
    for kind, a in floor.items():
        columns[f"floor {kind}"] = a.per(a.workflows) | {"ledger transactions": 0.0}
    print(f"\n{'per caught-up run':>36}" + "".join(f"{k:>22}" for k in columns))
    for name in columns["almanac"]:
        print(f"{name:>36}" + "".join(f"{c.get(name, 0.0):>22,.2f}" for c in columns.values()))
    begun: Counter[str] = Counter()
    calls: Counter[str] = Counter()
    for path in by_activity:
        if path.exists():
            counted = json.loads(path.read_text())
            begun.update(counted["activity"])
            calls.update(counted["call"])
    executed: Counter[str] = Counter()
    for a in found.values():
        executed.update(a.activities)
        executed["local activities"] += a.markers["core_local_activity"]
    print(
        f"\n{'ledger transactions begun in':>60}{'total':>8}{'runs of it':>12}{'per run of it':>15}"
        f"{'per caught-up run':>19}"
    )
    for where, n in begun.most_common():
        of = executed[where] or executed["local activities"] * where.startswith("local ")
        print(
            f"{where:>60}{n:>8,}{of:>12,}{n / of if of else float('nan'):>15.2f}{n / runs:>19.2f}"
        )
        for call, k in calls.most_common():
            if call.startswith(f"{where} > "):
                print(
                    f"{call.split(' > ')[1]:>60}{k:>8,}{'':>12}"
                    f"{k / of if of else float('nan'):>15.2f}{k / runs:>19.2f}"
                )
    every: dict[str, Any] = {"runs": runs, "per caught-up run": columns, "begun": begun}
    every["begun by call"] = calls
    every["histories"] = {k: a.as_json() for k, a in (found | floor).items()}
    (folder / "anatomy.json").write_text(json.dumps(every, indent=1))


async def settled_rss(worker: _stack.WorkerProcess, log: Path, deadline: float = 60.0) -> float:
    """The RSS (MiB) of a worker once it polls: its start line logged, then two equal readings.

    Equal: within 1 MiB, 2 s apart. A fixed wait reads a worker still importing on a busy machine.
    """
    began = time.monotonic()
    last = float("nan")
    while time.monotonic() - began < deadline:
        await asyncio.sleep(2.0)
        if worker.process.poll() is not None:
            raise SystemExit(f"the idle worker exited: see {log}")
        if "task queues" not in log.read_text(errors="replace"):
            continue
        now = _stack.rss_mib(worker.pid)
        if abs(now - last) < 1.0:
            return now
        last = now
    raise SystemExit(f"the idle worker did not settle in {deadline:.0f} s: see {log}")


def shares(
    store: ledger.Ledger,
    prefix: str,
    now: datetime,
    sink: Sink,
    workers: list[_stack.WorkerProcess],
) -> dict[str, float]:
    """Attempts per worker, and the verdict that nothing ran twice (``almanac.gates.work_shares``).

    Every worker must have claimed an attempt; every caught-up SUCCEEDED occurrence has one effect
    at the sink and one successful attempt. A broken rule is printed and counted in
    ``violations``, which makes the bench exit 1.
    """
    host = socket.gethostname()
    identities = [f"almanac-worker@{host}:{w.pid}" for w in workers]  # default_identity
    deliveries = {e.idempotency_key: e.delivery_count for e in sink.effects()}
    found = work_shares.read_shares(store, prefix, deliveries, identities, before=now)
    figures: dict[str, float] = {}
    claimed = found.by_worker()
    for i, identity in enumerate(identities):
        figures[f"  attempts by worker {i}"] = float(claimed.pop(identity))
    figures["  attempts by others"] = float(sum(claimed.values()))
    figures["retry attempts"] = float(
        len(found.attempts) - len({a.occurrence_id for a in found.attempts})
    )
    problems = found.violations()
    for line in problems:
        print(f"VIOLATION: {line}")
    print(
        f"shares: {len(found.attempts)} attempts by {len(identities)} workers "
        f"({[int(v) for k, v in figures.items() if k.startswith('  attempts by worker')]}), "
        f"{len(found.deliveries)} effects, {len(problems)} violations"
    )
    figures["violations"] = float(len(problems))
    return figures


async def bare_floor(
    server: _stack.DevServer, sink: Sink, folder: Path, runs: int, timeout: float, queue: str
) -> dict[str, float]:
    """``runs`` bare workflows + one activity each on the same server and sink: the floor.

    The floor of the end-to-end figure (``bench/_bare.py``): a worker process of its own on task
    queue ``queue``, timed from its launch (start-up included, as the recovery is) until every
    workflow completed. Returns its seconds (``floor s``) and its worker's and the server's CPU
    per run (ms), as the recovery's are read.
    """
    cpu_s = _stack.cpu_seconds(server.pid)
    began = time.monotonic()
    worker = _stack.WorkerProcess(
        _stack.ROOT,
        {"BENCH_TEMPORAL_ADDRESS": server.address, "BENCH_TASK_QUEUE": queue},
        module="bench._bare_worker",
        log=folder / "bare.log",
    )
    try:
        client = await Client.connect(server.address)
        now = datetime.now(UTC).isoformat()
        handles = [
            await client.start_workflow(
                BareWorkflow.run,
                PostInput(f"{sink.url}/effects", f"{queue}-{i}", "bare", now, now),
                id=f"{queue}-{i}",
                task_queue=queue,
            )
            for i in range(runs)
        ]
        # At most WAITERS result long-polls at once: the server caps a namespace's concurrent
        # polls, and one per workflow exceeds it at thousands.
        slots = asyncio.Semaphore(WAITERS)

        async def finished(handle: Any) -> None:
            async with slots:
                await handle.result()

        results = asyncio.gather(*(finished(h) for h in handles))
        while not results.done():
            if time.monotonic() - began > timeout or worker.process.poll() is not None:
                results.cancel()
                raise SystemExit(f"bare floor: not done after {timeout:.0f} s or worker died")
            await asyncio.wait([results], timeout=0.2)
        results.result()
        return {
            "floor s": time.monotonic() - began,
            "floor worker CPU ms/run": 1000 * _stack.cpu_seconds(worker.pid) / runs,
            "floor server CPU ms/run": 1000 * (_stack.cpu_seconds(server.pid) - cpu_s) / runs,
        }
    finally:
        worker.stop()


async def main(args: argparse.Namespace) -> dict[str, dict[str, float]]:
    """Start the ledger, run each arm (``--before REF`` first, then this tree), print."""
    # The worker runs with bytecode caching, as an installed worker does (pip compiles .pyc
    # files): without it the workflow sandbox compiles every workflow module from source for
    # each new workflow instance (measured: 13-16 ms an instance instead of 7).
    if args.bytecode:
        os.environ.pop("PYTHONDONTWRITEBYTECODE", None)
    else:
        os.environ["PYTHONDONTWRITEBYTECODE"] = "1"
    arms = {"almanac": None} if args.before is None else {"before": args.before, "almanac": None}
    folder = Path(tempfile.mkdtemp(prefix="almanac-scale-"))
    results: dict[str, dict[str, float]] = {}
    pg = None
    try:
        if args.ledger == "postgresql":
            from ledger_pg import find_pg_ctl, start_server

            pg_ctl = find_pg_ctl()
            if pg_ctl is None:
                raise SystemExit("no pg_ctl found: --ledger sqlite, or install PostgreSQL")
            pg = start_server(pg_ctl)
        for arm, ref in arms.items():
            arm_folder = folder / arm
            arm_folder.mkdir()
            if pg is None:
                url = f"sqlite:///{arm_folder / 'ledger.sqlite3'}"
            else:
                pg.admin(f"CREATE DATABASE scale_{arm}")
                url = pg.url(f"scale_{arm}")
            upgrade(url)
            print(f"== {arm} ({ref or 'this tree'})")
            with _stack.source_tree(ref) as tree:
                results[arm] = await run(args, url, arm_folder, tree)
    finally:
        if pg is not None:
            pg.stop()
        if not args.keep:
            shutil.rmtree(folder, ignore_errors=True)
    print()
    names = list(next(iter(results.values())))
    print(f"{'':>32}" + "".join(f"{arm:>14}" for arm in results))
    for name in names:
        print(
            f"{name:>32}"
            + "".join(f"{r.get(name, float('nan')):>14,.2f}" for r in results.values())
        )
    if args.json:
        print(json.dumps(results, indent=1))
    broken = [arm for arm, r in results.items() if r.get("violations", 0)]
    if broken:
        raise SystemExit(f"work shares violated in {broken}: see the VIOLATION lines above")
    return results


def profiled(env: dict[str, str], prefix: Path) -> tuple[dict[str, str], str]:
    """The worker's environment and module under ``--profile prefix``.

    ``ALMANAC_PROFILE_MODE`` unset, ``sample`` or ``memory``: ``bench/_profiled_worker.py``
    (cProfile, stack samples or tracemalloc: the Python heap only). ``native``: the production
    worker on jemalloc with its heap profiler (``MALLOC_CONF``: a sample every 64 KiB on average,
    a dump to ``prefix.<pid>.<n>.i<n>.heap`` every 64 MiB allocated), which sees the SDK core's
    Rust allocations and protobuf arenas too; read two dumps' difference with
    ``jeprof --text --show_bytes --base=EARLY .venv/bin/python LATE``.

    Raises:
        SystemExit: ``native`` without jemalloc (Debian: ``libjemalloc2``; ``jeprof`` is in
            ``libjemalloc-dev``).
    """
    if os.environ.get("ALMANAC_PROFILE_MODE") != "native":
        return {**env, "ALMANAC_PROFILE_OUT": str(prefix)}, "bench._profiled_worker"
    library = ctypes.util.find_library("jemalloc")
    if library is None:
        raise SystemExit("ALMANAC_PROFILE_MODE=native needs jemalloc: apt-get install libjemalloc2")
    conf = f"prof:true,lg_prof_sample:16,lg_prof_interval:26,prof_prefix:{prefix}"
    return {**env, "LD_PRELOAD": library, "MALLOC_CONF": conf}, "worker"


def parse(argv: list[str] | None = None) -> argparse.Namespace:
    """The command line."""
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--schedules", type=int, default=1000)
    parser.add_argument("--ledger", choices=["postgresql", "sqlite"], default="postgresql")
    parser.add_argument("--timeout", type=float, default=1800.0)
    parser.add_argument("--json", action="store_true")
    parser.add_argument(
        "--until",
        choices=["recovered", "materialized"],
        default="recovered",
        help="stop at the seed's milestone (materialized) or end to end (default)",
    )
    parser.add_argument(
        "--workers", type=int, default=1, help="worker processes on the task queue (default 1)"
    )
    parser.add_argument(
        "--worker-arg",
        dest="worker_args",
        action="append",
        default=[],
        help="an argument for python -m worker, e.g. --worker-arg=--max-cached-workflows=3000",
    )
    parser.add_argument("--before", help="first run the worker of this git revision (an arm)")
    parser.add_argument(
        "--no-bytecode",
        dest="bytecode",
        action="store_false",
        help="run the worker with PYTHONDONTWRITEBYTECODE=1 (no .pyc: the sandbox compiles)",
    )
    parser.add_argument(
        "--no-floor",
        dest="floor",
        action="store_false",
        help="skip the floor: as many bare workflows + one activity as runs were caught up",
    )
    parser.add_argument("--keep", action="store_true", help="keep the temp folder (worker log)")
    parser.add_argument(
        "--anatomy",
        action="store_true",
        help="count the workers' ledger transactions and, before the dev server stops, every "
        "history of the run and the floor (bench/history_anatomy.py), per caught-up run",
    )
    parser.add_argument(
        "--profile",
        metavar="PREFIX",
        help="run the worker profiled (bench/_profiled_worker.py): cProfile, PREFIX.*.pstats; "
        "with ALMANAC_PROFILE_MODE=sample, memory or native, stack samples, tracemalloc or "
        "jemalloc's heap profile (the SDK core's memory too)",
    )
    args = parser.parse_args(argv)
    if args.anatomy and args.profile:
        parser.error("--anatomy and --profile each wrap the worker: choose one")
    return args


if __name__ == "__main__":
    asyncio.run(main(parse()))
