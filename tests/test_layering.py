"""Dependencies point one way (DESIGN §2), through every package, and nothing imports in a circle.

    lifecycle ← timecontract ← ledger ← activities ← workflows ← almanac ← almanac.console
        ← almanac.stack ← almanac.gates ← almanac.cli ← worker.py
                                                    ← bench

``lifecycle`` holds the values that cross the workflow boundary (states, the gate, occurrence
payloads): standard library only, so the ledger, the activities and workflow code share them.

``almanac`` here is the library (settings, client, worker, tz release store, search attribute
registration); ``almanac.console`` the operator console's web pages (it reads through ``ledger``
and writes through ``almanac.client``); ``almanac.stack`` the stack on one machine (the ``almanac
dev`` supervisor, which also serves the console, and the effect sink); ``almanac.gates`` the
acceptance gates harness with its simulated calendar; ``almanac.cli`` the command line on top of
them. The library never imports the console or the two tooling packages; in the command line only
the ``dev``, ``sink`` and ``gates`` commands import the tooling, inside their commands. Each top
package has an allow-list of the project packages it may import.

Imports are read with ``ast`` from the source (every ``import`` statement, at module level, in a
function or under ``TYPE_CHECKING``), so each rule holds for every module, imported by a test or
not.
"""

from __future__ import annotations

import ast
import sys
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
UNITS = [
    "lifecycle",
    "timecontract",
    "ledger",
    "activities",
    "workflows",
    "almanac",
    "almanac.console",
    "almanac.stack",
    "almanac.gates",
    "almanac.cli",
    "worker",
    "bench",
]
"""The project's packages, lowest first: each may import only itself and those before it."""
RANK = {unit: rank for rank, unit in enumerate(UNITS)}
# Stricter than the order, for the lower layers: what each may import from the project.
ALLOWED = {
    "lifecycle": {"lifecycle"},
    "timecontract": {"timecontract"},
    "ledger": {"lifecycle", "timecontract", "ledger"},
    "activities": {"lifecycle", "timecontract", "ledger", "activities"},
    # Workflows see only the activity definitions (passed through the sandbox, called by method
    # reference), their I/O dataclasses and the secret rule (WORKFLOW_TIMECONTRACT_MODULES): no
    # zones, RRULEs or SQL in workflow code.
    "workflows": {"workflows", "lifecycle", "activities", "timecontract"},
    # The top packages (issue 28): the library sees the layers below it, never the tooling; the
    # stack sees the library; the gates see the stack (its sink, the dev server binary).
    "almanac": {"lifecycle", "timecontract", "ledger", "activities", "workflows", "almanac"},
    # The console reads through the ledger, writes through the client, and previews a spec with
    # the action catalog the CLI's validate uses: no workflow code, no tooling.
    "almanac.console": {
        "lifecycle",
        "timecontract",
        "ledger",
        "activities",
        "almanac",
        "almanac.console",
    },
    "almanac.stack": {
        "lifecycle",
        "timecontract",
        "ledger",
        "activities",
        "workflows",
        "almanac",
        "almanac.console",
        "almanac.stack",
    },
    "almanac.gates": {
        "lifecycle",
        "timecontract",
        "ledger",
        "activities",
        "workflows",
        "almanac",
        "almanac.console",
        "almanac.stack",
        "almanac.gates",
    },
    "almanac.cli": {
        "lifecycle",
        "timecontract",
        "ledger",
        "activities",
        "workflows",
        "almanac",
        "almanac.console",
        "almanac.stack",
        "almanac.gates",
        "almanac.cli",
    },
    "worker": {"almanac.cli"},
}
WORKFLOW_TIMECONTRACT_MODULES = {"timecontract.secrets"}
"""The one time-contract module workflow code calls: the secret rule (pure text; no zones, RRULE
or I/O), which the update validator and the publish signal apply before anything is queued."""
WORKFLOW_ACTIVITY_MODULES = {
    "activities",
    "activities.io",
    "activities.ledger_activities",
    "activities.deadlines",  # the deadline sweep's definition and I/O (no SQL at import)
    "activities.streak_activities",  # the failure-streak activities' I/O (no SQL at import)
}
FORBIDDEN_THIRD_PARTY = {
    "timecontract": {"sqlalchemy", "temporalio", "httpx", "alembic", "psycopg"},
    "ledger": {"temporalio", "httpx"},
    "workflows": {"sqlalchemy", "httpx", "dateutil", "zoneinfo", "tzdata", "psycopg"},
}
TOOLING_COMMANDS = {
    "almanac.stack": {"almanac.cli.dev", "almanac.cli.sink"},
    "almanac.gates": {"almanac.cli.gates"},
}
"""The only command modules that may import each tooling package, and only inside a function."""


@dataclass(frozen=True)
class Import:
    """One import statement's target, resolved to a project module where it names one."""

    source: str
    target: str
    lineno: int
    lazy: bool
    """Inside a function: runs when the function is called, not when the module is imported."""


