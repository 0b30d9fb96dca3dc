"""Prometheus metrics of Almanac's workers (DESIGN §8).

Metrics describe the ledger; they never replace it. A counter here can be lost (a process restarts,
a scrape is missed) or counted twice (an activity retried after it observed); the ledger's rows are
the business record. No decision anywhere may read a metric: alerts point at the ledger, and
the ledger answers.

Two kinds of metric, one per source:

- **Events** observed by activities as they happen, through the small functions below
  (:func:`observe_materialization`, :func:`count_misfires`, :func:`count_attempt`,
  :func:`observe_dispatch_lag`). Each worker process counts its own; Prometheus sums over
  instances.
- **Ledger state** read on every scrape by :class:`LedgerCollector` from a callable the worker
  passes in (occurrences by state, open UNKNOWN_EFFECT cases and the age of the oldest). Every
  worker that registers one exports the same ledger numbers, so dashboards aggregate them with
  ``max``, never ``sum``.

The only label besides the outcome or state is ``schedule_id``, a slug (1–63 of ``a-z 0-9 -``):
bounded by the number of schedules, never an occurrence ID or a time.

Workflow code reaches this module only through the activity class it calls by method reference,
imported passed through the sandbox (``workflow.unsafe.imports_passed_through``): the sandbox
re-imports workflow modules and forbids creating metrics there (notes/temporal.md), so this module
must never be imported by a workflow module directly. Every metric lives in an explicit
:class:`~prometheus_client.CollectorRegistry` (never prometheus_client's global one), so tests
build fresh ones with :class:`AlmanacMetrics`.
"""

from __future__ import annotations

import logging
import re
import time
from collections.abc import Callable, Iterable, Iterator, Mapping
from dataclasses import dataclass, field
from enum import Enum
from threading import Thread
from typing import Final
from wsgiref.simple_server import WSGIServer

from prometheus_client import (
    CollectorRegistry,
    Counter,
    Gauge,
    Histogram,
    PlatformCollector,
    ProcessCollector,
    start_http_server,
)
from prometheus_client.metrics_core import CounterMetricFamily, GaugeMetricFamily, Metric
from prometheus_client.registry import Collector

__all__ = [
    "ATTEMPT_OUTCOMES",
    "CLOCK_REFERENCES",
    "DEFAULT_REGISTRY",
    "DISPATCH_LAG_BUCKETS",
    "MATERIALIZATION_BUCKETS",
    "MISFIRE_OUTCOMES",
    "AlmanacMetrics",
    "LedgerCollector",
    "LedgerSnapshot",
    "count_attempt",
    "count_misfires",
    "default_metrics",
    "observe_dispatch_lag",
    "observe_materialization",
    "start_metrics_server",
]

_log = logging.getLogger(__name__)

_SLUG = re.compile(r"^[a-z0-9](?:[a-z0-9-]{0,61}[a-z0-9])?$")

ATTEMPT_OUTCOMES: Final = ("SUCCEEDED", "RETRY_WAIT", "FAILED", "UNKNOWN_EFFECT")
"""The ``outcome`` label values of ``almanac_attempts_total`` (DESIGN §4 attempt results)."""

MISFIRE_OUTCOMES: Final = ("expired", "caught_up")
"""The ``outcome`` label values of ``almanac_misfires_total``."""

MATERIALIZATION_BUCKETS: Final = (0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60)
"""Upper bounds (seconds) of the materialization latency histogram: one window, one activity."""

DISPATCH_LAG_BUCKETS: Final = (
    0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60, 120, 300, 600, 1800, 3600, 4 * 3600, 24 * 3600,
)  # fmt: skip
"""Upper bounds (seconds) of the dispatch lag histogram: up to a day (catch-up after downtime)."""


CLOCK_REFERENCES: Final = frozenset({"ledger", "temporal"})
"""The ``against`` label values of ``almanac_clock_skew_seconds``."""


def _check_schedule_id(schedule_id: str) -> str:
    # The label's cardinality is bounded only because a schedule ID is a slug; a free-form string
    # (an occurrence ID, a time) here would create one series per value.
    if not _SLUG.match(schedule_id):
        raise ValueError(f"schedule_id must be a slug (1-63 of a-z 0-9 -), got {schedule_id!r}")
    return schedule_id


def _check_count(name: str, value: int) -> int:
    if value < 0:
        raise ValueError(f"{name} must be >= 0, got {value}")
    return value


