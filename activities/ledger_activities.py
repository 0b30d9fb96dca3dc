"""The activities: thin calls into ``timecontract`` and ``ledger``, and the downstream action.

One class, built by the worker with the ledger, the action registry and the worker's identity and
implementation alias, so tests can build it with their own. Workflows call its methods by reference
(``workflow.execute_activity_method``); the activity names (``activities.io``'s constants, fixed
by recorded histories) and the payload dataclasses in ``activities.io`` are the contract.

Time (see ``activities.clock``, the one place that lists every instant the ledger records): an
instant of work (a claim, a call's start, an outcome, a publication) is read from the injected
:class:`~activities.clock.Clock` at the moment of the work; the ``now_utc`` an input carries is the
workflow's instant when it scheduled the call (Temporal hands it back unchanged on a retry after a
crash), so it is used only as a *decision* instant: the materialization window and the
release/misfire decision.

Errors: ledger refusals that are expected (a lost claim, a rejected revision, a refused gate
change) are results — verdicts the schedule workflow hands back to the caller of its updates. A
deterministic error (:data:`DETERMINISTIC_ERRORS`: an invalid spec or parameters, an unknown
adapter, a refused transition, a missing row) is a non-retryable ``ApplicationError`` whose type is
the domain error's class name (STYLE: "Activities map domain errors to ApplicationError"), and it
is recorded as a rejection on the schedule first: a ``schedule_events`` row
(``ACTIVITY_REJECTED``) and ``almanac_schedule_rejections_total``. Only
``ledger.LedgerUnavailable`` (the database unreachable) is retried, and the workflows bound those
retries (``workflows.contracts.LEDGER_RETRY``).
"""

from __future__ import annotations

import asyncio
import dataclasses
import hashlib
import json
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager, suppress
from datetime import UTC, datetime, timedelta
from functools import partial
from pathlib import Path
from typing import Any

from temporalio import activity
from temporalio.exceptions import ApplicationError

import ledger
from activities import io
from activities.actions import (
    ActionContext,
    ActionError,
    ActionRegistry,
    OutcomeKind,
    QueryOutcomeKind,
)
from activities.clock import Clock
from activities.clock_skew import CLOCK_SKEW_ERROR, ClockGuard
from activities.heartbeat import heartbeating
from activities.metrics import AlmanacMetrics, default_metrics
from ledger import (
    ClaimRefusal,
    Ledger,
    LedgerError,
    OccurrenceState,
    OccurrenceView,
    ScheduleEventKind,
)
from timecontract import (
    InvalidSpec,
    MisfirePolicy,
    ScheduleSpecV1,
    SpecError,
    format_instant,
    load_spec,
    occurrence_schedule_id,
    span_for,
)

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
FIRST_RETRY_DELAY = timedelta(seconds=10)
MAX_RETRY_DELAY = timedelta(minutes=10)
# Refusals that mean "the gate no longer wants this run": the occurrence is cancelled with the
# ledger's reason. Others (another claim won, a foreign implementation alias) leave it as it is.
# REVISION_CHANGED is retried with a fresh gate view first (see AlmanacActivities.claim).
CANCELLING_REFUSALS = frozenset(
    {
        ClaimRefusal.DISABLED,
        ClaimRefusal.DISABLE_GENERATION_CHANGED,
        ClaimRefusal.REVISION_CHANGED,
        ClaimRefusal.NOT_OWNER,
    }
)


DETERMINISTIC_ERRORS: tuple[type[Exception], ...] = (
    LedgerError,
    SpecError,
    InvalidSpec,
    ActionError,
)
"""Errors that the same input raises again: never retried (``ledger.LedgerUnavailable``, a
``LedgerError`` too, is the one exception: it is transient)."""
ERROR_DETAIL_LIMIT = 500
"""Characters of an error message carried into a failure, an event or a log line."""


class _LastReading:
    """A clock for the ledger to read inside a transaction; keeps the reading it took last.

    The last reading is the one the committed transaction recorded (a retried transaction reads
    again), so a metric can use the very instant the ledger holds.
    """

    def __init__(self, clock: Clock) -> None:
        self._clock = clock
        self.last = datetime.min.replace(tzinfo=UTC)

    def __call__(self) -> datetime:
        self.last = self._clock.now()
        return self.last


def horizon_for(spec: ScheduleSpecV1, horizon: timedelta) -> timedelta:
    """The look-ahead to materialize: ``horizon``, or less for a high-frequency or dense rule.

    At most :data:`HORIZON_PERIODS` rule periods ahead (a 10-second rule looks 5.5 hours ahead,
    not 14 days: 120,000 rows a refresh would help no one), at most the span that holds about
    :data:`HORIZON_OCCURRENCES` occurrences by the rule's per-day bound (a rule firing every 2
    seconds of every day through BYxxx lists looks an hour ahead, not 2,000 days), and never less
    than an hour (at most 1,800 occurrences at the densest supported schedule).
    """
    periods = spec.nominal_period * HORIZON_PERIODS
    dense = span_for(HORIZON_OCCURRENCES, spec.per_day_bound)
    return max(min(horizon, periods, dense), MIN_HORIZON)


def retry_delay(claim_number: int, first: timedelta = FIRST_RETRY_DELAY) -> timedelta:
    """Backoff after claim number ``claim_number`` failed: 10 s (``first``), 20 s, … ≤ 10 min."""
    return min(first * (1 << max(claim_number - 1, 0)), MAX_RETRY_DELAY)


