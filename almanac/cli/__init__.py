"""The ``almanac`` command line: a thin Typer app over the Python API (``almanac.client``).

One module per command group, each a parse → call → render layer:

- ``spec``: ``validate``, ``schema``, ``preview`` (``timecontract`` only, no server);
- ``control``: ``apply``, ``disable``, ``enable``, ``status``, ``upcoming`` (``almanac.client``);
- ``manual``: ``trigger`` (a manual run, ``almanac.manual``), ``backfill`` (a past window);
- ``ledger``: ``ledger list|show|materialize|unknown|resolve``; ``db``: ``db upgrade``;
- ``tzdb``: ``tzdb list|add|diff`` (``almanac.tzdb``);
- ``rollout``: ``rollout``, ``rollback`` (``almanac.rollout`` over the ledger and Temporal);
- ``shadow``: ``shadow run|report`` (``ledger.shadow``: comparison only, never dispatched);
- ``console``: ``console`` (``almanac.console``: the operator console's web pages);
- ``worker``: ``worker`` (``almanac.worker``; ``python -m worker`` runs the same command);
- ``dev``, ``sink``: the stack on one machine (``almanac.stack``); ``gates``: the acceptance gates
  (``almanac.gates``); the only modules that import those packages, inside their commands.

``output`` holds what they share: exit codes (0 ok, 2 invalid input, 1 operational), the one error
line, ``--json`` and the exit itself. Command modules import heavy dependencies (temporalio,
SQLAlchemy, the ledger, activities, workflows, the stack and gates packages, httpx) inside the
commands, so ``almanac --help`` and ``almanac validate`` load none of them.

Start-up: Typer turns every registered command into a Click command (signatures, parameter types)
before it runs one, so :func:`main` registers only the group that owns the command typed
(``almanac validate …`` builds ``validate``, ``schema`` and ``preview``), and every group for
``--help``, no command or an unknown one; the other groups' modules are not even imported.
``app`` is the whole command line (tests, docs).
"""

from __future__ import annotations

import importlib
import sys
from collections.abc import Sequence
from types import ModuleType
from typing import Annotated, NoReturn

import typer

from almanac.cli.output import new_app, run

GROUP_NAMES: tuple[str, ...] = (
    "control",
    "manual",
    "worker",
    "dev",
    "gates",
    "spec",
    "sink",
    "tzdb",
    "calendar",
    "db",
    "ledger",
    "rollout",
    "shadow",
    "console",
)
"""Every command module of ``almanac.cli``, in the order ``almanac --help`` lists their commands."""

OWNERS: dict[str, str] = {
    **dict.fromkeys(("apply", "disable", "enable", "delete", "status", "upcoming"), "control"),
    "trigger": "manual",
    "backfill": "manual",
    "worker": "worker",
    "dev": "dev",
    "gates": "gates",
    **dict.fromkeys(("validate", "schema", "preview"), "spec"),
    "sink": "sink",
    "tzdb": "tzdb",
    "calendar": "calendar",
    "db": "db",
    "ledger": "ledger",
    **dict.fromkeys(("rollout", "rollback"), "rollout"),
    "shadow": "shadow",
    "console": "console",
}
"""Which module (of :data:`GROUP_NAMES`) registers each top-level command (a test holds it equal
to what they mount). Names, not modules: a command imports only its own group's module."""


def group(name: str) -> ModuleType:
    """The command module ``almanac.cli.<name>``, imported on first use."""
    return importlib.import_module(f"{__name__}.{name}")


def build_app(groups: Sequence[ModuleType] | None = None) -> typer.Typer:
    """The ``almanac`` app with the commands of ``groups`` (default: all of them)."""
    if groups is None:
        groups = [group(name) for name in GROUP_NAMES]
    app = new_app(
        "Almanac: scheduled automations as unique, recorded occurrences, run at most once.",
        name="almanac",
        no_args_is_help=True,
    )
    # A callback keeps the app a command group even when one group registers one command.
    app.callback()(_root)
    for module in groups:
        module.mount(app)
    return app


def _print_version(asked: bool) -> None:
    if asked:
        from importlib.metadata import version

        print(f"almanac {version('almanac')}")
        raise typer.Exit(0)


def _root(
    version: Annotated[
        bool,
        typer.Option(
            "--version",
            callback=_print_version,
            is_eager=True,
            help="Print the installed version and exit.",
        ),
    ] = False,
) -> None:
    """Almanac: scheduled automations as unique, recorded occurrences, run at most once."""


def groups_for(args: Sequence[str]) -> tuple[ModuleType, ...]:
    """The groups to build for a command line: the typed command's, or all of them."""
    owner = OWNERS.get(args[0] if args else "")
    return tuple(group(name) for name in (GROUP_NAMES if owner is None else (owner,)))


def main() -> NoReturn:
    """Console entry point (``almanac``); exits with the command's code (see ``output.run``)."""
    run(build_app(groups_for(sys.argv[1:])))


def __getattr__(name: str) -> typer.Typer:
    """``app``: the whole command line (tests, docs), built on first use (PEP 562)."""
    if name == "app":
        globals()["app"] = built = build_app()
        return built
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


__all__ = ["GROUP_NAMES", "OWNERS", "app", "build_app", "group", "groups_for", "main"]
