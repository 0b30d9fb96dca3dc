"""The ``almanac`` command line: a thin Typer app over the Python API (``almanac.client``).

One module per command group, each a parse → call → render layer:

- ``spec``: ``validate``, ``schema``, ``preview`` (``timecontract`` only, no server);
- ``control``: ``apply``, ``disable``, ``enable``, ``status``, ``upcoming`` (``almanac.client``);
- ``ledger``: ``ledger list|show|materialize|unknown|resolve``; ``db``: ``db upgrade``;
- ``tzdb``: ``tzdb list|add|diff`` (``almanac.tzdb``);
- ``rollout``: ``rollout``, ``rollback`` (``almanac.rollout`` over the ledger and Temporal);
- ``shadow``: ``shadow run|report`` (``ledger.shadow``: comparison only, never dispatched);
- ``worker``: ``worker`` (``almanac.worker``; ``python -m worker`` runs the same command);
- ``dev``, ``sink``, ``gates``: tooling from ``devtools`` (the only modules that import it).

``output`` holds what they share: exit codes (0 ok, 2 invalid input, 1 operational), the one error
line, ``--json`` and the exit itself. Command modules import heavy dependencies (temporalio,
SQLAlchemy, the ledger, activities, workflows, devtools, httpx) inside the commands, so
``almanac --help`` and ``almanac validate`` load none of them.
"""

from __future__ import annotations

from typing import NoReturn

from almanac.cli import control, db, dev, gates, ledger, rollout, shadow, sink, spec, tzdb, worker
from almanac.cli.output import new_app, run

app = new_app(
    "Almanac: scheduled automations as unique, recorded occurrences, run at most once.",
    name="almanac",
    no_args_is_help=True,
)
for _group in (control, worker, dev, gates, spec, sink, tzdb, db, ledger, rollout, shadow):
    _group.mount(app)


def main() -> NoReturn:
    """Console entry point (``almanac``); exits with the command's code (see ``output.run``)."""
    run(app)


__all__ = ["app", "main"]
