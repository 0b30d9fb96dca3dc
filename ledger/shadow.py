"""Shadow mode: a candidate implementation's occurrences, computed for comparison only (seed).

"Begin rollout by having the new materializer perform shadow calculations for four weeks,
comparing only occurrence IDs and policy reasons without dispatching tasks."

:func:`shadow_materialize` computes what a candidate (``compute``, by default this build's
``timecontract.occurrences``) makes of a schedule's published revisions over a window, with the
live ownership rule (each revision owns ``[cutoverAt, next cutoverAt)``), and writes the records
to ``shadow_occurrences`` keyed by ``(alias, occurrence_id)``. It never writes ``occurrences``,
``logical_slots``, ``attempts``, ``occurrence_events`` or a gate: nothing it writes can be claimed
or dispatched. Each run is recorded in ``shadow_runs`` with its window and its mismatch count at
the time (the metric's source).

:func:`shadow_report` compares, for each schedule, the shadow rows of an alias with the live
occurrences over the windows the alias computed: by occurrence ID, then reason, disposition
(``PLANNED`` / ``SKIPPED_GAP``, what the time contract decided), instant and gapAt. Live rows
whose revision no longer owns their instant (superseded by a later cutover) are left out, as the
candidate would not produce them either; so are manual runs (``almanac trigger``, reason
``MANUAL``): they are outside the calendar a candidate computes (counted in ``manual_excluded``).

Live materialization starts a revision at ``max(cutoverAt, publishedAt)``; the time between its
cutover and its publication holds live rows only where an operator backfilled it (``almanac
backfill``). So the candidate computes from the cutover, its rows there are compared with the
backfilled live rows, and those the live ledger never materialized (no backfill) are not
mismatches (counted in ``not_backfilled``): a candidate that drops or changes a backfilled
occurrence is still reported.

A shadow run must never disturb live dispatch (on SQLite every write transaction holds the one
writer lock, which the live materializer, releases and claims wait for). So it is bounded: the
window is computed in slices of :data:`SLICE_PERIODS` rule periods and written in transactions of
at most :data:`WRITE_BATCH` rows, with ``between_batches`` called between two transactions (the
command line yields the writer lock there); :func:`estimate_records` says what a run will cost
before it starts, so a caller can refuse one beyond its bound.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass, field
from datetime import datetime, timedelta
from pathlib import Path
from typing import Any

from sqlalchemy import Connection, func, select

from ledger.db import Ledger
from ledger.events import (
    OCCURRENCES,
    REVISIONS,
    SHADOW_OCCURRENCES,
    SHADOW_RUNS,
    insert_ignore,
    require_aware,
)
from ledger.gate import schedule_cutovers
from ledger.models import MANUAL_REASON
from ledger.queries import published_specs
from timecontract import (
    OccurrenceRecord,
    ScheduleSpecV1,
    format_instant,
    occurrences,
    owned_interval,
    owning_revision,
)

Compute = Callable[[ScheduleSpecV1, datetime, datetime], list[OccurrenceRecord]]
"""A candidate materializer: a spec and ``[from, to)`` → its records (pure)."""

COMPARED = ("reason", "disposition", "instant", "gapAt")
"""What is compared besides the occurrence ID (seed: IDs and policy reasons; plus the rest)."""
WRITE_BATCH = 1000
"""Shadow rows written per transaction at most: the writer lock is held for one batch only."""
SLICE_PERIODS = 2000
"""Rule periods (``ScheduleSpecV1.nominal_period``) computed at once: a 10-second rule's four
weeks are computed 5.5 hours at a time, a daily rule's in one slice."""


@dataclass(frozen=True, slots=True)
class ShadowRunResult:
    """One shadow run: the window, how many records the candidate computed, mismatches then."""

    alias: str
    schedule_id: str
    from_utc: datetime
    to_utc: datetime
    records: int
    mismatches: int


@dataclass(frozen=True, slots=True)
class Difference:
    """One occurrence ID both sides hold with different evidence: ``{field: (live, shadow)}``."""

    occurrence_id: str
    fields: dict[str, tuple[Any, Any]]


