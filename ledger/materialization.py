"""Materialization (a window → occurrences, slot claims, events) and release of due ones.

Both run as one transaction each. Materializers race on the unique keys (``occurrence_id`` and
the ``(schedule_id, logical_slot_id)`` slot key) with ``INSERT … ON CONFLICT DO NOTHING``, never
on a host lock, so any number of them may run the same window at once and the ledger ends the
same as after one (DESIGN §4 invariant 2).
"""

from __future__ import annotations

import json
from collections import defaultdict
from collections.abc import Callable, Sequence
from datetime import datetime
from pathlib import Path

from sqlalchemy import Connection, func, select

from ledger import overlap
from ledger.bulk import in_values, not_in_values
from ledger.creation import insert_created as _insert
from ledger.db import Ledger
from ledger.errors import RevisionNotFound, RevisionRejected
from ledger.events import OCCURRENCES, REVISIONS, require_aware
from ledger.gate import lock_gate, schedule_cutovers
from ledger.queries import occurrences_in
from ledger.states import OccurrenceState
from ledger.transitions import transition_where
from ledger.views import BoundedMaterialization, MaterializeResult, OccurrenceView, ReleaseResult
from timecontract import (
    OccurrenceRecord,
    Overdue,
    OverlapPolicy,
    ScheduleSpecV1,
    format_duration,
    iter_occurrences,
    occurrences,
    owned_interval,
    parse_spec,
    plan_misfires,
)
from timecontract.ids import OccurrenceId

MATERIALIZER = "materializer"
CHUNK_OCCURRENCES = 1_000
"""About how many records one materialization transaction writes (:func:`materialize_bounded`)."""


def materialize(
    ledger: Ledger,
    spec: ScheduleSpecV1,
    from_utc: datetime,
    to_utc: datetime,
    now_utc: datetime,
    *,
    by: str = MATERIALIZER,
    tzdb_store: Path | None = None,
    rows: bool = True,
) -> MaterializeResult:
    """Record the occurrences a published revision owns in ``[from_utc, to_utc)``.

    The window is clamped to what the revision owns *as the ledger says at commit time*:
    ``[max(from, cutoverAt, publishedAt), min(to, next revision's cutoverAt))``, the ownership
    interval coming from ``timecontract.owned_interval`` over the published cutovers. So a stale
    materializer of an old revision never writes at or after a newer cutover, and materializing
    never backfills before the revision was published (DESIGN §3; a backfill is explicit).

    Inserts, in one transaction and idempotently: each record as an occurrence (``PLANNED``, or
    ``SKIPPED_GAP`` as a terminal fact) with a creation event; for each planned one, its logical
    slot claim (or, if the slot was released by a superseded owner, the slot by compare-and-set).
    A planned occurrence whose slot another live occurrence holds is recorded ``CANCELLED`` with
    the holder named (never dropped silently).

    Args:
        ledger: the ledger.
        spec: the revision's spec; it must be published with the same digest.
        from_utc: window start, aware UTC, inclusive.
        to_utc: window end, aware UTC, exclusive.
        now_utc: when (aware UTC): creation time of the rows; not used to clamp the window.
        by: who materializes (event rows).
        tzdb_store: the local tz release store (``timecontract.zones``).
        rows: also return the revision's rows in the window (False: ``rows`` is empty, and
            neither the written rows' views nor the others are built; the workflows' activity
            and the catch-up read only ``created``).

    Returns:
        The effective window, the IDs this call created, and (with ``rows``) the revision's rows
        in the window.

    Raises:
        RevisionNotFound: the revision is not published.
        RevisionRejected: the published revision has another digest.
        TzdbReleaseNotFound, ZoneNotFound: from the time contract.
        ValueError: a naive bound.

    """
    for name, value in (("from_utc", from_utc), ("to_utc", to_utc), ("now_utc", now_utc)):
        require_aware(name, value)
    # Pure computation outside the transaction, over the window the revision owned when read
    # (so a caller's wide window costs nothing before publication); ownership is decided again
    # inside the transaction, where a newer cutover can only narrow it.
    first_low, first_high = ledger.read(lambda c: _owned_window(c, spec, from_utc, to_utc))
    records = (
        occurrences(spec, first_low, first_high, tzdb_store=tzdb_store)
        if first_low < first_high
        else []
    )

    return _write(ledger, spec, records, from_utc, to_utc, now_utc, by=by, rows=rows)


