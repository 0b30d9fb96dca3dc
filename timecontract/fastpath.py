"""The resolution fast path: records of the nominal times far from every zone transition.

``timecontract.resolve`` decides each nominal local time with :func:`resolve.resolve_local`
(both PEP 495 offsets, gap and fold policy). Far from a transition the two offsets always agree,
so the answer is known without asking: one ``UNAMBIGUOUS`` record at ``nominal - offset``. The
zone's TZif file says where "far" is (``timecontract.transitions``: naive local *bands* outside
which a time's two offsets agree). :func:`unambiguous_records` builds the records outside the
bands in one loop and hands the times inside them back for ``resolve_local``; :func:`assemble`
settles, cuts and orders the two lists as ``records.settle_collisions`` and a sort would.

Resolving every time through ``resolve_local`` and a sort costs several times the expansion
itself. The expansion has its own fast path, :mod:`timecontract.periodic`, below the spec; this
one sits above it (it builds records), so the two cannot be one module.
``tests/unit/test_fast_resolution_equals_the_straightforward_path.py`` checks, over random zones,
rules, policies and windows around transitions, that ``occurrences`` built this way equals every
nominal time resolved through ``resolve_local`` one by one.
"""

from __future__ import annotations

from bisect import bisect_left
from collections.abc import Iterable
from datetime import UTC, datetime, timedelta, tzinfo

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
from timecontract.spec import ScheduleSpecV1

_EPOCH = datetime(1970, 1, 1)
_EPOCH_UTC = _EPOCH.replace(tzinfo=UTC)
_NO_JITTER = timedelta(0)


def unambiguous_records(
    spec: ScheduleSpecV1,
    rule: Rule,
    zone: tzinfo,
    nominals: Iterable[datetime],
    bands: Iterable[tuple[datetime, datetime]],
) -> tuple[list[OccurrenceRecord], list[datetime], bool]:
    """Split ``nominals`` into the records far from a transition and the times near one.

    Args:
        spec: the spec (its ``end`` stops the stream; its IDs and tz release go on the records).
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
    end, until = spec.end, rule.until_utc
    schedule_id, revision, tzdb_version = spec.schedule_id, spec.revision, spec.tzdb_version
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
