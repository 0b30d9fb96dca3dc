"""Console page timings on a large PostgreSQL ledger, against the plain SQL behind each page.

Run::

    .venv/bin/python bench/console_pages.py [--schedules 10000] [--per-schedule 100]
                                            [--big 10000] [--rounds 5] [--repeat 20]

A throwaway PostgreSQL cluster (local server binaries, as in the tests) holds ``--schedules``
hourly schedules of ``--per-schedule`` occurrences each (one template schedule written through
the ledger's own operations, then copied row for row under new IDs, so every row passed the
ledger's constraints), plus one schedule ``big`` of ``--big`` hourly occurrences (written by
``ledger.materialize``) with one open UNKNOWN_EFFECT case. Defaults: 10,000 schedules and about a
million occurrences.

Per page, two arms alternate over ``--rounds`` rounds (``bench/_pairs.py``), each timing
``--repeat`` requests and reporting the median milliseconds:

- ``console``: the whole page — an HTTP GET through Starlette's test client, the ledger reads
  and the Jinja2 rendering;
- ``plain SQL``: the query behind the page, written by hand with psycopg (no ORM, no
  rendering): what the page cannot beat.

Pages: the schedules overview (first page, and the page after schedule 5,000), the big schedule's
month view and a list page, rolling through 12 months, an occurrence page, the human queue.
"""

from __future__ import annotations

import argparse
import asyncio
import statistics
import sys
import time
from collections.abc import Callable
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "tests" / "ledger"))

import psycopg
from ledger_pg import find_pg_ctl, start_server
from starlette.testclient import TestClient

from almanac.console import ConsoleSettings, create_app
from almanac.settings import AlmanacSettings
from bench import _pairs
from ledger import (
    Ledger,
    claim,
    get_gate,
    list_occurrences,
    mark_running,
    materialize,
    publish_revision,
    release_due,
    unknown_effect,
)
from ledger.migrate import upgrade
from timecontract import parse_spec

T0 = datetime(2026, 1, 1, tzinfo=UTC)
NOW = datetime(2026, 7, 1, tzinfo=UTC)


def spec(schedule_id: str) -> Any:
    return parse_spec(
        {
            "schema": "scheduleSpec.v1",
            "scheduleId": schedule_id,
            "revision": 1,
            "timeZone": "America/New_York",
            "tzdbVersion": "2026a",
            "rule": "FREQ=HOURLY",
            "misfirePolicy": "SKIP",
            "cutoverAt": T0.isoformat().replace("+00:00", "Z"),
        }
    )


def populate(handle: Ledger, dsn: str, schedules: int, per_schedule: int, big: int) -> str:
    """Write the ledger (see the module docstring); return the big schedule's UNKNOWN_EFFECT."""
    template = spec("t")
    publish_revision(handle, template, T0, by="bench")
    materialize(handle, template, T0, T0 + timedelta(hours=per_schedule), T0, rows=False)
    started = time.monotonic()
    with psycopg.connect(dsn, autocommit=True) as db:
        ids = "SELECT 's' || lpad(n::text, 5, '0') AS id FROM generate_series(1, %s) AS n"
        db.execute(
            "INSERT INTO schedule_gates SELECT ids.id, active_revision, disabled, disabled_reason, "
            "disable_generation, execution_epoch, implementation_alias, created_at_utc, "
            f"updated_at_utc, updated_by, deleted_at_utc FROM schedule_gates, ({ids}) AS ids "
            "WHERE schedule_id = 't'",
            (schedules,),
        )
        db.execute(
            "INSERT INTO revisions SELECT ids.id, revision, replace(spec_json, "
            '\'"scheduleId":"t"\', \'"scheduleId":"\' || ids.id || \'"\'), digest, '
            f"cutover_at_utc, published_at_utc, published_by FROM revisions, ({ids}) AS ids "
            "WHERE schedule_id = 't'",
            (schedules,),
        )
        columns = [
            row[0]
            for row in db.execute(
                "SELECT column_name FROM information_schema.columns "
                "WHERE table_name = 'occurrences' ORDER BY ordinal_position"
            )
        ]
        renamed = {
            "occurrence_id": "ids.id || substr(occurrence_id, 2)",
            "schedule_id": "ids.id",
            "logical_slot_id": "ids.id || substr(logical_slot_id, 2)",
        }
        select = ", ".join(renamed.get(c, c) for c in columns)
        db.execute(
            f"INSERT INTO occurrences ({', '.join(columns)}) SELECT {select} "
            f"FROM occurrences, ({ids}) AS ids WHERE schedule_id = 't'",
            (schedules,),
        )
        db.execute("ANALYZE")
    print(f"copied {schedules} schedules in {time.monotonic() - started:.0f} s")
    big_spec = spec("big")
    publish_revision(handle, big_spec, T0, by="bench")
    step = timedelta(days=30)
    start = T0
    while start < T0 + timedelta(hours=big):
        end = min(start + step, T0 + timedelta(hours=big))
        materialize(handle, big_spec, start, end, T0, rows=False)
        start = end
    first = list_occurrences(handle, "big", limit=1)[0]
    assert first.instant_utc is not None
    (due,) = release_due(handle, "big", first.instant_utc).released[:1]
    claim(
        handle,
        due,
        get_gate(handle, "big"),
        worker_identity="bench",
        implementation_alias="default",
        input_digest="sha256:x",
        now_utc=first.instant_utc,
    )
    mark_running(handle, due, 1, first.instant_utc, by="bench")
    unknown_effect(
        handle, due, 1, first.instant_utc, by="bench", error_class="Timeout", error_message="t"
    )
    with psycopg.connect(dsn, autocommit=True) as db:
        db.execute("ANALYZE")
    return due


