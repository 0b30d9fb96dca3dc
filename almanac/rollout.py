"""Rollout and rollback for operators: choose schedules, switch their gates, start the requeued.

The ledger does the switch (``ledger.switch_implementation``: one transaction per gate — alias
flipped, execution epoch bumped, not-started occurrences requeued, the rest listed). This module
adds what needs the world around the ledger:

- :func:`select` — which schedules a command moves: named ones, every one, or a deterministic
  ``P`` % (``ledger.in_canary``: a stable hash of the scheduleId, so the same ``P`` always picks
  the same schedules and a larger ``P`` only adds some);
- :func:`switch` — the ledger switch for each selected schedule, in scheduleId order;
- :func:`start_requeued` — a requeued occurrence's workflow may be waiting on the old alias's task
  queue (or closed after its claim was refused at the new epoch); it is started again, ID =
  occurrenceId, on the target alias's queue (``activities.io.alias_task_queue``), with the limits
  (attempts, timeouts) the schedule gave the run it replaces. A run still
  open under the same ID is terminated first: it was DUE when the switch committed, so its claim,
  which read the old epoch, can never win (the ledger refuses it), and no effect can be lost.

Canary design (for operators: ``docs/operating/rollout.md``): a schedule's gate names the
alias that may claim its occurrences; the schedule workflow starts each occurrence on that alias's
task queue, only workers of that alias poll it, and the claim refuses any other alias (or an old
epoch) as the last word.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from datetime import datetime
from typing import Any

from temporalio.client import Client
from temporalio.common import (
    SearchAttributePair,
    TypedSearchAttributes,
    WorkflowIDConflictPolicy,
    WorkflowIDReusePolicy,
)
from temporalio.service import RPCError, RPCStatusCode

import ledger
from activities import io
from ledger import GateView, Ledger, SwitchKind, SwitchResult
from workflows import OccurrenceInput, OccurrenceWorkflow
from workflows import search_attributes as sa


@dataclass(frozen=True, slots=True)
class Selection:
    """The schedules a command names, and which of them are not on the target alias yet."""

    alias: str
    selected: tuple[GateView, ...]
    """Every selected schedule's gate, by scheduleId."""

    @property
    def moving(self) -> tuple[GateView, ...]:
        """The selected schedules whose gate shows another alias (what a switch would change)."""
        return tuple(g for g in self.selected if g.implementation_alias != self.alias)


def select(
    ledger_: Ledger,
    alias: str,
    *,
    schedule_ids: Sequence[str] = (),
    percent: float | None = None,
    every: bool = False,
) -> Selection:
    """Select schedules by name, by canary percentage, or all of them.

    Exactly one of ``schedule_ids``, ``percent`` and ``every`` must be given.

    Raises:
        ValueError: none or several selectors; a percentage outside 0..100.
        ScheduleNotFound: a named schedule has no gate.

    """
    given = sum((bool(schedule_ids), percent is not None, every))
    if given != 1:
        raise ValueError("name schedules (--schedule), a percentage (--percent) or --all")
    if schedule_ids:
        gates = [ledger.get_gate(ledger_, s) for s in sorted(set(schedule_ids))]
    else:
        gates = ledger.list_gates(ledger_)
        if percent is not None:
            gates = [g for g in gates if ledger.in_canary(g.schedule_id, percent)]
    return Selection(alias, tuple(gates))


def switch(
    ledger_: Ledger,
    selection: Selection,
    now_utc: datetime,
    *,
    kind: SwitchKind,
    by: str,
    reason: str,
    id_formats: frozenset[int] | None = None,
) -> list[SwitchResult]:
    """Switch every selected schedule to ``selection.alias`` (one transaction each, in order)."""
    return [
        ledger.switch_implementation(
            ledger_,
            gate.schedule_id,
            selection.alias,
            now_utc,
            kind=kind,
            by=by,
            reason=reason,
            id_formats=id_formats,
        )
        for gate in selection.selected
    ]


async def start_requeued(
    ledger_: Ledger, temporal: Client, base_task_queue: str, results: Sequence[SwitchResult]
) -> list[str]:
    """Start each requeued occurrence's workflow on its target alias's task queue.

    Returns:
        The occurrence IDs started, in order.

    """
    started: list[str] = []
    for result in results:
        queue = io.alias_task_queue(base_task_queue, result.to_alias)
        gate = result.gate
        for occurrence_id in result.requeued:
            occurrence = ledger.read_occurrence(ledger_, occurrence_id)
            if occurrence.state is not ledger.OccurrenceState.DUE:
                continue  # claimed meanwhile by the target alias: nothing to start
            payload = occurrence.upcoming()
            limits = await _limits_of_previous_run(temporal, occurrence_id)
            await temporal.start_workflow(
                OccurrenceWorkflow.run,
                OccurrenceInput(occurrence=payload, gate=gate, **limits),
                id=occurrence_id,
                task_queue=queue,
                # A closed run (its claim refused at the new epoch) may be followed by this one;
                # an open one was DUE at the switch, so its old-epoch claim can never win.
                id_reuse_policy=WorkflowIDReusePolicy.ALLOW_DUPLICATE,
                id_conflict_policy=WorkflowIDConflictPolicy.TERMINATE_EXISTING,
                search_attributes=TypedSearchAttributes(
                    [
                        SearchAttributePair(sa.SCHEDULE_ID, occurrence.schedule_id),
                        SearchAttributePair(sa.REVISION, occurrence.revision),
                        SearchAttributePair(sa.NOMINAL_LOCAL, payload.nominal_local),
                        SearchAttributePair(sa.OCCURRENCE_STATE, occurrence.state.value),
                    ]
                ),
            )
            started.append(occurrence_id)
    return started


async def _limits_of_previous_run(temporal: Client, occurrence_id: str) -> dict[str, Any]:
    """The limits the occurrence's latest run was started with; ``{}`` if it has no run.

    The schedule workflow gives each occurrence its schedule's limits (``ScheduleInput``: attempts,
    action timeout, first retry delay, reconciliation deadline), which the ledger does not hold.
    A requeued run is the same occurrence on another task queue, so it keeps them; an occurrence
    released but not started yet takes ``OccurrenceInput``'s defaults.
    """
    handle = temporal.get_workflow_handle(occurrence_id)
    try:
        async for event in handle.fetch_history_events(page_size=1):
            started = event.workflow_execution_started_event_attributes
            [previous] = await temporal.data_converter.decode(
                started.input.payloads, [OccurrenceInput]
            )
            return {
                name: getattr(previous, name)
                for name in (
                    "max_attempts",
                    "action_timeout_seconds",
                    "reconcile_deadline_seconds",
                    "first_retry_delay_seconds",
                )
            }
    except RPCError as exc:
        if exc.status is not RPCStatusCode.NOT_FOUND:
            raise
    return {}


def result_json(result: SwitchResult) -> dict[str, object]:
    """One switch as the ``--json`` object of ``almanac rollout`` and ``almanac rollback``."""
    return {
        "scheduleId": result.schedule_id,
        "kind": result.kind.value,
        "fromAlias": result.from_alias,
        "toAlias": result.to_alias,
        "changed": result.changed,
        "epochBefore": result.epoch_before,
        "epochAfter": result.epoch_after,
        "switchId": result.switch_id,
        "requeued": list(result.requeued),
        "notRequeued": [
            {"occurrenceId": n.occurrence_id, "state": n.state.value, "why": n.why}
            for n in result.not_requeued
        ],
    }
