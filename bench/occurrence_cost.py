"""Per-occurrence cost: N overdue occurrences through Almanac vs a bare workflow + one activity.

    .venv/bin/python bench/occurrence_cost.py [--schedules 10] [--per-schedule 30] [--rounds 3]
                                              [--before REF] [--json]

One dev server (the pip ``temporal`` binary, headless, SQLite with WAL and ``synchronous=off``),
one sink (``almanac.stack.sink``, 127.0.0.1), and one worker *process* per arm on its own task
queue:

- ``bare``: :mod:`bench._bare_worker` — N workflows, each one activity POSTing the occurrence body
  to the sink. N client starts, measured until every workflow has completed.
- ``almanac``: ``python -m worker`` (the production worker, SQLite ledger). Each round seeds
  ``--schedules`` schedules in the ledger, published ``--per-schedule`` minutes ago with a
  minutely rule (a lateness of 2 hours, so every missed occurrence is on time and runs), then
  starts their schedule workflows: each materializes, releases its overdue set and starts one
  occurrence workflow per occurrence (claim, POST, record). Measured from the first start until
  the ledger shows all N ``SUCCEEDED``.
- ``before`` (with ``--before REF``): the same as ``almanac`` with the worker running the code of
  git revision REF (extracted with ``git archive``), so the old and new code are compared in one
  run under the same load.

Rounds alternate the arms (``bench/_pairs.py``); figures per arm: occurrences/s, ledger
transactions begun and committed per occurrence (almanac arms), worker and server CPU
milliseconds per occurrence. The ratio is occurrences/s ÷ the bare arm's, per round; the median
is quoted. A warm-up round (N/5) runs first and is not counted.

Transactions are counted inside the worker process (``bench/_counted_worker.py``: SQLAlchemy
listeners on every ``Engine``, the same counter around either arm's code) from the first start
to the last ``SUCCEEDED``, divided by N: the occurrence workflows' activities and the schedule
workflows' own (materialize, release), reads included. After the workers stop, the whole run's
counts (warm-up and start-up included) are printed per occurrence run.
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import json
import shutil
import tempfile
import time
import uuid
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

from temporalio.client import Client

import ledger
from almanac.stack.sink import Sink
from bench import _pairs, _stack
from bench._bare import BareWorkflow, PostInput
from bench._counted_worker import Counts, read_counts
from timecontract import load_spec
from workflows import ScheduleInput, schedule_workflow_id

TZDB = "2026a"


def spec_data(schedule_id: str, sink_url: str, first: datetime, count: int) -> dict[str, Any]:
    """A minutely UTC rule with ``count`` occurrences from ``first``, all on time for 2 hours."""
    last = first + timedelta(minutes=count - 1)
    return {
        "schema": "scheduleSpec.v1",
        "scheduleId": schedule_id,
        "revision": 1,
        "timeZone": "UTC",
        "tzdbVersion": TZDB,
        "rule": "FREQ=MINUTELY",
        "start": first.replace(tzinfo=None).isoformat(),
        "end": last.replace(tzinfo=None).isoformat(),
        "misfirePolicy": "SKIP",
        "lateness": "PT2H",
        "cutoverAt": first.isoformat().replace("+00:00", "Z"),
        "action": {
            "name": "http",
            "parameters": {
                "url": f"{sink_url}/effects",
                "resultUrl": f"{sink_url}/effects/{{idempotencyKey}}",
                "timeoutSeconds": 10,
            },
        },
    }


class AlmanacArm:
    """Seeds overdue occurrences and lets the production schedule workflows run them."""

    def __init__(
        self,
        name: str,
        client: Client,
        server_pid: int,
        worker: _stack.WorkerProcess,
        task_queue: str,
        ledger_: ledger.Ledger,
        transactions: Path,
        sink: Sink,
        args: argparse.Namespace,
    ):
        """Remember what a round needs (``transactions``: the worker's counts file)."""
        self.name, self.client, self.server_pid, self.worker = name, client, server_pid, worker
        self.task_queue, self.ledger, self.sink, self.args = task_queue, ledger_, sink, args
        self.transactions = transactions
        self.occurrences = 0
        """Occurrences run so far, warm-up included."""

    async def run(self, index: int, *, scale: float = 1.0) -> dict[str, float]:
        """One round: seed, start the schedules, wait for every occurrence to succeed."""
        schedules = max(1, int(self.args.schedules * scale))
        per = self.args.per_schedule
        now = datetime.now(UTC).replace(second=0, microsecond=0)
        first = now - timedelta(minutes=per + 1)
        ids = [f"oc-{self.name}-{index}-{uuid.uuid4().hex[:6]}-{i}" for i in range(schedules)]
        datas = []
        for schedule_id in ids:
            data = spec_data(schedule_id, self.sink.url, first, per)
            spec = load_spec(data)
            ledger.publish_revision(self.ledger, spec, first, by="bench")
            ledger.materialize(self.ledger, spec, first, now, first, by="bench")
            datas.append(data)
        total = schedules * per
        cpu_w, cpu_s = _stack.cpu_seconds(self.worker.pid), _stack.cpu_seconds(self.server_pid)
        counts = read_counts(self.transactions)
        started = time.monotonic()
        for schedule_id, data in zip(ids, datas, strict=True):
            await self.client.start_workflow(
                "AlmanacSchedule",
                ScheduleInput(schedule_id=schedule_id, initial_spec=data, horizon_seconds=3600),
                id=schedule_workflow_id(schedule_id),
                task_queue=self.task_queue,
            )
        deadline = started + self.args.timeout
        while True:
            done = sum(
                ledger.counts_by_state(self.ledger, s)[ledger.OccurrenceState.SUCCEEDED]
                for s in ids
            )
            if done >= total:
                break
            if time.monotonic() > deadline or self.worker.process.poll() is not None:
                raise RuntimeError(
                    f"{self.name}: {done}/{total} succeeded after {self.args.timeout} s"
                )
            await asyncio.sleep(0.1)
        elapsed = time.monotonic() - started
        counts = read_counts(self.transactions) - counts
        self.occurrences += total
        figures = _figures(total, elapsed, counts, self.worker.pid, cpu_w, self.server_pid, cpu_s)
        for schedule_id in ids:
            await self.client.get_workflow_handle(schedule_workflow_id(schedule_id)).terminate()
        return figures


class BareArm:
    """N bare workflows, one POST each."""

    def __init__(
        self,
        client: Client,
        server_pid: int,
        worker: _stack.WorkerProcess,
        task_queue: str,
        sink: Sink,
        args: argparse.Namespace,
    ):
        """Remember what a round needs."""
        self.client, self.server_pid, self.worker = client, server_pid, worker
        self.task_queue, self.sink, self.args = task_queue, sink, args

    async def run(self, index: int, *, scale: float = 1.0) -> dict[str, float]:
        """One round: start N workflows, wait for all."""
        total = max(1, int(self.args.schedules * scale)) * self.args.per_schedule
        tag = uuid.uuid4().hex[:6]
        now = datetime.now(UTC).isoformat()
        cpu_w, cpu_s = _stack.cpu_seconds(self.worker.pid), _stack.cpu_seconds(self.server_pid)
        started = time.monotonic()
        handles = [
            await self.client.start_workflow(
                BareWorkflow.run,
                PostInput(f"{self.sink.url}/effects", f"bare-{index}-{tag}-{i}", "bare", now, now),
                id=f"bare-{index}-{tag}-{i}",
                task_queue=self.task_queue,
            )
            for i in range(total)
        ]
        results = asyncio.gather(*(h.result() for h in handles))
        deadline = started + self.args.timeout
        while not results.done():
            if time.monotonic() > deadline or self.worker.process.poll() is not None:
                results.cancel()
                raise RuntimeError(f"bare: not done after {self.args.timeout} s or worker died")
            await asyncio.wait([results], timeout=0.2)
        results.result()
        elapsed = time.monotonic() - started
        return _figures(total, elapsed, None, self.worker.pid, cpu_w, self.server_pid, cpu_s)


def _figures(
    total: int,
    elapsed: float,
    transactions: Counts | None,
    worker_pid: int,
    cpu_w: float,
    server_pid: int,
    cpu_s: float,
) -> dict[str, float]:
    """One round's figures; ``transactions`` None (no ledger) shows as "—"."""
    nan = float("nan")
    return {
        "occurrences/s": total / elapsed,
        "transactions/occ": nan if transactions is None else transactions.begins / total,
        "commits/occ": nan if transactions is None else transactions.commits / total,
        "worker CPU ms/occ": 1000 * (_stack.cpu_seconds(worker_pid) - cpu_w) / total,
        "server CPU ms/occ": 1000 * (_stack.cpu_seconds(server_pid) - cpu_s) / total,
    }


async def main(args: argparse.Namespace) -> _pairs.Result:
    """Start the stack, run the rounds, print the table."""
    folder = Path(tempfile.mkdtemp(prefix="almanac-occurrence-cost-"))
    trees = {"almanac": None} if args.before is None else {"before": args.before, "almanac": None}
    workers: list[_stack.WorkerProcess] = []
    with _stack.dev_server(folder) as server, Sink() as sink:
        client = await Client.connect(server.address)
        bare_queue = f"bare-{uuid.uuid4().hex[:6]}"
        bare_worker = _stack.WorkerProcess(
            _stack.ROOT,
            {"BENCH_TEMPORAL_ADDRESS": server.address, "BENCH_TASK_QUEUE": bare_queue},
            module="bench._bare_worker",
            log=folder / "bare.log",
        )
        workers.append(bare_worker)
        arms: list[Any] = [BareArm(client, server.pid, bare_worker, bare_queue, sink, args)]
        try:
            with contextlib.ExitStack() as stack:
                for name, ref in trees.items():
                    worker = _stack.almanac_arm(
                        stack, folder, server.address, name, ref, count_transactions=True
                    )
                    proc, queue, counts = worker.process, worker.task_queue, worker.transactions
                    assert counts is not None
                    workers.append(proc)
                    ledger_ = ledger.Ledger.from_url(worker.ledger_url)
                    arms.append(
                        AlmanacArm(
                            name, client, server.pid, proc, queue, ledger_, counts, sink, args
                        )
                    )
                print(f"warm-up (not counted); load {_pairs.loadavg()[0]:.1f}", flush=True)
                for arm in arms:
                    await arm.run(-1, scale=0.2)
                result = await _pairs.alternate(
                    [
                        _pairs.Arm(a.name if isinstance(a, AlmanacArm) else "bare", a.run)
                        for a in arms
                    ],
                    rounds=args.rounds,
                    baseline="bare",
                    metric="occurrences/s",
                )
        finally:
            for proc in workers:
                proc.stop()
            whole_run = [_whole_run(a) for a in arms if isinstance(a, AlmanacArm)]
            if not args.keep:
                shutil.rmtree(folder, ignore_errors=True)
    print()
    print(f"N = {args.schedules} schedules × {args.per_schedule} overdue occurrences per round")
    print(result.table())
    print("\n".join(whole_run))
    if args.json:
        print(json.dumps(result.as_dict(), indent=1))
    return result


def _whole_run(arm: AlmanacArm) -> str:
    """The counts the arm's stopped worker left, per occurrence it ran (warm-up, start-up in)."""
    counts = read_counts(arm.transactions)
    per = max(1, arm.occurrences)
    return (
        f"{arm.name}, whole run ({arm.occurrences} occurrences, read after the worker stopped): "
        f"{counts.begins / per:.2f} transactions/occ, {counts.commits / per:.2f} commits/occ, "
        f"{counts.rollbacks / per:.2f} rollbacks/occ"
    )


def parse(argv: list[str] | None = None) -> argparse.Namespace:
    """The command line."""
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--schedules", type=int, default=10)
    parser.add_argument("--per-schedule", type=int, default=30)
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--timeout", type=float, default=600.0)
    parser.add_argument("--before", help="also run the worker of this git revision (an arm)")
    parser.add_argument("--json", action="store_true")
    parser.add_argument("--keep", action="store_true", help="keep the temp folder (worker logs)")
    return parser.parse_args(argv)


if __name__ == "__main__":
    asyncio.run(main(parse()))