def _module_name(path: Path) -> str:
    parts = list(path.relative_to(ROOT).with_suffix("").parts)
    if parts[-1] == "__init__":
        parts.pop()
    return ".".join(parts)


def _paths() -> dict[str, Path]:
    found = {"worker": ROOT / "worker.py"}
    for folder in ("lifecycle", "timecontract", "ledger", "activities", "workflows", "almanac"):
        found |= {_module_name(p): p for p in (ROOT / folder).rglob("*.py")}
    found |= {_module_name(p): p for p in (ROOT / "bench").glob("*.py")}
    return found


MODULES = _paths()


def unit_of(module: str) -> str | None:
    """The package a module belongs to (``almanac``'s subpackages apart from it), or None."""
    for sub in ("almanac.cli", "almanac.console", "almanac.stack", "almanac.gates"):
        if module == sub or module.startswith(f"{sub}."):
            return sub
    top = module.split(".")[0]
    return top if top in RANK else None


def _resolve(name: str) -> str:
    """The longest prefix of ``name`` that is a project module (else ``name`` itself)."""
    parts = name.split(".")
    for end in range(len(parts), 0, -1):
        if ".".join(parts[:end]) in MODULES:
            return ".".join(parts[:end])
    return name


def _package_of(module: str) -> str:
    path = MODULES[module]
    return module if path.name == "__init__.py" else module.rpartition(".")[0]


class _Finder(ast.NodeVisitor):
    def __init__(self, module: str) -> None:
        self.module = module
        self.depth = 0
        self.found: list[Import] = []

    def _function(self, node: ast.FunctionDef | ast.AsyncFunctionDef | ast.Lambda) -> None:
        self.depth += 1
        self.generic_visit(node)
        self.depth -= 1

    visit_FunctionDef = visit_AsyncFunctionDef = visit_Lambda = _function

    def _add(self, name: str, node: ast.stmt) -> None:
        self.found.append(Import(self.module, _resolve(name), node.lineno, self.depth > 0))

    def visit_Import(self, node: ast.Import) -> None:
        for alias in node.names:
            self._add(alias.name, node)

    def visit_ImportFrom(self, node: ast.ImportFrom) -> None:
        base = node.module or ""
        if node.level:
            package = _package_of(self.module).split(".")
            anchor = ".".join(package[: len(package) - node.level + 1])
            base = f"{anchor}.{base}".rstrip(".")
        for alias in node.names:
            # ``from almanac import worker`` imports the module almanac.worker, not the package.
            submodule = f"{base}.{alias.name}"
            self._add(submodule if submodule in MODULES else base, node)


def imports_of(module: str) -> list[Import]:
    """Every import in a module's source, resolved (relative imports made absolute)."""
    finder = _Finder(module)
    finder.visit(ast.parse(MODULES[module].read_text(encoding="utf-8")))
    return finder.found


IMPORTS = {module: imports_of(module) for module in MODULES}


def _edges(units: set[str] | None = None) -> Iterator[Import]:
    for module, found in IMPORTS.items():
        if units is None or unit_of(module) in units:
            yield from found


