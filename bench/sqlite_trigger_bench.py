"""SQLite state changes through the transition trigger: this tree's, migration 0009's, none.

Run::

    .venv/bin/python bench/sqlite_trigger_bench.py [--rows 20000] [--rounds 7]

One template ledger file, migrated by ``ledger.migrate.upgrade`` and holding ``--rows``
``PLANNED`` occurrences of one minutely schedule (``ledger.materialize``), copied three times:

- ``no trigger`` (the baseline): the transition trigger dropped — the floor of the same work;
- ``0009 trigger``: migrated down to 0017 (Alembic), i.e. 0009's trigger with its
  ``NOT IN (…21 pairs…)`` list;
- ``this tree``: the copy as this tree migrates it.

Two measurements, each arm once per round in rotating order (``bench/_pairs.py``):

- **update**: one ``UPDATE occurrences SET state = 'DUE' … WHERE state = 'PLANNED'`` of every
  row, on a raw ``sqlite3`` connection, rolled back (every round updates the same rows); rows per
  CPU-second (steadier than wall time on a shared machine) and wall time;
- **release_due**: ``ledger.release_due`` of every row (all overdue; lateness and catch-up as the
  spec says) on a fresh copy of the arm's file made outside the timing; rows per CPU-second
  (the ledger runs in this process) and wall time.

Ratios are arm ÷ ``no trigger`` per round (median, min–max); ``this tree ÷ 0009 trigger`` is
printed too.
"""

from __future__ import annotations

import argparse
import asyncio
import shutil
import sqlite3
import statistics
import sys
import tempfile
import time
from collections.abc import Callable
from datetime import timedelta
from pathlib import Path

from alembic import command

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from bench import _pairs
from bench.ledger_bench import T0, spec
from ledger import Ledger, materialize, publish_revision, release_due
from ledger.migrate import alembic_config, upgrade

SCHEDULE = "bench-trigger"
TRIGGER = "trg_occurrences_legal_transition"
UPDATE = (
    "UPDATE occurrences SET state = 'DUE', event_sequence = event_sequence + 1 "
    "WHERE state = 'PLANNED'"
)


def template(folder: Path, rows: int) -> Path:
    """A ledger file at this tree's head with ``rows`` PLANNED occurrences."""
    path = folder / "template.sqlite3"
    upgrade(f"sqlite:///{path}")
    ledger = Ledger.from_url(f"sqlite:///{path}")
    try:
        s = spec(SCHEDULE)
        publish_revision(ledger, s, T0, by="bench")
        materialize(ledger, s, T0, T0 + timedelta(minutes=rows), T0)
    finally:
        ledger.dispose()
    return path


def variants(folder: Path, source: Path) -> dict[str, Path]:
    """The three arms' files, copies of ``source``."""
    paths = {name: folder / f"{name.replace(' ', '-')}.sqlite3" for name in ARMS}
    for path in paths.values():
        shutil.copyfile(source, path)
    with sqlite3.connect(paths["no trigger"]) as connection:
        connection.execute(f"DROP TRIGGER {TRIGGER}")
    ledger = Ledger.from_url(f"sqlite:///{paths['0009 trigger']}")
    try:
        command.downgrade(alembic_config(ledger.engine), "0017")
    finally:
        ledger.dispose()
    return paths


ARMS = ("no trigger", "0009 trigger", "this tree")


def update_arm(path: Path, rows: int) -> Callable[[int], dict[str, float]]:
    connection = sqlite3.connect(path, isolation_level=None)

    def run(_round: int) -> dict[str, float]:
        connection.execute("BEGIN")
        cpu, started = time.process_time(), time.perf_counter()
        changed = connection.execute(UPDATE).rowcount
        wall, cpu = time.perf_counter() - started, time.process_time() - cpu
        connection.execute("ROLLBACK")
        assert changed == rows, changed
        return {"rows_per_cpu_s": rows / max(cpu, 1e-9), "wall_ms": wall * 1000}

    return run


def release_arm(path: Path, folder: Path, rows: int) -> Callable[[int], dict[str, float]]:
    def run(round_index: int) -> dict[str, float]:
        copy = folder / f"round-{round_index}-{path.name}"
        shutil.copyfile(path, copy)
        ledger = Ledger.from_url(f"sqlite:///{copy}")
        try:
            cpu, started = time.process_time(), time.perf_counter()
            result = release_due(ledger, SCHEDULE, T0 + timedelta(minutes=rows))
            wall, cpu = time.perf_counter() - started, time.process_time() - cpu
        finally:
            ledger.dispose()
            copy.unlink()
        assert len(result.released) + len(result.expired) == rows
        return {"rows_per_cpu_s": rows / max(cpu, 1e-9), "wall_ms": wall * 1000}

    return run


def compare(name: str, arms: list[_pairs.Arm], metric: str, rounds: int) -> None:
    result = asyncio.run(
        _pairs.alternate(arms, rounds=rounds, baseline="no trigger", metric=metric, report=None)
    )
    print(f"\n{name}\n{result.table()}")
    after = result.ratios("this tree")
    before = result.ratios("0009 trigger")
    print(
        "this tree ÷ 0009 trigger, median per round: "
        f"{statistics.median(a / b for a, b in zip(after, before, strict=True)):.2f}"
    )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rows", type=int, default=20_000)
    parser.add_argument("--rounds", type=int, default=7)
    args = parser.parse_args()
    print(f"SQLite {sqlite3.sqlite_version}, {args.rows:,} occurrences")
    with tempfile.TemporaryDirectory() as tmp:
        folder = Path(tmp)
        paths = variants(folder, template(folder, args.rows))
        updates = [_pairs.Arm(name, update_arm(paths[name], args.rows)) for name in ARMS]
        compare("update (one statement, rolled back)", updates, "rows_per_cpu_s", args.rounds)
        releases = [_pairs.Arm(n, release_arm(paths[n], folder, args.rows)) for n in ARMS]
        compare("ledger.release_due", releases, "rows_per_cpu_s", args.rounds)


if __name__ == "__main__":
    main()
