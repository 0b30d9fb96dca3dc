"""Ledger benchmark: materialization rows/s vs a plain batched INSERT, and claim latency.

Run::

    .venv/bin/python bench/ledger_bench.py [--rows 20000] [--claimers 16] [--claims 400]

Both backends in one run: a SQLite file and a throwaway PostgreSQL cluster (local server binaries,
as in the tests). For each, the same occurrence rows are written twice in the same database:

- ``materialize``: ``ledger.materialize`` — occurrences, slot claims and creation events, with
  ``ON CONFLICT DO NOTHING`` on every unique key, in one transaction;
- ``plain 1-table``: one batched ``INSERT`` of the same occurrence rows, as text, into one table
  with no constraints (the original baseline);
- ``plain all-rows``: one batched ``INSERT`` per table of *every* row materialize writes
  (occurrence, slot, event) into unconstrained copies of those three tables (same column
  types; no key, index, constraint or default), in one transaction.

Ratios are materialize occurrences/s over each baseline's occurrences/s (aim ≥ 0.5).
Claim latency: ``--claimers``
threads claim ``--claims`` DUE occurrences of one schedule as fast as they can (each a fresh gate
read + claim), reporting p50/p95/p99 of the claim call.
"""

from __future__ import annotations

import argparse
import statistics
import sys
import tempfile
import threading
import time
from concurrent.futures import ThreadPoolExecutor
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

from sqlalchemy import Column, MetaData, String, Table, insert, text

sys.path.insert(0, str(Path(__file__).parents[1] / "tests" / "ledger"))

from ledger_pg import find_pg_ctl, start_server

from ledger import Ledger, claim, get_gate, materialize, publish_revision, release_due
from ledger.events import EVENTS, OCCURRENCES, SLOTS
from ledger.materialize import _occurrence_row
from ledger.migrate import upgrade
from timecontract import Disposition, OccurrenceRecord, occurrences, parse_spec

T0 = datetime(2026, 11, 1, tzinfo=UTC)


def spec(schedule_id: str, rule: str = "FREQ=MINUTELY"):  # type: ignore[no-untyped-def]
    return parse_spec(
        {
            "schema": "scheduleSpec.v1",
            "scheduleId": schedule_id,
            "revision": 1,
            "timeZone": "UTC",
            "tzdbVersion": "2026a",
            "rule": rule,
            "lateness": "P1D",
            "cutoverAt": "2026-10-01T00:00:00Z",
        }
    )


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


def _timed_insert(ledger: Ledger, batches: dict[Table, list[dict[str, Any]]]) -> float:
    with ledger.engine.begin() as connection:
        for table in batches:
            table.drop(connection, checkfirst=True)
            table.create(connection)
    started = time.perf_counter()
    with ledger.engine.begin() as connection:
        for table, rows in batches.items():
            connection.execute(insert(table), rows)
    return time.perf_counter() - started


def bench_materialize(ledger: Ledger, rows: int) -> dict[str, float]:
    """Rows per second: materialize, its SQL part, and the two plain-INSERT baselines."""
    s = spec("bench-materialize")
    publish_revision(ledger, s, T0, by="bench")
    end = T0 + timedelta(minutes=rows)
    started = time.perf_counter()
    records = occurrences(s, T0, end)
    resolve_s = time.perf_counter() - started
    started = time.perf_counter()
    result = materialize(ledger, s, T0, end, T0)
    materialize_s = time.perf_counter() - started
    assert len(result.created) == rows
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
    one_s = _timed_insert(ledger, {one: payload})
    # Baseline 2: every row materialize writes (occurrence, slot, event) into
    # unconstrained copies of the three tables, same column types, one transaction.
    metadata = MetaData()
    every = {_unconstrained_copy(t, metadata): v for t, v in _all_rows(records).items()}
    all_s = _timed_insert(ledger, every)
    return {
        "materialize": rows / materialize_s,
        "sql_part": rows / (materialize_s - resolve_s),
        "plain_one_table": rows / one_s,
        "plain_all_rows": rows / all_s,
    }


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


def report(name: str, ledger: Ledger, args: argparse.Namespace) -> None:
    m = bench_materialize(ledger, args.rows)
    lat = sorted(bench_claims(ledger, args.claimers, args.claims))
    q = statistics.quantiles(lat, n=100)
    one, every = m["plain_one_table"], m["plain_all_rows"]
    print(
        f"{name:10s} materialize {m['materialize']:7.0f} rows/s (SQL part {m['sql_part']:7.0f})"
        f" | plain 1-table {one:7.0f} rows/s, all-rows {every:7.0f} occ/s\n"
        f"{'':10s} ratio vs 1-table {m['materialize'] / one:.2f} (SQL part "
        f"{m['sql_part'] / one:.2f}) | vs all-rows {m['materialize'] / every:.2f} (SQL part "
        f"{m['sql_part'] / every:.2f})\n"
        f"{'':10s} claim ({args.claimers} threads, {len(lat)} calls) "
        f"p50 {q[49] * 1000:.1f} ms p95 {q[94] * 1000:.1f} ms p99 {q[98] * 1000:.1f} ms"
    )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rows", type=int, default=20_000)
    parser.add_argument("--claimers", type=int, default=16)
    parser.add_argument("--claims", type=int, default=400)
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        url = f"sqlite:///{tmp}/bench.sqlite3"
        upgrade(url)
        ledger = Ledger.from_url(url)
        report("sqlite", ledger, args)
        ledger.dispose()
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
        report(f"pg {version.split()[0]}", ledger, args)
        ledger.dispose()
    finally:
        server.stop()


if __name__ == "__main__":
    main()
