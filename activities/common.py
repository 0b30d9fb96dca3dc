"""What every activity adapter shares: its dependencies, error translation and rejection records.

The activities are thin adapters (DESIGN §2): each translates its payload, calls the ledger (which
decides) or an action adapter, and records its metrics once, from the result. They are grouped by
the workflow they serve (``schedule_activities``, ``control_activities``,
``occurrence_activities``, ``manual_activities``) and assembled into one class for the worker in
``activities.ledger_activities``.

Time (see ``activities.clock``): an instant of work is read from the injected
:class:`~activities.clock.Clock` at the moment of the work; the ``now_utc`` an input carries is the
workflow's instant when it scheduled the call (Temporal hands it back unchanged on a retry), so it
is used only as a *decision* instant.

Errors: a refusal the ledger expects (a lost claim, a rejected revision, a refused gate change) is
a result. A deterministic error (:data:`DETERMINISTIC_ERRORS`) is a non-retryable
``ApplicationError`` whose type is the domain error's class name (STYLE), recorded first as a
rejection on the schedule (``ACTIVITY_REJECTED`` and ``almanac_schedule_rejections_total``). Only
``ledger.LedgerUnavailable`` is retried, and the workflows bound those retries.
"""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager, suppress
from pathlib import Path
from typing import Any

from temporalio import activity
from temporalio.exceptions import ApplicationError

import ledger
from activities.actions import (
    ActionError,
    ActionNotConfigured,
    ActionRegistry,
    InvalidActionParameters,
    UnknownAction,
)
from activities.clock import Clock
from activities.clock_skew import ClockGuard
from activities.metrics import AlmanacMetrics, default_metrics
from activities.spec_cache import DEFAULT_SPEC_CACHE_SIZE, SpecCache
from ledger import LedgerError, ScheduleEventKind
from lifecycle import GateView
from timecontract import (
    InvalidSpec,
    ScheduleSpecV1,
    SpecError,
    TzdbReleaseNotFound,
    ZoneNotFound,
    occurrence_schedule_id,
)

DETERMINISTIC_ERRORS: tuple[type[Exception], ...] = (
    LedgerError,
    SpecError,
    InvalidSpec,
    ActionError,
)
"""Errors that the same input raises again: never retried (``ledger.LedgerUnavailable``, a
``LedgerError`` too, is the one exception: it is transient)."""
NON_RETRYABLE_ERRORS: tuple[type[Exception], ...] = (
    ledger.IllegalTransition,
    ledger.ClaimLost,
    ledger.RevisionRejected,
    ledger.ScheduleDeleted,
    ledger.ScheduleNotFound,
    ledger.RevisionNotFound,
    ledger.OccurrenceNotFound,
    ledger.CaseNotFound,
    ledger.LedgerIntegrityError,
    InvalidSpec,
    SpecError,
    TzdbReleaseNotFound,
    ZoneNotFound,
    InvalidActionParameters,
    UnknownAction,
    ActionNotConfigured,
    LookupError,
)
"""The deterministic errors the workflows' retry policies name as non-retryable (by class name).
The activities raise them non-retryable already; naming them in the policy too keeps it honest
should one slip through as a plain exception."""
NON_RETRYABLE_ERROR_TYPES: tuple[str, ...] = tuple(e.__name__ for e in NON_RETRYABLE_ERRORS)
""":data:`NON_RETRYABLE_ERRORS` as the ``ApplicationError`` types a ``RetryPolicy`` names."""
ERROR_DETAIL_LIMIT = 500
"""Characters of an error message carried into a failure, an event or a log line."""


class ActivitiesBase:
    """The dependencies every adapter uses, and the error translation they share."""

    def __init__(
        self,
        ledger_: ledger.Ledger,
        actions: ActionRegistry,
        *,
        identity: str,
        clock: Clock,
        implementation_alias: str = ledger.DEFAULT_IMPLEMENTATION_ALIAS,
        tzdb_store: Path | None = None,
        metrics: AlmanacMetrics | None = None,
        clock_guard: ClockGuard | None = None,
        spec_cache_size: int = DEFAULT_SPEC_CACHE_SIZE,
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
            spec_cache_size: the most parsed specs kept between wake-ups
                (:mod:`activities.spec_cache`; the worker passes its workflow cache's size).
        """
        self._ledger = ledger_
        self._actions = actions
        self._identity = identity
        self._clock = clock
        self._alias = implementation_alias
        self._tzdb_store = tzdb_store
        self._metrics = metrics or default_metrics()
        self._clock_guard = clock_guard
        self._specs = SpecCache(spec_cache_size)

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
            message = bounded(str(exc))
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

    def _observe_schedule(
        self,
        schedule_id: str,
        *,
        materialized: tuple[float, int] | None = None,
        expired: int = 0,
        caught_up: int = 0,
    ) -> None:
        """The schedule-level metrics of one activity, recorded once from its result.

        ``materialized``: (seconds the materialization took, rows it inserted), when it ran;
        ``expired`` / ``caught_up``: the misfires its release decided. The misfire series are
        counted even at 0: the schedule's first activity creates them, before its first misfire,
        so ``increase()`` sees that one too (a series born at 1 shows no increase).
        """
        if materialized is not None:
            self._metrics.observe_materialization(schedule_id, *materialized)
        self._metrics.count_misfires(schedule_id, expired, caught_up)

    def _gate_or_none(self, schedule_id: str) -> GateView | None:
        try:
            return ledger.get_gate(self._ledger, schedule_id)
        except ledger.ScheduleNotFound:
            return None

    def _spec(self, schedule_id: str, revision: int) -> ScheduleSpecV1:
        """A published revision's spec (cached: a published revision never changes).

        Raises:
            KeyError: the revision is not published.
        """
        spec = self._specs.get(schedule_id, revision)
        if spec is not None:
            return spec
        # From the read itself: keeping a schedule's revisions may evict this one (more
        # revisions than the cache holds).
        for spec in self._published_specs(schedule_id):
            if spec.revision == revision:
                return spec
        raise KeyError((schedule_id, revision))

    def _published_specs(self, schedule_id: str) -> list[ScheduleSpecV1]:
        """Every published revision's spec of a schedule, read now; each kept for :meth:`_spec`.

        Keeping them is safe: a (schedule, revision) is published with one spec for good (the
        ledger refuses another digest for the same number, re-applying a deleted schedule needs
        a higher revision, and revisions are never updated or deleted).
        """
        specs = ledger.published_specs(self._ledger, schedule_id)
        for spec in specs:
            self._specs.keep(spec)
        return specs


def schedule_of(occurrence_id: str) -> str | None:
    """The scheduleId an occurrence ID names (``None`` if it does not parse)."""
    try:
        return occurrence_schedule_id(occurrence_id)
    except (ValueError, SpecError):
        return None


def bounded(message: str) -> str:
    """An error message cut to :data:`ERROR_DETAIL_LIMIT` characters."""
    if len(message) <= ERROR_DETAIL_LIMIT:
        return message
    return message[: ERROR_DETAIL_LIMIT - 1] + "…"


def plain(value: Any) -> Any:
    """A refused value as JSON data: as given when JSON has the type, else its ``repr``."""
    if value is None or isinstance(value, str | int | float | bool):
        return value
    return bounded(repr(value))
