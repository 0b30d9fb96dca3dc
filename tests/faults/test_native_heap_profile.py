"""``bench/scale.py --profile P`` with ``ALMANAC_PROFILE_MODE=native`` runs the worker on
jemalloc's heap profiler: a process launched with that environment writes heap dumps under P.

The stand-in ``worker`` allocates 192 MiB through ``malloc`` (``bytearray``), so jemalloc's
dump interval (64 MiB allocated) must produce dumps; without the preload no file appears.
"""

from __future__ import annotations

import ctypes.util
import os
import subprocess
import sys
from pathlib import Path

import pytest

from bench import scale

STAND_IN = "blobs = [bytearray(1 << 20) for _ in range(192)]\n"


def test_the_default_modes_run_the_profiled_module(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("ALMANAC_PROFILE_MODE", raising=False)
    env, module = scale.profiled({"A": "1"}, Path("/tmp/p"))
    assert (env, module) == ({"A": "1", "ALMANAC_PROFILE_OUT": "/tmp/p"}, "bench._profiled_worker")


@pytest.mark.skipif(ctypes.util.find_library("jemalloc") is None, reason="needs libjemalloc2")
def test_native_mode_writes_jemalloc_heap_dumps(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("ALMANAC_PROFILE_MODE", "native")
    tree = tmp_path / "tree"
    tree.mkdir()
    (tree / "worker.py").write_text(STAND_IN)
    prefix = tmp_path / "dumps" / "w"
    prefix.parent.mkdir()
    env, module = scale.profiled({"PYTHONPATH": str(tree)}, prefix)
    assert module == "worker"
    process = subprocess.run(
        [sys.executable, "-m", module],
        cwd=tree,
        env={**os.environ, **env},
        timeout=120,
        check=True,
    )
    assert process.returncode == 0
    dumps = sorted(prefix.parent.glob("w.*.heap"))
    assert len(dumps) >= 2, dumps
    assert "heap_v2/" in dumps[0].read_text().splitlines()[0]
