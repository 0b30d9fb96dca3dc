"""The worker's start-up catch-up: every missed occurrence decided in the ledger, fleet-wide.

After downtime every schedule workflow wakes up to do the same two things first: materialize its
horizon and decide its missed occurrences by the misfire policy. Through Temporal that costs a
workflow task, an activity and another workflow task per schedule before anything is decided,
slow for a large fleet. A worker that serves schedules therefore first runs that ledger work
itself, schedule after schedule, before it polls:
the same calls (``AlmanacActivities.catch_up``), idempotent and serialized per schedule by the gate
lock, so a schedule workflow waking up at the same time (on another worker) or later finds the
window written and the misfires decided, and starts what is DUE. The ledger stays the one record
of each decision; only who makes it first changes, and the events say so (their ``by`` ends in
``activities.ledger_activities.CATCH_UP_SUFFIX``). Each schedule is looked ahead no further than
its own workflow does (``ledger.MissedSchedule.lookahead``), and decided by the gate as the ledger
holds it: a change admitted while no worker ran is applied by the workflow afterwards (seed:
"completion of materialization within five minutes after fault recovery").
"""

from __future__ import annotations

import logging
import threading
import time
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from datetime import timedelta

import ledger
from activities.clock import Clock
from activities.ledger_activities import DEFAULT_HORIZON, DETERMINISTIC_ERRORS, AlmanacActivities
from timecontract import format_instant

log = logging.getLogger("almanac.catch_up")
PROGRESS_EVERY = 1000
"""Schedules between two progress lines in the log."""
THREADS = 4
"""Schedules caught up at once: the database works on one while Python prepares another."""


@dataclass(frozen=True)
class CatchUpReport:
    """What a start-up catch-up did (counts of schedules and occurrences; seconds of work)."""

    schedules: int
    """Schedules that had a missed occurrence when the catch-up began."""
    caught_up: int
    """Schedules whose missed occurrences were decided (the rest failed or were not reached)."""
    released: int
    """Occurrences released to run (DUE), within the catch-up bound."""
    expired: int
    """Occurrences recorded MISFIRE_EXPIRED."""
    skipped_overlap: int
    """Occurrences recorded SKIPPED_OVERLAP (overlapPolicy SKIP: an earlier one still runs)."""
    held: int
    """DUE occurrences held back behind an in-flight one (overlapPolicy BUFFER_*), released now
    or before: they start when it ends."""
    failed: int
    """Schedules whose catch-up raised a deterministic error (left to their workflows, which
    record it as a rejection)."""
    seconds: float
    """Duration of the catch-up (monotonic clock)."""
    stopped: bool
    """Stopped before the end: asked to, the ledger became unreachable, or an unexpected error."""

    def summary(self) -> str:
        """The log's summary line (``catch-up: 2 of 2 schedule(s) in 0.9 s: 4 released, …``)."""
        held = f" ({self.held} held back by overlap)" if self.held else ""
        return (
            f"catch-up: {self.caught_up} of {self.schedules} schedule(s) in {self.seconds:.1f} s: "
            f"{self.released} released{held}, {self.expired} MISFIRE_EXPIRED, "
            f"{self.skipped_overlap} SKIPPED_OVERLAP, {self.failed} failed"
        )


