"""Pieces of the rollout proof on the real servers: two worker pools, the CLI, ledger readings.

The pools are production workers (``python -m worker``, real clock) as child processes of the
test, each with ``ALMANAC_IMPLEMENTATION_ALIAS``: the ``v1`` pool serves the schedule workflows
and ``almanac.<queue>.v1``; the ``v2`` pool runs with ``--no-schedules`` and serves only its own
alias's queue. The commands are the installed ``almanac`` script, as an operator runs it. The
schedules are started as the client starts them (``ScheduleWorkflow``, ID ``schedule-<id>``) with
a short horizon and action timeout, so a killed attempt is retried within seconds.

The canary set is computed here independently of ``ledger.in_canary`` (SHA-256 of the
scheduleId, first 16 hex digits as an integer, mod 10000, below P × 100).
"""

from __future__ import annotations

import hashlib
import json
import subprocess
import sys
from collections import defaultdict
from collections.abc import Iterable
from dataclasses import dataclass, field
from datetime import datetime
from pathlib import Path
from typing import Any

from faultkit import REPO, WorkerProcess, spawn_worker, spec_data, worker_env
from sqlalchemy import Connection, Table, select
from temporalio.api.history.v1 import HistoryEvent
from temporalio.client import Client, WorkflowHistory
from temporalio.converter import DataConverter

import ledger
from almanac.stack.sink import Sink
from ledger import Ledger, OccurrenceDetail, OccurrenceState
from ledger.events import ATTEMPTS, CASES, EVENTS, OCCURRENCES, SHADOW_OCCURRENCES, SHADOW_RUNS
from ledger.views import AttemptView, CaseView, EventView, OccurrenceView
from timecontract import load_spec
from workflows import OccurrenceInput, ScheduleInput, ScheduleWorkflow, schedule_workflow_id

S = OccurrenceState
ACTION_TIMEOUT_SECONDS = 8.0
"""A killed action attempt is retried by Temporal after this (start-to-close) timeout."""
HORIZON_SECONDS = 120.0
SETTLED = frozenset({S.SUCCEEDED, S.FAILED, S.CANCELLED, S.MISFIRE_EXPIRED, S.SKIPPED_GAP})


def expected_canary(schedule_ids: list[str], percent: float) -> set[str]:
    """The schedules a ``--percent`` rollout must select, by the documented rule."""

    def bucket(s: str) -> int:
        return int(hashlib.sha256(s.encode()).hexdigest()[:16], 16) % 10000

    return {s for s in schedule_ids if bucket(s) < percent * 100}


def every(seconds: int, offset: int = 0) -> str:
    """An RRULE firing every ``seconds`` (a divisor of 60) at ``offset`` past the minute."""
    marks = ",".join(str(s) for s in range(offset % seconds, 60, seconds))
    return f"FREQ=MINUTELY;BYSECOND={marks}"


def http_spec(schedule_id: str, sink: Sink, rule: str) -> dict[str, Any]:
    """A spec POSTing to ``sink`` on ``rule``; its first revision owns every instant from 2020."""
    return spec_data(
        schedule_id,
        sink,
        rule=rule,
        cutoverAt="2020-01-01T00:00:00Z",
        lateness="PT1M",
        maxCatchUp=5,
        timeoutSeconds=5,
    )


def dst_spec(schedule_id: str, sink: Sink, zone: str, rule: str) -> dict[str, Any]:
    """A spec POSTing to ``sink`` in ``zone`` (gaps ``SKIP``, folds ``BOTH``), owning 2026 on."""
    return spec_data(
        schedule_id,
        sink,
        timeZone=zone,
        rule=rule,
        gapPolicy="SKIP",
        foldPolicy="BOTH",
        cutoverAt="2026-01-01T00:00:00Z",
    )


def noop_spec(schedule_id: str, rule: str) -> dict[str, Any]:
    """A spec with the ``noop`` action (the ledger records the attempt; nothing leaves)."""
    data = spec_data(schedule_id)
    data.update(
        rule=rule,
        cutoverAt="2020-01-01T00:00:00Z",
        lateness="PT1M",
        maxCatchUp=5,
        action={"name": "noop", "parameters": {"note": "internal canary"}},
    )
    return data


async def start_schedule(client: Client, task_queue: str, data: dict[str, Any]) -> None:
    """Start the production schedule workflow for ``data`` as ``AlmanacClient.apply`` does."""
    spec = load_spec(data)
    await client.start_workflow(
        ScheduleWorkflow.run,
        ScheduleInput(
            schedule_id=spec.schedule_id,
            initial_spec=spec.resolved(),
            horizon_seconds=HORIZON_SECONDS,
            occurrence_action_timeout_seconds=ACTION_TIMEOUT_SECONDS,
        ),
        id=schedule_workflow_id(spec.schedule_id),
        task_queue=task_queue,
    )


@dataclass
class Pools:
    """The test's worker processes, and how to start more."""

    temporal_address: str
    task_queue: str
    ledger_url: str
    data_dir: Path
    log: Path
    spawned: list[WorkerProcess] = field(default_factory=list)
    """Every worker this pool started, so the test stops them all whatever fails."""

    def env(self, alias: str | None = None) -> dict[str, str]:
        """The environment of a worker (``alias`` set) or of a command (``alias`` ``None``)."""
        env = worker_env(self.temporal_address, self.task_queue, self.ledger_url, self.data_dir)
        if alias is not None:
            env["ALMANAC_IMPLEMENTATION_ALIAS"] = alias
        return env

    def spawn(self, alias: str, identity: str, *, schedules: bool) -> WorkerProcess:
        """``python -m worker --identity IDENTITY [--no-schedules]`` of ``alias``."""
        args = () if schedules else ("--no-schedules",)
        process = spawn_worker(self.env(alias), self.log, identity, module="worker", args=args)
        self.spawned.append(process)
        return process

    def almanac(self, *args: str) -> dict[str, Any]:
        """Run ``almanac ARGS --json``; its JSON output (fails the test on a non-zero exit)."""
        command = [str(Path(sys.executable).parent / "almanac"), *args, "--json"]
        done = subprocess.run(
            command, cwd=REPO, env=self.env(), capture_output=True, text=True, timeout=120
        )
        assert done.returncode == 0, f"{command} exited {done.returncode}:\n{done.stderr}"
        return json.loads(done.stdout)  # type: ignore[no-any-return]


