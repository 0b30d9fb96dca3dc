"""Materialization writes the same ledger on SQLite and PostgreSQL, whatever statements it uses.

PostgreSQL writes a window in one statement (occurrences from arrays, slot claims and creation
events derived in SQL from the inserted rows); SQLite in one set-based insert per table. The same
sequence of public calls is made on a fresh ledger of each dialect and every row of the three
tables is compared, all columns but the events' surrogate ``id`` (the instants are the injected
``now_utc``, so they compare too).
"""

from __future__ import annotations

import contextlib
import itertools
import shutil
from collections.abc import Iterator
from datetime import timedelta
from pathlib import Path
from typing import Any

import pytest
from ledger_pg import PgServer
from ledger_support import T0, make_spec
from sqlalchemy import event, select, text

from ledger import (
    Ledger,
    LedgerIntegrityError,
    list_occurrences,
    materialize,
    publish_revision,
    release_due,
)
from ledger.events import EVENTS, OCCURRENCES, SLOTS

pytest_plugins = ["ledger_fixtures"]  # the PostgreSQL cluster and the SQLite template

_names = itertools.count()


@pytest.fixture
def both(
    request: pytest.FixtureRequest, sqlite_template: Path, tmp_path: Path
) -> Iterator[tuple[Ledger, Ledger]]:
    server: PgServer = request.getfixturevalue("pg_server")
    path = tmp_path / "ledger.sqlite3"
    shutil.copyfile(sqlite_template, path)
    name = f"creation_{next(_names)}"
    server.admin(f"CREATE DATABASE {name} TEMPLATE almanac_template")
    lite, pg = Ledger.from_url(f"sqlite:///{path}"), Ledger.from_url(server.url(name))
    try:
        yield lite, pg
    finally:
        lite.dispose()
        pg.dispose()
        server.admin(f"DROP DATABASE IF EXISTS {name} WITH (FORCE)")


def _contents(ledger: Ledger) -> dict[str, list[tuple[Any, ...]]]:
    def read(connection: Any) -> dict[str, list[tuple[Any, ...]]]:
        out = {}
        for table, drop in ((OCCURRENCES, ()), (SLOTS, ()), (EVENTS, ("id",))):
            columns = [c for c in table.columns if c.name not in drop]
            out[table.name] = sorted(
                (tuple(row) for row in connection.execute(select(*columns))), key=repr
            )
        return out

    return dict(ledger.read(read))


def _scenario(ledger: Ledger, rows: bool = True) -> list[tuple[tuple[str, ...], tuple[str, ...]]]:
    """Folds (BOTH) and a gap (SKIP) in New York, jitter, repeats, overlaps and a supersede.

    ``rows``: ask each ``materialize`` for the window's rows (False: as the workflows' activity).
    """
    r1 = make_spec(rule="FREQ=HOURLY;BYMINUTE=30", foldPolicy="BOTH", jitter="PT30S")
    publish_revision(ledger, r1, T0, by="t")
    days = timedelta(days=1)
    results = [
        materialize(ledger, r1, T0, T0 + 2 * days, T0, rows=rows),  # the fall-back fold
        materialize(ledger, r1, T0, T0 + 2 * days, T0, rows=rows),  # nothing new
        materialize(ledger, r1, T0 + days, T0 + 4 * days, T0, rows=rows),  # overlap
    ]
    release_due(ledger, r1.schedule_id, T0 + timedelta(hours=3))
    r2 = make_spec(
        revision=2,
        rule="FREQ=HOURLY;BYMINUTE=30",
        foldPolicy="BOTH",
        cutoverAt="2026-11-03T00:00:00Z",
    )
    later = T0 + timedelta(hours=4)
    publish_revision(ledger, r2, later, by="t")  # releases r1's slots from the cutover on
    results.append(materialize(ledger, r2, T0, T0 + 5 * days, later, rows=rows))  # takes them
    gap = make_spec(scheduleId="gap", rule="FREQ=DAILY;BYHOUR=2;BYMINUTE=30")
    publish_revision(ledger, gap, T0, by="t")
    spring = gap.cutover_at.replace(year=2027, month=3, day=12)
    results.append(materialize(ledger, gap, spring, spring + 4 * days, T0, rows=rows))
    # Each window holds rows (the repeat's and the overlap's written earlier): returned or not.
    assert all(bool(r.rows) is rows for r in results)
    return [(r.created, r.slot_conflicts) for r in results]


