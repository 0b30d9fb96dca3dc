"""Sandboxed workflow instances share their module's compiled code (``almanac.shared_code``).

The sandbox re-imports a workflow's module for every instance; without sharing, each import
unmarshals the module's code objects again and every cached instance holds a copy. Recorded
histories are replayed twice (``temporalio.worker.Replayer``: the SDK's sandbox) while the test
counts the modules whose code is unmarshalled from bytecode or compiled from source.
"""

from __future__ import annotations

import sys
from collections import Counter
from collections.abc import Iterator
from importlib.machinery import SourceFileLoader
from pathlib import Path
from types import ModuleType
from typing import Any

import pytest
from temporalio.client import WorkflowHistory
from temporalio.worker import Replayer

from almanac import shared_code
from workflows import ScheduleWorkflow

pytestmark = [pytest.mark.anyio]

HISTORY = Path(__file__).resolve().parent / "histories" / "schedule-routed-by-alias.json"


@pytest.fixture
def compiled(monkeypatch: pytest.MonkeyPatch) -> Iterator[Counter[str]]:
    """Modules whose code was unmarshalled or compiled while a module was being imported.

    Only inside an import (``exec_module``): the SDK also reads a module's code once to derive a
    build ID, which is no instance's.
    """
    seen: Counter[str] = Counter()
    importing: list[str] = []
    exec_module = SourceFileLoader.exec_module
    get_code = SourceFileLoader.get_code

    def recording_exec(loader: SourceFileLoader, module: ModuleType) -> None:
        importing.append(module.__name__)
        try:
            exec_module(loader, module)
        finally:
            importing.pop()

    def recording_get_code(loader: SourceFileLoader, fullname: str) -> Any:
        if importing:
            seen[fullname] += 1
        return get_code(loader, fullname)

    monkeypatch.setattr(SourceFileLoader, "exec_module", recording_exec)
    # The unshared path: what a plain source loader does per import.
    monkeypatch.setattr(SourceFileLoader, "get_code", recording_get_code)
    yield seen


async def _replay_twice() -> None:
    replayer = Replayer(workflows=[ScheduleWorkflow])
    history = WorkflowHistory.from_json(HISTORY.stem, HISTORY.read_text())
    for _ in range(2):
        result = await replayer.replay_workflow(history, raise_on_replay_failure=True)
        assert result.replay_failure is None


async def test_two_instances_unmarshal_the_schedule_module_once(compiled: Counter[str]) -> None:
    finder = shared_code.install(["workflows"])
    try:
        await _replay_twice()
    finally:
        shared_code.uninstall(finder)
    assert compiled["workflows.schedule"] <= 1


async def test_without_the_finder_each_instance_unmarshals_it(
    compiled: Counter[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    # The check's own control: the recording sees the sandbox load the module per instance.
    # A worker built earlier in this process installed the finder: take it out for this test.
    kept = [f for f in sys.meta_path if not isinstance(f, shared_code.SharedCodeFinder)]
    monkeypatch.setattr(sys, "meta_path", kept)
    await _replay_twice()
    assert compiled["workflows.schedule"] >= 2