def _write(
    ledger: Ledger,
    spec: ScheduleSpecV1,
    records: Sequence[OccurrenceRecord],
    from_utc: datetime,
    to_utc: datetime,
    now_utc: datetime,
    *,
    by: str,
    rows: bool,
) -> MaterializeResult:
    """Write the owned ``records`` in ``[from_utc, to_utc)`` at commit, as one transaction."""

    def work(connection: Connection) -> MaterializeResult:
        # A shared gate lock orders this against publish (which takes it exclusively), so the
        # revisions read below are the ones in force when this transaction commits.
        lock_gate(connection, spec.schedule_id)
        low, high = _owned_window(connection, spec, from_utc, to_utc)
        owned = [r for r in records if low <= r.placed_at_utc < high]
        written = _insert(connection, owned, now_utc, by, views=rows)
        created, conflicts = written.created, written.conflicts
        if not rows:
            return MaterializeResult(low, max(low, high), created, conflicts)
        # Only the window's rows this call did not write are read back (earlier or concurrent
        # materializations); the ones it wrote are already known, as committed.
        placed = func.coalesce(OCCURRENCES.c.instant_utc, OCCURRENCES.c.gap_at_utc)
        others = connection.execute(
            select(OCCURRENCES)
            .where(OCCURRENCES.c.schedule_id == spec.schedule_id)
            .where(OCCURRENCES.c.revision == spec.revision)
            .where(placed >= low)
            .where(placed < high)
            .where(not_in_values(connection, OCCURRENCES.c.occurrence_id, written.created))
        ).all()
        views = sorted(
            [*written.views, *(OccurrenceView.from_row(row) for row in others)],
            key=lambda v: (v.placed_at_utc, v.nominal_local, v.fold),
        )
        return MaterializeResult(low, max(low, high), created, conflicts, tuple(views))

    return ledger.write(work)


def materialize_bounded(
    ledger: Ledger,
    spec: ScheduleSpecV1,
    from_utc: datetime,
    to_utc: datetime,
    clock: Callable[[], datetime],
    *,
    limit: int,
    chunk: int | None = None,
    by: str = MATERIALIZER,
    tzdb_store: Path | None = None,
) -> BoundedMaterialization:
    """:func:`materialize` a window in occurrence-bounded transactions, stopping at ``limit``.

    The window's records are resolved as a stream (``timecontract.iter_occurrences``: memory
    follows a piece, not the window) and written in transactions of about ``chunk`` records
    (never splitting records placed at the same instant), each exactly what :func:`materialize`
    writes for its sub-window. Once ``limit`` records are written (created or already present),
    the call stops at the next record's instant: ``[from_utc, through_utc)`` is then complete and
    the rest is the next call's. So one call's work and memory are bounded in occurrences, however
    dense the rule or long the window.

    Args:
        ledger: the ledger.
        spec: the revision's spec; it must be published with the same digest.
        from_utc: window start, aware UTC, inclusive.
        to_utc: window end, aware UTC, exclusive.
        clock: the rows' creation time, read when each transaction is written (aware UTC).
        limit: the most records one call writes (≥ ``chunk``; a piece is never split).
        chunk: about how many records one transaction writes (default
            :data:`CHUNK_OCCURRENCES`).
        by: who materializes (event rows).
        tzdb_store: the local tz release store (``timecontract.zones``).

    Returns:
        Where the complete part of the window ends (``to_utc`` unless truncated) and how many
        occurrences this call created.

    Raises:
        The same as :func:`materialize`.

    """
    for name, value in (("from_utc", from_utc), ("to_utc", to_utc)):
        require_aware(name, value)
    low, high = ledger.read(lambda c: _owned_window(c, spec, from_utc, to_utc))
    if low >= high:
        return BoundedMaterialization(to_utc, 0)
    chunk = CHUNK_OCCURRENCES if chunk is None else chunk
    created = written = 0
    batch: list[OccurrenceRecord] = []
    start = from_utc
    for record in iter_occurrences(spec, low, high, tzdb_store=tzdb_store):
        placed = record.placed_at_utc
        if len(batch) >= chunk and placed > batch[-1].placed_at_utc:
            result = _write(ledger, spec, batch, start, placed, clock(), by=by, rows=False)
            created, written = created + len(result.created), written + len(batch)
            start, batch = placed, []
            if written >= limit:
                return BoundedMaterialization(start, created, truncated=True)
        batch.append(record)
    if batch:
        result = _write(ledger, spec, batch, start, to_utc, clock(), by=by, rows=False)
        created += len(result.created)
    return BoundedMaterialization(to_utc, created)


def _owned_window(
    connection: Connection, spec: ScheduleSpecV1, from_utc: datetime, to_utc: datetime
) -> tuple[datetime, datetime]:
    published = connection.execute(
        select(REVISIONS.c.digest, REVISIONS.c.published_at_utc).where(
            REVISIONS.c.schedule_id == spec.schedule_id, REVISIONS.c.revision == spec.revision
        )
    ).one_or_none()
    if published is None:
        raise RevisionNotFound(spec.schedule_id, spec.revision)
    if published.digest != spec.digest():
        raise RevisionRejected(
            f"{spec.schedule_id} r{spec.revision}: spec digest {spec.digest()} differs from the "
            f"published {published.digest}"
        )
    owned_from, owned_to = owned_interval(
        spec.revision, schedule_cutovers(connection, spec.schedule_id)
    )
    low = max(from_utc, owned_from, published.published_at_utc)
    high = to_utc if owned_to is None else min(to_utc, owned_to)
    return low, high


