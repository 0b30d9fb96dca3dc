"""``python bench/_counted_worker.py [options]``: ``python -m worker``, counting transactions.

Runs what ``python -m worker`` runs (the ``worker`` module of the tree on ``PYTHONPATH``, with the
same command line) with SQLAlchemy listeners on the ``Engine`` class that count every transaction
the process begins, commits and rolls back — the ledger's, whatever code the tree holds. Run it as
a script, not with ``-m``: the worker of another source tree (``--before REF``, on ``PYTHONPATH``)
then runs under this checkout's counter.

``$BENCH_TXN_COUNTS`` names a file :func:`new_counts_file` made: three little-endian unsigned
64-bit integers (begins, commits, rollbacks), mapped into the worker's memory and updated at each
event, so :func:`read_counts` sees them at any moment — before and after a round, and after the
worker stopped (it leaves with ``os._exit``, which skips ``atexit``, and its event loop owns
SIGTERM and SIGINT). A begin is any transaction, a read included.
"""

from __future__ import annotations

import mmap
import os
import runpy
import struct
import sys
import threading
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

EVENTS = ("begin", "commit", "rollback")
_FORMAT = "<3Q"
SIZE = struct.calcsize(_FORMAT)


@dataclass(frozen=True, slots=True)
class Counts:
    """Transactions one worker process began, committed and rolled back."""

    begins: int
    commits: int
    rollbacks: int

    def __sub__(self, earlier: Counts) -> Counts:
        """The transactions between ``earlier`` and this reading."""
        return Counts(
            self.begins - earlier.begins,
            self.commits - earlier.commits,
            self.rollbacks - earlier.rollbacks,
        )


def new_counts_file(path: Path) -> Path:
    """Create ``path`` with zero counts (before the worker starts, so it is always readable)."""
    path.write_bytes(bytes(SIZE))
    return path


def read_counts(path: Path) -> Counts:
    """The counts in ``path`` now."""
    return Counts(*struct.unpack(_FORMAT, path.read_bytes()))


class _Counter:
    """The counts, in a shared mapping of the counts file; safe from any thread."""

    def __init__(self, path: Path) -> None:
        with open(path, "r+b") as file:
            self._map = mmap.mmap(file.fileno(), SIZE)
        self._values = [0] * len(EVENTS)
        self._lock = threading.Lock()

    def listener(self, event: str) -> Callable[[Any], None]:
        """A listener for the ``Engine`` event ``event`` (one of ``EVENTS``)."""
        index = EVENTS.index(event)

        def count(connection: Any) -> None:
            with self._lock:
                self._values[index] += 1
                struct.pack_into(_FORMAT, self._map, 0, *self._values)

        return count


def main() -> None:
    """Register the listeners, then run the worker's own entry point."""
    # sys.path[0] is bench/: the worker's imports resolve against PYTHONPATH, not these scripts.
    del sys.path[0]
    from sqlalchemy import event
    from sqlalchemy.engine import Engine

    counter = _Counter(Path(os.environ["BENCH_TXN_COUNTS"]))
    for name in EVENTS:
        event.listen(Engine, name, counter.listener(name))
    runpy.run_module("worker", run_name="__main__", alter_sys=True)


if __name__ == "__main__":
    main()