@dataclass(slots=True)
class ShadowReport:
    """Live versus shadow for one alias (see the module docstring)."""

    alias: str
    matched: int = 0
    manual_excluded: int = 0
    """Live manual runs in the window, left out of the comparison (no calendar slot)."""
    not_backfilled: int = 0
    """Shadow rows between a revision's cutover and its publication that no backfill made live."""
    only_live: list[str] = field(default_factory=list)
    only_shadow: list[str] = field(default_factory=list)
    differing: list[Difference] = field(default_factory=list)
    schedules: list[str] = field(default_factory=list)

    @property
    def mismatches(self) -> int:
        """Only-live + only-shadow + differing occurrences (0 means the candidate agrees)."""
        return len(self.only_live) + len(self.only_shadow) + len(self.differing)

    def to_json(self, examples: int = 10) -> dict[str, object]:
        """The ``almanac shadow report --json`` object (counts, and up to ``examples`` of each)."""
        return {
            "alias": self.alias,
            "schedules": self.schedules,
            "matched": self.matched,
            "mismatches": self.mismatches,
            "manualExcluded": self.manual_excluded,
            "notBackfilled": self.not_backfilled,
            "onlyLive": {"count": len(self.only_live), "examples": self.only_live[:examples]},
            "onlyShadow": {"count": len(self.only_shadow), "examples": self.only_shadow[:examples]},
            "differing": {
                "count": len(self.differing),
                "examples": [
                    {
                        "occurrenceId": d.occurrence_id,
                        "fields": {k: {"live": a, "shadow": b} for k, (a, b) in d.fields.items()},
                    }
                    for d in self.differing[:examples]
                ],
            },
        }


def _default_compute(tzdb_store: Path | None) -> Compute:
    return lambda spec, low, high: occurrences(spec, low, high, tzdb_store=tzdb_store)


def estimate_records(ledger: Ledger, schedule_id: str, from_utc: datetime, to_utc: datetime) -> int:
    """About how many records a shadow run of ``[from, to)`` computes and writes (no writes).

    Each revision's owned part of the window divided by its rule's nominal period (one instance
    per FREQ × INTERVAL period: a rule with BYxxx lists yields a multiple of it; a gap or an
    UNTIL fewer). For a cost stated before a run, and a bound checked against it.

    Raises:
        ValueError: a naive window.
    """
    require_aware("from_utc", from_utc)
    require_aware("to_utc", to_utc)
    specs = {s.revision: s for s in published_specs(ledger, schedule_id)}
    windows = ledger.read(lambda c: _owned_windows(c, schedule_id, from_utc, to_utc))
    return sum(
        math.ceil((high - low) / specs[revision].nominal_period)
        for revision, (low, high) in windows.items()
        if revision in specs
    )


def _slices(low: datetime, high: datetime, step: timedelta) -> Iterator[tuple[datetime, datetime]]:
    """``[low, high)`` cut into consecutive half-open slices of ``step`` (the last shorter)."""
    while low < high:
        yield low, min(low + step, high)
        low += step


def shadow_materialize(
    ledger: Ledger,
    alias: str,
    schedule_id: str,
    from_utc: datetime,
    to_utc: datetime,
    now_utc: datetime,
    *,
    by: str,
    compute: Compute | None = None,
    tzdb_store: Path | None = None,
    between_batches: Callable[[], None] | None = None,
    batch: int = WRITE_BATCH,
) -> ShadowRunResult:
    """Compute a schedule's ``[from, to)`` with a candidate and store it as ``alias``'s shadow.

    Idempotent per ``(alias, occurrence_id)``: a record computed before is kept as it was.
    Bounded (module docstring): slices of :data:`SLICE_PERIODS` periods, transactions of at most
    ``batch`` rows, ``between_batches`` called between two of them.

    Args:
        ledger: the ledger (only the shadow tables are written).
        alias: the candidate's implementation alias.
        schedule_id: the schedule (its published revisions are read).
        from_utc: window start, aware UTC, inclusive.
        to_utc: window end, aware UTC, exclusive.
        now_utc: when (aware UTC).
        by: who runs the shadow.
        compute: the candidate materializer (default: this build's ``timecontract.occurrences``).
        tzdb_store: the tz release store for the default ``compute``.
        between_batches: called after each write transaction but the last (e.g. to let live
            writers take the lock); ``None``: nothing.
        batch: rows per write transaction (>= 1).

    Returns:
        The run, with the mismatches its window shows right after it.

    Raises:
        ScheduleNotFound: no such schedule. ValueError: a naive or empty window.

    """
    for name, value in (("from_utc", from_utc), ("to_utc", to_utc), ("now_utc", now_utc)):
        require_aware(name, value)
    if from_utc >= to_utc:
        raise ValueError("the shadow window must not be empty")
    compute = compute or _default_compute(tzdb_store)
    specs = published_specs(ledger, schedule_id)
    windows = ledger.read(lambda c: _owned_windows(c, schedule_id, from_utc, to_utc))
    written, transactions = 0, 0
    for spec in specs:
        if spec.revision not in windows:
            continue
        low, high = windows[spec.revision]
        step = max(spec.nominal_period * SLICE_PERIODS, timedelta(hours=1))
        for a, b in _slices(low, high, step):
            rows = [
                _shadow_row(alias, r, now_utc)
                for r in compute(spec, a, b)
                if a <= r.placed_at_utc < b
            ]
            for start in range(0, len(rows), batch):
                if transactions and between_batches is not None:
                    between_batches()
                _write_rows(ledger, rows[start : start + batch])
                transactions += 1
            written += len(rows)
    report = shadow_report(ledger, alias, schedule_id=schedule_id, since=from_utc, until=to_utc)
    ledger.write(
        lambda c: c.execute(
            SHADOW_RUNS.insert().values(
                alias=alias,
                schedule_id=schedule_id,
                from_utc=from_utc,
                to_utc=to_utc,
                run_at_utc=now_utc,
                by=by,
                records=written,
                mismatches=report.mismatches,
            )
        )
    )
    return ShadowRunResult(alias, schedule_id, from_utc, to_utc, written, report.mismatches)