def catch_up(
    activities: AlmanacActivities,
    ledger_: ledger.Ledger,
    clock: Clock,
    *,
    horizon: timedelta = DEFAULT_HORIZON,
    should_stop: Callable[[], bool] = lambda: False,
    threads: int = THREADS,
) -> CatchUpReport:
    """Decide every enabled schedule's missed occurrences and materialize its horizon.

    Args:
        activities: the worker's activities (their ledger calls, metrics and identity).
        ledger_: the ledger (``ledger.missed_schedules`` chooses the schedules).
        clock: the worker's clock: its now (UTC) chooses the schedules, and is read again as
            each schedule's decision instant (what is overdue, what is later than lateness).
        horizon: the longest look-ahead (the schedule workflow's default); a schedule whose
            ledger shows a shorter one (``MissedSchedule.lookahead``) gets that.
        should_stop: polled before each schedule (a SIGTERM during the catch-up).
        threads: schedules caught up at once (each on its own ledger connection; a schedule's
            own calls are serialized by its gate lock, so different schedules do not contend).

    Returns:
        The counts. Never raises: a schedule's deterministic error is logged and counted (its
        workflow meets it again and records it); ``ledger.LedgerUnavailable`` or an unexpected
        error (logged with its traceback) stops the catch-up, and the worker starts all the same.
    """
    began = time.monotonic()
    now = clock.now()
    try:
        missed = ledger.missed_schedules(ledger_, now)
    except ledger.LedgerUnavailable as exc:
        log.warning("catch-up skipped: the ledger is unreachable: %s", exc)
        return _nothing(began)
    except Exception:
        log.exception("catch-up skipped: the missed occurrences could not be read")
        return _nothing(began)
    if missed:
        log.info(
            "catch-up: %d schedule(s) with missed occurrences as of %s",
            len(missed),
            format_instant(now),
        )
    halt = threading.Event()

    def one(item: ledger.MissedSchedule) -> ledger.ReleaseResult | Exception | None:
        """One schedule's catch-up: its result, its deterministic error, or None (not done)."""
        schedule_id = item.schedule_id
        if halt.is_set() or should_stop():
            halt.set()
            return None
        # Never further ahead than the schedule's own workflow looks (``almanac apply
        # --horizon-hours``): the look-ahead its last materialization used, at most ``horizon``.
        ahead = min(horizon, item.lookahead)
        try:
            return activities.catch_up(schedule_id, item.earliest_missed_utc, clock.now(), ahead)
        except ledger.LedgerUnavailable as exc:
            log.warning("catch-up stopped at %s: the ledger is unreachable: %s", schedule_id, exc)
        except DETERMINISTIC_ERRORS as exc:
            log.warning("catch-up of %s failed: %s: %s", schedule_id, type(exc).__name__, exc)
            return exc
        except Exception:
            # A defect, not a verdict: it would repeat for every schedule. The worker still
            # starts; the schedule workflows catch up as they would without this.
            log.exception("catch-up stopped at %s by an unexpected error", schedule_id)
        halt.set()
        return None

    counts = dict.fromkeys(("caught_up", "released", "expired", "skipped", "held", "failed"), 0)
    with ThreadPoolExecutor(max_workers=threads, thread_name_prefix="catch-up") as pool:
        for number, outcome in enumerate(pool.map(one, missed), 1):
            if isinstance(outcome, Exception):
                counts["failed"] += 1
            elif outcome is not None:
                counts["caught_up"] += 1
                counts["released"] += len(outcome.released)
                counts["expired"] += len(outcome.expired)
                counts["skipped"] += len(outcome.skipped)
                counts["held"] += len(outcome.held)
            if number % PROGRESS_EVERY == 0:
                log.info("catch-up: %d of %d schedule(s)", number, len(missed))
    report = CatchUpReport(
        schedules=len(missed),
        caught_up=counts["caught_up"],
        released=counts["released"],
        expired=counts["expired"],
        skipped_overlap=counts["skipped"],
        held=counts["held"],
        failed=counts["failed"],
        seconds=time.monotonic() - began,
        stopped=halt.is_set(),
    )
    if missed:
        log.info("%s%s", report.summary(), _stop_note(report.stopped, should_stop))
    return report


def _nothing(began: float) -> CatchUpReport:
    """The report of a catch-up that could not list the missed schedules."""
    return CatchUpReport(0, 0, 0, 0, 0, 0, 0, time.monotonic() - began, stopped=True)


def _stop_note(stopped: bool, should_stop: Callable[[], bool]) -> str:
    if not stopped:
        return ""
    return " (stopped: the worker is stopping)" if should_stop() else " (stopped)"


__all__ = ["CatchUpReport", "catch_up"]
