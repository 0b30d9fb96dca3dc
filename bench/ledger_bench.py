"""Ledger benchmark: materialization rows/s vs a plain batched INSERT, and claim latency.

Run::

    .venv/bin/python bench/ledger_bench.py [--rows 20000] [--rounds 5]
                                           [--claimers 16] [--claims 400]

Both backends in one run: a SQLite file and a throwaway PostgreSQL cluster (local server binaries,
as in the tests). For each, the same occurrence rows are written by each arm, in the same database:

- ``materialize``: ``ledger.materialize`` — occurrences, slot claims and creation events, with
  ``ON CONFLICT DO NOTHING`` on every unique key, in one transaction — as the workflows' activity
  calls it (``rows=False``);
- ``materialize + rows``: the same, also returning the window's rows (as the CLI calls it);
- ``plain 1-table``: one batched ``INSERT`` of the same occurrence rows, as text, into one table
  with no constraints (the original baseline);
- ``plain all-rows``: one batched ``INSERT`` per table of *every* row materialize writes
  (occurrence, slot, event) into unconstrained copies of those three tables (same column
  types; no key, index, constraint or default), in one transaction.

Every arm first settles the database outside its timing (:func:`settle_database`: a checkpoint).
The four arms alternate over ``--rounds`` rounds in one process (``bench/_pairs.py``); ratios
are the median of per-round materialize occurrences/s over each baseline's (aim ≥ 0.5), with the
load average before each round. ``--before REF`` adds a fifth arm, ``before``: ``materialize`` of
the code at git ``REF`` (``git archive``), in a child process on its own database of the same
server (migrated by that code), timed inside the child, alternating with the others.
Claim latency: ``--claimers``
threads claim ``--claims`` DUE occurrences of one schedule as fast as they can (each a fresh gate
read + claim), reporting p50/p95/p99 of the claim call.
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import json
import os
import statistics
import subprocess
import sys
import tempfile
import threading
import time
from collections.abc import Callable, Iterator
from concurrent.futures import ThreadPoolExecutor
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

from sqlalchemy import Column, MetaData, String, Table, insert, text

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "tests" / "ledger"))

from ledger_pg import find_pg_ctl, start_server

from bench import _pairs, _stack
from ledger import Ledger, claim, get_gate, materialize, publish_revision, release_due
from ledger.creation import occurrence_row as _occurrence_row
from ledger.events import EVENTS, OCCURRENCES, SLOTS
from ledger.migrate import upgrade
from timecontract import Disposition, OccurrenceRecord, occurrences, parse_spec

T0 = datetime(2026, 11, 1, tzinfo=UTC)


def spec_document(schedule_id: str, rule: str = "FREQ=MINUTELY") -> dict[str, Any]:
    return {
        "schema": "scheduleSpec.v1",
        "scheduleId": schedule_id,
        "revision": 1,
        "timeZone": "UTC",
        "tzdbVersion": "2026a",
        "rule": rule,
        "lateness": "P1D",
        "cutoverAt": "2026-10-01T00:00:00Z",
    }


def spec(schedule_id: str, rule: str = "FREQ=MINUTELY"):  # type: ignore[no-untyped-def]
    return parse_spec(spec_document(schedule_id, rule))


ServerCpu = Callable[[], float]
"""CPU seconds the database server's processes have used so far (0 for SQLite: in-process)."""


def no_server() -> float:
    return 0.0


Settle = Callable[[], None]
"""Write out what earlier arms left in the database's buffers, outside any timing."""


def settle_database(ledger: Ledger) -> Settle:
    """A ``CHECKPOINT`` (PostgreSQL) or ``PRAGMA wal_checkpoint(TRUNCATE)`` (SQLite) on ``ledger``.

    Run before every timed write, so no arm pays for writing out another's dirty pages: the
    baselines drop their tables each round (their pages are discarded, never written), while the
    ledger's tables keep growing, and without this the materialize arms wrote the earlier rounds'
    pages back inside their timing.
    """
    statement = (
        "CHECKPOINT" if ledger.dialect == "postgresql" else "PRAGMA wal_checkpoint(TRUNCATE)"
    )

    def settle() -> None:
        # The driver's connection, without SQLAlchemy's BEGIN (SQLite refuses the pragma inside
        # a transaction; the ledger's SQLite connections are in the driver's autocommit mode).
        connection = ledger.engine.raw_connection()
        try:
            connection.cursor().execute(statement)
            connection.commit()
        finally:
            connection.close()

    return settle


