"""The schedule workflow's wake-up activities: materialize a window, release what is due.

Adapters over ``ledger.materialize_bounded`` and ``ledger.release_due`` (which decide), plus the
worker's start-up catch-up (:meth:`ScheduleActivities.catch_up`), which runs the same calls
without the workflow. The activity names and payloads are ``activities.io``'s.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from functools import partial

from temporalio import activity
from temporalio.exceptions import ApplicationError

import ledger
from activities import io
from activities.common import ActivitiesBase
from ledger import OccurrenceView
from timecontract import ScheduleSpecV1, span_for

DEFAULT_HORIZON = timedelta(days=14)
"""How far ahead a schedule materializes (seed: "a finite horizon, such as 14 days")."""
HORIZON_PERIODS = 2000
"""A high-frequency rule looks at most this many rule periods ahead (``horizon_for``)…"""
HORIZON_OCCURRENCES = 5_000
"""… and a dense one about this many occurrences (``timecontract.density``: its per-day bound)."""
MATERIALIZE_LIMIT = 10_000
"""The most records one materialization (an activity's, or a catch-up's) writes, in transactions
of ``ledger.materialization.CHUNK_OCCURRENCES``; the rest of its window is the next call's."""
CATCH_UP_SUFFIX = " (catch-up)"
"""Appended to the worker's identity on the events of a start-up catch-up (``almanac.catch_up``)."""
MIN_HORIZON = timedelta(hours=1)


def horizon_for(spec: ScheduleSpecV1, horizon: timedelta) -> timedelta:
    """The look-ahead to materialize: ``horizon``, or less for a high-frequency or dense rule.

    At most :data:`HORIZON_PERIODS` rule periods ahead (a 10-second rule looks 5.5 hours ahead,
    not 14 days), at most the span that holds about :data:`HORIZON_OCCURRENCES` occurrences by
    the rule's per-day bound, and never less than an hour (at most 1,800 occurrences at the
    densest supported schedule).
    """
    periods = spec.nominal_period * HORIZON_PERIODS
    dense = span_for(HORIZON_OCCURRENCES, spec.per_day_bound)
    return max(min(horizon, periods, dense), MIN_HORIZON)


@dataclass(frozen=True, slots=True)
class _Window:
    """What one materialization wrote: where it ends (aware UTC), rows inserted, truncated."""

    until: datetime
    inserted: int
    truncated: bool


@dataclass(frozen=True, slots=True)
class _Released:
    """A release's ledger result, what to start (oldest first), and how many ran late."""

    result: ledger.ReleaseResult
    due: list[OccurrenceView]
    caught_up: int = 0


