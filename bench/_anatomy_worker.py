"""``python bench/_anatomy_worker.py [options]``: ``bench/_counted_worker.py``, by activity too.

The same worker and the same totals (``$BENCH_TXN_COUNTS``, ``bench/_counted_worker.py``); besides,
every transaction begun is counted under what began it: the activity it ran in, by activity type
(``almanac.claim_and_execute``; ``local almanac.release_due`` for a local activity), or ``outside
an activity`` (the worker's start-up catch-up, ``almanac.catch_up``, and its other reads), and
under that and the outermost ``ledger`` function on the stack (the ledger call an activity made:
``almanac.release_due > ledger.occurrences.list_occurrences``). The counts go to the JSON file
``$BENCH_TXN_BY_ACTIVITY`` (``{"activity": {name: begins}, "call": {name: begins}}``), rewritten
at most every 0.2 s while they change: the worker leaves with ``os._exit``, so read it once the
work has been over for a moment (``bench/scale.py --anatomy`` reads it after the floor).
"""

from __future__ import annotations

import json
import os
import sys
import threading
from collections import Counter
from pathlib import Path
from typing import Any

import _counted_worker  # sys.path[0] is bench/ (run as a script, as _counted_worker is)
from sqlalchemy import event
from sqlalchemy.engine import Engine
from temporalio import activity

OUTSIDE = "outside an activity"
FLUSH = 0.2
"""Seconds between two writes of the counts file."""


class _ByActivity:
    """Transactions begun, by what began them; written to ``path`` by a daemon thread."""

    def __init__(self, path: Path) -> None:
        self._path = path
        self._counts: Counter[str] = Counter()
        self._calls: Counter[str] = Counter()
        self._lock = threading.Lock()
        self._dirty = threading.Event()
        threading.Thread(target=self._write, daemon=True).start()

    def begin(self, connection: Any) -> None:
        """The ``Engine`` ``begin`` listener."""
        if activity.in_activity():
            info = activity.info()
            where = f"local {info.activity_type}" if info.is_local else info.activity_type
        else:
            where = OUTSIDE
        call = _ledger_call()
        with self._lock:
            self._counts[where] += 1
            self._calls[f"{where} > {call}"] += 1
        self._dirty.set()

    def _write(self) -> None:
        while True:
            self._dirty.wait()
            self._dirty.clear()
            with self._lock:
                text = json.dumps(
                    {
                        "activity": dict(self._counts.most_common()),
                        "call": dict(self._calls.most_common()),
                    }
                )
            scratch = self._path.with_suffix(".tmp")
            scratch.write_text(text)
            os.replace(scratch, self._path)
            threading.Event().wait(FLUSH)


def _ledger_call() -> str:
    """The outermost ``ledger`` package function on the caller's stack (``module.function``)."""
    found = "no ledger function"
    frame = sys._getframe(2)
    while frame is not None:
        module = frame.f_globals.get("__name__", "")
        if module == "ledger" or module.startswith("ledger."):
            found = f"{module}.{frame.f_code.co_name}"
        frame = frame.f_back  # type: ignore[assignment]
    return found


def main() -> None:
    """Register the listener, then run ``_counted_worker`` (its listeners and the worker)."""
    counter = _ByActivity(Path(os.environ["BENCH_TXN_BY_ACTIVITY"]))
    event.listen(Engine, "begin", counter.begin)
    _counted_worker.main()


if __name__ == "__main__":
    main()
