"""A schedule's status and next occurrences as the ledger says them *now*.

The schedule workflow's ``status`` and ``upcoming`` queries answer from its latest ledger reading,
taken at its last wake-up: an occurrence that succeeded since is still shown ``DUE`` until the
next wake-up, which for a daily or monthly schedule may be an hour (the refresh) or weeks away
after a restart. The ledger is the business record, and the client can read it (the settings name
it), so :class:`almanac.client.AlmanacClient` answers from here and asks the workflow only for
what only the workflow knows (its last error, rejected signals, materialization high-water mark).

Upcoming occurrences are the ledger's open ones (``PLANNED``, ``DUE``, ``DISPATCHING``,
``RUNNING``, ``RETRY_WAIT``) in instant order; when fewer than asked for are materialized (a
monthly rule beyond the 14-day horizon), the rest are computed from the published revisions'
specs with ``timecontract`` — each revision only where it owns the instant — and marked
``materialized=False``: not yet in the ledger, no state.

Every function here takes ``now_utc``; none reads the clock.
"""

from __future__ import annotations

import functools
from collections.abc import Sequence
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import TYPE_CHECKING

import ledger
from activities import io
from ledger import OccurrenceState, OccurrenceView

if TYPE_CHECKING:
    from ledger.deadlines import DeadlineMissView
    from ledger.streak_facts import StreakFactView
from timecontract import (
    Cutover,
    Disposition,
    FailureStreakPolicy,
    ScheduleSpecV1,
    format_duration,
    occurrences,
    owning_revision,
    span_for,
)

OPEN_STATES = (
    OccurrenceState.PLANNED,
    OccurrenceState.DUE,
    OccurrenceState.DISPATCHING,
    OccurrenceState.RUNNING,
    OccurrenceState.RETRY_WAIT,
)
"""States an upcoming occurrence can be in: not yet run, or running (not UNKNOWN_EFFECT, which
waits for reconciliation and is listed by ``almanac ledger unknown``)."""
PROJECTION_LIMIT = timedelta(days=20 * 366)
MIN_PROJECTION_WINDOW = timedelta(hours=1)
"""The shortest window the projection resolves at a time (at most 1,800 occurrences of a valid
spec: ``timecontract.density.MAX_PER_MINUTE``)."""
"""How far past the ledger's last occurrence the specs are searched for the rest."""


@dataclass(frozen=True)
class Upcoming:
    """One upcoming occurrence: from the ledger (with its state) or projected from the spec."""

    occurrence_id: str
    schedule_id: str
    revision: int
    nominal_local: str
    """ISO local date-time without offset (``2026-11-01T01:30:00``)."""
    fold: int
    instant_utc: datetime
    state: str | None
    """The ledger's state; ``None`` when not yet materialized."""
    materialized: bool = True
    """``False``: computed from the active revision's spec, not in the ledger yet."""
    holiday: str | None = None
    """For an occurrence a holiday policy moved: the holiday (``Good Friday``) and, after ``@``
    in ``calendar``, the calendar release; ``None`` otherwise."""
    calendar: str | None = None


@dataclass(frozen=True)
class FailureStreakReading:
    """The newest revision's ``failureStreak`` policy, the current streak and the latest facts."""

    notify_after: int
    recover_after: int
    action: str
    """The notify action's adapter name."""
    pause: bool
    streak: int
    """The current failure streak (``ledger.streaks``)."""
    latest: tuple[StreakFactView, ...] = ()
    """The latest STREAK/RECOVERED facts, newest first (at most 2), with their notification."""


@dataclass(frozen=True)
class HolidayDecision:
    """One occurrence a holiday calendar decided: skipped on a holiday, or moved off one."""

    occurrence_id: str
    nominal_local: str
    """ISO local date-time without offset: the nominal identity, kept when moved."""
    instant_utc: datetime
    """Where it is placed: the moved-to instant, or the nominal one for a skip."""
    state: str
    """``SKIPPED_HOLIDAY`` for a skip; the occurrence's state now for a move."""
    reason: str
    """The recorded policy reason."""
    holiday: str
    """The holiday (or weekend day) the decision names, e.g. ``Thanksgiving Day``."""
    calendar: str | None
    """``<calendar>@<release>`` the decision was computed with, e.g. ``NYSE@holidays-0.108``."""


HOLIDAYS_SHOWN = 5
"""How many holiday decisions from now on a status reading names (the earliest)."""


@dataclass(frozen=True)
class PendingRevision:
    """A published revision whose cutover is still ahead: it owns nothing yet."""

    revision: int
    cutover_at_utc: datetime


