"""``python -m bench._profiled_worker``: the production worker under cProfile, every thread.

Runs what ``python -m worker`` runs (``almanac.worker.run`` with the environment's settings) with
one ``cProfile.Profile`` on the event-loop thread (workflow activations, the sandbox, payload
conversion) and one per activity-executor thread (the synchronous ledger activities). On SIGTERM
it writes ``$ALMANAC_PROFILE_OUT.loop.pstats`` and ``$ALMANAC_PROFILE_OUT.activities.pstats``
(read them with ``python -m pstats``) and the thread CPU split to ``$ALMANAC_PROFILE_OUT.json``.
With ``ALMANAC_PROFILE_MODE=sample`` it samples every thread's stack instead
(``$ALMANAC_PROFILE_OUT.samples.txt``); with ``ALMANAC_PROFILE_MODE=memory`` it traces Python
allocations (``tracemalloc``): every 2 s a line of traced and resident MiB to
``$ALMANAC_PROFILE_OUT.memory.txt``, and the largest allocation sites, by file and by line, each
time the traced total passes its previous high by 10 % and at the end (what the Python heap holds
at its peak; the rest of the resident set is the interpreter, the SDK core and the allocator).
A bench tool (``bench/scale.py --profile``), not a production entry point: cProfile roughly
doubles the Python time it measures, so read the shares, not the absolute seconds.
"""

from __future__ import annotations

import asyncio
import cProfile
import json
import logging
import os
import pstats
import sys
import threading
import time
import tracemalloc
from collections import Counter
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any

from almanac import worker as worker_process
from almanac.cli import worker as worker_command
from almanac.settings import AlmanacSettings

_thread_profiles: list[cProfile.Profile] = []
_thread_cpu: dict[str, float] = {}
_lock = threading.Lock()


def _start_thread_profile() -> None:
    profile = cProfile.Profile(time.thread_time)
    with _lock:
        _thread_profiles.append(profile)
    profile.enable()


class _ProfiledExecutor(ThreadPoolExecutor):
    """The worker's activity executor, each thread profiled from its start."""

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        kwargs["initializer"] = _start_thread_profile
        super().__init__(*args, **kwargs)


IDLE = frozenset({"select", "poll", "get", "wait", "acquire", "sleep", "_worker", "run_forever"})


def _sample(out: str, stop: threading.Event, interval: float = 0.005) -> None:
    """Sample every thread's Python stack; write inclusive counts per function (busy samples).

    A sample whose innermost frame is a wait (``IDLE``) is not counted. Unlike cProfile it costs
    nothing per call, so call-heavy code (imports, dataclass creation) is not over-weighted.
    """
    me = threading.get_ident()
    main_ident = threading.main_thread().ident
    inclusive: Counter[str] = Counter()
    leaf: Counter[str] = Counter()
    busy = {"main": 0, "other": 0}
    while not stop.wait(interval):
        for ident, frame in sys._current_frames().items():
            if ident == me or frame.f_code.co_name in IDLE:
                continue
            busy["main" if ident == main_ident else "other"] += 1
            seen = set()
            f: Any = frame
            leaf[f"{frame.f_code.co_filename}:{frame.f_code.co_name}"] += 1
            while f is not None:
                key = f"{f.f_code.co_filename}:{f.f_code.co_name}"
                if key not in seen:
                    seen.add(key)
                    inclusive[key] += 1
                f = f.f_back
    with open(f"{out}.samples.txt", "w") as file:
        file.write(f"busy samples by thread: {busy}\n\n== inclusive\n")
        for key, count in inclusive.most_common(150):
            file.write(f"{count:8d} {key}\n")
        file.write("\n== leaf\n")
        for key, count in leaf.most_common(80):
            file.write(f"{count:8d} {key}\n")


def _resident_mib() -> float:
    for line in Path("/proc/self/status").read_text().splitlines():
        if line.startswith("VmRSS:"):
            return int(line.split()[1]) / 1024
    return float("nan")


def _write_sites(path: Path, note: str) -> None:
    """The 30 largest allocation sites by file and by line, under a heading ``note``."""
    snapshot = tracemalloc.take_snapshot()
    lines = [f"== {note}", *(str(s) for s in snapshot.statistics("filename")[:30]), "-- by line"]
    lines += [str(s) for s in snapshot.statistics("lineno")[:30]]
    path.write_text("\n".join(lines) + "\n")


def _trace_memory(out: str, stop: threading.Event, interval: float = 2.0) -> None:
    """Sample traced and resident memory; snapshot the allocation sites at each new high."""
    began = time.monotonic()
    high = 0.0
    with open(f"{out}.memory.txt", "w") as timeline:
        while not stop.wait(interval):
            traced = tracemalloc.get_traced_memory()[0] / 2**20
            resident = _resident_mib()
            elapsed = time.monotonic() - began
            timeline.write(
                f"{elapsed:7.1f} s traced {traced:7.1f} MiB resident {resident:7.1f} MiB\n"
            )
            timeline.flush()
            if traced > high * 1.1:
                high = traced
                _write_sites(Path(f"{out}.memory-peak.txt"), f"{elapsed:.0f} s, {traced:.1f} MiB")
        _write_sites(Path(f"{out}.memory-end.txt"), f"end, {time.monotonic() - began:.0f} s")


def main() -> None:
    """Run the worker until SIGTERM, then write the profiles."""
    out = os.environ["ALMANAC_PROFILE_OUT"]
    if os.environ.get("ALMANAC_PROFILE_MODE") == "memory":
        # The worker's own command line (its flags, e.g. --max-cached-workflows, apply).
        tracemalloc.start()
        stop = threading.Event()
        tracer = threading.Thread(target=_trace_memory, args=(out, stop), daemon=True)
        tracer.start()
        try:
            worker_command.main()
        finally:
            stop.set()
            tracer.join()
            os._exit(0)
    if os.environ.get("ALMANAC_PROFILE_MODE") == "sample":
        logging.basicConfig(level=logging.INFO)
        stop = threading.Event()
        sampler = threading.Thread(target=_sample, args=(out, stop), daemon=True)
        sampler.start()
        options = worker_process.WorkerOptions(identity=worker_process.default_identity())
        try:
            asyncio.run(worker_process.run(AlmanacSettings(), options))
        finally:
            stop.set()
            sampler.join()
            os._exit(0)
    logging.basicConfig(level=logging.INFO, format="%(asctime)s %(levelname)s %(name)s %(message)s")
    worker_process.ThreadPoolExecutor = _ProfiledExecutor  # type: ignore[misc]
    options = worker_process.WorkerOptions(identity=worker_process.default_identity())
    loop_profile = cProfile.Profile(time.thread_time)
    cpu0 = time.process_time()
    thread0 = time.thread_time()
    loop_profile.enable()
    try:
        asyncio.run(worker_process.run(AlmanacSettings(), options))
    finally:
        loop_profile.disable()
        loop_cpu = time.thread_time() - thread0
        loop_profile.dump_stats(f"{out}.loop.pstats")
        with _lock:
            profiles = list(_thread_profiles)
        if profiles:
            for p in profiles:
                p.disable()  # only stops this thread's hook if it is the caller; harmless
            stats = pstats.Stats(profiles[0])
            for p in profiles[1:]:
                stats.add(p)
            stats.dump_stats(f"{out}.activities.pstats")
        with open(f"{out}.json", "w") as f:
            json.dump(
                {"process_cpu_s": time.process_time() - cpu0, "loop_thread_cpu_s": loop_cpu}, f
            )
        os._exit(0)


if __name__ == "__main__":
    main()