@pytest.mark.postgres
def test_both_dialects_write_the_same_ledger(both: tuple[Ledger, Ledger]) -> None:
    lite, pg = both
    assert _scenario(lite) == _scenario(pg)
    written = _contents(lite)
    assert written == _contents(pg)
    states = {row.state.value for row in list_occurrences(lite, "daily-ops-summary")}
    assert {"PLANNED", "DUE", "CANCELLED"} <= states
    assert {row.state.value for row in list_occurrences(lite, "gap")} >= {"SKIPPED_GAP"}
    assert len(written["occurrence_events"]) > len(written["occurrences"]) > 100
    jitter = OCCURRENCES.c.keys().index("jitter_ms")
    assert len({row[jitter] for row in written["occurrences"]}) > 10  # r1's, in whole ms
    # r2 took the slots r1 released at its cutover (compare-and-set), and claimed the new ones.
    assert {row[4] for row in written["logical_slots"] if row[0] == "daily-ops-summary"} == {1, 2}


@pytest.mark.postgres
def test_materializing_without_the_rows_writes_the_same_ledger(
    both: tuple[Ledger, Ledger], sqlite_template: Path, tmp_path: Path
) -> None:
    # rows=False (the workflows' activity, the catch-up) builds no views and reads nothing back;
    # what it writes, and the IDs it reports, are those of a call that returns the rows.
    lite, pg = both
    shutil.copyfile(sqlite_template, tmp_path / "reference.sqlite3")
    reference = Ledger.from_url(f"sqlite:///{tmp_path / 'reference.sqlite3'}")
    try:
        expected = _scenario(reference)
        with _window_reads(lite) as lite_reads, _window_reads(pg) as pg_reads:
            assert _scenario(lite, rows=False) == expected == _scenario(pg, rows=False)
        assert lite_reads == pg_reads == []  # nothing of the window read back
        assert _contents(lite) == _contents(reference) == _contents(pg)
        with _window_reads(reference) as reads:
            _scenario(reference)  # the control: asking for the rows reads the others back
        assert reads
    finally:
        reference.dispose()


@contextlib.contextmanager
def _window_reads(ledger: Ledger) -> Iterator[list[str]]:
    """The window read-backs (``SELECT`` of occurrences by placed instant) ``ledger`` runs.

    A read *filtered* by the placed instant (``coalesce(instant, gapAt)`` before any ``ORDER BY``);
    the release's DUE list only orders by it.
    """
    seen: list[str] = []

    def record(_conn: Any, _cursor: Any, statement: str, *_args: Any) -> None:
        where = statement.split("ORDER BY")[0]
        if statement.lstrip().upper().startswith("SELECT") and "coalesce(" in where:
            seen.append(statement)

    event.listen(ledger.engine, "before_cursor_execute", record)
    try:
        yield seen
    finally:
        event.remove(ledger.engine, "before_cursor_execute", record)


def test_a_multi_row_event_insert_is_checked_row_by_row(ledger: Ledger) -> None:
    # PostgreSQL checks the sequence once per statement (migration 0010), SQLite per row: one
    # bad row among good ones rejects the statement, and good rows pass together.
    spec = make_spec()
    publish_revision(ledger, spec, T0, by="t")
    first, second = (
        r.occurrence_id for r in materialize(ledger, spec, T0, T0 + timedelta(days=2), T0).rows
    )

    def append(sequences: tuple[int, int]) -> Any:
        def work(connection: Any) -> None:
            connection.execute(
                text(
                    "UPDATE occurrences SET event_sequence = event_sequence + 1 "
                    "WHERE occurrence_id IN (:a, :b)"
                ),
                {"a": first, "b": second},
            )
            connection.execute(
                text(
                    "INSERT INTO occurrence_events "
                    "(occurrence_id, from_state, to_state, at_utc, by, why, sequence) VALUES "
                    "(:a, 'PLANNED', 'PLANNED', :t, 't', 'x', :m), "
                    "(:b, 'PLANNED', 'PLANNED', :t, 't', 'x', :n)"
                ),
                {"a": first, "b": second, "t": T0, "m": sequences[0], "n": sequences[1]},
            )

        return work

    for bad in ((2, 3), (3, 2), (3, 3)):
        with pytest.raises(LedgerIntegrityError, match="out of sequence"):
            ledger.write(append(bad))
    for repeated in ((1, 2), (2, 1)):  # the unique key or the sequence check, whichever is first
        with pytest.raises(LedgerIntegrityError):
            ledger.write(append(repeated))
    ledger.write(append((2, 2)))
    counts = ledger.read(
        lambda c: c.execute(
            select(EVENTS.c.occurrence_id, EVENTS.c.sequence).order_by(EVENTS.c.id)
        ).all()
    )
    assert [tuple(r) for r in counts] == [(first, 1), (second, 1), (first, 2), (second, 2)]