@dataclass(frozen=True)
class LedgerReading:
    """What the ledger says about a schedule at ``read_at_utc``."""

    gate: io.GateSnapshot | None
    """``None`` when the ledger has no gate for it (its first revision is not published yet)."""
    counts_by_state: dict[str, int]
    next_instant_utc: datetime | None
    """The earliest ``PLANNED`` instant at or after ``read_at_utc``; when the ledger holds none
    (the next one lies beyond the horizon), the next one projected from the published specs."""
    read_at_utc: datetime
    next_materialized: bool = True
    """``False``: ``next_instant_utc`` is projected (not yet in the ledger)."""
    revision_now: int | None = None
    """The revision that owns ``read_at_utc`` (its cutover has passed); ``None`` before the first
    cutover. The gate's ``active_revision`` is the latest *published* one, which may not own
    anything yet."""
    pending: tuple[PendingRevision, ...] = ()
    """Published revisions whose cutover lies after ``read_at_utc``, in revision order."""
    deadline: str | None = None
    """The owning revision's ``deadline`` (ISO 8601 duration, ``PT30M``); None without one."""
    deadline_misses: int = 0
    """Deadline misses recorded for the schedule (``ledger.deadlines``)."""
    latest_deadline_miss: DeadlineMissView | None = None
    """The miss with the latest deadline, if any."""
    failure_streak: FailureStreakReading | None = None
    """The failure-streak policy and state; ``None``: the newest revision has no policy."""
    holidays: tuple[HolidayDecision, ...] = ()
    """The first :data:`HOLIDAYS_SHOWN` holiday decisions the ledger holds placed at or after
    ``read_at_utc``, in instant order (the materialized horizon; nothing projected)."""


def open_ledger(url: str) -> ledger.Ledger | None:
    """Open the ledger at ``url`` for reading, or ``None`` when a SQLite file does not exist.

    Opening never creates a database (a missing SQLite file stays missing): a client on another
    machine than the worker, with the embedded default URL, falls back to the workflow's reading.
    """
    if url.startswith("sqlite:///") and not Path(url.removeprefix("sqlite:///")).exists():
        return None
    return ledger.Ledger.from_url(url)


def read_status(
    handle: ledger.Ledger,
    schedule_id: str,
    now_utc: datetime,
    *,
    tzdb_store: Path | None = None,
) -> LedgerReading:
    """The gate, counts by state (every state, maybe 0), next instant and revisions of a schedule.

    The next instant is the ledger's earliest ``PLANNED`` one at or after ``now_utc``, else the
    first one projected from the published specs (``next_materialized=False``), as ``upcoming``
    shows it. Which revision owns ``now_utc`` and which are published with a later cutover
    (pending) follow DESIGN §3: revision N owns ``[cutoverAt(N), cutoverAt(N+1))``. The holiday
    decisions are the ledger's first ones at or after ``now_utc``, each with its holiday and
    calendar release, as ``preview`` and ``ledger show`` name them.

    Raises:
        LedgerError: the ledger cannot be read (unreachable, not migrated).
    """
    try:
        gate: io.GateSnapshot | None = ledger.get_gate(handle, schedule_id)
    except ledger.ScheduleNotFound:
        gate = None
    counts = ledger.counts_by_state(handle, schedule_id)
    planned = ledger.list_occurrences(
        handle, schedule_id, from_utc=now_utc, states=[OccurrenceState.PLANNED], limit=1
    )
    specs = ledger.published_specs(handle, schedule_id)
    cutovers = [Cutover(s.revision, s.cutover_at) for s in specs]
    holidays = ledger.list_occurrences(
        handle, schedule_id, from_utc=now_utc, limit=HOLIDAYS_SHOWN, holidays_only=True
    )
    next_instant, materialized = (planned[0].instant_utc, True) if planned else (None, True)
    if next_instant is None:
        projected = project_next(handle, schedule_id, now_utc, specs, tzdb_store=tzdb_store)
        if projected is not None:
            next_instant, materialized = projected.instant_utc, False
    from ledger.deadlines import count_deadline_misses, deadline_misses  # SQL: loaded on use

    latest = deadline_misses(handle, schedule_id, latest=1)
    newest = specs[-1].failure_streak if specs else None
    revision_now = owning_revision(now_utc, cutovers) if cutovers else None
    owning = next((s for s in specs if s.revision == revision_now), None)
    return LedgerReading(
        deadline=None
        if owning is None or owning.deadline is None
        else format_duration(owning.deadline),
        deadline_misses=handle.read(
            functools.partial(count_deadline_misses, schedule_id=schedule_id)
        ).get(schedule_id, 0),
        latest_deadline_miss=latest[0] if latest else None,
        failure_streak=None if newest is None else _streak_reading(handle, schedule_id, newest),
        gate=gate,
        counts_by_state={state.value: n for state, n in counts.items()},
        next_instant_utc=next_instant,
        read_at_utc=now_utc,
        next_materialized=materialized,
        revision_now=revision_now,
        pending=tuple(
            PendingRevision(c.revision, c.cutover_at_utc)
            for c in cutovers
            if c.cutover_at_utc > now_utc
        ),
        holidays=tuple(_decision(view) for view in holidays),
    )