def timed(call: Callable[[], object], repeat: int) -> dict[str, float]:
    samples = []
    for _ in range(repeat):
        started = time.perf_counter()
        call()
        samples.append((time.perf_counter() - started) * 1000)
    return {"ms": statistics.median(samples)}


PLACED = "coalesce(instant_utc, gap_at_utc)"


def pages(unknown: str) -> list[tuple[str, list[str], list[tuple[str, tuple[Any, ...]]]]]:
    """Each page: a name, the URLs it rolls through, the plain SQL behind one of them."""
    months = [f"2026-{m:02d}" for m in range(1, 13)]
    month_sql = (
        f"SELECT * FROM occurrences WHERE schedule_id = %s AND {PLACED} >= %s AND {PLACED} < %s "
        f"ORDER BY {PLACED}, occurrence_id LIMIT 501"
    )
    june = (datetime(2026, 6, 1, 4, tzinfo=UTC), datetime(2026, 7, 1, 4, tzinfo=UTC))
    overview = [
        (
            "SELECT * FROM schedule_gates WHERE schedule_id > %s ORDER BY schedule_id LIMIT 51",
            ("",),
        ),
        (
            "SELECT schedule_id, state, count(*) FROM occurrences WHERE schedule_id IN "
            "(SELECT schedule_id FROM schedule_gates ORDER BY schedule_id LIMIT 50) "
            "GROUP BY schedule_id, state",
            (),
        ),
    ]
    return [
        ("schedules, first page", ["/schedules"], overview),
        ("schedules, after s05000", ["/schedules?after=s05000"], overview),
        (
            "big: month view, 12 months",
            [f"/schedules/big?month={m}" for m in months],
            [(month_sql, ("big", *june))],
        ),
        (
            "big: list page of 100, 12 months",
            [f"/schedules/big?view=list&month={m}" for m in months],
            [(month_sql.replace("501", "101"), ("big", *june))],
        ),
        (
            "occurrence page",
            [f"/occurrences/{unknown}"],
            [
                ("SELECT * FROM occurrences WHERE occurrence_id = %s", (unknown,)),
                ("SELECT * FROM attempts WHERE occurrence_id = %s", (unknown,)),
                (
                    "SELECT * FROM occurrence_events WHERE occurrence_id = %s ORDER BY sequence",
                    (unknown,),
                ),
            ],
        ),
        (
            "human queue",
            ["/queue"],
            [
                (
                    "SELECT * FROM reconciliation_cases WHERE resolution IS NULL "
                    "ORDER BY opened_at_utc",
                    (),
                )
            ],
        ),
    ]


async def measure(client: TestClient, dsn: str, unknown: str, rounds: int, repeat: int) -> None:
    with psycopg.connect(dsn, autocommit=True) as db:
        for name, urls, queries in pages(unknown):
            turn = iter(range(10**9))

            def page(_: int, urls: list[str] = urls, turn: Any = turn) -> dict[str, float]:
                def one() -> None:
                    response = client.get(urls[next(turn) % len(urls)])
                    assert response.status_code == 200, response.text[:300]

                return timed(one, repeat)

            def plain(
                _: int, queries: list[tuple[str, tuple[Any, ...]]] = queries
            ) -> dict[str, float]:
                def one() -> None:
                    for sql, args in queries:
                        db.execute(sql, args).fetchall()  # type: ignore[arg-type]

                return timed(one, repeat)

            result = await _pairs.alternate(
                [_pairs.Arm("console", page), _pairs.Arm("plain SQL", plain)],
                rounds=rounds,
                baseline="plain SQL",
                metric="ms",
                lower_is_better=True,
                report=None,
            )
            print(f"\n### {name}\n\n{result.table(['ms'])}")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--schedules", type=int, default=10_000)
    parser.add_argument("--per-schedule", type=int, default=100)
    parser.add_argument("--big", type=int, default=10_000)
    parser.add_argument("--rounds", type=int, default=5)
    parser.add_argument("--repeat", type=int, default=20)
    args = parser.parse_args()
    pg_ctl = find_pg_ctl()
    if pg_ctl is None:
        sys.exit("no PostgreSQL server binaries (pg_ctl) found")
    server = start_server(pg_ctl)
    try:
        server.admin("CREATE DATABASE bench")
        url = server.url("bench")
        upgrade(url)
        dsn = f"host={server.host} port={server.port} user={server.user} dbname=bench"
        handle = Ledger.from_url(url)
        unknown = populate(handle, dsn, args.schedules, args.per_schedule, args.big)
        with psycopg.connect(dsn) as db:
            total = db.execute("SELECT count(*) FROM occurrences").fetchone()
        print(f"ledger: {args.schedules + 2} schedules, {total[0] if total else 0} occurrences")
        app = create_app(handle, AlmanacSettings(), ConsoleSettings(), clock=lambda: NOW)
        with TestClient(app) as client:
            asyncio.run(measure(client, dsn, unknown, args.rounds, args.repeat))
        handle.dispose()
    finally:
        server.stop()


if __name__ == "__main__":
    main()
