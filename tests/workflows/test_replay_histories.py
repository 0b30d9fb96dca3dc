"""Recorded histories replay on today's workflow code without a NondeterminismError (DESIGN §6).

The histories in ``histories/`` were recorded by the workflow tests on today's code (see
``histories/README.md``): schedule runs with a fold, signals (disable, enable, malformed ones), a
revision cutover, runs continued as new, a production run routed by its gate's implementation
alias (canary rollout and rollback), updates, a backfill; occurrence runs that succeeded, retried
twice, were reconciled by asking the downstream, ended UNKNOWN_EFFECT in the human queue (with no
result query, and with one that never answered until the deadline), and whose claim was refused;
a manual run. Those in ``histories/previous-release/`` were recorded by the previous release,
whose code asked ``workflow.patched`` where today's calls ``workflow.deprecate_patch``: that they
replay here is the upgrade path of a run that was running when the workers were upgraded
(docs/operating/upgrades.md). A change to workflow code that would replay differently must go
behind ``workflow.patched("almanac-…")``.

Every history was recorded on the simulated clock (``almanac.gates.simulation``), so every history
replays on the simulated workflows (the production code plus the clock seams). Each also replays on
the production workflows, except a schedule run that ended at its simulation stop (production
schedules never end, so that run's last step is the simulation's, not production's) and the
histories in :data:`SIMULATED_CLOCK_DECISIONS`, whose commands depend on the simulated clock.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from temporalio.client import WorkflowHistory
from temporalio.worker import Replayer

from almanac.gates import simulation
from workflows import OccurrenceWorkflow, ScheduleWorkflow
from workflows.manual import ManualRunWorkflow

pytestmark = [pytest.mark.anyio]

FOLDER = Path(__file__).resolve().parent / "histories"
HISTORIES = sorted(FOLDER.rglob("*.json"))
IDS = [str(p.relative_to(FOLDER).with_suffix("")) for p in HISTORIES]
SIMULATED_CLOCK_DECISIONS = {
    "occurrence-query-deadline-human-queue": (
        "when to stop asking is the case's deadline, in the ledger's clock, less the simulation's "
        "offset; production has no offset, so its deadline (and the number of queries) differs"
    ),
    "occurrence-reconciled-by-query": (
        "whether to ask at all depends on the case's deadline, in the ledger's clock, less the "
        "simulation's offset; production has no offset, so a recording whose simulated day lies "
        "behind the server's clock escalates at once in production (the offset depends on the "
        "recording date)"
    ),
    "schedule-short-history": (
        "a run that continued as new, not one that ended at its simulation stop: its timers are "
        "for the instants of a calendar two days behind the server's; production has no offset, "
        "so which instant is next, and whether its timer is asked early, differs"
    ),
}
"""Histories whose commands depend on the simulated clock's offset: replayed on the simulated
workflows only (they run the same production ``_reconcile``, with the offset the recording had)."""


def _ended_at_simulation_stop(history: WorkflowHistory) -> bool:
    """A schedule run that completed because its simulated clock reached ``stop_after_utc``.

    Production schedules complete too — when deleted, or when their first revision is refused —
    so the input decides: only a simulation's carries a stop instant.
    """
    started = history.events[0].workflow_execution_started_event_attributes
    completed = history.events[-1].HasField("workflow_execution_completed_event_attributes")
    if started.workflow_type.name != "AlmanacSchedule" or not completed:
        return False
    [payload] = started.input.payloads
    return json.loads(payload.data).get("stop_after_utc") is not None


@pytest.mark.parametrize("folder", [FOLDER, FOLDER / "previous-release"], ids=["today", "previous"])
def test_histories_cover_every_workflow(folder: Path) -> None:
    names = {path.stem for path in HISTORIES if path.parent == folder}
    for workflow_prefix in ("schedule-", "occurrence-", "manual-"):
        assert any(n.startswith(workflow_prefix) for n in names), (folder.name, workflow_prefix)


@pytest.mark.parametrize("path", HISTORIES, ids=IDS)
async def test_history_replays_on_the_simulated_workflows(path: Path) -> None:
    history = WorkflowHistory.from_json(path.stem, path.read_text())
    replayer = Replayer(workflows=list(simulation.WORKFLOWS))
    result = await replayer.replay_workflow(history, raise_on_replay_failure=True)
    assert result.replay_failure is None


@pytest.mark.parametrize("path", HISTORIES, ids=IDS)
async def test_history_replays_on_the_production_workflows(path: Path) -> None:
    history = WorkflowHistory.from_json(path.stem, path.read_text())
    if _ended_at_simulation_stop(history):
        pytest.skip("a schedule run that ended at its simulation stop (production has no stop)")
    if path.stem in SIMULATED_CLOCK_DECISIONS:
        pytest.skip(SIMULATED_CLOCK_DECISIONS[path.stem])
    replayer = Replayer(workflows=[ScheduleWorkflow, OccurrenceWorkflow, ManualRunWorkflow])
    result = await replayer.replay_workflow(history, raise_on_replay_failure=True)
    assert result.replay_failure is None