def details(store: Ledger, schedule_ids: Iterable[str]) -> dict[str, OccurrenceDetail]:
    """occurrenceId → the occurrence with its attempts, events and case, for every schedule.

    What ``ledger.show_occurrence`` gives for one, read in four statements for all (the polls
    of a run with hundreds of occurrences would otherwise load the machine they measure).
    """
    ids = sorted(set(schedule_ids))

    def work(connection: Connection) -> dict[str, OccurrenceDetail]:
        mine = select(OCCURRENCES.c.occurrence_id).where(OCCURRENCES.c.schedule_id.in_(ids))
        occurrences = connection.execute(
            select(OCCURRENCES).where(OCCURRENCES.c.schedule_id.in_(ids))
        ).all()
        attempts: dict[str, list[AttemptView]] = defaultdict(list)
        for row in connection.execute(
            select(ATTEMPTS)
            .where(ATTEMPTS.c.occurrence_id.in_(mine))
            .order_by(ATTEMPTS.c.occurrence_id, ATTEMPTS.c.claim_generation)
        ):
            attempts[row.occurrence_id].append(AttemptView.from_row(row))
        events: dict[str, list[EventView]] = defaultdict(list)
        for row in connection.execute(
            select(EVENTS)
            .where(EVENTS.c.occurrence_id.in_(mine))
            .order_by(EVENTS.c.occurrence_id, EVENTS.c.sequence)
        ):
            events[row.occurrence_id].append(EventView.from_row(row))
        cases = {
            row.occurrence_id: CaseView.from_row(row)
            for row in connection.execute(select(CASES).where(CASES.c.occurrence_id.in_(mine)))
        }
        return {
            row.occurrence_id: OccurrenceDetail(
                OccurrenceView.from_row(row),
                tuple(attempts[row.occurrence_id]),
                tuple(events[row.occurrence_id]),
                cases.get(row.occurrence_id),
            )
            for row in sorted(occurrences, key=lambda r: r.occurrence_id)
        }

    return store.read(work)


def live_tables(store: Ledger) -> dict[str, list[tuple[Any, ...]]]:
    """Every row of every ledger table but the shadow ones, by table name, in key order.

    What a shadow run must leave exactly as it found it: gates (alias, execution epoch),
    revisions, occurrences, logical slots, attempts, events, cases, switches, schedule events.
    """
    shadow = {SHADOW_OCCURRENCES.name, SHADOW_RUNS.name}
    tables: list[Table] = [t for t in OCCURRENCES.metadata.sorted_tables if t.name not in shadow]

    def work(connection: Connection) -> dict[str, list[tuple[Any, ...]]]:
        return {
            t.name: [
                tuple(row) for row in connection.execute(select(t).order_by(*t.primary_key.columns))
            ]
            for t in tables
        }

    return store.read(work)


def not_started(store: Ledger, schedule_ids: set[str]) -> set[str]:
    """The schedules' DUE occurrences that were never claimed (claim generation 0)."""
    return {
        view.occurrence_id
        for schedule_id in schedule_ids
        for view in ledger.list_occurrences(store, schedule_id, states=[S.DUE])
        if view.claim_generation == 0
    }


def settled(detail: OccurrenceDetail) -> bool:
    """Terminal, or UNKNOWN_EFFECT whose case was reconciled or put in the human queue."""
    state = detail.occurrence.state
    if state in SETTLED:
        return True
    return (
        state is S.UNKNOWN_EFFECT and detail.case is not None and detail.case.resolution is not None
    )


def unsettled(store: Ledger, schedule_ids: set[str], until: datetime) -> list[str]:
    """``occurrenceId (STATE)`` of every occurrence up to ``until`` not yet settled."""
    return [
        f"{oid} ({d.occurrence.state.value})"
        for oid, d in details(store, schedule_ids).items()
        if d.occurrence.instant_utc is not None
        and d.occurrence.instant_utc <= until
        and not settled(d)
    ]


def identities(history: WorkflowHistory) -> set[str]:
    """The worker identities that started a workflow or activity task of ``history``."""
    found: set[str] = set()
    for event in history.events:
        kind = event.WhichOneof("attributes")
        if kind in (
            "workflow_task_started_event_attributes",
            "activity_task_started_event_attributes",
        ):
            found.add(getattr(event, kind).identity)
    return found


def started_on(history: WorkflowHistory) -> str:
    """The task queue a workflow run was started on."""
    first: HistoryEvent = history.events[0]
    return first.workflow_execution_started_event_attributes.task_queue.name


def started_input(history: WorkflowHistory) -> OccurrenceInput:
    """The input an occurrence run was started with (the default converter)."""
    payloads = history.events[0].workflow_execution_started_event_attributes.input.payloads
    [value] = DataConverter.default.payload_converter.from_payloads(
        list(payloads), [OccurrenceInput]
    )
    return value  # type: ignore[no-any-return]