def projection_start(handle: ledger.Ledger, schedule_id: str, now_utc: datetime) -> datetime:
    """Where the ledger's materialized occurrences end, seen from ``now_utc`` (aware UTC).

    The latest of ``now_utc`` and every occurrence the ledger holds placed at or after it: what
    lies after this instant is not yet materialized, and a projection starts there.
    """
    return after_horizon(now_utc, ledger.last_placed_at(handle, schedule_id, now_utc))


def after_horizon(now_utc: datetime, last_placed_utc: datetime | None) -> datetime:
    """:func:`projection_start` from the ledger's last placed instant at or after ``now_utc``.

    ``last_placed_utc`` as :func:`ledger.last_placed_at` reads it (``None``: nothing placed
    there); for a caller that read it with other facts (``ledger.schedule_facts``).
    """
    return now_utc if last_placed_utc is None else max(now_utc, last_placed_utc)


def project_next(
    handle: ledger.Ledger,
    schedule_id: str,
    now_utc: datetime,
    specs: Sequence[ScheduleSpecV1] | None = None,
    *,
    tzdb_store: Path | None = None,
) -> Upcoming | None:
    """The first occurrence after :func:`projection_start`, projected from the published specs.

    Args:
        handle: the ledger.
        schedule_id: the schedule.
        now_utc: the reading's instant (aware).
        specs: the schedule's published specs when the caller has read them; ``None``: read.
        tzdb_store: the tz release store the specs' zones are read from.

    Returns:
        The projected occurrence (``materialized=False``), or ``None`` when no revision is
        published or the rules run nothing more within :data:`PROJECTION_LIMIT`.
    """
    if specs is None:
        specs = ledger.published_specs(handle, schedule_id)
    if not specs:
        return None
    return first_projected(specs, projection_start(handle, schedule_id, now_utc), tzdb_store)


def first_projected(
    specs: Sequence[ScheduleSpecV1], after_utc: datetime, tzdb_store: Path | None = None
) -> Upcoming | None:
    """The first occurrence strictly after ``after_utc`` that the specs run (:func:`project`).

    Returns:
        The projected occurrence (``materialized=False``), or ``None`` when ``specs`` is empty
        or the rules run nothing more within :data:`PROJECTION_LIMIT`.
    """
    projected = project(specs, after_utc, 1, tzdb_store=tzdb_store) if specs else []
    return projected[0] if projected else None


def nearest_schedule_id(handle: ledger.Ledger, schedule_id: str) -> str | None:
    """The ledger's scheduleId closest to an unknown one, for a "did you mean" (else ``None``).

    Close: the spec's near-miss rule (:func:`timecontract.nearest`). A ledger that fails to
    answer (unreachable, not migrated) gives ``None``: the refusal then stands alone.
    """
    from timecontract import nearest

    try:
        known = [gate.schedule_id for gate in ledger.list_gates(handle)]
    except Exception:  # any failure: no hint, the caller's error stands
        return None
    return nearest(schedule_id, known)


def read_occurrence_state(handle: ledger.Ledger, occurrence_id: str) -> str | None:
    """The occurrence's state in the ledger now (DESIGN §4 spelling); ``None`` if not recorded."""
    try:
        return ledger.show_occurrence(handle, occurrence_id).occurrence.state.value
    except ledger.OccurrenceNotFound:
        return None


def read_upcoming(
    handle: ledger.Ledger,
    schedule_id: str,
    now_utc: datetime,
    n: int,
    *,
    tzdb_store: Path | None = None,
) -> list[Upcoming]:
    """The next ``n`` occurrences: the ledger's open ones, then projected ones (module docstring).

    Args:
        handle: the ledger.
        schedule_id: the schedule.
        now_utc: the reading's instant (aware).
        n: how many at most.
        tzdb_store: the tz release store the specs' zones are read from (projection only).

    Returns:
        At most ``n`` rows in instant order: materialized ones first, then projected ones, which
        all lie after every occurrence the ledger holds for the schedule.
    """
    if n <= 0:
        return []
    rows = [
        _from_view(view)
        for view in ledger.list_occurrences(handle, schedule_id, states=OPEN_STATES, limit=n)
    ]
    if len(rows) >= n:
        return rows
    specs = ledger.published_specs(handle, schedule_id)
    if not specs:
        return rows
    after = projection_start(handle, schedule_id, now_utc)
    return rows + project(specs, after, n - len(rows), tzdb_store=tzdb_store)


