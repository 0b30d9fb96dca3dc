"""One name, one type: no two production modules define a top-level class of the same name.

Two ``GateView``s or two ``RevisionRejected``s in different packages make a reader (and an
``except`` clause) guess which one is meant (issue 9). Classes are read with ``ast`` from the
source of every production package (the lower layers and the top layer), so a
module no test imports is covered too.
"""

from __future__ import annotations

import ast
from collections import defaultdict
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
PACKAGES = ("lifecycle", "timecontract", "ledger", "activities", "workflows", "almanac")


def _classes(path: Path) -> list[str]:
    tree = ast.parse(path.read_text(), filename=str(path))
    return [node.name for node in tree.body if isinstance(node, ast.ClassDef)]


def _definitions() -> dict[str, list[str]]:
    """Class name → the ``path:`` of every module that defines it at top level."""
    where: dict[str, list[str]] = defaultdict(list)
    files = [p for package in PACKAGES for p in sorted((ROOT / package).rglob("*.py"))]
    for path in [*files, ROOT / "worker.py"]:
        if "migrations" in path.parts:
            continue  # Alembic revisions are frozen snapshots, never imported by name.
        for name in _classes(path):
            where[name].append(str(path.relative_to(ROOT)))
    return where


def test_no_two_modules_define_a_class_of_the_same_name() -> None:
    repeated = {name: paths for name, paths in _definitions().items() if len(paths) > 1}
    assert repeated == {}


def test_the_reader_sees_the_classes_of_every_layer() -> None:
    # The check above is only as good as the reader: pin a class of each package.
    where = _definitions()
    assert where["ScheduleSpecV1"] == ["timecontract/spec.py"]
    assert where["RevisionRejected"] == ["ledger/errors.py"]
    assert where["ApplyRefused"] == ["almanac/client_errors.py"]
    assert where["TriggerReport"] == ["almanac/manual.py"]
    assert where["ScheduleWorkflow"] == ["workflows/schedule.py"]
    assert where["GateView"] == ["lifecycle/gate.py"]  # the ledger and the payloads share it
    assert "GateSnapshot" not in where  # no copy for the workflows
