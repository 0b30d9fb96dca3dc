"""Count what Temporal recorded for a set of workflows: tasks, activities, timers, children, bytes.

    .venv/bin/python bench/history_anatomy.py --address 127.0.0.1:7233 \\
        --query "TaskQueue = 'scale-1a2b3c'" [--json]

Lists the workflows a visibility query matches (every run, open or closed), fetches each one's
history and counts, per workflow type: the workflows, their events by type (``WORKFLOW_TASK_
COMPLETED`` is one workflow task the worker finished), the history's size in bytes (the protobuf
``History`` of its events, as the server stores and sends it), the activities scheduled by
activity type with their input and result payload bytes, the markers by name (``core_patch:<id>``
for a patch marker, ``core_local_activity`` for a local activity), the child workflows started and
their input bytes. Counts, not timings: they do not depend on the machine's load.
``bench/scale.py --anatomy`` runs it over a recovery and its floor before the dev server stops.
"""

from __future__ import annotations

import argparse
import asyncio
import json
from collections import Counter
from dataclasses import dataclass, field
from typing import Any

from temporalio.api.enums.v1 import EventType, TimeoutType
from temporalio.api.history.v1 import History, HistoryEvent
from temporalio.client import Client

FETCHES = 20
"""Histories fetched at once."""


@dataclass
class Anatomy:
    """What the histories of one workflow type hold, summed over its workflows."""

    workflows: int = 0
    history_bytes: int = 0
    events: Counter[str] = field(default_factory=Counter)
    """Events by type (``WORKFLOW_TASK_COMPLETED``, ``TIMER_STARTED``, …)."""
    activities: Counter[str] = field(default_factory=Counter)
    """Activities scheduled, by activity type."""
    activity_bytes: Counter[str] = field(default_factory=Counter)
    """Input + result payload bytes, by activity type."""
    markers: Counter[str] = field(default_factory=Counter)
    upserts: Counter[str] = field(default_factory=Counter)
    """Search attribute upserts, by the attributes each sets (``A+B`` for two)."""
    task_timeouts: Counter[str] = field(default_factory=Counter)
    """Workflow tasks timed out, by timeout type (``SCHEDULE_TO_START``: on a sticky queue)."""
    child_input_bytes: int = 0

    def add(self, events: list[HistoryEvent]) -> None:
        """Count one workflow's history."""
        self.workflows += 1
        self.history_bytes += History(events=events).ByteSize()
        scheduled: dict[int, str] = {}
        for event in events:
            self.events[EventType.Name(event.event_type).removeprefix("EVENT_TYPE_")] += 1
            kind = event.WhichOneof("attributes")
            if kind == "activity_task_scheduled_event_attributes":
                attrs = event.activity_task_scheduled_event_attributes
                scheduled[event.event_id] = attrs.activity_type.name
                self.activities[attrs.activity_type.name] += 1
                self.activity_bytes[attrs.activity_type.name] += attrs.input.ByteSize()
            elif kind == "activity_task_completed_event_attributes":
                done = event.activity_task_completed_event_attributes
                self.activity_bytes[scheduled[done.scheduled_event_id]] += done.result.ByteSize()
            elif kind == "marker_recorded_event_attributes":
                self.markers[_marker_name(event)] += 1
            elif kind == "upsert_workflow_search_attributes_event_attributes":
                fields = event.upsert_workflow_search_attributes_event_attributes.search_attributes
                self.upserts["+".join(sorted(fields.indexed_fields))] += 1
            elif kind == "workflow_task_timed_out_event_attributes":
                timeout = event.workflow_task_timed_out_event_attributes.timeout_type
                self.task_timeouts[TimeoutType.Name(timeout).removeprefix("TIMEOUT_TYPE_")] += 1
            elif kind == "start_child_workflow_execution_initiated_event_attributes":
                attrs_child = event.start_child_workflow_execution_initiated_event_attributes
                self.child_input_bytes += attrs_child.input.ByteSize()

    def per(self, divisor: float) -> dict[str, float]:
        """The counts that matter for a cost, each divided by ``divisor`` (flat names)."""
        e = self.events
        row = {
            "workflow tasks": e["WORKFLOW_TASK_COMPLETED"],
            "workflow tasks failed or timed out": e["WORKFLOW_TASK_FAILED"]
            + e["WORKFLOW_TASK_TIMED_OUT"],
            "activities": sum(self.activities.values()),
            "local activities": self.markers["core_local_activity"],
            "timers started": e["TIMER_STARTED"],
            "children started": e["START_CHILD_WORKFLOW_EXECUTION_INITIATED"],
            "signals": e["WORKFLOW_EXECUTION_SIGNALED"],
            "updates": e["WORKFLOW_EXECUTION_UPDATE_ACCEPTED"],
            "markers": sum(self.markers.values()),
            "search attribute upserts": e["UPSERT_WORKFLOW_SEARCH_ATTRIBUTES"],
            "events": sum(e.values()),
            "history bytes": self.history_bytes,
        }
        return {k: v / divisor for k, v in row.items()}

    def as_json(self) -> dict[str, Any]:
        """Everything counted, for ``--json``."""
        return {
            "workflows": self.workflows,
            "history_bytes": self.history_bytes,
            "events": dict(self.events.most_common()),
            "activities": dict(self.activities.most_common()),
            "activity_bytes": dict(self.activity_bytes.most_common()),
            "markers": dict(self.markers.most_common()),
            "upserts": dict(self.upserts.most_common()),
            "task_timeouts": dict(self.task_timeouts.most_common()),
            "child_input_bytes": self.child_input_bytes,
        }