class AlmanacMetrics:
    """The event metrics of one worker process, registered in one registry.

    Metric names (as exposed; histograms add ``_bucket``/``_sum``/``_count``):

    - ``almanac_materialization_duration_seconds`` (histogram, ``schedule_id``)
    - ``almanac_materialized_rows_total`` (counter, ``schedule_id``)
    - ``almanac_misfires_total`` (counter, ``schedule_id``, ``outcome``: expired | caught_up)
    - ``almanac_attempts_total`` (counter, ``schedule_id``, ``outcome``: SUCCEEDED | RETRY_WAIT |
      FAILED | UNKNOWN_EFFECT)
    - ``almanac_dispatch_lag_seconds`` (histogram, ``schedule_id``)
    - ``almanac_schedule_rejections_total`` (counter, ``schedule_id``, ``error``: the refused
      revision's or the failed activity's error class, e.g. ``InvalidSpec``, ``RevisionRejected``,
      ``IllegalTransition`` — a bounded set of class names)

    The first observation for a schedule also creates its series for every outcome at 0, so
    ``rate()`` and ``increase()`` see the first increment of each.
    """

    def __init__(self, registry: CollectorRegistry) -> None:
        """Create the metrics in ``registry``.

        Raises:
            ValueError: a metric of the same name is already registered there (one
                ``AlmanacMetrics`` per registry).
        """
        self.registry = registry
        self.materialization_duration = Histogram(
            "almanac_materialization_duration_seconds",
            "Seconds one materialize activity took to insert a window's occurrences.",
            ["schedule_id"],
            buckets=MATERIALIZATION_BUCKETS,
            registry=registry,
        )
        self.materialized_rows = Counter(
            "almanac_materialized_rows",
            "Occurrence rows a materialize activity inserted (duplicates not counted).",
            ["schedule_id"],
            registry=registry,
        )
        self.misfires = Counter(
            "almanac_misfires",
            "Misfired occurrences by outcome: expired (MISFIRE_EXPIRED) or caught_up (released).",
            ["schedule_id", "outcome"],
            registry=registry,
        )
        self.attempts = Counter(
            "almanac_attempts",
            "Finished attempts by outcome: SUCCEEDED, RETRY_WAIT, FAILED or UNKNOWN_EFFECT.",
            ["schedule_id", "outcome"],
            registry=registry,
        )
        self.dispatch_lag = Histogram(
            "almanac_dispatch_lag_seconds",
            "Attempt start minus the occurrence's resolved instant, in seconds (negative as 0).",
            ["schedule_id"],
            buckets=DISPATCH_LAG_BUCKETS,
            registry=registry,
        )
        self.clock_skew = Gauge(
            "almanac_clock_skew_seconds",
            "This worker's clock minus the reference's at the last reading (negative: behind); "
            "against ledger (the database's clock) or temporal (an activity's scheduled time, "
            "behind only).",
            ["against"],
            registry=registry,
        )
        self.rejections = Counter(
            "almanac_schedule_rejections",
            "Refused revisions and deterministic activity errors a schedule survived, by class.",
            ["schedule_id", "error"],
            registry=registry,
        )

    def observe_materialization(self, schedule_id: str, seconds: float, inserted: int) -> None:
        """Record one materialization of a window.

        Args:
            schedule_id: the schedule's slug.
            seconds: wall time the activity took, from its start to the commit (monotonic clock).
            inserted: occurrence rows this call inserted (0 when another materializer won them).

        Raises:
            ValueError: ``schedule_id`` is not a slug, or ``inserted`` is negative.
        """
        sid = _check_schedule_id(schedule_id)
        self.materialization_duration.labels(sid).observe(max(seconds, 0.0))
        self.materialized_rows.labels(sid).inc(_check_count("inserted", inserted))

    def count_misfires(self, schedule_id: str, expired: int, caught_up: int) -> None:
        """Count the misfires one release pass decided (DESIGN §3 misfire policy).

        Args:
            schedule_id: the schedule's slug.
            expired: occurrences recorded MISFIRE_EXPIRED by this pass.
            caught_up: overdue occurrences this pass released to run late.

        Raises:
            ValueError: ``schedule_id`` is not a slug, or a count is negative.
        """
        sid = _check_schedule_id(schedule_id)
        self.misfires.labels(sid, "expired").inc(_check_count("expired", expired))
        self.misfires.labels(sid, "caught_up").inc(_check_count("caught_up", caught_up))

    def count_attempt(self, schedule_id: str, outcome: str | Enum) -> None:
        """Count one finished attempt.

        Args:
            schedule_id: the schedule's slug.
            outcome: one of :data:`ATTEMPT_OUTCOMES`, or an enum member whose ``.value`` is one.

        Raises:
            ValueError: ``schedule_id`` is not a slug, or ``outcome`` is not an attempt outcome.
        """
        sid = _check_schedule_id(schedule_id)
        # An enum member is labelled by its value (str() of a `(str, Enum)` member is "X.NAME").
        value = str(outcome.value) if isinstance(outcome, Enum) else outcome
        if value not in ATTEMPT_OUTCOMES:
            raise ValueError(f"outcome must be one of {ATTEMPT_OUTCOMES}, got {outcome!r}")
        for each in ATTEMPT_OUTCOMES:
            self.attempts.labels(sid, each)  # the schedule's series exist from its first attempt
        self.attempts.labels(sid, value).inc()

    def count_rejection(self, schedule_id: str, error: str) -> None:
        """Count one refused revision or deterministic activity error of a schedule.

        Args:
            schedule_id: the schedule's slug.
            error: the error's class name (``InvalidSpec``, ``UnknownAction``, …): a bounded set.

        Raises:
            ValueError: ``schedule_id`` is not a slug, or ``error`` is not an identifier.
        """
        sid = _check_schedule_id(schedule_id)
        if not error.isidentifier():
            raise ValueError(f"error must be a class name, got {error!r}")
        self.rejections.labels(sid, error).inc()

    def observe_clock_skew(self, against: str, seconds: float) -> None:
        """Record a clock-skew reading (``activities.clock_skew``): ``against`` ledger|temporal.

        Raises:
            ValueError: another reference (the label stays bounded).
        """
        if against not in CLOCK_REFERENCES:
            raise ValueError(f"unknown clock reference {against!r}")
        self.clock_skew.labels(against=against).set(seconds)

    def observe_dispatch_lag(self, schedule_id: str, seconds: float) -> None:
        """Record how late an attempt started.

        Args:
            schedule_id: the schedule's slug.
            seconds: attempt start (UTC) minus the occurrence's resolved instant (UTC). A negative
                value (clock skew between Temporal's timer and the worker) is recorded as 0.

        Raises:
            ValueError: ``schedule_id`` is not a slug.
        """
        self.dispatch_lag.labels(_check_schedule_id(schedule_id)).observe(max(seconds, 0.0))


