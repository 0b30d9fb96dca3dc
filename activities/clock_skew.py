"""Clock skew: the worker's clock of work measured against the ledger's and Temporal's, and bounded.

Every instant a worker records comes from its own clock (:mod:`activities.clock`). A worker whose
clock runs behind would record a claim, a run and a success *before* the occurrence's instant; one
ahead would make every lag look longer. So the claim — the acceptance point where an occurrence
starts to run — measures the clock first:

- **against the ledger**: the database's clock (:func:`ledger.database_now`), read in one short
  transaction between two readings of the worker's clock; the skew is the worker's clock at the
  midpoint minus the database's, known to within half the round trip. Measured at most once per
  :data:`LEDGER_CHECK_INTERVAL` (the reading is cached).
- **against Temporal**: the activity's scheduled time (``activity.info()
  .current_attempt_scheduled_time``, the server's clock) must not be later than the worker's
  clock: an activity cannot start before it was scheduled, so ``local - scheduled`` below zero is
  a clock behind (by at least that much; above zero it is queueing, not skew).
- **against the occurrence**: the claim of an occurrence whose instant is still in the worker's
  future (the schedule released it on Temporal time, so it *is* due) means the clock is behind.
  By at most the bound, the claim waits until the instant on the worker's clock (so no fact is
  recorded before it, and a few milliseconds of skew cost milliseconds, not a retry); by more, it
  is held.

Each reading is exported as ``almanac_clock_skew_seconds{against="ledger"|"temporal"}`` (worker
minus reference; negative: behind) and logged as a warning past :data:`WARN_SKEW`. Past
:data:`MAX_CLOCK_SKEW` (beyond the measurement's uncertainty), or with an occurrence's
instant ahead by more than that, the claim is **held**: the activity fails with a retryable
``ClockSkew`` error, nothing is written, and Temporal retries it later. The bound is the worker's
setting (``ALMANAC_MAX_CLOCK_SKEW_SECONDS``); only the production clock is guarded (a simulated
clock is not meant to agree with anyone's).
"""

from __future__ import annotations

import logging
import time
from collections.abc import Callable
from dataclasses import dataclass
from datetime import datetime, timedelta

from temporalio.exceptions import ApplicationError

import ledger
from activities.clock import Clock

MAX_CLOCK_SKEW = timedelta(seconds=5)
"""The default bound on a worker's clock skew against the ledger or Temporal."""
WARN_SKEW = timedelta(seconds=1)
"""Skew past which a reading is logged as a warning (still allowed up to the bound)."""
LEDGER_CHECK_INTERVAL = timedelta(seconds=30)
"""How long a reading against the ledger is reused (monotonic time) before it is measured again."""
CLOCK_SKEW_ERROR = "ClockSkew"
"""The ``ApplicationError`` type of a held claim (retryable)."""

log = logging.getLogger(__name__)


@dataclass(frozen=True, slots=True)
class SkewReading:
    """One measurement of the worker's clock against a reference.

    Attributes:
        against: ``ledger`` or ``temporal``.
        skew: worker's clock minus the reference's (negative: the worker is behind).
        uncertainty: how far off the measurement itself may be (half the round trip).
    """

    against: str
    skew: timedelta
    uncertainty: timedelta

    def beyond(self, bound: timedelta) -> bool:
        """Whether the skew is past ``bound`` even allowing for the uncertainty."""
        return abs(self.skew) - self.uncertainty > bound


class ClockGuard:
    """Measures, exports, warns about and bounds a worker's clock skew (module docstring).

    Args:
        ledger_: the ledger whose database clock is the reference.
        clock: the worker's clock of work.
        observe: where a reading goes (``AlmanacMetrics.observe_clock_skew``).
        bound: the largest skew a claim tolerates.
        warn: the skew past which a reading is logged as a warning.
        interval: how long a ledger reading is reused.
        monotonic: seconds of a monotonic clock (tests pass a fake).
        sleep: waits the given seconds (tests pass a fake).
    """

    def __init__(
        self,
        ledger_: ledger.Ledger,
        clock: Clock,
        observe: Callable[[str, float], None],
        *,
        bound: timedelta = MAX_CLOCK_SKEW,
        warn: timedelta = WARN_SKEW,
        interval: timedelta = LEDGER_CHECK_INTERVAL,
        monotonic: Callable[[], float] = time.monotonic,
        sleep: Callable[[float], None] = time.sleep,
    ) -> None:
        self._ledger = ledger_
        self._clock = clock
        self._observe = observe
        self.bound = bound
        self._warn = warn
        self._interval = interval.total_seconds()
        self._monotonic = monotonic
        self._sleep = sleep
        self._cached: tuple[float, SkewReading] | None = None

    def against_ledger(self) -> SkewReading:
        """The worker's clock minus the database's (cached for the interval)."""
        now = self._monotonic()
        if self._cached is not None and now - self._cached[0] < self._interval:
            return self._cached[1]
        before, local = self._monotonic(), self._clock.now()
        database = ledger.database_now(self._ledger)
        half = timedelta(seconds=(self._monotonic() - before) / 2)
        reading = SkewReading("ledger", local + half - database, half)
        self._record(reading)
        self._cached = (now, reading)
        return reading

    def against_temporal(self, scheduled_utc: datetime) -> SkewReading:
        """How far the worker's clock is *behind* Temporal's: ``min(0, local - scheduled)``."""
        behind = min(self._clock.now() - scheduled_utc, timedelta(0))
        reading = SkewReading("temporal", behind, timedelta(0))
        self._record(reading)
        return reading

    def check_claim(self, instant_utc: datetime | None, scheduled_utc: datetime | None) -> None:
        """Hold a claim whose worker clock cannot be trusted; return if it can.

        An occurrence whose instant is ahead of the worker's clock by at most the bound is waited
        for (one sleep, then the claim goes on).

        Raises:
            ApplicationError: type :data:`CLOCK_SKEW_ERROR`, retryable: the skew against the
                ledger or Temporal is past the bound, or the occurrence's instant is further
                ahead of the worker's clock than the bound.
        """
        readings = [self.against_ledger()]
        if scheduled_utc is not None:
            readings.append(self.against_temporal(scheduled_utc))
        for reading in readings:
            if reading.beyond(self.bound):
                raise ApplicationError(
                    f"worker clock {reading.skew.total_seconds():+.3f} s off the "
                    f"{reading.against}'s (bound {self.bound.total_seconds():g} s): claim held",
                    type=CLOCK_SKEW_ERROR,
                )
        now = self._clock.now()
        if instant_utc is None or now >= instant_utc:
            return
        ahead = instant_utc - now
        if ahead > self.bound:
            raise ApplicationError(
                f"the occurrence's instant is {ahead.total_seconds():.3f} s ahead of the worker's "
                f"clock, which is behind (bound {self.bound.total_seconds():g} s): claim held",
                type=CLOCK_SKEW_ERROR,
            )
        self._sleep(ahead.total_seconds())

    def _record(self, reading: SkewReading) -> None:
        seconds = reading.skew.total_seconds()
        self._observe(reading.against, seconds)
        if abs(reading.skew) - reading.uncertainty > self._warn:
            log.warning(
                "worker clock %+.3f s off the %s's (±%.3f s; bound %g s)",
                seconds,
                reading.against,
                reading.uncertainty.total_seconds(),
                self.bound.total_seconds(),
            )