def _marker_name(event: HistoryEvent) -> str:
    """``core_patch:<patch id>`` for a patch marker, else the marker's name."""
    attrs = event.marker_recorded_event_attributes
    name = attrs.marker_name
    if name == "core_patch" and "patch-data" in attrs.details:
        payloads = attrs.details["patch-data"].payloads
        if payloads:
            return f"{name}:{json.loads(payloads[0].data).get('id', '?')}"
    return name


async def count(client: Client, query: str) -> dict[str, Anatomy]:
    """Every workflow run ``query`` matches, its history counted under its workflow type."""
    runs = [(w.id, w.run_id, w.workflow_type) async for w in client.list_workflows(query)]
    found: dict[str, Anatomy] = {}
    slots = asyncio.Semaphore(FETCHES)

    async def fetch(workflow_id: str, run_id: str | None) -> list[HistoryEvent]:
        async with slots:
            history = await client.get_workflow_handle(workflow_id, run_id=run_id).fetch_history()
        return list(history.events)

    histories = await asyncio.gather(*(fetch(w, r) for w, r, _ in runs))
    for (_, _, kind), events in zip(runs, histories, strict=True):
        found.setdefault(kind, Anatomy()).add(events)
    return found


def print_table(found: dict[str, Anatomy]) -> None:
    """Per workflow type: the mean per workflow, then activities and markers in full."""
    kinds = sorted(found)
    print(f"{'per workflow':>36}" + "".join(f"{k:>22}" for k in kinds))
    print(f"{'workflows':>36}" + "".join(f"{found[k].workflows:>22,}" for k in kinds))
    rows = {k: found[k].per(found[k].workflows) for k in kinds}
    for name in rows[kinds[0]]:
        print(f"{name:>36}" + "".join(f"{rows[k][name]:>22,.2f}" for k in kinds))
    for kind in kinds:
        a = found[kind]
        print(f"-- {kind} ({a.workflows} workflows): totals")
        for name, n in a.activities.most_common():
            print(f"   activity {name}: {n}, {a.activity_bytes[name]:,} payload bytes")
        if a.child_input_bytes:
            print(f"   child workflow inputs: {a.child_input_bytes:,} payload bytes")
        for name, n in a.markers.most_common():
            print(f"   marker {name}: {n}")
        for name, n in a.upserts.most_common():
            print(f"   search attribute upsert {name}: {n}")
        for name, n in a.task_timeouts.most_common():
            print(f"   workflow task timed out, {name}: {n}")
        print("   events: " + ", ".join(f"{k} {v}" for k, v in a.events.most_common()))


async def main(args: argparse.Namespace) -> None:
    """Count and print."""
    client = await Client.connect(args.address, namespace=args.namespace)
    found = await count(client, args.query)
    if not found:
        raise SystemExit(f"no workflow matches {args.query!r}")
    if args.json:
        print(json.dumps({k: a.as_json() for k, a in found.items()}, indent=1))
    else:
        print_table(found)


def parse(argv: list[str] | None = None) -> argparse.Namespace:
    """The command line."""
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--address", required=True, help="the Temporal frontend, HOST:PORT")
    parser.add_argument("--namespace", default="default")
    parser.add_argument("--query", required=True, help="a visibility query, e.g. TaskQueue = 'q'")
    parser.add_argument("--json", action="store_true", help="everything counted, as JSON")
    return parser.parse_args(argv)


if __name__ == "__main__":
    asyncio.run(main(parse()))
