"""The time contract's fast paths: arithmetic where the plain path asks dateutil or the zone.

Two stages, one shortcut each, and an equivalence test for each against the straightforward path.

**Expansion: rules whose every period holds the same date-times.** A SECONDLY … WEEKLY rule whose
BYxxx parts only *expand* within a period (BYSECOND, BYMINUTE, BYHOUR finer than FREQ; plain
BYDAY for WEEKLY) yields, in floating local time, the same offsets from the start of every
FREQ × INTERVAL period (RFC 5545 §3.3.10: the parts finer than FREQ expand, and a period of these
frequencies has a fixed length in floating time). Such a rule is expanded by arithmetic, period
start plus offset (:func:`iterate_periodic`), instead of by dateutil, which builds each period's
sets anew; ``timecontract.countwindow`` counts its instances the same way. The offsets are the
RFC's expansion written out: each listed (or DTSTART-supplied) weekday, hour, minute and second
of one period. ``tests/unit/test_periodic_expansion_equals_dateutil.py`` checks, with random
rules, starts and windows, that :func:`iterate_periodic` yields exactly what
``timecontract.expand``'s dateutil path yields.

**Resolution: the nominal times far from every zone transition.** ``timecontract.resolve``
decides each nominal local time with ``resolve.resolve_local`` (both PEP 495 offsets, gap and
fold policy). Far from a transition the two offsets always agree, so the answer is known without
asking: one ``UNAMBIGUOUS`` record at ``nominal - offset``. The zone's TZif file says where "far"
is (``timecontract.transitions``: naive local *bands* outside which a time's two offsets agree).
:func:`unambiguous_records` builds the records outside the bands in one loop and hands the times
inside them back for ``resolve_local``; :func:`assemble` settles, cuts and orders the two lists
as ``records.settle_collisions`` and a sort would (resolving every time through
``resolve_local`` and a sort costs several times the expansion itself).
``tests/unit/test_fast_resolution_equals_the_straightforward_path.py`` checks, over random zones,
rules, policies and windows around transitions, that ``occurrences`` built this way equals every
nominal time resolved through ``resolve_local`` one by one.
"""

from __future__ import annotations

from bisect import bisect_left
from collections.abc import Iterable, Iterator
from datetime import UTC, datetime, timedelta, tzinfo
from itertools import product

from timecontract.ids import IdFormatter, LogicalSlotId
from timecontract.records import (
    MOVED_REASONS,
    Disposition,
    OccurrenceRecord,
    Reason,
    collided,
    instant_of,
    placed_order,
)
from timecontract.rrule import Rule

PERIOD_UNITS = {
    "SECONDLY": timedelta(seconds=1),
    "MINUTELY": timedelta(minutes=1),
    "HOURLY": timedelta(hours=1),
    "DAILY": timedelta(days=1),
    "WEEKLY": timedelta(weeks=1),
}
"""One FREQ unit of the frequencies whose periods have a fixed length in floating time."""
_EXPANDING = {
    "SECONDLY": set(),
    "MINUTELY": {"by_second"},
    "HOURLY": {"by_second", "by_minute"},
    "DAILY": {"by_second", "by_minute", "by_hour"},
    "WEEKLY": {"by_second", "by_minute", "by_hour", "by_day"},
}
"""The BYxxx parts that only expand inside a period of each FREQ (never filter periods out)."""
_BY_PARTS = (
    "by_second",
    "by_minute",
    "by_hour",
    "by_day",
    "by_month_day",
    "by_year_day",
    "by_week_no",
    "by_month",
    "by_set_pos",
)


def is_periodic(rule: Rule) -> bool:
    """Whether every FREQ × INTERVAL period of ``rule`` yields the same offsets from its start.

    True for SECONDLY … WEEKLY rules whose BYxxx parts only expand within a period (BYSECOND,
    BYMINUTE, BYHOUR below the FREQ; BYDAY without ordinals for WEEKLY).
    """
    if rule.freq not in PERIOD_UNITS:
        return False
    used = {part for part in _BY_PARTS if getattr(rule, part)}
    if not used <= _EXPANDING[rule.freq]:
        return False
    return all(ordinal is None for ordinal, _ in rule.by_day)


