"""Dependencies point one way (DESIGN §2): timecontract ← ledger ← activities ← workflows ← top.

Imports are read with ``ast`` from the source, so the rule holds for every module, imported by a
test or not.
"""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
LAYERS = ["timecontract", "ledger", "activities", "workflows", "worker", "almanac"]
# What each layer may import from the project (itself included).
ALLOWED = {
    "timecontract": {"timecontract"},
    "ledger": {"timecontract", "ledger"},
    "activities": {"timecontract", "ledger", "activities"},
    # Workflows see only the activity definitions (passed through the sandbox, called by method
    # reference) and their I/O dataclasses: no zones, RRULEs or SQL in workflow code.
    "workflows": {"workflows", "activities"},
}
WORKFLOW_ACTIVITY_MODULES = {"activities", "activities.io", "activities.ledger_activities"}
FORBIDDEN_THIRD_PARTY = {
    "timecontract": {"sqlalchemy", "temporalio", "httpx", "alembic", "psycopg"},
    "ledger": {"temporalio", "httpx"},
    "workflows": {"sqlalchemy", "httpx", "dateutil", "zoneinfo", "tzdata", "psycopg"},
}


def _imports(path: Path) -> list[str]:
    names: list[str] = []
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.Import):
            names += [alias.name for alias in node.names]
        elif isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
            names.append(node.module)
    return names


def _modules(layer: str) -> list[Path]:
    folder = ROOT / layer
    return sorted(folder.rglob("*.py")) if folder.is_dir() else []


@pytest.mark.parametrize("layer", sorted(ALLOWED))
def test_layer_imports_point_one_way(layer: str) -> None:
    project = set(LAYERS)
    for path in _modules(layer):
        for name in _imports(path):
            top = name.split(".")[0]
            assert top not in FORBIDDEN_THIRD_PARTY.get(layer, set()), f"{path}: imports {name}"
            if top in project:
                assert top in ALLOWED[layer], f"{path}: {layer} must not import {name}"
                if layer == "workflows" and top == "activities":
                    assert name in WORKFLOW_ACTIVITY_MODULES, f"{path}: imports {name}"


def test_every_layer_has_code() -> None:
    for layer in ALLOWED:
        assert _modules(layer), f"{layer}/ is empty"
