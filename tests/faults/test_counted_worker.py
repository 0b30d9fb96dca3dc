"""``bench/_counted_worker.py`` counts every transaction of the worker it runs, exactly, and the
counts outlive a worker that leaves with ``os._exit`` (as ``python -m worker`` does).

The worker is launched as ``bench/occurrence_cost.py`` launches an arm's (``bench._stack``: the
tree first on ``PYTHONPATH``, this checkout's wrapper as the script). Here the tree holds a
stand-in ``worker`` module that runs a known number of SQLAlchemy transactions, so the expected
counts come from the stand-in, not from the counter.
"""

from __future__ import annotations

from pathlib import Path

from bench import _stack
from bench._counted_worker import Counts, new_counts_file, read_counts

STAND_IN = """
import os
import sys

from sqlalchemy import create_engine, text

engine = create_engine("sqlite://")
commits, rollbacks = int(sys.argv[1]), int(sys.argv[2])
for _ in range(commits):
    with engine.begin() as connection:
        connection.execute(text("select 1"))
for _ in range(rollbacks):
    with engine.connect() as connection:
        connection.execute(text("select 1"))
        connection.rollback()
os._exit(0)  # as python -m worker leaves: no atexit
"""


def test_the_wrapper_counts_the_tree_s_worker_transactions_and_they_outlive_os_exit(
    tmp_path: Path,
) -> None:
    tree = tmp_path / "tree"
    tree.mkdir()
    (tree / "worker.py").write_text(STAND_IN)
    counts = new_counts_file(tmp_path / "worker.transactions")
    worker = _stack.WorkerProcess(
        tree,
        {"BENCH_TXN_COUNTS": str(counts)},
        script=_stack.ROOT / "bench" / "_counted_worker.py",
        log=tmp_path / "worker.log",
        args=["3", "2"],
    )
    try:
        code = worker.process.wait(60)
    finally:
        worker.stop()
    assert code == 0, (tmp_path / "worker.log").read_text()
    assert read_counts(counts) == Counts(begins=5, commits=3, rollbacks=2)


def test_counts_subtract_to_the_transactions_between_two_readings() -> None:
    assert Counts(9, 7, 2) - Counts(4, 3, 1) == Counts(5, 4, 1)
