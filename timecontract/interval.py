"""Elapsed-time intervals: ``interval: PT2H`` — every two hours of real time, through DST.

The alternative to ``rule`` for "every N of real time" (Temporal's ``IntervalSpec``, Quartz's
``SimpleTrigger``). A calendar rule is expanded in local wall time, so an every-2-hours RRULE
leaves a 3-hour hole on the spring-forward night and a 1-hour step on the fall-back night; an
interval is fixed spacing on the UTC line:

    instants = { EPOCH + phase + k × interval : k an integer }

anchored at :data:`INTERVAL_EPOCH_UTC` (the Unix epoch, as Temporal's ``IntervalSpec``), so the
grid never depends on when a spec was written or applied. ``start`` and ``end`` (local
date-times in the zone) bound the series, each read as one instant (RFC 5545 §3.3.5: a local time
that occurs twice is its first occurrence, one that does not exist is read with the offset before
the gap; ``timecontract.resolve`` reads them): an instant ``t`` belongs to the series when
``start_utc <= t <= end_utc``. A bound is never compared as a wall-clock reading, which inside a
fold would hold twice and cut the elapsed-time series in two. Every instant exists exactly once,
so there are no gaps or folds and ``gapPolicy``/``foldPolicy`` do not apply (they are ignored).

Each instant's wall-clock reading, fold ordinal and UTC offset in the zone of the pinned release
are kept as evidence (``nominalLocal``, ``fold``, ``utcOffset``), with reason ``ELAPSED_INTERVAL``.
Identity comes from the instant, not the wall time (see ``timecontract.ids``).
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta, tzinfo

INTERVAL_EPOCH_UTC = datetime(1970, 1, 1, tzinfo=UTC)
"""Where every interval grid is anchored (plus ``phase``): the Unix epoch, as Temporal does."""


@dataclass(frozen=True, slots=True)
class WallReading:
    """What a zone's clock shows at one instant.

    Attributes:
        instant_utc: the instant (aware UTC).
        nominal_local: the naive wall-clock date-time shown.
        fold: 1 when the reading is the second time that wall time occurs (PEP 495), else 0.
        utc_offset: the offset in force.

    """

    instant_utc: datetime
    nominal_local: datetime
    fold: int
    utc_offset: timedelta


def interval_instants(
    interval: timedelta, phase: timedelta, from_utc: datetime, to_utc: datetime
) -> Iterator[datetime]:
    """Yield the grid's instants in ``[from_utc, to_utc)``, in order (aware UTC).

    Args:
        interval: the spacing, whole seconds, positive.
        phase: the grid's offset from :data:`INTERVAL_EPOCH_UTC`, ``0 <= phase < interval``.
        from_utc: window start, aware, inclusive.
        to_utc: window end, aware, exclusive.

    Cost: proportional to the number of instants in the window (integer arithmetic finds the
    first one), never to the distance from the epoch.

    Raises:
        ValueError: a naive bound, or a non-positive interval.

    """
    if from_utc.tzinfo is None or to_utc.tzinfo is None:
        raise ValueError("window bounds must be aware UTC datetimes")
    step = int(interval.total_seconds())
    if step <= 0:
        raise ValueError("interval must be positive")
    origin = INTERVAL_EPOCH_UTC + phase
    # First k with origin + k*step >= from_utc: ceiling division on integer seconds (the grid is
    # on whole seconds; a fractional window start rounds up to the next grid point).
    micros = (from_utc - origin) // timedelta(microseconds=1)
    k = -(-micros // (step * 1_000_000))
    instant = origin + timedelta(seconds=k * step)
    while instant < to_utc:
        yield instant
        instant += timedelta(seconds=step)


def wall_reading(instant_utc: datetime, zone: tzinfo) -> WallReading:
    """Read ``zone``'s wall clock at ``instant_utc`` (a ``ZoneInfo`` sets PEP 495 ``fold``)."""
    local = instant_utc.astimezone(zone)
    offset = local.utcoffset()
    assert offset is not None
    return WallReading(instant_utc, local.replace(tzinfo=None, fold=0), local.fold, offset)


def interval_readings(
    interval: timedelta,
    phase: timedelta,
    zone: tzinfo,
    from_utc: datetime,
    to_utc: datetime,
    start_utc: datetime,
    end_utc: datetime | None,
) -> Iterator[WallReading]:
    """The series' instants in ``[from_utc, to_utc)`` with their wall readings, in order.

    ``start_utc``/``end_utc`` (aware, inclusive; ``None``: no end) bound the series, as the module
    says.
    """
    low = max(from_utc, start_utc)
    high = to_utc if end_utc is None else min(to_utc, end_utc + timedelta(microseconds=1))
    for instant in interval_instants(interval, phase, low, max(low, high)):
        yield wall_reading(instant, zone)
