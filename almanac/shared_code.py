"""Workflow modules compiled once per process, however many sandboxed instances run them.

The SDK's workflow sandbox imports a workflow's module afresh for every new workflow instance
(DESIGN §6: the sandbox stays on), and a source loader unmarshals the module's code objects from
its ``.pyc`` each time: every cached instance holds its own copy of the module's code, the largest
share of an instance's Python memory. A code object is immutable, so instances can share one: the
finder installed here gives the named packages' modules a loader that unmarshals a file's code once
(per path, modification time and size) and hands the same code object to every later import. Each
import still executes the module in its own namespace (the sandbox's isolation and restrictions
are unchanged: globals, classes and functions are still per instance); only the compiled code is
shared, as it is between the functions of one module.
"""

from __future__ import annotations

import sys
import threading
from collections.abc import Iterable, Sequence
from importlib.machinery import ModuleSpec, PathFinder, SourceFileLoader
from types import CodeType, ModuleType

_codes: dict[tuple[str, float, int], CodeType] = {}
_lock = threading.Lock()


class SharedCodeLoader(SourceFileLoader):
    """A source loader whose compiled code is shared by every import of the same file."""

    def get_code(self, fullname: str) -> CodeType:
        """The module's code: unmarshalled (or compiled) on the first import of this file version.

        Raises what :meth:`SourceFileLoader.get_code` raises (a missing file, a syntax error).
        """
        stats = self.path_stats(self.path)
        key = (self.path, float(stats["mtime"]), int(stats.get("size", -1)))
        with _lock:
            code = _codes.get(key)
        if code is None:
            code = super().get_code(fullname)
            assert code is not None  # a source loader always returns code or raises
            with _lock:
                code = _codes.setdefault(key, code)
        return code


class SharedCodeFinder:
    """A ``sys.meta_path`` finder: the path finder's spec, with a :class:`SharedCodeLoader`."""

    def __init__(self, packages: Iterable[str]) -> None:
        """``packages``: top-level package names whose source modules share their code."""
        self.packages = frozenset(packages)

    def find_spec(
        self,
        fullname: str,
        path: Sequence[str] | None = None,
        target: ModuleType | None = None,
    ) -> ModuleSpec | None:
        """The spec of ``fullname`` if it is in one of the packages and loaded from source."""
        if fullname.partition(".")[0] not in self.packages:
            return None
        spec = PathFinder.find_spec(fullname, path, target)
        if spec is None or type(spec.loader) is not SourceFileLoader or spec.origin is None:
            return spec
        spec.loader = SharedCodeLoader(fullname, spec.origin)
        return spec


def install(packages: Iterable[str]) -> SharedCodeFinder:
    """Put a finder for ``packages`` first on ``sys.meta_path`` (once per package set).

    Returns the finder (already installed if an equal one was); :func:`uninstall` removes it.
    """
    wanted = frozenset(packages)
    for finder in sys.meta_path:
        if isinstance(finder, SharedCodeFinder) and finder.packages == wanted:
            return finder
    finder = SharedCodeFinder(wanted)
    sys.meta_path.insert(0, finder)
    return finder


def uninstall(finder: SharedCodeFinder) -> None:
    """Remove ``finder`` from ``sys.meta_path`` (no error if it is not there)."""
    if finder in sys.meta_path:
        sys.meta_path.remove(finder)


__all__ = ["SharedCodeFinder", "SharedCodeLoader", "install", "uninstall"]