def _write_rows(ledger: Ledger, rows: list[dict[str, Any]]) -> None:
    """Insert shadow rows in one transaction (a row computed before is kept as it was)."""

    def work(connection: Connection) -> None:
        connection.execute(insert_ignore(connection, SHADOW_OCCURRENCES), rows)

    ledger.write(work)


def _owned_windows(
    connection: Connection, schedule_id: str, from_utc: datetime, to_utc: datetime
) -> dict[int, tuple[datetime, datetime]]:
    """Per revision, the part of ``[from, to)`` it owns (from its cutover: see the module)."""
    cutovers = schedule_cutovers(connection, schedule_id)
    published = _published_at(connection, schedule_id)
    windows = {}
    for revision in published:
        owned_from, owned_to = owned_interval(revision, cutovers)
        low = max(from_utc, owned_from)
        high = to_utc if owned_to is None else min(to_utc, owned_to)
        if low < high:
            windows[revision] = (low, high)
    return windows


def _published_at(connection: Connection, schedule_id: str) -> dict[int, datetime]:
    """Revision → when it was published (aware UTC)."""
    rows = connection.execute(
        select(REVISIONS.c.revision, REVISIONS.c.published_at_utc).where(
            REVISIONS.c.schedule_id == schedule_id
        )
    ).all()
    return dict(rows)


def _shadow_row(alias: str, record: OccurrenceRecord, now_utc: datetime) -> dict[str, Any]:
    offset = record.utc_offset
    return {
        "alias": alias,
        "occurrence_id": record.occurrence_id,
        "schedule_id": record.schedule_id,
        "revision": record.revision,
        "logical_slot_id": record.logical_slot_id,
        "nominal_local": record.nominal_local,
        "fold": record.fold,
        "instant_utc": record.instant_utc,
        "gap_at_utc": record.gap_at_utc,
        "utc_offset_seconds": None if offset is None else int(offset.total_seconds()),
        "tzdb_version": record.tzdb_version,
        "disposition": record.disposition.value,
        "reason": record.reason.value,
        "computed_at_utc": now_utc,
    }


def _evidence(row: Any) -> dict[str, Any]:
    """The compared fields of a live or shadow row (instants as canonical UTC text)."""
    m = row._mapping
    disposition = m.get("disposition") or ("SKIPPED_GAP" if m["instant_utc"] is None else "PLANNED")
    return {
        "reason": m["reason"],
        "disposition": disposition,
        "instant": None if m["instant_utc"] is None else format_instant(m["instant_utc"]),
        "gapAt": None if m["gap_at_utc"] is None else format_instant(m["gap_at_utc"]),
    }