def _cycles(graph: dict[str, set[str]]) -> list[list[str]]:
    """The strongly connected components with more than one node (Tarjan), each sorted."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    found: list[list[str]] = []

    def visit(node: str) -> None:
        index[node] = low[node] = len(index)
        stack.append(node)
        on_stack.add(node)
        for nxt in sorted(graph.get(node, ())):
            if nxt not in index:
                visit(nxt)
                low[node] = min(low[node], low[nxt])
            elif nxt in on_stack:
                low[node] = min(low[node], index[nxt])
        if low[node] == index[node]:
            component = []
            while True:
                top = stack.pop()
                on_stack.discard(top)
                component.append(top)
                if top == node:
                    break
            if len(component) > 1 or node in graph.get(node, ()):
                found.append(sorted(component))

    for node in sorted(graph):
        if node not in index:
            visit(node)
    return found


@pytest.mark.parametrize("unit", UNITS)
def test_imports_point_down_the_layers(unit: str) -> None:
    for imp in _edges({unit}):
        where = f"{MODULES[imp.source].relative_to(ROOT)}:{imp.lineno}"
        target = unit_of(imp.target)
        top = imp.target.split(".")[0]
        assert top not in FORBIDDEN_THIRD_PARTY.get(unit, set()), f"{where}: imports {imp.target}"
        if target is None:
            continue
        assert RANK[target] <= RANK[unit], f"{where}: {unit} must not import {imp.target} (up)"
        if unit in ALLOWED:
            assert target in ALLOWED[unit], f"{where}: {unit} must not import {imp.target}"
        if unit == "workflows" and target == "activities":
            assert imp.target in WORKFLOW_ACTIVITY_MODULES, f"{where}: imports {imp.target}"
        if unit == "workflows" and target == "timecontract":
            assert imp.target in WORKFLOW_TIMECONTRACT_MODULES, f"{where}: imports {imp.target}"


def test_lifecycle_imports_only_the_standard_library() -> None:
    # Workflow code imports it in the sandbox, and every layer shares it: nothing that reads a
    # clock, a zone or a database may come with it.
    for imp in _edges({"lifecycle"}):
        top = imp.target.split(".")[0]
        where = f"{MODULES[imp.source].relative_to(ROOT)}:{imp.lineno}"
        assert top == "lifecycle" or top in sys.stdlib_module_names, f"{where}: {imp.target}"


def test_no_two_packages_import_each_other() -> None:
    graph: dict[str, set[str]] = {}
    for imp in _edges():
        source, target = unit_of(imp.source), unit_of(imp.target)
        if source and target and source != target:
            graph.setdefault(source, set()).add(target)
    assert _cycles(graph) == []


def test_no_modules_import_each_other_in_a_circle() -> None:
    # Every package, the top layer included (almanac, almanac.stack, almanac.gates, almanac.cli,
    # worker.py). Lazy imports count too: they only postpone the circle to the first call.
    graph: dict[str, set[str]] = {}
    for imp in _edges():
        if unit_of(imp.target) and imp.target != imp.source:
            graph.setdefault(imp.source, set()).add(imp.target)
    assert _cycles(graph) == []


def test_only_their_commands_import_the_tooling_packages_and_lazily() -> None:
    for imp in _edges():
        target, source = unit_of(imp.target), unit_of(imp.source)
        if target not in TOOLING_COMMANDS or source in {target, "almanac.gates", "bench"}:
            continue
        where = f"{MODULES[imp.source].relative_to(ROOT)}:{imp.lineno}"
        assert imp.source in TOOLING_COMMANDS[target], f"{where}: imports {imp.target}"
        assert imp.lazy, f"{where}: import {imp.target} inside the command, not at module level"


LEDGER_WRITES = {
    "backfill_window",
    "cancel",
    "change_gate",
    "claim",
    "delete_schedule",
    "disable",
    "enable",
    "failed",
    "mark_running",
    "materialize",
    "materialize_bounded",
    "publish_revision",
    "record_trigger",
    "redeliver",
    "register_implementation",
    "release_due",
    "resolve_reconciliation",
    "retry_wait",
    "shadow_materialize",
    "succeeded",
    "switch_implementation",
    "unknown_effect",
}
"""The ledger's write operations: the command line reaches them only through the library."""


def _ledger_names(module: str) -> Iterator[tuple[int, str]]:
    """Each ledger name a module imports (``from ledger… import x``) or calls (``ledger.x``)."""
    for node in ast.walk(ast.parse(MODULES[module].read_text(encoding="utf-8"))):
        if isinstance(node, ast.ImportFrom) and (node.module or "").split(".")[0] == "ledger":
            yield from ((node.lineno, alias.name) for alias in node.names)
        named = isinstance(node, ast.Attribute) and isinstance(node.value, ast.Name)
        if named and node.value.id == "ledger":  # type: ignore[attr-defined]
            yield node.lineno, node.attr  # type: ignore[attr-defined]


def test_the_command_line_writes_the_ledger_only_through_the_library() -> None:
    # Issue 28: every ledger write goes through one API (almanac.client, almanac.rollout, ...).
    for module in MODULES:
        if unit_of(module) != "almanac.cli":
            continue
        for lineno, name in _ledger_names(module):
            where = f"{MODULES[module].relative_to(ROOT)}:{lineno}"
            assert name not in LEDGER_WRITES, f"{where}: calls ledger.{name} around the client"


def test_every_package_has_code() -> None:
    for unit in UNITS:
        assert any(unit_of(module) == unit for module in MODULES), f"{unit} has no module"


def test_the_import_reader_sees_what_the_rules_need() -> None:
    # The checks above are only as good as the resolver: pin a few facts of today's tree.
    def targets(module: str) -> set[str]:
        return {imp.target for imp in IMPORTS[module]}

    assert "almanac.worker" in targets("almanac.cli.worker")  # ``from almanac import worker``
    assert "almanac.cli.output" in targets("almanac.cli.spec")
    assert "almanac.cli.worker" in targets("worker")
    assert "almanac.gates.harness" in targets("almanac.cli.gates")
    assert any(
        imp.lazy for imp in IMPORTS["almanac.cli.gates"] if imp.target == "almanac.gates.harness"
    )
    assert unit_of("almanac.console.app") == "almanac.console"
    assert "almanac.ledger_client" in targets("almanac.console.app")
    assert _cycles({"a": {"b"}, "b": {"c"}, "c": {"a"}, "d": {"a"}}) == [["a", "b", "c"]]