class AlmanacActivities:
    """Every Almanac activity, sharing one ledger and one action registry."""

    def __init__(
        self,
        ledger_: Ledger,
        actions: ActionRegistry,
        *,
        identity: str,
        clock: Clock,
        implementation_alias: str = ledger.DEFAULT_IMPLEMENTATION_ALIAS,
        tzdb_store: Path | None = None,
        metrics: AlmanacMetrics | None = None,
        clock_guard: ClockGuard | None = None,
    ) -> None:
        """Build the activities.

        Args:
            ledger_: the ledger (SQLite or PostgreSQL).
            actions: the action adapters, by name.
            identity: the worker's identity (stored on attempts and events).
            clock: the clock of work: every instant the activities record is read from it when
                the work happens (production: ``SystemClock``, built by the worker).
            implementation_alias: the implementation this worker runs (claims check it).
            tzdb_store: the local tz release store.
            metrics: where to count (default: the process registry).
            clock_guard: measures and bounds the clock's skew before each claim
                (:mod:`activities.clock_skew`; the production worker's); ``None``: unguarded.
        """
        self._ledger = ledger_
        self._actions = actions
        self._identity = identity
        self._clock = clock
        self._alias = implementation_alias
        self._tzdb_store = tzdb_store
        self._metrics = metrics or default_metrics()
        self._clock_guard = clock_guard
        self._specs: dict[tuple[str, int], ScheduleSpecV1] = {}

    def all(self) -> list[Callable[..., Any]]:
        """The activity callables to register on a worker."""
        return [
            self.materialize,
            self.release_due,
            self.publish_revision,
            self.set_gate,
            self.claim,
            self.execute_attempt,
            self.claim_and_execute,
            self.query_effect,
            self.escalate,
            self.change_gate,
            self.delete_schedule,
            self.record_trigger,
            self.backfill,
        ]

    # -- schedule-level ---------------------------------------------------------------------
    @activity.defn(name=io.MATERIALIZE)
    def materialize(
        self, params: io.MaterializeOccurrencesInput
    ) -> io.MaterializeOccurrencesResult:
        """Materialize ``[from, now + horizon)`` for every revision owning part of it.

        ``params.now_utc`` is a decision instant: the window's end and the ``upcoming`` list are
        computed as of the workflow's instant, so the schedule's timers and its view of what is
        next agree. The rows' creation time is the clock's, when they are written.
        """
        with self._domain_errors(params.schedule_id, io.MATERIALIZE):
            return self._materialize(params)

    def _materialize(
        self, params: io.MaterializeOccurrencesInput
    ) -> io.MaterializeOccurrencesResult:
        """The materialize activity's work (also the follow-up of ``release_due``)."""
        started = time.monotonic()
        return self._reading(params, *self._write_window(params), started)

    def _write_window(
        self, params: io.MaterializeOccurrencesInput, by: str | None = None
    ) -> tuple[datetime, int, bool]:
        """Materialize ``[from, now + horizon)``: (where it ends, UTC; rows inserted; truncated).

        ``by``: who, on the event rows (default: this worker's identity). Truncated: the window
        held more than :data:`MATERIALIZE_LIMIT` records and ends before ``now + horizon``.
        """
        since = params.from_utc or datetime(1970, 1, 1, tzinfo=UTC)
        inserted = 0
        specs = ledger.published_specs(self._ledger, params.schedule_id)
        horizon = timedelta(seconds=params.horizon_seconds)
        if specs:
            horizon = horizon_for(specs[-1], horizon)
        until = end = params.now_utc + horizon
        # An empty window ([from, until) with from ≥ until: the follow-up of a wake-up that
        # materialized at the same instant already) writes nothing: skip its transactions.
        for spec in specs if since < until else []:
            # Bounded in occurrences: a window holding more than MATERIALIZE_LIMIT (a dense
            # rule's horizon after an outage) ends where this call stopped; the schedule's next
            # wake-up continues from there at once (``workflows.schedule.BOUNDED_MATERIALIZE``).
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
        return until, inserted, until < end

    def _reading(
        self,
        params: io.MaterializeOccurrencesInput,
        until: datetime,
        inserted: int,
        truncated: bool,
        started: float,
    ) -> io.MaterializeOccurrencesResult:
        """What the ledger holds after a window was written (``started``: ``time.monotonic``)."""
        upcoming = ledger.list_occurrences(
            self._ledger,
            params.schedule_id,
            from_utc=params.now_utc,
            states=[OccurrenceState.PLANNED, OccurrenceState.DUE],
            limit=params.upcoming_limit,
        )
        pending = ledger.list_occurrences(
            self._ledger,
            params.schedule_id,
            from_utc=params.now_utc,
            states=[OccurrenceState.PLANNED],
            limit=1,
        )
        counts = ledger.counts_by_state(self._ledger, params.schedule_id)
        gate = ledger.get_gate(self._ledger, params.schedule_id)
        self._metrics.observe_materialization(
            params.schedule_id, time.monotonic() - started, inserted
        )
        return io.MaterializeOccurrencesResult(
            gate=gate_payload(gate),
            materialized_through_utc=until,
            next_instant_utc=pending[0].instant_utc if pending else None,
            upcoming=[_upcoming(o) for o in upcoming],
            counts_by_state={state.value: n for state, n in counts.items()},
            inserted=inserted,
            truncated=truncated,
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
            # deterministic error fails the activity here, before anything is released: as the
            # loop's own materialize activity failing skipped the wake-up's release.
            with self._domain_errors(params.schedule_id, io.MATERIALIZE):
                window = self._write_window(first)
        decided = params.now_utc
        if params.not_before_utc is not None:
            decided = params.not_before_utc
            self._hold_until(decided)
        with self._domain_errors(params.schedule_id, io.RELEASE_DUE):
            released, due = self._release(params.schedule_id, decided, written=window)
        assert released.gate is not None  # the ledger's release reads it under its lock
        gate = released.gate
        materialized, materialize_error = None, None
        follow_up: Callable[[], io.MaterializeOccurrencesResult] | None = None
        if first is not None:
            assert window is not None
            follow_up = partial(self._reading, first, *window, started)
        elif params.then_materialize is not None and (due or released.expired):
            follow_up = partial(self._materialize, params.then_materialize)
        if follow_up is not None:
            # The wake-up's reading after the release (and, past the older patch alone, its
            # follow-up materialization), folded into this activity: one activity and one
            # workflow task fewer per wake-up. A deterministic error is recorded as the
            # materialize activity's and returned, not raised: the release stands and its
            # children start, as when this was a second activity. A transient one fails the
            # activity; its retry releases again (idempotent: nothing is newly due at the same
            # instant) and materializes again (inserts on conflict do nothing).
            try:
                with self._domain_errors(params.schedule_id, io.MATERIALIZE):
                    materialized = follow_up()
            except ApplicationError as exc:
                if not exc.non_retryable:
                    raise
                materialize_error = str(exc)
        return io.ReleaseDueResult(
            gate=gate_payload(gate),
            due=[_upcoming(o) for o in due],
            expired=len(released.expired),
            held=len(released.held),
            skipped_overlap=len(released.skipped),
            materialized=materialized,
            materialize_error=materialize_error,
        )

    def _hold_until(self, instant_utc: datetime) -> None:
        """Wait until this worker's clock reaches ``instant_utc`` (an early wake-up's instant).

        Taken only while the rest is at most ``io.MAX_RELEASE_HOLD``: a longer one means the
        clocks disagree (a worker clock far behind the server's, a fixed test clock), and the
        decision instant stands alone. One bounded sleep (a duration from the injected clock's
        reading), never a loop on a clock that may not move.
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
        written: tuple[datetime, int, bool] | None = None,
    ) -> tuple[ledger.ReleaseResult, list[OccurrenceView]]:
        """Misfire planning at ``now_utc`` (``ledger.release_due``), counted in the metrics.

        Returns the ledger's result and every DUE occurrence not held back behind an older
        in-flight one (overlapPolicy BUFFER_*), oldest first: what the schedule starts. ``by``:
        who, on the event rows (default: this worker's identity). ``written``: the call's own
        materialization (``_write_window``); when it stopped at its bound at or before
        ``now_utc``, the overdue set is not complete yet and nothing is decided (a catch-up
        bound counts the most recent missed ones: it must see all of them first).
        """
        if written is not None and written[2] and written[0] <= now_utc:
            gate = ledger.get_gate(self._ledger, schedule_id)
            return ledger.ReleaseResult((), (), disabled=gate.disabled, gate=gate), []
        released = ledger.release_due(
            self._ledger,
            schedule_id,
            now_utc,
            by=by or self._identity,
            recorded_at_utc=self._clock.now(),
        )
        held = set(released.held)
        due = [o for o in released.due if o.occurrence_id not in held]
        late = [o for o in due if o.occurrence_id in set(released.released)]
        caught_up = sum(1 for o in late if _lateness_exceeded(o, now_utc, self._spec(o)))
        if released.expired or caught_up:
            self._metrics.count_misfires(schedule_id, len(released.expired), caught_up)
        return released, due

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
            Any of :data:`DETERMINISTIC_ERRORS`: as the schedule's own wake-up would raise.
        """
        started = time.monotonic()
        window = io.MaterializeOccurrencesInput(
            schedule_id, now_utc, horizon.total_seconds(), from_utc=since_utc
        )
        by = self._identity + CATCH_UP_SUFFIX
        written = self._write_window(window, by)
        self._metrics.observe_materialization(schedule_id, time.monotonic() - started, written[1])
        return self._release(schedule_id, now_utc, by, written=written)[0]

    @activity.defn(name=io.PUBLISH_REVISION)
    def publish_revision(self, params: io.PublishRevisionInput) -> io.PublishRevisionResult:
        """Validate spec data, check its action, publish it: the ledger's verdict, never raised.

        A rejection (invalid spec, another scheduleId, no action, an unknown adapter or bad
        parameters, a revision or cutover the ledger refuses) names the field and the value, is
        appended to the schedule's events (``REVISION_REJECTED``) and counted.
        """
        sid = params.schedule_id
        try:
            spec = load_spec(params.spec, self._tzdb_store)
            if spec.schedule_id != sid:
                raise SpecError("scheduleId", spec.schedule_id, f"this schedule is {sid!r}")
            if spec.action is None:
                raise SpecError("action", None, "required to apply (a spec without one previews)")
            self._actions.check(spec.action.name, spec.action.parameters)
            # A new schedule's gate starts on this worker's alias (the alias serving schedules).
            result = ledger.publish_revision(
                self._ledger,
                spec,
                self._clock.now(),
                by=self._identity,
                implementation_alias=self._alias,
            )
        except (InvalidSpec, SpecError, ledger.RevisionRejected) as exc:
            return self._rejected_revision(params, exc)
        note = "published" if result.created else "already published (same digest)"
        return io.PublishRevisionResult(
            True,
            spec.revision,
            note,
            cutover_at_utc=spec.cutover_at,
            created=result.created,
            created_schedule=result.created_schedule,
            superseded=len(result.superseded),
            gate=gate_payload(result.gate),
        )

    def _rejected_revision(
        self, params: io.PublishRevisionInput, exc: Exception
    ) -> io.PublishRevisionResult:
        problem = exc.problems[0] if isinstance(exc, InvalidSpec) and exc.problems else exc
        field_ = str(getattr(problem, "field", ""))
        value = _plain(getattr(problem, "value", None))
        revision = params.spec.get("revision")
        revision = (
            revision if isinstance(revision, int) and not isinstance(revision, bool) else None
        )
        reason = _bounded(str(exc))
        self._record_rejection(
            params.schedule_id,
            ScheduleEventKind.REVISION_REJECTED,
            type(exc).__name__,
            reason,
            revision=revision,
        )
        gate = self._gate_or_none(params.schedule_id)
        return io.PublishRevisionResult(
            False,
            revision,
            reason,
            field=field_,
            value=value,
            gate=gate,
            schedule_live=gate is not None and gate.deleted_at_utc is None,
        )

    @activity.defn(name=io.SET_GATE)
    def set_gate(self, params: io.SetGateInput) -> io.GateSnapshot:
        """Disable (with a reason) or enable the schedule's gate (the signals' path)."""
        with self._domain_errors(params.schedule_id, io.SET_GATE):
            if params.disabled:
                gate = ledger.disable(
                    self._ledger,
                    params.schedule_id,
                    self._clock.now(),
                    by=params.by,
                    reason=params.reason,
                )
            else:
                gate = ledger.enable(
                    self._ledger, params.schedule_id, self._clock.now(), by=params.by
                )
        return gate_payload(gate)

    @activity.defn(name=io.CHANGE_GATE)
    def change_gate(self, params: io.ChangeGateInput) -> io.ChangeGateResult:
        """Disable or enable the gate and report what it did (the updates' path).

        On an enable that changed the gate, the occurrences that came due while disabled are
        decided at once by the misfire policy (``ledger.release_due`` at ``now``): the result
        counts how many run and how many expire. Enabling a deleted schedule is refused, as a
        result. Other errors as :meth:`_domain_errors` says.
        """
        sid = params.schedule_id
        with self._domain_errors(sid, io.CHANGE_GATE):
            earlier = frozenset() if params.disabled else self._due_before_disable(sid)
            try:
                change = ledger.change_gate(
                    self._ledger,
                    sid,
                    self._clock.now(),
                    disabled=params.disabled,
                    by=params.by,
                    reason=params.reason if params.disabled else None,
                )
            except ledger.ScheduleDeleted as exc:
                return io.ChangeGateResult(
                    sid, params.disabled, False, self._gate_or_none(sid), rejected=str(exc)
                )
            result = io.ChangeGateResult(
                sid,
                params.disabled,
                change.changed,
                gate_payload(change.gate),
                cancelled=len(change.cancelled),
            )
            if params.disabled or not change.changed:
                return result
            # Decided at the workflow's instant, recorded at the clock's (as release_due is).
            released = ledger.release_due(
                self._ledger,
                sid,
                params.now_utc,
                by=self._identity,
                recorded_at_utc=self._clock.now(),
            )
            specs = ledger.published_specs(self._ledger, sid)
        if released.expired or released.released:
            self._metrics.count_misfires(sid, len(released.expired), len(released.released))
        decided = {*released.released, *released.expired}
        return dataclasses.replace(
            result,
            came_due=len(decided - earlier),
            due_before_disable=len(decided & earlier),
            released=len(released.released),
            expired=len(released.expired),
            misfire_policy=_misfire_text(specs[-1]) if specs else "",
        )

    def _due_before_disable(self, schedule_id: str) -> frozenset[str]:
        """PLANNED occurrences of a disabled schedule whose instant passed before its disable.

        Empty when the schedule is not disabled (or not known: ``change_gate`` says so).
        """
        try:
            disabled = ledger.get_gate(self._ledger, schedule_id).disabled
        except ledger.ScheduleNotFound:
            return frozenset()
        last = ledger.schedule_events(
            self._ledger, schedule_id, kind=ScheduleEventKind.DISABLED, limit=1
        )
        if not disabled or not last:
            return frozenset()
        overdue = ledger.list_occurrences(
            self._ledger, schedule_id, to_utc=last[0].at_utc, states=[OccurrenceState.PLANNED]
        )
        return frozenset(o.occurrence_id for o in overdue)

    @activity.defn(name=io.DELETE_SCHEDULE)
    def delete_schedule(self, params: io.DeleteScheduleInput) -> io.DeleteScheduleResult:
        """Delete the schedule in the ledger (``ledger.delete_schedule``); a verdict, not raised."""
        sid = params.schedule_id
        with self._domain_errors(sid, io.DELETE_SCHEDULE):
            try:
                change = ledger.delete_schedule(
                    self._ledger, sid, self._clock.now(), by=params.by, reason=params.reason
                )
            except ledger.ScheduleNotFound as exc:
                return io.DeleteScheduleResult(sid, False, None, rejected=str(exc))
        return io.DeleteScheduleResult(
            sid, change.changed, gate_payload(change.gate), cancelled=len(change.cancelled)
        )

    # -- occurrence-level -------------------------------------------------------------------
    @activity.defn(name=io.CLAIM)
    def claim(self, params: io.ClaimOccurrenceInput) -> io.ClaimOccurrenceResult:
        """Claim against the releaser's gate view; cancel where the gate refuses the run."""
        return self._claim(params)

    @activity.defn(name=io.CLAIM_AND_EXECUTE)
    async def claim_and_execute(self, params: io.ClaimAndExecuteInput) -> io.ClaimAndExecuteResult:
        """Claim (the same acceptance point as :meth:`claim`) and, if won, run one attempt.

        A Temporal retry of this activity (a lost worker or completion) claims again: a claim its
        earlier try won is adopted (:meth:`_own_earlier_claim`) and the attempt then finds the
        occurrence DISPATCHING or RUNNING, exactly as a retried ``execute_attempt`` does; an
        outcome already recorded is returned as it is (a RETRY_WAIT keeps its backoff). A ledger
        that cannot be reached before the claim is a result, not a failure, so the workflow claims
        again with the ledger's unbounded retry policy rather than this activity's bounded one.
        It heartbeats while it runs (``activities.heartbeat``): a lost try is retried in seconds.
        """
        async with heartbeating():
            return await self._claim_and_execute(params)

    async def _claim_and_execute(self, params: io.ClaimAndExecuteInput) -> io.ClaimAndExecuteResult:
        if activity.info().attempt >= 2:
            settled = await self._read(params.occurrence_id)
            if settled.state is OccurrenceState.RETRY_WAIT and settled.next_attempt_at_utc:
                # The remaining backoff, from the clock of work: a retry's ``now_utc`` is stale.
                wait = (settled.next_attempt_at_utc - self._clock.now()).total_seconds()
                attempt = io.ExecuteAttemptResult("RETRY_WAIT", max(wait, 0.0), detail="recorded")
                return io.ClaimAndExecuteResult(True, "RETRY_WAIT", None, attempt=attempt)
            if settled.state in (OccurrenceState.DISPATCHING, OccurrenceState.RUNNING):
                # This workflow's earlier try won the dispatch (one workflow per occurrenceId): a
                # won dispatch is never refused or cancelled, even after a rollback bumped the
                # epoch (seed); the attempt redelivers with the key or records UNKNOWN_EFFECT.
                generation = settled.claim_generation
                return await self._attempt_after_claim(params, generation)
        request = io.ClaimOccurrenceInput(params.occurrence_id, params.gate, params.now_utc)
        try:
            claim = await asyncio.to_thread(self._claim, request)
        except ledger.LedgerUnavailable as exc:
            return io.ClaimAndExecuteResult(False, "DUE", str(exc), ledger_unavailable=True)
        except ApplicationError as exc:
            if exc.type != CLOCK_SKEW_ERROR:
                raise
            # Held for clock skew (nothing written): like an unreachable ledger, the workflow
            # claims again under the ledger's retry policy, on this or another worker.
            return io.ClaimAndExecuteResult(False, "DUE", str(exc), ledger_unavailable=True)
        if not claim.claimed:
            return io.ClaimAndExecuteResult(False, claim.state, claim.refusal)
        return await self._attempt_after_claim(params, claim.claim_generation)

    async def _attempt_after_claim(
        self, params: io.ClaimAndExecuteInput, claim_generation: int
    ) -> io.ClaimAndExecuteResult:
        attempt = await self._execute_attempt(
            io.ExecuteAttemptInput(
                occurrence_id=params.occurrence_id,
                claim_generation=claim_generation,
                claim_number=params.claim_number,
                max_attempts=params.max_attempts,
                now_utc=params.now_utc,
                first_retry_delay_seconds=params.first_retry_delay_seconds,
            )
        )
        return io.ClaimAndExecuteResult(True, attempt.state, None, attempt=attempt)

    def _claim(self, params: io.ClaimOccurrenceInput) -> io.ClaimOccurrenceResult:
        """Claim against the releaser's gate view; cancel where the gate refuses the run.

        The one acceptance point of the activities (``claim`` and ``claim_and_execute``). A
        revision published since the release does not by itself end an occurrence: the old
        revision still owns instants before the new cutover. So on ``REVISION_CHANGED`` the gate
        is read again and the claim retried once with the fresh view; the ledger's slot and
        cutover checks then decide (``NOT_OWNER`` cancels what the new revision took over).
        """
        with self._domain_errors(_schedule_of(params.occurrence_id), io.CLAIM):
            occurrence = ledger.show_occurrence(self._ledger, params.occurrence_id).occurrence
            if self._clock_guard is not None:
                scheduled = (
                    activity.info().current_attempt_scheduled_time
                    if activity.in_activity()
                    else None
                )
                self._clock_guard.check_claim(occurrence.instant_utc, scheduled)
            if occurrence.state is OccurrenceState.RETRY_WAIT:
                # overlapPolicy CANCEL_OTHER: a retry never runs after its successor was released.
                newer = ledger.cancel_superseded(
                    self._ledger, occurrence.occurrence_id, self._clock.now(), by=self._identity
                )
                if newer is not None:
                    refusal = f"{ClaimRefusal.NOT_CLAIMABLE.value}: superseded by {newer}"
                    return io.ClaimOccurrenceResult(
                        False, 0, refusal, OccurrenceState.CANCELLED.value
                    )
            view = _ledger_gate(params.gate)
            for _ in range(2):
                result = ledger.claim(
                    self._ledger,
                    params.occurrence_id,
                    view,
                    worker_identity=self._identity,
                    implementation_alias=self._alias,
                    input_digest=_input_digest(occurrence, self._spec(occurrence)),
                    now_utc=self._clock.now,  # read once the claim holds its locks
                )
                if result.refusal is not ClaimRefusal.REVISION_CHANGED:
                    break
                view = ledger.get_gate(self._ledger, occurrence.schedule_id)
            if result.attempt is not None:
                return io.ClaimOccurrenceResult(
                    True, result.attempt.claim_generation, None, "DISPATCHING"
                )
            assert result.refusal is not None
            adopted = self._own_earlier_claim(params.occurrence_id, result)
            if adopted is not None:
                return adopted
            state = self._settle_refusal(occurrence.occurrence_id, result)
        return io.ClaimOccurrenceResult(False, 0, f"{result.refusal.value}: {result.detail}", state)

    def _own_earlier_claim(
        self, occurrence_id: str, result: ledger.ClaimResult
    ) -> io.ClaimOccurrenceResult | None:
        """A retried claim whose first try committed but lost its completion: adopt that claim.

        Temporal runs one workflow per occurrenceId (REJECT_DUPLICATE), so an occurrence found
        DISPATCHING/RUNNING by a *retry* of this activity was claimed by this workflow's earlier
        try; refusing it would strand the occurrence in DISPATCHING forever.
        """
        retried = activity.in_activity() and activity.info().attempt >= 2
        if result.refusal is not ClaimRefusal.NOT_CLAIMABLE or not retried:
            return None
        current = ledger.show_occurrence(self._ledger, occurrence_id).occurrence
        if current.state not in (OccurrenceState.DISPATCHING, OccurrenceState.RUNNING):
            return None
        return io.ClaimOccurrenceResult(True, current.claim_generation, None, current.state.value)

    def _settle_refusal(self, occurrence_id: str, result: ledger.ClaimResult) -> str:
        current = ledger.show_occurrence(self._ledger, occurrence_id).occurrence
        cancellable = current.state in (OccurrenceState.DUE, OccurrenceState.RETRY_WAIT)
        if result.refusal in CANCELLING_REFUSALS and cancellable:
            why = f"claim refused: {result.refusal.value if result.refusal else ''} {result.detail}"
            ledger.cancel(
                self._ledger, occurrence_id, self._clock.now(), by=self._identity, why=why.strip()
            )
            return OccurrenceState.CANCELLED.value
        return current.state.value

    @activity.defn(name=io.EXECUTE_ATTEMPT)
    async def execute_attempt(self, params: io.ExecuteAttemptInput) -> io.ExecuteAttemptResult:
        """Run the action once for the claimed attempt and record the outcome.

        A Temporal retry of this activity (the worker died, the completion was lost) may find the
        occurrence RUNNING: the downstream may have the call already. An idempotent downstream
        then gets the same key again, as a new attempt; any other downstream makes the occurrence
        UNKNOWN_EFFECT — never a blind resend. A retry that finds the outcome recorded returns it.

        Every instant recorded is the clock's at that moment, never ``params.now_utc`` (which a
        retry after a crash carries unchanged); the dispatch lag observed is exactly the recorded
        start of the call (the RUNNING event) minus the occurrence's instant. It heartbeats while
        it runs (``activities.heartbeat``).
        """
        async with heartbeating():
            return await self._execute_attempt(params)

    async def _execute_attempt(self, params: io.ExecuteAttemptInput) -> io.ExecuteAttemptResult:
        occurrence = await self._read(params.occurrence_id)
        if occurrence.state not in (OccurrenceState.DISPATCHING, OccurrenceState.RUNNING):
            return io.ExecuteAttemptResult(occurrence.state.value, detail="already recorded")
        spec = self._spec(occurrence)
        assert spec.action is not None  # published specs always have one
        try:
            capabilities = self._actions.validate(spec.action.name, spec.action.parameters)
        except (SpecError, ActionError) as exc:
            # This worker cannot run the action at all (an adapter it lacks, parameters its
            # adapter refuses): the attempt fails for good, recorded; retrying cannot help.
            return await self._fail_unrunnable(occurrence, params, exc)
        oid = occurrence.occurrence_id
        by = self._identity
        generation = params.claim_generation
        if occurrence.state is OccurrenceState.RUNNING:
            if not capabilities.accepts_idempotency_key:
                return await self._record_unknown(
                    occurrence,
                    occurrence.claim_generation,
                    capabilities.can_query_result,
                    "the worker stopped after the call began (lost acknowledgement)",
                    lost=True,
                )
            attempt = await asyncio.to_thread(
                ledger.redeliver,
                self._ledger,
                oid,
                occurrence.claim_generation,
                self._clock.now,  # read once the redelivery holds its locks
                by=by,
                input_digest=_input_digest(occurrence, spec),
            )
            generation = attempt.claim_generation
            started = attempt.started_at_utc
        else:
            reading = _LastReading(self._clock)
            await asyncio.to_thread(
                ledger.mark_running, self._ledger, oid, generation, reading, by=by
            )
            started = reading.last  # the instant the RUNNING event was recorded at
        if occurrence.instant_utc is not None:
            lag = (started - occurrence.instant_utc).total_seconds()
            self._metrics.observe_dispatch_lag(occurrence.schedule_id, lag)
        outcome = await self._actions.invoke(
            spec.action.name, _context(occurrence, spec, generation)
        )
        now = self._clock.now()
        if outcome.kind is OutcomeKind.UNCONFIRMED:
            return await self._record_unknown(
                occurrence, generation, capabilities.can_query_result, outcome.detail
            )
        retryable = outcome.kind is OutcomeKind.RETRYABLE_FAILURE
        if retryable and params.claim_number < params.max_attempts:
            first = timedelta(seconds=params.first_retry_delay_seconds)
            delay = retry_delay(params.claim_number, first)
            if outcome.retry_after_seconds:
                delay = max(delay, timedelta(seconds=outcome.retry_after_seconds))
            await asyncio.to_thread(
                ledger.retry_wait,
                self._ledger,
                oid,
                generation,
                now + delay,
                now,
                by=by,
                error_class=outcome.kind.value,
                error_message=outcome.detail,
            )
            self._metrics.count_attempt(occurrence.schedule_id, OccurrenceState.RETRY_WAIT)
            return io.ExecuteAttemptResult(
                "RETRY_WAIT", delay.total_seconds(), detail=outcome.detail
            )
        if outcome.kind is OutcomeKind.CONFIRMED:
            await asyncio.to_thread(
                ledger.succeeded, self._ledger, oid, generation, self._clock.now, by=by
            )
            state = OccurrenceState.SUCCEEDED
        else:
            why = f"retries exhausted: {outcome.detail}" if retryable else outcome.detail
            await asyncio.to_thread(
                ledger.failed,
                self._ledger,
                oid,
                generation,
                self._clock.now,
                by=by,
                error_class=outcome.kind.value,
                error_message=why,
            )
            state = OccurrenceState.FAILED
        self._metrics.count_attempt(occurrence.schedule_id, state)
        return io.ExecuteAttemptResult(state.value, detail=outcome.detail)

    async def _fail_unrunnable(
        self,
        occurrence: OccurrenceView,
        params: io.ExecuteAttemptInput,
        exc: Exception,
    ) -> io.ExecuteAttemptResult:
        kind = type(exc).__name__
        message = _bounded(str(exc))
        generation = (
            occurrence.claim_generation
            if occurrence.state is OccurrenceState.RUNNING
            else params.claim_generation
        )
        with self._domain_errors(occurrence.schedule_id, io.EXECUTE_ATTEMPT):
            await asyncio.to_thread(
                ledger.failed,
                self._ledger,
                occurrence.occurrence_id,
                generation,
                self._clock.now(),
                by=self._identity,
                error_class=kind,
                error_message=message,
            )
        self._record_rejection(
            occurrence.schedule_id,
            ScheduleEventKind.ACTIVITY_REJECTED,
            kind,
            f"{io.EXECUTE_ATTEMPT}: {occurrence.occurrence_id}: {kind}: {message}",
        )
        self._metrics.count_attempt(occurrence.schedule_id, OccurrenceState.FAILED)
        return io.ExecuteAttemptResult("FAILED", detail=f"{kind}: {message}")

    async def _record_unknown(
        self,
        occurrence: OccurrenceView,
        generation: int,
        can_query: bool,
        detail: str,
        *,
        lost: bool = False,
    ) -> io.ExecuteAttemptResult:
        await asyncio.to_thread(
            ledger.unknown_effect,
            self._ledger,
            occurrence.occurrence_id,
            generation,
            self._clock.now,
            by=self._identity,
            error_class=ledger.LOST_ACKNOWLEDGEMENT if lost else "UNCONFIRMED",
            error_message=detail or "outcome not confirmed",
            lost=lost,
        )
        self._metrics.count_attempt(occurrence.schedule_id, OccurrenceState.UNKNOWN_EFFECT)
        case = (
            await asyncio.to_thread(ledger.show_occurrence, self._ledger, occurrence.occurrence_id)
        ).case
        return io.ExecuteAttemptResult(
            "UNKNOWN_EFFECT",
            can_query_result=can_query,
            detail=detail,
            reconcile_deadline_utc=case.deadline_utc if case is not None else None,
        )

    @activity.defn(name=io.QUERY_EFFECT)
    async def query_effect(self, params: io.QueryEffectInput) -> io.QueryEffectResult:
        """Ask the downstream about an UNKNOWN_EFFECT; resolve the case when the answer is known."""
        occurrence = await self._read(params.occurrence_id)
        if occurrence.state is not OccurrenceState.UNKNOWN_EFFECT:
            return io.QueryEffectResult(True, occurrence.state.value, "already resolved")
        spec = self._spec(occurrence)
        assert spec.action is not None
        with self._domain_errors(occurrence.schedule_id, io.QUERY_EFFECT):
            self._actions.validate(spec.action.name, spec.action.parameters)
        answer = await self._actions.query_result(
            spec.action.name, _context(occurrence, spec, occurrence.claim_generation)
        )
        if answer.kind is QueryOutcomeKind.FOUND:
            resolution = ledger.ReconciliationResolution.SUCCEEDED
        elif answer.kind is QueryOutcomeKind.NOT_FOUND:
            resolution = ledger.ReconciliationResolution.NOT_APPLIED
        else:
            return io.QueryEffectResult(False, occurrence.state.value, answer.detail)
        await asyncio.to_thread(
            ledger.resolve_reconciliation,
            self._ledger,
            occurrence.occurrence_id,
            resolution,
            self._clock.now(),
            by=self._identity,
            note=f"downstream answered {answer.kind.value}: {answer.detail}".strip(),
        )
        after = await self._read(occurrence.occurrence_id)
        return io.QueryEffectResult(True, after.state.value, answer.detail)

    @activity.defn(name=io.ESCALATE)
    def escalate(self, params: io.EscalateInput) -> None:
        """Put an unresolved UNKNOWN_EFFECT case in the human queue."""
        with self._domain_errors(_schedule_of(params.occurrence_id), io.ESCALATE):
            ledger.resolve_reconciliation(
                self._ledger,
                params.occurrence_id,
                ledger.ReconciliationResolution.HUMAN,
                self._clock.now(),
                by=self._identity,
                note=params.why,
            )

    # -- manual runs ------------------------------------------------------------------------
    @activity.defn(name=io.RECORD_TRIGGER)
    def record_trigger(self, params: io.RecordTriggerInput) -> io.RecordTriggerResult:
        """Record a manual occurrence now (the clock's instant), once per request ID."""
        with self._domain_errors(params.schedule_id, io.RECORD_TRIGGER):
            try:
                result = ledger.record_trigger(
                    self._ledger,
                    params.schedule_id,
                    params.request_id,
                    self._clock.now(),
                    by=params.by,
                    reason=params.reason,
                    tzdb_store=self._tzdb_store,
                )
            except ValueError as exc:
                raise ApplicationError(str(exc), type="InvalidRequest", non_retryable=True) from exc
            gate = ledger.get_gate(self._ledger, params.schedule_id)
        return io.RecordTriggerResult(
            _upcoming(result.occurrence), gate_payload(gate), result.created
        )

    @activity.defn(name=io.BACKFILL)
    def backfill(self, params: io.BackfillInput) -> io.BackfillResult:
        """Plan (and unless a dry run, apply) a backfill as of the schedule's instant.

        A refusal (a window not before ``now_utc`` or not owned by the revision in force, a plan
        over the bound, a disabled schedule) is the verdict, not an error: nothing was written.
        """
        base = io.BackfillResult(
            params.schedule_id,
            params.from_utc,
            params.to_utc,
            params.now_utc,
            params.dry_run,
            max_occurrences=params.max_occurrences,
        )
        with self._domain_errors(params.schedule_id, io.BACKFILL):
            try:
                plan = ledger.backfill_window(
                    self._ledger,
                    params.schedule_id,
                    params.from_utc,
                    params.to_utc,
                    params.now_utc,
                    by=params.by,
                    reason=params.reason,
                    include_expired=params.include_expired,
                    max_occurrences=params.max_occurrences,
                    dry_run=params.dry_run,
                    recorded_at_utc=self._clock.now(),
                    tzdb_store=self._tzdb_store,
                )
            except ledger.BackfillRefused as exc:
                return dataclasses.replace(
                    base, rejected=str(exc), field=exc.field, value=_plain(exc.value)
                )
        entries = [
            io.BackfillEntryPayload(
                e.occurrence_id,
                e.nominal_local.isoformat(),
                e.fold,
                e.placed_at_utc,
                e.action.value,
                None if e.state is None else e.state.value,
                e.note,
            )
            for e in plan.entries
        ]
        return dataclasses.replace(
            base, revision=plan.revision, entries=entries, released=list(plan.released)
        )

    # -- helpers ----------------------------------------------------------------------------
    async def _read(self, occurrence_id: str) -> OccurrenceView:
        with self._domain_errors(_schedule_of(occurrence_id), "almanac.read_occurrence"):
            detail = await asyncio.to_thread(ledger.show_occurrence, self._ledger, occurrence_id)
        return detail.occurrence

    @contextmanager
    def _domain_errors(self, schedule_id: str | None, activity_name: str) -> Iterator[None]:
        """Make a deterministic error non-retryable, after recording it on the schedule.

        ``ledger.LedgerUnavailable`` passes unchanged (transient: Temporal retries the activity,
        as many times as the caller's bounded retry policy allows). Any error in
        :data:`DETERMINISTIC_ERRORS` becomes ``ApplicationError(type=<class name>,
        non_retryable=True)`` with a bounded message, once it is appended to the schedule's
        events (``ACTIVITY_REJECTED``) and counted in ``almanac_schedule_rejections_total``.
        """
        try:
            yield
        except ledger.LedgerUnavailable:
            raise
        except DETERMINISTIC_ERRORS as exc:
            kind = type(exc).__name__
            message = _bounded(str(exc))
            if schedule_id is not None:
                self._record_rejection(
                    schedule_id,
                    ScheduleEventKind.ACTIVITY_REJECTED,
                    kind,
                    f"{activity_name}: {kind}: {message}",
                )
            raise ApplicationError(message, type=kind, non_retryable=True) from exc

    def _record_rejection(
        self,
        schedule_id: str,
        kind: ScheduleEventKind,
        error: str,
        detail: str,
        *,
        revision: int | None = None,
    ) -> None:
        """Append the schedule event and count it; best effort (the refusal itself must go on)."""
        try:
            ledger.record_schedule_event(
                self._ledger,
                schedule_id,
                kind,
                self._clock.now(),
                by=self._identity,
                detail=detail,
                revision=revision,
            )
        except LedgerError as exc:
            activity.logger.warning("could not record %s on %s: %s", kind, schedule_id, exc)
        with suppress(ValueError):  # a schedule ID that is not a slug has no metric series
            self._metrics.count_rejection(schedule_id, error)

    def _gate_or_none(self, schedule_id: str) -> io.GateSnapshot | None:
        try:
            return gate_payload(ledger.get_gate(self._ledger, schedule_id))
        except ledger.ScheduleNotFound:
            return None

    def _spec(self, occurrence: OccurrenceView) -> ScheduleSpecV1:
        key = (occurrence.schedule_id, occurrence.revision)
        if key not in self._specs:
            for spec in ledger.published_specs(self._ledger, occurrence.schedule_id):
                self._specs[(spec.schedule_id, spec.revision)] = spec
        return self._specs[key]


def _schedule_of(occurrence_id: str) -> str | None:
    """The scheduleId an occurrence ID names (``None`` if it does not parse)."""
    try:
        return occurrence_schedule_id(occurrence_id)
    except (ValueError, SpecError):
        return None


def _bounded(message: str) -> str:
    """An error message cut to :data:`ERROR_DETAIL_LIMIT` characters."""
    if len(message) <= ERROR_DETAIL_LIMIT:
        return message
    return message[: ERROR_DETAIL_LIMIT - 1] + "…"


def _plain(value: Any) -> Any:
    """A refused value as JSON data: as given when JSON has the type, else its ``repr``."""
    if value is None or isinstance(value, str | int | float | bool):
        return value
    return _bounded(repr(value))


def _misfire_text(spec: ScheduleSpecV1) -> str:
    """``SKIP`` or ``CATCH_UP_BOUNDED (maxCatchUp 2)``, with the lateness."""
    policy = spec.misfire_policy.value
    if spec.misfire_policy is MisfirePolicy.CATCH_UP_BOUNDED:
        policy += f" (maxCatchUp {spec.max_catch_up})"
    return f"{policy}, lateness {iso_duration(spec.lateness)}"


def iso_duration(duration: timedelta) -> str:
    """``duration`` as an ISO 8601 duration (``PT5M``, ``P1DT2H``, ``PT0S``); whole seconds."""
    seconds = int(duration.total_seconds())
    days, rest = divmod(seconds, 86400)
    hours, rest = divmod(rest, 3600)
    minutes, secs = divmod(rest, 60)
    time_part = "".join(
        f"{n}{unit}" for n, unit in ((hours, "H"), (minutes, "M"), (secs, "S")) if n
    )
    text = "P" + (f"{days}D" if days else "") + (f"T{time_part}" if time_part else "")
    return text if text != "P" else "PT0S"


def _lateness_exceeded(occurrence: OccurrenceView, now: datetime, spec: ScheduleSpecV1) -> bool:
    instant = occurrence.instant_utc
    return instant is not None and now - instant > spec.lateness


def gate_payload(gate: ledger.GateView) -> io.GateSnapshot:
    """The ledger's gate view as the workflow payload (the same fields, converter-friendly)."""
    return io.GateSnapshot(**dataclasses.asdict(gate))


def _ledger_gate(gate: io.GateSnapshot) -> ledger.GateView:
    return ledger.GateView(**dataclasses.asdict(gate))


def _upcoming(occurrence: OccurrenceView) -> io.UpcomingOccurrence:
    assert occurrence.instant_utc is not None  # PLANNED and DUE rows have instants
    return io.UpcomingOccurrence(
        occurrence_id=occurrence.occurrence_id,
        schedule_id=occurrence.schedule_id,
        revision=occurrence.revision,
        nominal_local=occurrence.nominal_local.isoformat(),
        fold=occurrence.fold,
        instant_utc=occurrence.instant_utc,
        state=occurrence.state.value,
        jitter_seconds=occurrence.jitter.total_seconds() if occurrence.jitter else 0.0,
    )


def _context(
    occurrence: OccurrenceView, spec: ScheduleSpecV1, claim_generation: int
) -> ActionContext:
    assert spec.action is not None and occurrence.instant_utc is not None
    return ActionContext(
        occurrence_id=occurrence.occurrence_id,
        schedule_id=occurrence.schedule_id,
        revision=occurrence.revision,
        nominal_local=occurrence.nominal_local.isoformat(),
        instant_utc=format_instant(occurrence.instant_utc),
        attempt=claim_generation,
        parameters=dict(spec.action.parameters),
    )


def _input_digest(occurrence: OccurrenceView, spec: ScheduleSpecV1) -> str:
    """``sha256:`` of what an attempt sends: the occurrence's identity and the action."""
    action = spec.action.model_dump(mode="json") if spec.action else None
    payload = {"occurrenceId": occurrence.occurrence_id, "action": action}
    text = json.dumps(payload, sort_keys=True, separators=(",", ":"))
    return "sha256:" + hashlib.sha256(text.encode()).hexdigest()