def shadow_report(
    ledger: Ledger,
    alias: str,
    *,
    schedule_id: str | None = None,
    since: datetime | None = None,
    until: datetime | None = None,
) -> ShadowReport:
    """Compare ``alias``'s shadow rows with the live ledger (module docstring).

    Args:
        ledger: the ledger.
        alias: the candidate alias.
        schedule_id: one schedule (default: every schedule the alias shadowed).
        since: compare only occurrences placed at or after this (aware UTC).
        until: compare only occurrences placed before this (aware UTC).

    Returns:
        Matched count, only-live, only-shadow and differing occurrences (IDs sorted).

    """

    def work(connection: Connection) -> ShadowReport:
        report = ShadowReport(alias)
        runs = select(
            SHADOW_RUNS.c.schedule_id,
            func.min(SHADOW_RUNS.c.from_utc).label("low"),
            func.max(SHADOW_RUNS.c.to_utc).label("high"),
        ).where(SHADOW_RUNS.c.alias == alias)
        if schedule_id is not None:
            runs = runs.where(SHADOW_RUNS.c.schedule_id == schedule_id)
        spans = {
            row.schedule_id: (row.low, row.high)
            for row in connection.execute(runs.group_by(SHADOW_RUNS.c.schedule_id))
        }
        if schedule_id is not None and schedule_id not in spans:
            spans[schedule_id] = (since, until) if since and until else (None, None)
        for sid in sorted(spans):
            low, high = spans[sid]
            low = max(x for x in (low, since) if x is not None) if (low or since) else None
            high = min(x for x in (high, until) if x is not None) if (high or until) else None
            report.schedules.append(sid)
            _compare(connection, report, sid, low, high)
        report.only_live.sort()
        report.only_shadow.sort()
        report.differing.sort(key=lambda d: d.occurrence_id)
        return report

    return ledger.read(work)


def _compare(
    connection: Connection,
    report: ShadowReport,
    schedule_id: str,
    low: datetime | None,
    high: datetime | None,
) -> None:
    cutovers = schedule_cutovers(connection, schedule_id)

    def in_window(table: Any) -> Sequence[Any]:
        placed = func.coalesce(table.c.instant_utc, table.c.gap_at_utc)
        # Only the compared columns: a report reads every row of its windows (4 weeks of a
        # 10-second rule is 241,920 a side), and whole rows cost several times as much.
        names = ["occurrence_id", "revision", "reason", "instant_utc", "gap_at_utc"]
        names += ["disposition"] if "disposition" in table.c else []
        statement = select(*(table.c[n] for n in names)).where(table.c.schedule_id == schedule_id)
        if table is SHADOW_OCCURRENCES:
            statement = statement.where(table.c.alias == report.alias)
        if low is not None:
            statement = statement.where(placed >= low)
        if high is not None:
            statement = statement.where(placed < high)
        return connection.execute(statement).all()

    live = {}
    for row in in_window(OCCURRENCES):
        if row.reason == MANUAL_REASON:  # a manual run is no calendar slot: nothing to compare
            report.manual_excluded += 1
            continue
        placed = row.instant_utc if row.instant_utc is not None else row.gap_at_utc
        if owning_revision(placed, cutovers) == row.revision:
            live[row.occurrence_id] = _evidence(row)
    published = _published_at(connection, schedule_id)
    shadow, before_publication = {}, set()
    for row in in_window(SHADOW_OCCURRENCES):
        shadow[row.occurrence_id] = _evidence(row)
        placed = row.instant_utc if row.instant_utc is not None else row.gap_at_utc
        if placed < published.get(row.revision, placed):
            before_publication.add(row.occurrence_id)
    for occurrence_id in live.keys() - shadow.keys():
        report.only_live.append(occurrence_id)
    for occurrence_id in shadow.keys() - live.keys():
        if occurrence_id in before_publication:
            report.not_backfilled += 1
        else:
            report.only_shadow.append(occurrence_id)
    for occurrence_id in live.keys() & shadow.keys():
        a, b = live[occurrence_id], shadow[occurrence_id]
        fields = {k: (a[k], b[k]) for k in COMPARED if a[k] != b[k]}
        if fields:
            report.differing.append(Difference(occurrence_id, fields))
        else:
            report.matched += 1


def latest_mismatches(ledger: Ledger) -> dict[str, int]:
    """Per alias: mismatches summed over each schedule's latest shadow run (the metric)."""

    def work(connection: Connection) -> dict[str, int]:
        latest = (
            select(func.max(SHADOW_RUNS.c.id))
            .group_by(SHADOW_RUNS.c.alias, SHADOW_RUNS.c.schedule_id)
            .scalar_subquery()
        )
        totals: dict[str, int] = {}
        rows = connection.execute(
            select(SHADOW_RUNS.c.alias, SHADOW_RUNS.c.mismatches).where(
                SHADOW_RUNS.c.id.in_(latest)
            )
        )
        for row in rows:
            totals[row.alias] = totals.get(row.alias, 0) + row.mismatches
        return totals

    return ledger.read(work)
