"""The package's public names load lazily and still mean what their modules define.

``ledger/__init__.py`` imports the handle, errors, states and views at once and the operations'
modules on first use of one of their names (PEP 562, ``_LAZY``), so ``import ledger`` loads no
SQLAlchemy. These tests hold the two halves of that together: the ``TYPE_CHECKING`` imports (what
mypy sees) and ``_LAZY`` (what runs) name the same module for every name, every name in
``__all__`` is the object its module defines, and no submodule imported before a name is first
used hides it (a submodule is bound on its package under its own name).
"""

from __future__ import annotations

import ast
import importlib
import json
import pkgutil
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

import ledger

REPO = Path(__file__).resolve().parents[2]
INIT = REPO / "ledger" / "__init__.py"


def _imports(*, type_checking: bool) -> dict[str, str]:
    """``{name: module}`` of the package's ``from ledger.x import …`` lines.

    ``type_checking``: those under ``if TYPE_CHECKING:`` (else those at the top level).
    """
    tree = ast.parse(INIT.read_text())
    if type_checking:
        [block] = [
            node
            for node in tree.body
            if isinstance(node, ast.If)
            and isinstance(node.test, ast.Name)
            and node.test.id == "TYPE_CHECKING"
        ]
        statements = block.body
    else:
        statements = tree.body
    return {
        alias.asname or alias.name: node.module
        for node in statements
        if isinstance(node, ast.ImportFrom) and node.module and node.module.startswith("ledger.")
        for alias in node.names
    }


def _fresh(code: str) -> Any:
    """Run ``code`` in a fresh interpreter from the repository; it prints one JSON object."""
    result = subprocess.run(
        [sys.executable, "-c", code],
        cwd=REPO,
        capture_output=True,
        text=True,
        timeout=60,
        check=True,
    )
    return json.loads(result.stdout.splitlines()[-1])


def test_the_lazy_table_names_the_modules_the_type_checker_sees() -> None:
    assert _imports(type_checking=True) == ledger._HOMES


def test_every_public_name_is_defined_once_eagerly_or_lazily() -> None:
    eager, lazy = _imports(type_checking=False), _imports(type_checking=True)
    assert eager.keys() & lazy.keys() == set()
    assert sorted(eager.keys() | lazy.keys()) == sorted(ledger.__all__)


def test_every_public_name_is_the_object_its_module_defines() -> None:
    homes = {**_imports(type_checking=False), **_imports(type_checking=True)}
    for name in ledger.__all__:
        defined = getattr(importlib.import_module(homes[name]), name)
        assert getattr(ledger, name) is defined, name


def test_an_unknown_name_is_an_attribute_error() -> None:
    with pytest.raises(AttributeError, match="no_such_name"):
        getattr(ledger, "no_such_name")  # noqa: B009


def test_no_submodule_is_named_like_a_public_name() -> None:
    # Importing ``ledger.x`` sets the package's attribute ``x`` to the module, after (or instead
    # of) the value ``__getattr__`` kept: a function and a module of one name cannot both be it.
    submodules = {module.name for module in pkgutil.iter_modules(ledger.__path__)}
    assert submodules & set(ledger.__all__) == set()


def test_importing_the_package_loads_no_sqlalchemy() -> None:
    loaded = set(_fresh("import json, sys; import ledger; print(json.dumps(list(sys.modules)))"))
    assert "sqlalchemy" not in loaded
    assert loaded & set(ledger._HOMES.values()) == set()  # no operation's module either


def test_submodules_imported_first_hide_no_public_name() -> None:
    # Every submodule (``ledger.materialization``, which defines ``materialize``, among them) is
    # imported before any public name is used; each name must still be what its module defines.
    report = _fresh(
        """
import importlib, json, pkgutil
import ledger
import ledger.materialization
for module in pkgutil.iter_modules(ledger.__path__):
    importlib.import_module(f"ledger.{module.name}")
wrong = {
    name: repr(getattr(ledger, name))
    for name, home in ledger._HOMES.items()
    if getattr(ledger, name) is not getattr(importlib.import_module(home), name)
}
print(json.dumps({
    "wrong": wrong,
    "materialize": getattr(ledger.materialize, "__module__", None),
    "callable": callable(ledger.materialize),
}))
"""
    )
    assert report == {"wrong": {}, "materialize": "ledger.materialization", "callable": True}