def cluster_cpu(datadir: Path) -> ServerCpu:
    """The PostgreSQL cluster's CPU so far: the postmaster and all its children (backends, WAL
    writer, background writer…), from ``/proc``."""
    postmaster = int((datadir / "postmaster.pid").read_text().split()[0])

    def used() -> float:
        total = _stack.cpu_seconds(postmaster)
        for entry in Path("/proc").iterdir():
            if not entry.name.isdigit():
                continue
            try:
                stat = (entry / "stat").read_text()
            except OSError:
                continue
            if int(stat.rsplit(")", 1)[1].split()[1]) == postmaster:
                with contextlib.suppress(OSError):
                    total += _stack.cpu_seconds(int(entry.name))
        return total

    return used


def _cpu_figures(client_s: float, server_s: float, rows: int) -> dict[str, float]:
    """CPU per arm: the client's (this process, or the child), the server's, and occurrences per
    CPU-second of both (on an idle machine the two run one after the other, so this is the
    uncontended rate; on a loaded one it is steadier than the wall-clock rate)."""
    return {
        "client_cpu_ms": client_s * 1000,
        "server_cpu_ms": server_s * 1000,
        "occ_per_cpu_s": rows / max(client_s + server_s, 1e-9),
    }


# The ``before`` arm's child: the code of another tree, one materialize per line on stdin (a spec
# document, the window end, the row count), its seconds on stdout. Only the public API is used.
_CHILD = """
import json, sys, time
from datetime import UTC, datetime, timedelta
from ledger import Ledger, materialize, publish_revision
from ledger.migrate import upgrade
from timecontract import occurrences, parse_spec
url = sys.argv[1]
upgrade(url)
ledger = Ledger.from_url(url)
t0 = datetime(2026, 11, 1, tzinfo=UTC)
print("ready", flush=True)
for line in sys.stdin:
    job = json.loads(line)
    s = parse_spec(job["spec"])
    publish_revision(ledger, s, t0, by="bench")
    end = t0 + timedelta(minutes=job["rows"])
    started = time.perf_counter()
    occurrences(s, t0, end)
    resolve = time.perf_counter() - started
    cpu = time.process_time()
    started = time.perf_counter()
    result = materialize(ledger, s, t0, end, t0)
    seconds = time.perf_counter() - started
    cpu = time.process_time() - cpu
    assert len(result.created) == job["rows"]
    print(json.dumps({"seconds": seconds, "resolve": resolve, "cpu": cpu}), flush=True)
"""


@contextlib.contextmanager
def before_arm(
    ref: str, url: str, rows: int, settle: Settle, server_cpu: ServerCpu = no_server
) -> Iterator[_pairs.Arm]:
    """The ``before`` arm: ``materialize`` of the code at ``ref`` in a child process on ``url``."""
    with _stack.source_tree(ref) as tree:
        child = subprocess.Popen(
            [sys.executable, "-c", _CHILD, url],
            cwd=tree,
            env={**os.environ, "PYTHONPATH": str(tree)},
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            text=True,
        )
        assert child.stdin is not None and child.stdout is not None
        if child.stdout.readline().strip() != "ready":
            raise RuntimeError(f"the {ref} child did not start")

        def run(round_index: int) -> dict[str, float]:
            assert child.stdin is not None and child.stdout is not None
            job = {"spec": spec_document(f"bench-before-{round_index}"), "rows": rows}
            settle()
            server = server_cpu()
            child.stdin.write(json.dumps(job) + "\n")
            child.stdin.flush()
            done = json.loads(child.stdout.readline())
            # The server's CPU includes the child's publish and resolution (no SQL: negligible).
            cpu_figures = _cpu_figures(done["cpu"], server_cpu() - server, rows)
            return {
                "occ_per_s": rows / done["seconds"],
                "sql_part_occ_per_s": rows / (done["seconds"] - done["resolve"]),
                **cpu_figures,
            }

        try:
            yield _pairs.Arm(f"before ({ref})", run)
        finally:
            child.stdin.close()
            child.wait(timeout=60)


def _all_rows(records: list[OccurrenceRecord]) -> dict[Table, list[dict[str, Any]]]:
    """Every row a fresh materialization of ``records`` writes, per ledger table."""
    planned = [r for r in records if r.disposition is Disposition.PLANNED]
    return {
        OCCURRENCES: [_occurrence_row(r, T0) for r in records],
        SLOTS: [
            {
                "schedule_id": r.schedule_id,
                "logical_slot_id": r.logical_slot_id,
                "instant_utc": r.instant_utc,
                "owner_occurrence_id": r.occurrence_id,
                "owner_revision": r.revision,
                "claimed_at_utc": T0,
            }
            for r in planned
        ],
        EVENTS: [
            {
                "occurrence_id": r.occurrence_id,
                "from_state": None,
                "to_state": _occurrence_row(r, T0)["state"],
                "at_utc": T0,
                "by": "materializer",
                "why": f"materialized: {r.reason}",
            }
            for r in records
        ],
    }