class ScheduleActivities(ActivitiesBase):
    """``materialize`` and ``release_due``, and the worker's catch-up."""

    @activity.defn(name=io.MATERIALIZE)
    def materialize(
        self, params: io.MaterializeOccurrencesInput
    ) -> io.MaterializeOccurrencesResult:
        """Materialize ``[from, now + horizon)`` for every revision owning part of it.

        ``params.now_utc`` is a decision instant: the window's end and the ``upcoming`` list are
        computed as of the workflow's instant, so the schedule's timers and its view of what is
        next agree. The rows' creation time is the clock's, when they are written.
        """
        started = time.monotonic()
        with self._domain_errors(params.schedule_id, io.MATERIALIZE):
            reading = self._reading(params, self._write_window(params))
        self._observe_schedule(
            params.schedule_id, materialized=(time.monotonic() - started, reading.inserted)
        )
        return reading

    def _write_window(
        self, params: io.MaterializeOccurrencesInput, by: str | None = None
    ) -> _Window:
        """Materialize ``[from, now + horizon)``, at most :data:`MATERIALIZE_LIMIT` records.

        ``by``: who, on the event rows (default: this worker's identity). Truncated: the window
        held more than the limit and ends before ``now + horizon``; the schedule's next wake-up
        continues from there at once (``workflows.schedule.BOUNDED_MATERIALIZE``).
        """
        since = params.from_utc or datetime(1970, 1, 1, tzinfo=UTC)
        inserted = 0
        specs = self._published_specs(params.schedule_id)
        horizon = timedelta(seconds=params.horizon_seconds)
        if specs:
            horizon = horizon_for(specs[-1], horizon)
        until = end = params.now_utc + horizon
        # An empty window (the follow-up of a wake-up that materialized at the same instant
        # already) writes nothing: skip its transactions.
        for spec in specs if since < until else []:
            result = ledger.materialize_bounded(
                self._ledger,
                spec,
                since,
                until,
                self._clock.now,
                limit=MATERIALIZE_LIMIT,
                by=by or self._identity,
                tzdb_store=self._tzdb_store,
            )
            inserted += result.created
            until = result.through_utc
        return _Window(until, inserted, until < end)

    def _reading(
        self, params: io.MaterializeOccurrencesInput, window: _Window
    ) -> io.MaterializeOccurrencesResult:
        """What the ledger holds after a window was written: one ``ledger.horizon_reading``."""
        reading = ledger.horizon_reading(
            self._ledger, params.schedule_id, params.now_utc, params.upcoming_limit
        )
        pending = reading.next_planned
        return io.MaterializeOccurrencesResult(
            gate=reading.gate,
            materialized_through_utc=window.until,
            next_instant_utc=pending.instant_utc if pending else None,
            upcoming=[o.upcoming() for o in reading.upcoming],
            counts_by_state={state.value: n for state, n in reading.counts.items()},
            inserted=window.inserted,
            truncated=window.truncated,
        )

    @activity.defn(name=io.RELEASE_DUE)
    def release_due(self, params: io.ReleaseDueInput) -> io.ReleaseDueResult:
        """Apply misfire planning at ``now``; return every DUE occurrence and the gate.

        ``params.now_utc`` is the decision instant (what is overdue, what is later than
        ``lateness``): the workflow's, so a release retried later decides as the schedule's
        timer did — or ``params.not_before_utc``, the instant this wake-up's timer was set for:
        when it is ahead, the release first waits for it on this worker's clock (at most
        ``io.MAX_RELEASE_HOLD``); when the timer's task started late (within
        ``io.RELEASE_GRACE``), the release decides as of the instant all the same.
        Its events are stamped with the clock, when they are written.
        """
        first, started = params.materialize_first, time.monotonic()
        window = None
        if first is not None:
            # The wake-up's materialization, before the release (one activity, not two). A
            # deterministic error fails the activity here, before anything is released.
            with self._domain_errors(params.schedule_id, io.MATERIALIZE):
                window = self._write_window(first)
        decided = params.now_utc
        if params.not_before_utc is not None:
            decided = params.not_before_utc
            self._hold_until(decided)
        with self._domain_errors(params.schedule_id, io.RELEASE_DUE):
            released = self._release(params.schedule_id, decided, written=window)
        gate = released.result.gate
        assert gate is not None  # the ledger's release reads it under its lock
        follow_up: Callable[[], io.MaterializeOccurrencesResult] | None = None
        if first is not None:
            assert window is not None
            follow_up = partial(self._reading, first, window)
        elif params.then_materialize is not None and (released.due or released.result.expired):
            then = params.then_materialize
            follow_up = partial(self._reading_after_write, then)
            started = time.monotonic()
        materialized, materialize_error = None, None
        if follow_up is not None:
            # The wake-up's reading after the release, folded into this activity. A
            # deterministic error is recorded as the materialize activity's and returned, not
            # raised: the release stands and its children start. A transient one fails the
            # activity; its retry releases again (idempotent) and materializes again (inserts
            # on conflict do nothing).
            try:
                with self._domain_errors(params.schedule_id, io.MATERIALIZE):
                    materialized = follow_up()
            except ApplicationError as exc:
                if not exc.non_retryable:
                    raise
                materialize_error = str(exc)
        self._observe_schedule(
            params.schedule_id,
            materialized=None
            if materialized is None
            else (time.monotonic() - started, materialized.inserted),
            expired=len(released.result.expired),
            caught_up=released.caught_up,
        )
        return io.ReleaseDueResult(
            gate=gate,
            due=[o.upcoming() for o in released.due],
            expired=len(released.result.expired),
            held=len(released.result.held),
            skipped_overlap=len(released.result.skipped),
            materialized=materialized,
            materialize_error=materialize_error,
            catch_up_spacing_seconds=self._catch_up_spacing(released.due),
        )

    def _catch_up_spacing(self, due: Sequence[OccurrenceView]) -> float:
        """The largest ``catchUpSpacing`` (seconds) of the revisions owning ``due``; 0 for one."""
        if len(due) < 2:
            return 0.0
        spacings = {self._spec(o.schedule_id, o.revision).catch_up_spacing for o in due}
        return max((s.total_seconds() for s in spacings if s is not None), default=0.0)

    def _reading_after_write(
        self, params: io.MaterializeOccurrencesInput
    ) -> io.MaterializeOccurrencesResult:
        return self._reading(params, self._write_window(params))

    def _hold_until(self, instant_utc: datetime) -> None:
        """Wait until this worker's clock reaches ``instant_utc`` (an early wake-up's instant).

        Taken only while the rest is at most ``io.MAX_RELEASE_HOLD``: a longer one means the
        clocks disagree (a worker clock far behind the server's, a fixed test clock), and the
        decision instant stands alone. One bounded sleep, never a loop on a clock that may not
        move.
        """
        rest = instant_utc - self._clock.now()
        if timedelta(0) < rest <= io.MAX_RELEASE_HOLD:
            time.sleep(rest.total_seconds())

    def _release(
        self,
        schedule_id: str,
        now_utc: datetime,
        by: str | None = None,
        *,
        written: _Window | None = None,
    ) -> _Released:
        """Misfire planning at ``now_utc`` (``ledger.release_due``).

        Returns the ledger's result, every DUE occurrence not held back behind an older in-flight
        one (overlapPolicy BUFFER_*), oldest first, and how many of them run later than their
        lateness (caught up). ``by``: who, on the event rows (default: this worker's identity).
        ``written``: the call's own materialization; when it stopped at its bound at or before
        ``now_utc``, the overdue set is not complete yet and nothing is decided (a catch-up
        bound counts the most recent missed ones: it must see all of them first).
        """
        if written is not None and written.truncated and written.until <= now_utc:
            gate = ledger.get_gate(self._ledger, schedule_id)
            return _Released(ledger.ReleaseResult((), (), disabled=gate.disabled, gate=gate), [])
        released = ledger.release_due(
            self._ledger,
            schedule_id,
            now_utc,
            by=by or self._identity,
            recorded_at_utc=self._clock.now(),
        )
        held = set(released.held)
        due = [o for o in released.due if o.occurrence_id not in held]
        fresh = set(released.released)
        late = [o for o in due if o.occurrence_id in fresh]
        caught_up = sum(1 for o in late if self._lateness_exceeded(o, now_utc))
        return _Released(released, due, caught_up)

    def _lateness_exceeded(self, occurrence: OccurrenceView, now_utc: datetime) -> bool:
        spec = self._spec(occurrence.schedule_id, occurrence.revision)
        instant = occurrence.instant_utc
        return instant is not None and now_utc - instant > spec.lateness

    def catch_up(
        self, schedule_id: str, since_utc: datetime, now_utc: datetime, horizon: timedelta
    ) -> ledger.ReleaseResult:
        """A schedule's recovery in the ledger: its wake-up's work, without its workflow.

        Materializes ``[since_utc, now_utc + horizon)`` (as ``release_due`` with
        ``materialize_first`` does; at most :data:`MATERIALIZE_LIMIT` occurrences) and then
        decides what is overdue at ``now_utc`` by the misfire policy — nothing when the window
        stopped at its bound before ``now_utc``: the schedule workflow writes the rest and
        decides the whole overdue set. The same ledger calls as the schedule workflow's own
        wake-up, which may run at the same time: both are idempotent and serialized by the gate
        lock, so whichever comes second finds the window written and the misfires decided, and
        the workflow starts what is DUE. The event rows name the worker with
        :data:`CATCH_UP_SUFFIX` (who decided is on record).

        Args:
            schedule_id: the schedule.
            since_utc: window start (aware UTC): at or before its earliest missed occurrence.
            now_utc: the decision instant (aware UTC), the clock's.
            horizon: the look-ahead (``horizon_for`` shortens it for a high-frequency rule).

        Returns:
            What the release decided (released, expired, held, skipped by overlap).

        Raises:
            LedgerUnavailable: the database is unreachable.
            Any of ``activities.common.DETERMINISTIC_ERRORS``: as the schedule's own wake-up.
        """
        started = time.monotonic()
        window = io.MaterializeOccurrencesInput(
            schedule_id, now_utc, horizon.total_seconds(), from_utc=since_utc
        )
        by = self._identity + CATCH_UP_SUFFIX
        written = self._write_window(window, by)
        elapsed = time.monotonic() - started
        released = self._release(schedule_id, now_utc, by, written=written)
        self._observe_schedule(
            schedule_id,
            materialized=(elapsed, written.inserted),
            expired=len(released.result.expired),
            caught_up=released.caught_up,
        )
        return released.result