def project(
    specs: Sequence[ScheduleSpecV1],
    after_utc: datetime,
    n: int,
    *,
    before_utc: datetime | None = None,
    tzdb_store: Path | None = None,
) -> list[Upcoming]:
    """The next ``n`` occurrences strictly after ``after_utc`` that the revisions would run.

    Each revision contributes only instants it owns (``timecontract.owning_revision``); skipped
    gap records run nothing and are left out. The search widens window by window, up to
    :data:`PROJECTION_LIMIT` or ``before_utc`` (exclusive: only earlier instants are returned);
    a rule that has ended yields fewer.
    """
    cutovers = [Cutover(s.revision, s.cutover_at) for s in specs]
    found: list[Upcoming] = []
    start = after_utc
    # The spec's own period: an RRULE's FREQ × INTERVAL, or an elapsed-time ``interval`` (whose
    # spec has no parsed rule at all); shorter for a rule dense through BYxxx lists, so that a
    # window holds about n occurrences, not n periods (``timecontract.density``).
    window = max(
        min(
            specs[-1].nominal_period * (n + 1),
            span_for(n + 1, max(s.per_day_bound for s in specs)),
        ),
        MIN_PROJECTION_WINDOW,
    )
    stop = before_utc or datetime.max.replace(tzinfo=UTC)
    while len(found) < n and start - after_utc < PROJECTION_LIMIT and start < stop:
        end = min(start + window, stop)
        batch = []
        for spec in specs:
            for record in occurrences(spec, start, end, tzdb_store=tzdb_store):
                instant = record.instant_utc
                if record.disposition is not Disposition.PLANNED or instant is None:
                    continue
                if instant <= after_utc or owning_revision(instant, cutovers) != spec.revision:
                    continue
                batch.append(
                    Upcoming(
                        occurrence_id=record.occurrence_id,
                        schedule_id=record.schedule_id,
                        revision=record.revision,
                        nominal_local=record.nominal_local.isoformat(),
                        fold=record.fold,
                        instant_utc=instant,
                        state=None,
                        materialized=False,
                        holiday=record.holiday,
                        calendar=record.calendar_release,
                    )
                )
        found.extend(sorted(batch, key=lambda u: (u.instant_utc, u.nominal_local, u.fold)))
        start, window = end, window * 2
    return found[:n]


def _decision(view: OccurrenceView) -> HolidayDecision:
    assert view.holiday is not None  # selected so
    return HolidayDecision(
        occurrence_id=view.occurrence_id,
        nominal_local=view.nominal_local.isoformat(),
        instant_utc=view.placed_at_utc,
        state=view.state.value,
        reason=view.reason,
        holiday=view.holiday,
        calendar=view.calendar_release,
    )


def _from_view(view: OccurrenceView) -> Upcoming:
    assert view.instant_utc is not None  # open states have instants (a CHECK holds it)
    return Upcoming(
        occurrence_id=view.occurrence_id,
        schedule_id=view.schedule_id,
        revision=view.revision,
        nominal_local=view.nominal_local.isoformat(),
        fold=view.fold,
        instant_utc=view.instant_utc,
        state=view.state.value,
        holiday=view.holiday,
        calendar=view.calendar_release,
    )


__all__ = [
    "HOLIDAYS_SHOWN",
    "OPEN_STATES",
    "HolidayDecision",
    "LedgerReading",
    "PendingRevision",
    "Upcoming",
    "after_horizon",
    "first_projected",
    "nearest_schedule_id",
    "open_ledger",
    "project",
    "project_next",
    "projection_start",
    "read_occurrence_state",
    "read_status",
    "read_upcoming",
]


def _streak_reading(
    handle: ledger.Ledger, schedule_id: str, policy: FailureStreakPolicy
) -> FailureStreakReading:
    from ledger.streak_facts import streak_facts  # SQL: loaded on use
    from ledger.streaks import failure_streaks

    return FailureStreakReading(
        policy.notify_after,
        policy.recover_after,
        policy.action.name,
        policy.pause,
        handle.read(failure_streaks).get(schedule_id, 0),
        tuple(streak_facts(handle, schedule_id, latest=2)),
    )
