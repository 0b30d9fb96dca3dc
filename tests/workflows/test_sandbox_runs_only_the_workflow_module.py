"""A workflow instance runs only its own module in the sandbox, and creates no dataclass.

The sandbox re-imports a workflow's module for every new workflow instance (DESIGN §6: it stays
on). What that module imports outside ``workflow.unsafe.imports_passed_through()`` is executed
again too, and each dataclass defined there is created again (compiling its methods): per
instance, that was most of the worker's CPU in a catch-up (``bench/README.md``, Scale). So the
payloads and shared options live in ``workflows.contracts``, passed through, the schedule loop's
steps in its sibling modules (``workflows.schedule_*``, passed through: only the workflow class
and its loop run per instance), and a schedule starts its children by type name instead of
loading the occurrence workflow's module.

Recorded histories are replayed (``temporalio.worker.Replayer``: the SDK's sandbox, as a worker
runs it) while the test records every module a source loader executes and every dataclass
created (``dataclasses._process_class``, the step ``@dataclass`` runs per class).
"""

from __future__ import annotations

import dataclasses
from collections.abc import Iterator
from importlib.machinery import SourceFileLoader
from pathlib import Path
from types import ModuleType
from typing import Any

import pytest
from temporalio.client import WorkflowHistory
from temporalio.worker import Replayer

from workflows import OccurrenceWorkflow, ScheduleWorkflow

pytestmark = [pytest.mark.anyio]

HISTORIES = Path(__file__).resolve().parent / "histories"
PROJECT = ("timecontract", "ledger", "activities", "workflows", "almanac")


class Executed:
    """What ran while recording: modules executed from source and dataclasses created."""

    def __init__(self) -> None:
        self.modules: list[str] = []
        self.dataclasses: list[str] = []

    def project_modules(self) -> set[str]:
        return {m for m in self.modules if m.split(".")[0] in PROJECT}

    def project_dataclasses(self) -> list[str]:
        return [c for c in self.dataclasses if c.split(".")[0] in PROJECT]


@pytest.fixture
def executed(monkeypatch: pytest.MonkeyPatch) -> Iterator[Executed]:
    seen = Executed()
    exec_module = SourceFileLoader.exec_module
    process_class = dataclasses._process_class  # type: ignore[attr-defined]

    def recording_exec(loader: SourceFileLoader, module: ModuleType) -> None:
        seen.modules.append(module.__name__)
        exec_module(loader, module)

    def recording_process(cls: type, *args: Any, **kwargs: Any) -> Any:
        seen.dataclasses.append(f"{cls.__module__}.{cls.__qualname__}")
        return process_class(cls, *args, **kwargs)

    monkeypatch.setattr(SourceFileLoader, "exec_module", recording_exec)
    monkeypatch.setattr(dataclasses, "_process_class", recording_process)
    yield seen


async def _replay(workflow: type, history: str) -> None:
    path = HISTORIES / f"{history}.json"
    replayer = Replayer(workflows=[workflow])
    result = await replayer.replay_workflow(
        WorkflowHistory.from_json(path.stem, path.read_text()), raise_on_replay_failure=True
    )
    assert result.replay_failure is None


async def test_a_schedule_instance_runs_its_module_and_not_the_occurrences(
    executed: Executed,
) -> None:
    await _replay(ScheduleWorkflow, "schedule-routed-by-alias")
    # The child starts (and their search attributes) are ``workflows.schedule_release``'s.
    assert executed.project_modules() == {"workflows", "workflows.schedule"}
    assert executed.project_dataclasses() == []


async def test_an_occurrence_instance_runs_its_module_only(executed: Executed) -> None:
    await _replay(OccurrenceWorkflow, "occurrence-retried-twice")
    assert executed.project_modules() == {
        "workflows",
        "workflows.occurrence",
        "workflows.search_attributes",
    }
    assert executed.project_dataclasses() == []


def test_the_recording_sees_a_dataclass_defined_in_a_sandboxed_module(
    executed: Executed, tmp_path: Path
) -> None:
    # The check's own control: a module executed from source that defines a dataclass is seen.
    source = tmp_path / "workflows_probe.py"
    source.write_text(
        "from dataclasses import dataclass\n\n@dataclass\nclass Probe:\n    n: int = 0\n"
    )
    loader = SourceFileLoader("workflows.probe", str(source))
    module = ModuleType("workflows.probe")
    loader.exec_module(module)
    assert "workflows.probe" in executed.project_modules()
    assert executed.project_dataclasses() == ["workflows.probe.Probe"]