@dataclass(frozen=True, slots=True)
class LedgerSnapshot:
    """What the ledger says now, as the scrape callable read it (one read, one transaction)."""

    schedules: frozenset[str] = frozenset()
    """Every schedule_id the ledger knows (its gates), with occurrences or not: each gets a
    series (0 when nothing is recorded) in the per-schedule gauges that say so."""

    counts: Mapping[tuple[str, str], int] = field(default_factory=dict)
    """Occurrences per ``(schedule_id, state)``; states as DESIGN §4 spells them."""

    open_unknown: Mapping[str, tuple[int, float]] = field(default_factory=dict)
    """Per schedule_id: ``(open UNKNOWN_EFFECT cases, age in seconds of the oldest open one)``.
    A schedule with no open case may be left out (it is exported as 0, 0 only if present)."""

    shadow_mismatches: Mapping[str, int] = field(default_factory=dict)
    """Per candidate alias: mismatches with the live ledger, summed over each schedule's latest
    shadow run (``ledger.shadow``)."""

    skips: Mapping[tuple[str, str, str], int] = field(default_factory=dict)
    """Occurrences that never ran per ``(schedule_id, state, reason)`` (``ledger.queries``)."""

    deadline_misses: Mapping[str, int] = field(default_factory=dict)
    """Recorded deadline misses per schedule_id (``ledger.deadlines``)."""

    failure_streaks: Mapping[str, int] = field(default_factory=dict)
    """Current failure streak per schedule_id (``ledger.streaks``; absent means 0)."""

    streak_thresholds: Mapping[str, int] = field(default_factory=dict)
    """``failureStreak.notifyAfter`` per schedule_id with a policy (``ledger.streak_facts``)."""


