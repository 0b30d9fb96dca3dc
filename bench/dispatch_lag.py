"""Dispatch lag: an every-5-s Almanac schedule vs a Temporal Schedule on the same server.

    .venv/bin/python bench/dispatch_lag.py [--seconds 60] [--rounds 3] [--before REF] [--json]

One dev server (``bench/_stack.py``), one sink, two worker processes: ``python -m worker`` (the
production worker, SQLite ledger) and ``bench._bare_worker`` (the baseline's workflow: one
activity POSTing to the sink). Per round, alternating (``bench/_pairs.py``):

- ``almanac``: a schedule with ``FREQ=SECONDLY;INTERVAL=5`` from the next 5-second boundary at
  least 10 s ahead, ending ``--seconds`` later, the http action on the sink; its schedule workflow
  is started at once (it materializes and waits for the first instant). Lag of an occurrence =
  its occurrence workflow's start time (the server's ``WorkflowExecutionStarted``) − its instant.
- ``before`` (with ``--before REF``): the same as ``almanac`` with the worker running the code of
  git revision ``REF`` (``git archive``; its own queue and SQLite ledger, migrated by this
  checkout: ``REF`` must have the same migrations).
- ``temporal``: a Temporal Schedule (``client.create_schedule``) with a 5-second interval over the
  same kind of window, starting the baseline workflow on the bare worker's queue. Lag = the
  workflow's start time − its ``TemporalScheduledStartTime`` search attribute.

Both start times are stamped by the same server, so host clock skew does not enter. Figures per
arm: p50, p99 and max lag in milliseconds over the round's occurrences; the ratio is on p99
(lower is better: baseline ÷ arm, so ≥ 1 is as good as Temporal Schedules; the issue's aim,
"p99 ≤ 1.5× Temporal's", is a ratio ≥ 0.67).
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import json
import shutil
import statistics
import tempfile
import time
import uuid
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

from temporalio.client import (
    Client,
    Schedule,
    ScheduleActionStartWorkflow,
    ScheduleIntervalSpec,
    ScheduleSpec,
)

import ledger
from almanac.stack.sink import Sink
from bench import _pairs, _stack
from bench._bare import BareWorkflow, PostInput
from timecontract import load_spec
from workflows import ScheduleInput, schedule_workflow_id

TZDB = "2026a"
EVERY = 5
LEAD = 10.0
"""Seconds between creating a schedule and its first instant (materialization happens first)."""


def _window(seconds: float) -> tuple[datetime, datetime]:
    """The first instant (a 5-s boundary ≥ LEAD s ahead) and the last one of a round."""
    now = datetime.now(UTC).timestamp()
    first = (int(now + LEAD) // EVERY + 1) * EVERY
    last = first + (int(seconds) // EVERY - 1) * EVERY
    return datetime.fromtimestamp(first, UTC), datetime.fromtimestamp(last, UTC)


def _iso(t: datetime) -> str:
    return t.isoformat().replace("+00:00", "Z")


def _lags(values: list[float]) -> dict[str, float]:
    values = sorted(values)
    p99 = values[min(len(values) - 1, round(0.99 * (len(values) - 1)))]
    return {
        "p50 ms": statistics.median(values),
        "p99 ms": p99,
        "max ms": values[-1],
        "occurrences": float(len(values)),
    }


async def _wait_until(deadline: float) -> None:
    while time.monotonic() < deadline:
        await asyncio.sleep(0.5)


class AlmanacArm:
    """An every-5-s Almanac schedule on the production worker."""

    def __init__(
        self,
        name: str,
        client: Client,
        queue: str,
        store: ledger.Ledger,
        sink: Sink,
        seconds: float,
    ):
        """Remember what a round needs."""
        self.name, self.client, self.queue, self.store, self.sink = name, client, queue, store, sink
        self.seconds = seconds

    async def run(self, index: int) -> dict[str, float]:
        """One round: publish, start the schedule workflow, collect the lags."""
        first, last = _window(self.seconds)
        schedule_id = f"{self.name}-{index}-{uuid.uuid4().hex[:6]}"
        data: dict[str, Any] = {
            "schema": "scheduleSpec.v1",
            "scheduleId": schedule_id,
            "revision": 1,
            "timeZone": "UTC",
            "tzdbVersion": TZDB,
            "rule": f"FREQ=SECONDLY;INTERVAL={EVERY}",
            "start": first.replace(tzinfo=None).isoformat(),
            "end": last.replace(tzinfo=None).isoformat(),
            "misfirePolicy": "SKIP",
            "cutoverAt": _iso(datetime.now(UTC).replace(microsecond=0)),
            "action": {
                "name": "http",
                "parameters": {
                    "url": f"{self.sink.url}/effects",
                    "resultUrl": f"{self.sink.url}/effects/{{idempotencyKey}}",
                    "timeoutSeconds": 10,
                },
            },
        }
        spec = load_spec(data)
        ledger.publish_revision(self.store, spec, datetime.now(UTC), by="bench")
        handle = await self.client.start_workflow(
            "AlmanacSchedule",
            ScheduleInput(schedule_id=schedule_id, initial_spec=data, horizon_seconds=3600),
            id=schedule_workflow_id(schedule_id),
            task_queue=self.queue,
        )
        await _wait_until(time.monotonic() + (last - datetime.now(UTC)).total_seconds() + 3)
        views = [
            o
            for o in ledger.list_occurrences(self.store, schedule_id)
            if o.instant_utc is not None and first <= o.instant_utc <= last
        ]
        lags = []
        for view in views:
            deadline = time.monotonic() + 30
            while True:
                try:
                    info = await self.client.get_workflow_handle(view.occurrence_id).describe()
                    break
                except Exception:
                    if time.monotonic() > deadline:
                        raise
                    await asyncio.sleep(0.5)
            assert view.instant_utc is not None
            lags.append((info.start_time - view.instant_utc).total_seconds() * 1000)
        await handle.terminate("round over")
        return _lags(lags)


class TemporalArm:
    """A Temporal Schedule every 5 s starting the bare workflow."""

    def __init__(self, client: Client, queue: str, sink: Sink, seconds: float):
        """Remember what a round needs."""
        self.client, self.queue, self.sink, self.seconds = client, queue, sink, seconds

    async def run(self, index: int) -> dict[str, float]:
        """One round: create the schedule, wait it out, read the lags from visibility."""
        first, last = _window(self.seconds)
        schedule_id = f"tlag-{index}-{uuid.uuid4().hex[:6]}"
        now = _iso(datetime.now(UTC))
        action = ScheduleActionStartWorkflow(
            BareWorkflow.run,
            PostInput(f"{self.sink.url}/effects", schedule_id, schedule_id, now, now),
            id=f"{schedule_id}-wf",
            task_queue=self.queue,
        )
        spec = ScheduleSpec(
            intervals=[ScheduleIntervalSpec(every=timedelta(seconds=EVERY))],
            start_at=first - timedelta(milliseconds=1),
            end_at=last + timedelta(milliseconds=1),
        )
        handle = await self.client.create_schedule(schedule_id, Schedule(action=action, spec=spec))
        await _wait_until(time.monotonic() + (last - datetime.now(UTC)).total_seconds() + 3)
        expected = int((last - first).total_seconds()) // EVERY + 1
        deadline = time.monotonic() + 30
        while True:
            found = [
                wf
                async for wf in self.client.list_workflows(f'TemporalScheduledById="{schedule_id}"')
            ]
            if len(found) >= expected or time.monotonic() > deadline:
                break
            await asyncio.sleep(0.5)
        lags = []
        for wf in found:
            scheduled = wf.search_attributes["TemporalScheduledStartTime"][0]
            assert isinstance(scheduled, datetime)
            lags.append((wf.start_time - scheduled).total_seconds() * 1000)
        await handle.delete()
        return _lags(lags)


async def main(args: argparse.Namespace) -> _pairs.Result:
    """Start the stack, alternate the arms, print the table."""
    folder = Path(tempfile.mkdtemp(prefix="almanac-dispatch-lag-"))
    workers: list[_stack.WorkerProcess] = []
    try:
        with _stack.dev_server(folder) as server, Sink() as sink:
            client = await Client.connect(server.address)
            bare_queue = f"bare-{uuid.uuid4().hex[:6]}"
            workers.append(
                _stack.WorkerProcess(
                    _stack.ROOT,
                    {"BENCH_TEMPORAL_ADDRESS": server.address, "BENCH_TASK_QUEUE": bare_queue},
                    module="bench._bare_worker",
                    log=folder / "bare.log",
                )
            )
            temporal = TemporalArm(client, bare_queue, sink, args.seconds)
            arms = [_pairs.Arm("temporal", temporal.run)]
            trees = (
                {"almanac": None}
                if args.before is None
                else {"before": args.before, "almanac": None}
            )
            with contextlib.ExitStack() as stack:
                for name, ref in trees.items():
                    worker = _stack.almanac_arm(stack, folder, server.address, name, ref)
                    workers.append(worker.process)
                    store = ledger.Ledger.from_url(worker.ledger_url)
                    stack.callback(store.dispose)
                    arm = AlmanacArm(name, client, worker.task_queue, store, sink, args.seconds)
                    arms.append(_pairs.Arm(name, arm.run))
                result = await _pairs.alternate(
                    arms,
                    rounds=args.rounds,
                    baseline="temporal",
                    metric="p99 ms",
                    lower_is_better=True,
                )
    finally:
        for proc in workers:
            proc.stop()
        if not args.keep:
            shutil.rmtree(folder, ignore_errors=True)
    print()
    print(f"every {EVERY} s, {args.seconds:.0f} s per arm per round")
    print(result.table())
    if args.json:
        print(json.dumps(result.as_dict(), indent=1))
    return result


def parse(argv: list[str] | None = None) -> argparse.Namespace:
    """The command line."""
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--seconds", type=float, default=60.0)
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--before", help="also run the worker of this git revision (an arm)")
    parser.add_argument("--json", action="store_true")
    parser.add_argument("--keep", action="store_true", help="keep the temp folder (worker logs)")
    return parser.parse_args(argv)


if __name__ == "__main__":
    asyncio.run(main(parse()))