def period_origin(rule: Rule, dtstart: datetime) -> tuple[datetime, timedelta]:
    """The start of the period containing ``dtstart`` and the length of one period.

    Weeks begin on WKST; the other periods at their unit's natural boundary (RFC 5545 §3.3.10,
    BYSETPOS: "A set of recurrence instances starts at the beginning of the interval defined by
    the FREQ rule part"). ``rule.freq`` must be one of :data:`PERIOD_UNITS`.
    """
    day_start = datetime(dtstart.year, dtstart.month, dtstart.day)
    period = PERIOD_UNITS[rule.freq] * rule.interval
    if rule.freq == "WEEKLY":
        return day_start - timedelta(days=(dtstart.weekday() - rule.wkst) % 7), period
    if rule.freq == "DAILY":
        return day_start, period
    if rule.freq == "HOURLY":
        return dtstart.replace(minute=0, second=0, microsecond=0), period
    if rule.freq == "MINUTELY":
        return dtstart.replace(second=0, microsecond=0), period
    return dtstart.replace(microsecond=0), period


def period_offsets(rule: Rule, dtstart: datetime) -> list[timedelta]:
    """The offsets of one period's date-times from the period's start, ascending.

    Each part finer than FREQ takes its listed values, or DTSTART's one (RFC 5545 §3.3.10:
    information not in the rule comes from DTSTART); a part at or above FREQ contributes 0.
    Requires :func:`is_periodic`.
    """
    coarser = list(PERIOD_UNITS).index(rule.freq)  # SECONDLY 0 … WEEKLY 4
    days = [0]
    if rule.freq == "WEEKLY":
        weekdays = [day for _, day in rule.by_day] or [dtstart.weekday()]
        days = [(day - rule.wkst) % 7 for day in weekdays]
    hours = (rule.by_hour or (dtstart.hour,)) if coarser > 2 else (0,)
    minutes = (rule.by_minute or (dtstart.minute,)) if coarser > 1 else (0,)
    seconds = (rule.by_second or (dtstart.second,)) if coarser > 0 else (0,)
    return sorted(
        {
            timedelta(days=d, hours=h, minutes=m, seconds=s)
            for d, h, m, s in product(days, hours, minutes, seconds)
        }
    )


def iterate_periodic(rule: Rule, dtstart: datetime, restart: datetime) -> Iterator[datetime]:
    """Yield the rule's floating date-times from the period starting at ``restart``, in order.

    Args:
        rule: a rule for which :func:`is_periodic` is true.
        dtstart: the floating DTSTART; supplies the parts the rule leaves out.
        restart: the start of one of the rule's periods (``expand.period_start_at_or_before``).

    Values before DTSTART in its own period are yielded too (the caller drops them); the stream
    ends at the last date-time ``datetime`` can hold, as dateutil's does.
    """
    within, (_, period) = period_offsets(rule, dtstart), period_origin(rule, dtstart)
    start = restart
    try:
        while True:
            for offset in within:
                yield start + offset
            start += period
    except OverflowError:
        return


_EPOCH = datetime(1970, 1, 1)
_EPOCH_UTC = _EPOCH.replace(tzinfo=UTC)
_NO_JITTER = timedelta(0)