class LedgerCollector(Collector):
    """Exports the ledger's state on every scrape, from a callable (no ledger import here).

    Metrics (gauges):

    - ``almanac_occurrences`` (``schedule_id``, ``state``): occurrences in each state.
    - ``almanac_unknown_effects_open`` (``schedule_id``): open UNKNOWN_EFFECT cases.
    - ``almanac_unknown_effects_oldest_age_seconds`` (``schedule_id``): age of the oldest open case.
    - ``almanac_skipped_occurrences`` (``schedule_id``, ``state``, ``reason``): occurrences that
      never ran, by the decision recorded (a holiday skip, an exclusion, a gap, a misfire …).
    - ``almanac_shadow_mismatches`` (``alias``): a candidate's mismatches with the live ledger.
    - ``almanac_deadline_missed_total`` (``schedule_id``, a counter): the ledger's deadline-missed
      facts, 0 for every schedule the ledger knows before its first.
    - ``almanac_failure_streak`` (``schedule_id``): the latest ended occurrences in FAILED,
      UNKNOWN_EFFECT or MISFIRE_EXPIRED since the last SUCCEEDED one; 0 for every known schedule.
    - ``almanac_failure_streak_threshold`` (``schedule_id``): the newest revision's
      ``failureStreak.notifyAfter``; only schedules with a policy.
    - ``almanac_ledger_snapshot_up``: 1 if the last read succeeded, 0 if it raised.
    - ``almanac_ledger_snapshot_duration_seconds``: how long the read took.

    A failed read does not fail the scrape: the ledger gauges are left out and
    ``almanac_ledger_snapshot_up`` is 0 (logged with the exception), so the event metrics of the
    same process are still collected.
    """

    def __init__(self, snapshot: Callable[[], LedgerSnapshot]) -> None:
        """Keep ``snapshot``; it is called once per scrape, on the metrics server's thread."""
        self._snapshot = snapshot

    def describe(self) -> Iterable[Metric]:
        """The families this collector exports, without reading the ledger (registration)."""
        return self._families()

    def collect(self) -> Iterable[Metric]:
        """Read the ledger once and yield its gauges."""
        started = time.monotonic()
        try:
            snapshot: LedgerSnapshot | None = self._snapshot()
        except Exception:
            _log.exception("ledger snapshot for metrics failed")
            snapshot = None
        return self._families(snapshot, time.monotonic() - started)

    @staticmethod
    def _families(snapshot: LedgerSnapshot | None = None, seconds: float = 0.0) -> Iterator[Metric]:
        occurrences = GaugeMetricFamily(
            "almanac_occurrences",
            "Occurrences in the ledger by schedule and state (the ledger is the record).",
            labels=["schedule_id", "state"],
        )
        unknown_open = GaugeMetricFamily(
            "almanac_unknown_effects_open",
            "Open UNKNOWN_EFFECT reconciliation cases by schedule.",
            labels=["schedule_id"],
        )
        unknown_age = GaugeMetricFamily(
            "almanac_unknown_effects_oldest_age_seconds",
            "Age in seconds of the oldest open UNKNOWN_EFFECT case by schedule.",
            labels=["schedule_id"],
        )
        skipped = GaugeMetricFamily(
            "almanac_skipped_occurrences",
            "Occurrences that never ran, by schedule, terminal state and recorded reason "
            "(SKIPPED_HOLIDAY/HOLIDAY_SKIPPED, EXCLUDED/EXDATE_EXCLUDED, SKIPPED_GAP/GAP_SKIPPED, "
            "…).",
            labels=["schedule_id", "state", "reason"],
        )
        shadow = GaugeMetricFamily(
            "almanac_shadow_mismatches",
            "Shadow-mode mismatches with the live ledger by candidate alias (latest runs).",
            labels=["alias"],
        )
        missed = CounterMetricFamily(
            "almanac_deadline_missed",
            "Deadline-missed facts recorded in the ledger by schedule (one per occurrence).",
            labels=["schedule_id"],
        )
        streak = GaugeMetricFamily(
            "almanac_failure_streak",
            "Latest consecutive ended occurrences in FAILED, UNKNOWN_EFFECT or MISFIRE_EXPIRED "
            "by schedule (0 after a SUCCEEDED one).",
            labels=["schedule_id"],
        )
        threshold = GaugeMetricFamily(
            "almanac_failure_streak_threshold",
            "The failure-streak policy's notifyAfter by schedule (only schedules with a policy).",
            labels=["schedule_id"],
        )
        up = GaugeMetricFamily(
            "almanac_ledger_snapshot_up", "1 if the last ledger read for metrics succeeded."
        )
        duration = GaugeMetricFamily(
            "almanac_ledger_snapshot_duration_seconds", "Seconds the last ledger read took."
        )
        if snapshot is not None:
            for (schedule_id, state), count in sorted(snapshot.counts.items()):
                occurrences.add_metric([schedule_id, state], count)
            # Every schedule the ledger knows reads 0 when nothing is open, so a resolve takes
            # the series to 0 instead of removing it (an alert on it then resolves too).
            schedules = (
                set(snapshot.schedules)
                | {schedule_id for schedule_id, _ in snapshot.counts}
                | set(snapshot.open_unknown)
            )
            for schedule_id in sorted(schedules):
                count, oldest_age = snapshot.open_unknown.get(schedule_id, (0, 0.0))
                unknown_open.add_metric([schedule_id], count)
                unknown_age.add_metric([schedule_id], max(oldest_age, 0.0) if count else 0.0)
            for schedule_id in sorted(schedules | set(snapshot.deadline_misses)):
                missed.add_metric([schedule_id], snapshot.deadline_misses.get(schedule_id, 0))
            for schedule_id in sorted(schedules | set(snapshot.failure_streaks)):
                streak.add_metric([schedule_id], snapshot.failure_streaks.get(schedule_id, 0))
            for schedule_id, n in sorted(snapshot.streak_thresholds.items()):
                threshold.add_metric([schedule_id], n)
            for (schedule_id, state, reason), count in sorted(snapshot.skips.items()):
                skipped.add_metric([schedule_id, state, reason], count)
            for alias, mismatches in sorted(snapshot.shadow_mismatches.items()):
                shadow.add_metric([alias], mismatches)
        up.add_metric([], 1.0 if snapshot is not None else 0.0)
        duration.add_metric([], seconds)
        yield from (
            occurrences,
            unknown_open,
            unknown_age,
            skipped,
            shadow,
            missed,
            streak,
            threshold,
            up,
            duration,
        )