def release_due(
    ledger: Ledger,
    schedule_id: str,
    now_utc: datetime,
    *,
    by: str = MATERIALIZER,
    recorded_at_utc: datetime | None = None,
) -> ReleaseResult:
    """Apply misfire planning at ``now_utc``: overdue ``PLANNED`` → ``DUE`` or ``MISFIRE_EXPIRED``.

    The overdue set (``PLANNED`` with ``instant_utc <= now_utc``) is computed first and locked,
    then each revision's misfire policy (``timecontract.plan_misfires``: lateness, catch-up bound)
    decides, and every decision is a compare-and-set on ``state = 'PLANNED'`` with its event.
    While the schedule is disabled nothing is released (the rows stay ``PLANNED``).

    Args:
        ledger: the ledger.
        schedule_id: the schedule.
        now_utc: the decision instant (aware UTC): what is overdue and what is later than
            ``lateness`` are decided as of it (the schedule workflow's instant).
        by: who (event rows).
        recorded_at_utc: when the decision is recorded (aware UTC): the events' ``at_utc`` and
            ``updated_at_utc``, read from the recorder's clock (default: ``now_utc``).

    Returns:
        Released and expired occurrence IDs, oldest first; the gate read under the lock and
        every DUE occurrence when the release committed (one transaction: a releaser needs no
        second read).

    Raises:
        ScheduleNotFound: no such schedule.

    """
    require_aware("now_utc", now_utc)
    at = now_utc if recorded_at_utc is None else require_aware("recorded_at_utc", recorded_at_utc)

    def work(connection: Connection) -> ReleaseResult:
        gate = lock_gate(connection, schedule_id)
        if gate.disabled:
            return ReleaseResult((), (), disabled=True, gate=gate, due=_due(connection))
        overdue = connection.execute(
            select(OCCURRENCES.c.occurrence_id, OCCURRENCES.c.revision, OCCURRENCES.c.instant_utc)
            .where(OCCURRENCES.c.schedule_id == schedule_id)
            .where(OCCURRENCES.c.state == OccurrenceState.PLANNED.value)
            .where(OCCURRENCES.c.instant_utc <= now_utc)
            .order_by(OCCURRENCES.c.instant_utc, OCCURRENCES.c.occurrence_id)
            .with_for_update()
        ).all()
        by_revision: dict[int, list[Overdue]] = defaultdict(list)
        for row in overdue:
            by_revision[row.revision].append(
                Overdue(OccurrenceId(row.occurrence_id), row.instant_utc)
            )
        released: list[str] = []
        expired: list[str] = []
        skipped: list[str] = []
        for number, items in sorted(by_revision.items()):
            spec = _published_spec(connection, schedule_id, number)
            plan = plan_misfires(
                items, now_utc, spec.lateness, spec.misfire_policy, spec.max_catch_up
            )
            if spec.overlap_policy is OverlapPolicy.ALLOW_ALL:
                _move(connection, plan.release, OccurrenceState.DUE, at, by, "released")
                released.extend(plan.release)
            else:
                moved, overlapped = overlap.release(
                    connection, schedule_id, plan.release, spec.overlap_policy, at_utc=at, by=by
                )
                released.extend(moved)
                skipped.extend(overlapped)
            _move(
                connection,
                plan.expire,
                OccurrenceState.MISFIRE_EXPIRED,
                at,
                by,
                f"misfire: later than lateness {format_duration(spec.lateness)} under "
                f"{spec.misfire_policy.value}",
            )
            expired.extend(plan.expire)
        held = overlap.held_back(
            connection,
            schedule_id,
            lambda n: overlap.revision_spec(connection, schedule_id, n).overlap_policy,
        )
        return ReleaseResult(
            tuple(released),
            tuple(expired),
            held=held,
            skipped=tuple(skipped),
            gate=gate,
            due=_due(connection),
        )

    def _due(connection: Connection) -> tuple[OccurrenceView, ...]:
        return tuple(occurrences_in(connection, schedule_id, states=[OccurrenceState.DUE]))

    return ledger.write(work)


def _published_spec(connection: Connection, schedule_id: str, revision: int) -> ScheduleSpecV1:
    text = connection.execute(
        select(REVISIONS.c.spec_json).where(
            REVISIONS.c.schedule_id == schedule_id, REVISIONS.c.revision == revision
        )
    ).scalar_one_or_none()
    if text is None:
        raise RevisionNotFound(schedule_id, revision)
    return parse_spec(json.loads(text), source=f"{schedule_id} r{revision}")


def _move(
    connection: Connection,
    ids: Sequence[str],
    to_state: OccurrenceState,
    now_utc: datetime,
    by: str,
    why: str,
) -> None:
    """``PLANNED → to_state`` for exactly ``ids`` (locked by the caller), in one statement."""
    if ids:
        transition_where(
            connection,
            OccurrenceState.PLANNED,
            to_state,
            in_values(connection, OCCURRENCES.c.occurrence_id, ids),
            now_utc=now_utc,
            by=by,
            why=why,
            expected=len(ids),
        )