def unambiguous_records(
    schedule_id: str,
    revision: int,
    tzdb_version: str,
    end: datetime | None,
    rule: Rule,
    zone: tzinfo,
    nominals: Iterable[datetime],
    bands: Iterable[tuple[datetime, datetime]],
) -> tuple[list[OccurrenceRecord], list[datetime], bool]:
    """Split ``nominals`` into the records far from a transition and the times near one.

    Args:
        schedule_id: the spec's ``scheduleId`` (on the records and in their IDs).
        revision: the spec's ``revision`` (on the records and in their IDs).
        tzdb_version: the spec's tz release (on the records).
        end: the spec's ``end`` (inclusive): the stream stops after it.
        rule: the spec's rule (its ``UNTIL`` is compared with each instant, inclusively).
        zone: the spec's zone.
        nominals: the rule's floating local date-times, ascending.
        bands: ascending naive local intervals ``[first, end)`` outside which a time's two
            PEP 495 offsets agree (``ZoneTransitions.bands``).

    Returns:
        The ``UNAMBIGUOUS`` records of the times outside every band whose two offsets agree,
        the other times (for ``resolve_local``), and whether the records' instants strictly
        ascend (they do unless the zone's offset fell between two of them; see :func:`assemble`).

    """
    until = rule.until_utc
    ids = IdFormatter(schedule_id, revision)
    occurrence, slot, offset_of = ids.occurrence, ids.slot, zone.utcoffset
    planned, unambiguous = Disposition.PLANNED, Reason.UNAMBIGUOUS
    pending = iter(bands)
    band_first, band_end = next(pending, (datetime.max, datetime.max))
    offset: timedelta | None = None
    base, previous, ordered = _EPOCH_UTC, _EPOCH_UTC, True
    records: list[OccurrenceRecord] = []
    near: list[datetime] = []
    for n in nominals:
        if end is not None and n > end:
            break
        earlier = offset_of(n)
        if n >= band_first:
            while n >= band_end:
                band_first, band_end = next(pending, (datetime.max, datetime.max))
            if n >= band_first and (earlier is None or n.fold or earlier != offset_of(_fold_1(n))):
                near.append(n)
                continue
        if earlier is not offset:
            offset, base = earlier, _EPOCH_UTC - earlier  # type: ignore[operator]
        instant = base + (n - _EPOCH)  # n read with ``offset``, as an aware UTC instant
        if until is not None and instant > until:
            continue
        if instant <= previous:
            ordered = False
        previous = instant
        records.append(
            OccurrenceRecord(
                occurrence(n, 0),
                slot(instant),
                schedule_id,
                revision,
                n,
                0,
                instant,
                None,
                earlier,
                tzdb_version,
                planned,
                unambiguous,
                _NO_JITTER,
            )
        )
    return records, near, ordered


def _fold_1(n: datetime) -> datetime:
    # The constructor is about twice as fast as ``n.replace(fold=1)``.
    return datetime(n.year, n.month, n.day, n.hour, n.minute, n.second, n.microsecond, fold=1)


def assemble(
    regular: list[OccurrenceRecord],
    irregular: list[OccurrenceRecord],
    from_utc: datetime,
    to_utc: datetime,
) -> list[OccurrenceRecord]:
    """The records placed in ``[from_utc, to_utc)``, settled and ordered by ``placed_order``.

    ``regular``: ``UNAMBIGUOUS`` records whose instants strictly ascend, so already ordered and
    each holding its own slot; ``irregular``: the few records ``resolve_local`` decided next to a
    transition, in nominal order. Collisions are settled as ``records.settle_collisions`` does
    (a moved record loses its slot to any other record holding it: among the irregular ones by
    set, among the regular ones by bisecting their instants — a slot names the instant's
    second), the window cuts ``regular`` by bisection, and the irregular records are inserted at
    their place.
    """
    natural = {r.logical_slot_id for r in irregular if r.reason not in MOVED_REASONS}
    second = timedelta(seconds=1)
    settled = []
    taken: set[LogicalSlotId | None] = set()
    for r in irregular:  # in nominal order: the earliest moved record keeps a shared slot
        if r.reason in MOVED_REASONS:
            floor = instant_of(r).replace(microsecond=0)
            low = bisect_left(regular, floor, key=instant_of)
            high = bisect_left(regular, floor + second, lo=low, key=instant_of)
            if (
                r.logical_slot_id in natural
                or r.logical_slot_id in taken
                or any(regular[k].logical_slot_id == r.logical_slot_id for k in range(low, high))
            ):
                r = collided(r)
            else:
                taken.add(r.logical_slot_id)
        if from_utc <= r.placed_at_utc < to_utc:
            settled.append(r)
    first = bisect_left(regular, from_utc, key=instant_of)
    owned = regular[first : bisect_left(regular, to_utc, lo=first, key=instant_of)]
    for r in sorted(settled, key=placed_order):
        owned.insert(bisect_left(owned, placed_order(r), key=placed_order), r)
    return owned