def start_metrics_server(
    port: int, registry: CollectorRegistry, addr: str = "127.0.0.1"
) -> tuple[WSGIServer, Thread]:
    """Serve ``registry`` at ``http://addr:port/metrics`` from a daemon thread.

    ``addr`` defaults to loopback; the worker widens it only when told (``--metrics-host``).

    Use a port other than the Temporal SDK's own Prometheus endpoint (notes/temporal.md: both can
    run in one process). ``port`` 0 picks a free one (``server.server_port``).

    Returns:
        the server and its thread (``server.shutdown()`` stops it).

    Raises:
        OSError: the address cannot be bound.
    """
    return start_http_server(port, addr=addr, registry=registry)


DEFAULT_REGISTRY: Final = CollectorRegistry()
"""The worker process's registry: Almanac's event metrics plus process and platform metrics.
Register a :class:`LedgerCollector` here (``DEFAULT_REGISTRY.register(...)``) in one place,
the worker's start-up."""

ProcessCollector(registry=DEFAULT_REGISTRY)
PlatformCollector(registry=DEFAULT_REGISTRY)
_default = AlmanacMetrics(DEFAULT_REGISTRY)


def default_metrics() -> AlmanacMetrics:
    """The :class:`AlmanacMetrics` of :data:`DEFAULT_REGISTRY` (what the functions below use)."""
    return _default


def observe_materialization(schedule_id: str, seconds: float, inserted: int) -> None:
    """:meth:`AlmanacMetrics.observe_materialization` on the default registry."""
    _default.observe_materialization(schedule_id, seconds, inserted)


def count_misfires(schedule_id: str, expired: int, caught_up: int) -> None:
    """:meth:`AlmanacMetrics.count_misfires` on the default registry."""
    _default.count_misfires(schedule_id, expired, caught_up)


def count_attempt(schedule_id: str, outcome: str | Enum) -> None:
    """:meth:`AlmanacMetrics.count_attempt` on the default registry."""
    _default.count_attempt(schedule_id, outcome)


def observe_dispatch_lag(schedule_id: str, seconds: float) -> None:
    """:meth:`AlmanacMetrics.observe_dispatch_lag` on the default registry."""
    _default.observe_dispatch_lag(schedule_id, seconds)
