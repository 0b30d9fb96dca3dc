"""Recorded histories replay on today's workflow code without a NondeterminismError (DESIGN §6).

The histories in ``histories/`` were recorded by the workflow tests (see ``histories/README.md``):
schedule runs with a fold, signals (disable, enable, malformed ones), a revision cutover; occurrence
runs that succeeded, retried twice, and ended UNKNOWN_EFFECT in the human queue. A change to
workflow code that would replay differently must go behind ``workflow.patched("almanac-…")``.
"""

from __future__ import annotations

from pathlib import Path

import pytest
from temporalio.client import WorkflowHistory
from temporalio.worker import Replayer

from workflows import OccurrenceWorkflow, ScheduleWorkflow

pytestmark = [pytest.mark.anyio]

HISTORIES = sorted((Path(__file__).resolve().parent / "histories").glob("*.json"))


def test_histories_cover_both_workflows() -> None:
    names = {path.stem for path in HISTORIES}
    assert any(n.startswith("schedule-") for n in names)
    assert any(n.startswith("occurrence-") for n in names)


@pytest.mark.parametrize("path", HISTORIES, ids=[p.stem for p in HISTORIES])
async def test_history_replays_without_nondeterminism(path: Path) -> None:
    history = WorkflowHistory.from_json(path.stem, path.read_text())
    replayer = Replayer(workflows=[ScheduleWorkflow, OccurrenceWorkflow])
    result = await replayer.replay_workflow(history, raise_on_replay_failure=True)
    assert result.replay_failure is None