def _unconstrained_copy(table: Table, metadata: MetaData) -> Table:
    """The same columns and types, no key, no index, no constraint, no default."""
    return Table(
        f"bench_plain_{table.name}",
        metadata,
        *[Column(c.name, c.type, nullable=True) for c in table.columns if c.name != "id"],
    )


def _timed_insert(
    ledger: Ledger,
    batches: dict[Table, list[dict[str, Any]]],
    settle: Settle,
    server_cpu: ServerCpu,
) -> tuple[float, dict[str, float]]:
    with ledger.engine.begin() as connection:
        for table in batches:
            table.drop(connection, checkfirst=True)
            table.create(connection)
    settle()
    cpu, server = time.process_time(), server_cpu()
    started = time.perf_counter()
    with ledger.engine.begin() as connection:
        for table, rows in batches.items():
            connection.execute(insert(table), rows)
    elapsed = time.perf_counter() - started
    count = len(next(iter(batches.values())))
    return elapsed, _cpu_figures(time.process_time() - cpu, server_cpu() - server, count)


def materialize_arms(
    ledger: Ledger, rows: int, server_cpu: ServerCpu = no_server
) -> list[_pairs.Arm]:
    """Four arms writing the same ``rows`` occurrences into the same database, one per round.

    ``materialize`` publishes a fresh schedule each round (so every row is new) and times
    ``ledger.materialize`` as the workflows' activity and the catch-up call it (``rows=False``);
    ``materialize + rows`` as the CLI calls it, also returning the window's rows (``resolve s``:
    the time contract's part, timed separately on the same window). The two baselines (re)create
    their unconstrained tables outside the timing. Every arm settles the database first
    (:func:`settle_database`).
    """
    settle = settle_database(ledger)

    def run_materialize(round_index: int, rows_wanted: bool) -> dict[str, float]:
        s = spec(f"bench-materialize-{'rows-' if rows_wanted else ''}{round_index}")
        publish_revision(ledger, s, T0, by="bench")
        end = T0 + timedelta(minutes=rows)
        started = time.perf_counter()
        occurrences(s, T0, end)
        resolve_s = time.perf_counter() - started
        settle()
        cpu, server = time.process_time(), server_cpu()
        started = time.perf_counter()
        result = materialize(ledger, s, T0, end, T0, rows=rows_wanted)
        materialize_s = time.perf_counter() - started
        cpu_figures = _cpu_figures(time.process_time() - cpu, server_cpu() - server, rows)
        assert len(result.created) == rows
        return {
            "occ_per_s": rows / materialize_s,
            "sql_part_occ_per_s": rows / (materialize_s - resolve_s),
            **cpu_figures,
        }

    records = occurrences(spec("bench-baseline"), T0, T0 + timedelta(minutes=rows))
    # Baseline 1 (since the first run): the occurrence rows only, as text, into one table.
    one = Table(
        "bench_plain_occurrences_text",
        MetaData(),
        *[Column(name, String) for name in _occurrence_row(records[0], T0)],
    )
    payload = [
        {k: None if v is None else str(v) for k, v in _occurrence_row(r, T0).items()}
        for r in records
    ]
    # Baseline 2: every row materialize writes (occurrence, slot, event) into
    # unconstrained copies of the three tables, same column types, one transaction.
    metadata = MetaData()
    every = {_unconstrained_copy(t, metadata): v for t, v in _all_rows(records).items()}

    def run_plain(batches: dict[Table, list[dict[str, Any]]]) -> dict[str, float]:
        elapsed, cpu_figures = _timed_insert(ledger, batches, settle, server_cpu)
        return {"occ_per_s": rows / elapsed, "sql_part_occ_per_s": rows / elapsed, **cpu_figures}

    return [
        _pairs.Arm("plain 1-table", lambda _round: run_plain({one: payload})),
        _pairs.Arm("plain all-rows", lambda _round: run_plain(every)),
        _pairs.Arm("materialize", lambda round_index: run_materialize(round_index, False)),
        _pairs.Arm("materialize + rows", lambda round_index: run_materialize(round_index, True)),
    ]


def bench_claims(ledger: Ledger, claimers: int, claims: int) -> list[float]:
    s = spec("bench-claims")
    publish_revision(ledger, s, T0, by="bench")
    made = materialize(ledger, s, T0, T0 + timedelta(minutes=claims), T0)
    release_due(ledger, s.schedule_id, T0 + timedelta(minutes=claims))
    queue = [r.occurrence_id for r in made.rows]
    lock = threading.Lock()
    latencies: list[float] = []
    barrier = threading.Barrier(claimers)

    def worker(n: int) -> None:
        barrier.wait()
        while True:
            with lock:
                if not queue:
                    return
                # Contention: half the workers race for the same head of the queue.
                occurrence_id = queue[0] if n % 2 else queue.pop(0)
            started = time.perf_counter()
            gate = get_gate(ledger, s.schedule_id)
            claim(
                ledger,
                occurrence_id,
                gate,
                worker_identity=f"w{n}",
                implementation_alias="default",
                input_digest="sha256:bench",
                now_utc=T0 + timedelta(hours=1),
            )
            elapsed = time.perf_counter() - started
            with lock:
                latencies.append(elapsed)

    with ThreadPoolExecutor(claimers) as pool:
        list(pool.map(worker, range(claimers)))
    return latencies


def report(
    name: str,
    ledger: Ledger,
    args: argparse.Namespace,
    extra: list[_pairs.Arm] | None = None,
    server_cpu: ServerCpu = no_server,
) -> None:
    print(f"\n{name}: materialize of {args.rows:,} occurrences (a minutely rule) vs plain INSERTs")
    result = asyncio.run(
        _pairs.alternate(
            [*materialize_arms(ledger, args.rows, server_cpu), *(extra or [])],
            rounds=args.rounds,
            baseline="plain 1-table",
            metric="occ_per_s",
            report=None,
        )
    )
    print(result.table())
    every = statistics.median(
        r.figures["materialize"]["occ_per_s"] / r.figures["plain all-rows"]["occ_per_s"]
        for r in result.rounds
    )
    print(f"materialize vs plain all-rows: median per-round ratio {every:.2f}")
    for name in ["materialize", "materialize + rows", *(a.name for a in extra or [])]:
        cpu = statistics.median(
            r.figures[name]["occ_per_cpu_s"] / r.figures["plain 1-table"]["occ_per_cpu_s"]
            for r in result.rounds
        )
        print(f"{name} vs plain 1-table per CPU-second: median per-round ratio {cpu:.2f}")
    for arm in extra or []:
        versus = statistics.median(
            r.figures["materialize"]["occ_per_s"] / r.figures[arm.name]["occ_per_s"]
            for r in result.rounds
        )
        print(f"materialize vs {arm.name}: median per-round ratio {versus:.2f}")
    lat = sorted(bench_claims(ledger, args.claimers, args.claims))
    q = statistics.quantiles(lat, n=100)
    print(
        f"claim ({args.claimers} threads, {len(lat)} calls) "
        f"p50 {q[49] * 1000:.1f} ms p95 {q[94] * 1000:.1f} ms p99 {q[98] * 1000:.1f} ms"
    )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rows", type=int, default=20_000)
    parser.add_argument("--claimers", type=int, default=16)
    parser.add_argument("--claims", type=int, default=400)
    parser.add_argument("--rounds", type=int, default=5)
    parser.add_argument("--only", choices=["sqlite", "postgresql"], default=None)
    parser.add_argument("--before", metavar="REF", help="add the materialize of git REF as an arm")
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as tmp, contextlib.ExitStack() as stack:
        if args.only != "postgresql":
            url = f"sqlite:///{tmp}/bench.sqlite3"
            upgrade(url)
            ledger = Ledger.from_url(url)
            extra = []
            if args.before:
                before_url = f"sqlite:///{tmp}/before.sqlite3"
                before_ledger = Ledger.from_url(before_url)
                stack.callback(before_ledger.dispose)
                arm = before_arm(args.before, before_url, args.rows, settle_database(before_ledger))
                extra.append(stack.enter_context(arm))
            report("sqlite", ledger, args, extra)
            ledger.dispose()
    if args.only == "sqlite":
        return
    pg_ctl = find_pg_ctl()
    if pg_ctl is None:
        print("postgresql: skipped (no pg_ctl found)")
        return
    server = start_server(pg_ctl)
    try:
        server.admin("CREATE DATABASE bench")
        upgrade(server.url("bench"))
        ledger = Ledger.from_url(server.url("bench"), pool_size=args.claimers + 4)
        with ledger.engine.connect() as c:
            version = c.execute(text("SHOW server_version")).scalar_one()
        used = cluster_cpu(server.workdir / "data")
        with contextlib.ExitStack() as stack:
            extra = []
            if args.before:
                server.admin("CREATE DATABASE bench_before")
                before = before_arm(
                    args.before,
                    server.url("bench_before"),
                    args.rows,
                    settle_database(ledger),
                    used,
                )
                extra.append(stack.enter_context(before))
            report(f"pg {version.split()[0]}", ledger, args, extra, used)
        ledger.dispose()
    finally:
        server.stop()


if __name__ == "__main__":
    main()
