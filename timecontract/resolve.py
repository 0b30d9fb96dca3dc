"""Resolution: nominal local date-times → occurrence records, with gap/fold policy and evidence.

For each nominal local date-time the RRULE yields (floating local time, ``timecontract.expand``),
the zone of the pinned tz release decides (DESIGN §3):

- **exists once** → one ``PLANNED`` record, reason ``UNAMBIGUOUS``.
- **fold** (occurs twice) → ``FIRST_ONLY``: the earlier instant (fold 0, ``FOLD_FIRST``);
  ``SECOND_ONLY``: the later (fold 1, ``FOLD_SECOND``); ``BOTH``: two records.
- **gap** (does not exist) → ``SKIP``: a ``SKIPPED_GAP`` record (no instant; ``gapAt`` is the
  transition's instant), reason ``GAP_SKIPPED``; ``SHIFT_FORWARD``: ``PLANNED`` at the RFC 5545
  §3.3.5 instant (local time read with the offset before the gap), reason
  ``GAP_SHIFTED_FORWARD``, ``gapAt`` kept as evidence.
- **collision**: a shifted instant that equals a natural occurrence's instant (an hourly rule across
  a gap) — the natural occurrence keeps the logical slot; the shifted one is recorded
  ``SKIPPED_GAP`` with reason ``GAP_SHIFT_COLLISION``.

We resolve with ``ZoneInfo`` and PEP 495 ourselves rather than through dateutil, which attaches a
zone without checking and so yields nonexistent times and only one side of a fold.

COUNT (RFC 5545 §3.3.10) counts nominal times that exist: a gap time under SKIP is not counted;
under SHIFT_FORWARD the shifted instance counts (also when it then collides); a fold counts once,
whatever the fold policy. UNTIL is compared, inclusively, with the instant (``gapAt`` for
skipped records).
"""

from __future__ import annotations

from bisect import bisect_left, bisect_right
from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass, fields, replace
from datetime import UTC, datetime, timedelta, tzinfo
from enum import StrEnum
from pathlib import Path
from typing import Any

from timecontract import zones
from timecontract.countwindow import constant_per_period, gap_nominals_before, nominal_count_before
from timecontract.ids import (
    LOCAL_YEARS,
    TWO_DIGITS,
    UTC_YEARS,
    IdFormatter,
    LogicalSlotId,
    OccurrenceId,
    interval_occurrence_id,
    logical_slot_id,
)
from timecontract.interval import interval_readings
from timecontract.jitter import jitter_delay
from timecontract.rrule import Rule
from timecontract.rscale import RscaleRule
from timecontract.spec import (
    FoldPolicy,
    GapPolicy,
    ScheduleSpecV1,
    format_duration,
    format_instant,
)
from timecontract.transitions import ZoneTransitions

# Slack around the sampled offsets when a UTC window becomes a floating local one (offsets are
# sampled daily, see _local_bounds).
_SLACK = timedelta(hours=1)


class Disposition(StrEnum):
    """What the time contract decided for a record (the ledger's first state)."""

    PLANNED = "PLANNED"
    SKIPPED_GAP = "SKIPPED_GAP"
    SKIPPED_HOLIDAY = "SKIPPED_HOLIDAY"
    """The nominal date is not a business day of the calendar (or a move found no slot)."""
    EXCLUDED = "EXCLUDED"
    """The nominal time is excluded by ``exdates`` (RFC 5545 EXDATE)."""


class Reason(StrEnum):
    """Why a record has its instant or disposition (stored as evidence, shown in previews)."""

    UNAMBIGUOUS = "UNAMBIGUOUS"
    """The local time exists exactly once."""
    FOLD_FIRST = "FOLD_FIRST"
    """The local time occurs twice; this is the earlier instant (fold 0)."""
    FOLD_SECOND = "FOLD_SECOND"
    """The local time occurs twice; this is the later instant (fold 1)."""
    GAP_SKIPPED = "GAP_SKIPPED"
    """The local time does not exist and gapPolicy is SKIP."""
    GAP_SHIFTED_FORWARD = "GAP_SHIFTED_FORWARD"
    """The local time does not exist; shifted per RFC 5545 §3.3.5 (gapPolicy SHIFT_FORWARD)."""
    GAP_SHIFT_COLLISION = "GAP_SHIFT_COLLISION"
    """Shifted forward onto the instant of a natural occurrence, which keeps the slot."""
    ELAPSED_INTERVAL = "ELAPSED_INTERVAL"
    """A point of an elapsed-time ``interval`` grid (UTC spacing; no gap or fold applies)."""
    GAP_NEXT_VALID = "GAP_NEXT_VALID"
    """The local time does not exist; runs at the first instant after the gap (NEXT_VALID)."""
    EXDATE_EXCLUDED = "EXDATE_EXCLUDED"
    """Excluded by ``exdates``; ``instant`` is where it would have run."""
    HOLIDAY_SKIPPED = "HOLIDAY_SKIPPED"
    """Not a business day and holidayPolicy SKIP (or no business day within reach)."""
    HOLIDAY_FOLLOWING = "HOLIDAY_FOLLOWING"
    """Moved to the next business day (holidayPolicy FOLLOWING)."""
    HOLIDAY_PRECEDING = "HOLIDAY_PRECEDING"
    """Moved to the previous business day (holidayPolicy PRECEDING)."""
    HOLIDAY_MODIFIED_FOLLOWING = "HOLIDAY_MODIFIED_FOLLOWING"
    """Moved per MODIFIED_FOLLOWING (the next business day, or the previous one across a month)."""
    HOLIDAY_MOVE_COLLISION = "HOLIDAY_MOVE_COLLISION"
    """Moved onto an instant another occurrence holds, which keeps the slot; never run twice."""


MOVED_REASONS = frozenset(
    {
        Reason.GAP_SHIFTED_FORWARD,
        Reason.GAP_NEXT_VALID,
        Reason.HOLIDAY_FOLLOWING,
        Reason.HOLIDAY_PRECEDING,
        Reason.HOLIDAY_MODIFIED_FOLLOWING,
    }
)
"""Reasons of records placed away from their nominal time: they yield a slot to a natural one."""


@dataclass(frozen=True, slots=True)
class Resolution:
    """How one nominal local date-time maps to UTC in one zone (before identity and ownership).

    Attributes:
        fold: the fold ordinal (0, or 1 for the later instant of a fold).
        instant_utc: the aware UTC instant, or ``None`` for a skipped gap.
        gap_at_utc: for a gap time, the aware UTC instant of the transition that made the gap.
        utc_offset: the offset in force at ``instant_utc`` (``None`` for a skipped gap).
        reason: why.

    """

    fold: int
    instant_utc: datetime | None
    gap_at_utc: datetime | None
    utc_offset: timedelta | None
    reason: Reason


@dataclass(frozen=True, slots=True)
class OccurrenceRecord:
    """One recorded fact of the time contract: an occurrence or a skipped gap.

    Attributes:
        occurrence_id: see ``timecontract.ids``.
        logical_slot_id: the slot the record holds, ``None`` when it holds none (skipped records).
        schedule_id: the spec's scheduleId.
        revision: the spec's revision.
        nominal_local: the naive wall-clock date-time the rule produced.
        fold: fold ordinal, 0 or 1.
        instant_utc: when it runs (aware UTC), ``None`` for ``SKIPPED_GAP``.
        gap_at_utc: the DST transition's instant for gap times (skipped or shifted), else ``None``.
        utc_offset: the offset in force at ``instant_utc``; ``None`` for ``SKIPPED_GAP``.
        tzdb_version: the tz database release that resolved it.
        disposition: ``PLANNED`` or ``SKIPPED_GAP``.
        reason: the policy reason code.
        jitter_delay: the dispatch delay the spec's ``jitter`` gives it (``timecontract.jitter``;
            zero without jitter and for skipped records). Evidence: it changes neither the ID,
            the slot nor the instant lateness is measured from.

    ``SKIPPED_HOLIDAY`` and ``EXCLUDED`` records keep the instant they would have run at as
    ``instant_utc`` (evidence; they hold no slot). A holiday decision is a
    :class:`CalendarRecord`, which adds the holiday and the calendar release.

    """

    occurrence_id: OccurrenceId
    logical_slot_id: LogicalSlotId | None
    schedule_id: str
    revision: int
    nominal_local: datetime
    fold: int
    instant_utc: datetime | None
    gap_at_utc: datetime | None
    utc_offset: timedelta | None
    tzdb_version: str
    disposition: Disposition
    reason: Reason
    jitter_delay: timedelta = timedelta(0)

    @property
    def holiday(self) -> str | None:
        """The holiday a calendar decision names (see :class:`CalendarRecord`); else ``None``."""
        return None

    @property
    def calendar_release(self) -> str | None:
        """``<calendar>@<release>`` of a calendar decision (a :class:`CalendarRecord`), or None."""
        return None

    @property
    def placed_at_utc(self) -> datetime:
        """Where the record sits on the UTC line: its instant, or ``gapAt`` when skipped."""
        placed = self.instant_utc if self.instant_utc is not None else self.gap_at_utc
        assert placed is not None  # every record has one or the other
        return placed

    def to_json(self) -> dict[str, object]:
        """The preview contract's JSON object (camelCase keys; see ``almanac preview --json``).

        A holiday decision adds ``holiday`` (its name) and ``calendar`` (``name@release``).
        """
        data: dict[str, object] = {
            "occurrenceId": self.occurrence_id,
            "logicalSlotId": self.logical_slot_id,
            "scheduleId": self.schedule_id,
            "revision": self.revision,
            "nominalLocal": self.nominal_local.isoformat(),
            "fold": self.fold,
            "instant": None if self.instant_utc is None else format_instant(self.instant_utc),
            "gapAt": None if self.gap_at_utc is None else format_instant(self.gap_at_utc),
            "utcOffset": None if self.utc_offset is None else format_offset(self.utc_offset),
            "tzdbVersion": self.tzdb_version,
            "disposition": self.disposition.value,
            "reason": self.reason.value,
            "jitter": format_duration(self.jitter_delay),
        }
        if self.holiday is not None:
            data |= {"holiday": self.holiday, "calendar": self.calendar_release}
        return data


@dataclass(frozen=True, slots=True)
class CalendarRecord(OccurrenceRecord):
    """A record a holiday policy decided: skipped, moved, or a move that collided.

    A subclass, so the records of the fast path keep their size (the time contract's bench).

    Attributes:
        holiday: the holiday's name, or ``Saturday (weekend)``.
        calendar_release: the calendar and its data release (``NYSE@holidays-0.108``).

    """

    holiday: str | None = None
    calendar_release: str | None = None


def with_holiday(record: OccurrenceRecord, holiday: str, calendar_release: str) -> CalendarRecord:
    """``record`` as a :class:`CalendarRecord` naming ``holiday`` and ``calendar_release``."""
    values: dict[str, Any] = {f.name: getattr(record, f.name) for f in fields(OccurrenceRecord)}
    return CalendarRecord(**values, holiday=holiday, calendar_release=calendar_release)


def format_offset(offset: timedelta) -> str:
    """Format a UTC offset as ``±HH:MM`` (``-05:00``); seconds, if any, as ``±HH:MM:SS``."""
    sign = "-" if offset < timedelta(0) else "+"
    seconds = abs(int(offset.total_seconds()))
    hours, rest = divmod(seconds, 3600)
    minutes, secs = divmod(rest, 60)
    return f"{sign}{hours:02d}:{minutes:02d}" + (f":{secs:02d}" if secs else "")


def resolve_local(
    nominal_local: datetime, zone: tzinfo, gap_policy: GapPolicy, fold_policy: FoldPolicy
) -> list[Resolution]:
    """Resolve one nominal local date-time in ``zone`` under the gap and fold policies.

    Args:
        nominal_local: naive wall time in ``zone``, as the RRULE yields it.
        zone: a PEP 495 zone (``ZoneInfo`` from ``timecontract.zones.load``).
        gap_policy: what to do when the time does not exist.
        fold_policy: what to do when it exists twice.

    Returns:
        Resolutions ordered by UTC instant: one, or two for a fold under ``BOTH``. A gap under
        SKIP yields one resolution without an instant.

    Source: RFC 5545 §3.3.5 (shifted instant); PEP 495 (fold); seed: fold ordinals.

    """
    # The zone's utcoffset reads the wall-clock fields and the fold of a naive date-time
    # (PEP 495), the same answer as attaching the zone first, without copying it twice.
    earlier = zone.utcoffset(nominal_local.replace(fold=0) if nominal_local.fold else nominal_local)
    later = zone.utcoffset(_with_fold_1(nominal_local))
    assert earlier is not None and later is not None
    if earlier == later:
        return [Resolution(0, _utc(nominal_local, earlier), None, earlier, Reason.UNAMBIGUOUS)]
    if earlier > later:
        # PEP 495: fold=0 uses the offset before the transition. Offset shrinking → a fold.
        first = Resolution(0, _utc(nominal_local, earlier), None, earlier, Reason.FOLD_FIRST)
        second = Resolution(1, _utc(nominal_local, later), None, later, Reason.FOLD_SECOND)
        chosen = {
            FoldPolicy.FIRST_ONLY: [first],
            FoldPolicy.SECOND_ONLY: [second],
            FoldPolicy.BOTH: [first, second],
        }
        return chosen[fold_policy]
    # Offset growing → a gap. The transition T satisfies T + earlier <= nominal < T + later.
    gap_at = _transition_between(zone, _utc(nominal_local, later), _utc(nominal_local, earlier))
    if gap_policy is GapPolicy.SKIP:
        return [Resolution(0, None, gap_at, None, Reason.GAP_SKIPPED)]
    if gap_policy is GapPolicy.NEXT_VALID:
        return [Resolution(0, gap_at, gap_at, later, Reason.GAP_NEXT_VALID)]
    return [Resolution(0, _utc(nominal_local, earlier), gap_at, later, Reason.GAP_SHIFTED_FORWARD)]


def _with_fold_1(n: datetime) -> datetime:
    # The constructor is about twice as fast as ``n.replace(fold=1)``.
    return datetime(n.year, n.month, n.day, n.hour, n.minute, n.second, n.microsecond, fold=1)


def _utc(nominal_local: datetime, offset: timedelta) -> datetime:
    return (nominal_local - offset).replace(tzinfo=UTC)


def _transition_between(zone: tzinfo, low_utc: datetime, high_utc: datetime) -> datetime:
    """Find the first instant in ``(low, high]`` whose offset differs from ``low``'s (bisection).

    The tz database puts transitions on whole seconds, so integer seconds suffice.
    """
    before = low_utc.astimezone(zone).utcoffset()
    low, high = 0, int((high_utc - low_utc).total_seconds())
    while high - low > 1:
        middle = (low + high) // 2
        if (low_utc + timedelta(seconds=middle)).astimezone(zone).utcoffset() == before:
            low = middle
        else:
            high = middle
    return low_utc + timedelta(seconds=high)


LAST_WINDOW_END = datetime(9999, 12, 1, tzinfo=UTC)
"""The latest window end resolved: the local window around it is widened by offsets and a day
each side, which must stay inside ``datetime``'s year 9999 (a later end is refused, not clamped)."""


def check_window(from_utc: datetime, to_utc: datetime) -> None:
    """Refuse a naive bound or an end after :data:`LAST_WINDOW_END` (``ValueError``)."""
    if from_utc.tzinfo is None or to_utc.tzinfo is None:
        raise ValueError("window bounds must be aware UTC datetimes")
    if to_utc > LAST_WINDOW_END:
        raise ValueError(
            f"window end {to_utc.isoformat().replace('+00:00', 'Z')} lies after "
            f"{LAST_WINDOW_END.isoformat().replace('+00:00', 'Z')}, the last instant resolved"
        )


def rule_occurrences(
    spec: ScheduleSpecV1,
    from_utc: datetime,
    to_utc: datetime,
    *,
    tzdb_store: Path | None = None,
) -> list[OccurrenceRecord]:
    """Every record the revision owns in ``[from, to)``, for a spec without calendar fields.

    ``timecontract.recurrence.occurrences`` is the public entry, which sends a spec with
    calendar fields to its own path.

    "Owns" means placed at or after the spec's ``cutoverAt`` (a later revision's cutover is the
    ledger's business), with the nominal time within ``start``/``end`` and the rule's COUNT/UNTIL.

    Args:
        spec: a validated spec.
        from_utc: window start, aware, inclusive.
        to_utc: window end, aware, exclusive.
        tzdb_store: the local tz release store (``None``: only the installed release).

    Returns:
        Records sorted by (placed instant, nominal local, fold). Splitting a window in two yields
        the same records as the whole.

    Raises:
        TzdbReleaseNotFound, ZoneNotFound: the pinned release or zone is not available.
        ValueError: a naive bound, or an end after :data:`LAST_WINDOW_END`.

    An ``interval`` spec yields its grid's instants instead (``timecontract.interval``), reason
    ``ELAPSED_INTERVAL``. No record carries a ``jitter_delay`` yet: :func:`jittered` gives them
    theirs (``timecontract.recurrence.occurrences``).

    Cost: proportional to the window; for rules with COUNT too when every period yields the same
    instants (``timecontract.countwindow``), else walked from DTSTART (at most COUNT instances).

    """
    check_window(from_utc, to_utc)
    from_utc = max(from_utc, spec.cutover_at)
    if to_utc <= from_utc:
        return []
    zone = zones.load(spec.time_zone, spec.tzdb_version, tzdb_store)
    if spec.interval is not None:
        return _interval_records(spec, zone, from_utc, to_utc)
    rule = spec.rscale_rule
    table = zones.transitions(spec.time_zone, spec.tzdb_version, tzdb_store)
    if rule.rule.count is not None and (
        rule.moves_invalid_dates or not counts_arithmetically(rule.rule)
    ):
        records = list(_counted(spec, rule, zone, rule.iterate_from_start(spec.start), 0))
    elif rule.rule.count is not None:
        # Cost follows the window: the instances before it are counted, not walked.
        low, high = _local_bounds(zone, from_utc, to_utc)
        before = nominal_count_before(rule.rule, spec.start, low)
        if spec.gap_policy is GapPolicy.SKIP:
            before -= gap_nominals_before(rule.rule, spec.start, low, zone)
        nominals = rule.expand(spec.start, low, high)
        records = list(_counted(spec, rule, zone, nominals, before))
    else:
        if table is None:
            low, high = _local_bounds(zone, from_utc, to_utc)
            bands = None
        else:
            low, high = _table_bounds(table, zone, from_utc, to_utc)
            bands = table.bands(low, high)
        nominals = rule.expand(spec.start, low, high)
        records, irregular, ordered = _build_all(spec, rule.rule, zone, nominals, bands)
        if ordered:
            return _assemble(records, irregular, from_utc, to_utc)
        records += irregular
    owned = [
        r
        for r in settle_collisions(records)
        if from_utc <= (r.instant_utc if r.instant_utc is not None else r.gap_at_utc) < to_utc  # type: ignore[operator]
    ]
    return sorted(owned, key=_order)


def _instant(record: OccurrenceRecord) -> datetime:
    assert record.instant_utc is not None
    return record.instant_utc


def _assemble(
    regular: list[OccurrenceRecord],
    irregular: list[OccurrenceRecord],
    from_utc: datetime,
    to_utc: datetime,
) -> list[OccurrenceRecord]:
    """The owned, settled, ordered records, as :func:`rule_occurrences`' general path makes them.

    ``regular``: ``UNAMBIGUOUS`` records whose instants strictly ascend, so already in
    :func:`_order` and each holding its own slot; ``irregular``: the few records decided next to
    a transition. Collisions are settled as :func:`settle_collisions` does (a shifted record
    loses its slot to any other record holding it: among the irregular ones by set, among the
    regular ones by bisecting their instants — a slot names the instant's second), the window
    cuts ``regular`` by bisection, and the irregular records are inserted at their place.
    """
    natural = {r.logical_slot_id for r in irregular if r.reason not in MOVED_REASONS}
    second = timedelta(seconds=1)
    settled = []
    taken: set[LogicalSlotId | None] = set()
    for r in irregular:  # in nominal order: the earliest moved record keeps a shared slot
        if r.reason in MOVED_REASONS:
            assert r.instant_utc is not None
            floor = r.instant_utc.replace(microsecond=0)
            low = bisect_left(regular, floor, key=_instant)
            high = bisect_left(regular, floor + second, lo=low, key=_instant)
            if (
                r.logical_slot_id in natural
                or r.logical_slot_id in taken
                or any(regular[k].logical_slot_id == r.logical_slot_id for k in range(low, high))
            ):
                r = _collided(r)
            else:
                taken.add(r.logical_slot_id)
        if from_utc <= r.placed_at_utc < to_utc:
            settled.append(r)
    first = bisect_left(regular, from_utc, key=_instant)
    owned = regular[first : bisect_left(regular, to_utc, lo=first, key=_instant)]
    for r in sorted(settled, key=_order):
        owned.insert(bisect_left(owned, _order(r), key=_order), r)
    return owned


def _order(r: OccurrenceRecord) -> tuple[datetime, datetime, int]:
    placed = r.instant_utc if r.instant_utc is not None else r.gap_at_utc
    assert placed is not None  # every record has one or the other
    return placed, r.nominal_local, r.fold


def _interval_records(
    spec: ScheduleSpecV1, zone: tzinfo, from_utc: datetime, to_utc: datetime
) -> list[OccurrenceRecord]:
    assert spec.interval is not None
    end_utc = None if spec.end is None else _bound_instant(spec.end, zone)
    readings = interval_readings(
        spec.interval, spec.phase, zone, from_utc, to_utc, _bound_instant(spec.start, zone), end_utc
    )
    return [
        OccurrenceRecord(
            occurrence_id=interval_occurrence_id(
                spec.schedule_id, spec.revision, reading.instant_utc
            ),
            logical_slot_id=logical_slot_id(spec.schedule_id, reading.instant_utc),
            schedule_id=spec.schedule_id,
            revision=spec.revision,
            nominal_local=reading.nominal_local,
            fold=reading.fold,
            instant_utc=reading.instant_utc,
            gap_at_utc=None,
            utc_offset=reading.utc_offset,
            tzdb_version=spec.tzdb_version,
            disposition=Disposition.PLANNED,
            reason=Reason.ELAPSED_INTERVAL,
        )
        for reading in readings
    ]


def _bound_instant(nominal_local: datetime, zone: tzinfo) -> datetime:
    """A ``start``/``end`` bound as one instant (RFC 5545 §3.3.5).

    A local time that occurs twice is its first occurrence; one that does not exist is read with
    the offset before the gap.
    """
    (first,) = resolve_local(nominal_local, zone, GapPolicy.SHIFT_FORWARD, FoldPolicy.FIRST_ONLY)
    assert first.instant_utc is not None
    return first.instant_utc


def _planned_instants(records: Iterable[OccurrenceRecord]) -> list[datetime]:
    """The distinct instants of the planned records, ascending."""
    return sorted({_instant(r) for r in records if r.disposition is Disposition.PLANNED})


def jittered(
    spec: ScheduleSpecV1,
    records: list[OccurrenceRecord],
    to_utc: datetime,
    beyond: Callable[[datetime, datetime], list[OccurrenceRecord]],
) -> list[OccurrenceRecord]:
    """Give each planned record its ``jitter_delay``, capped at the gap to the next one.

    As Temporal Schedules do, a delay never reaches the next planned instant of the series: the
    range is ``[0, min(jitter, next instant - instant))``, so a delayed run always starts before
    its successor is due, and a jitter longer than the period cannot make two runs overlap. The
    successor of a record near the window's end is found past it, by ``beyond(to_utc, end)`` (the
    spec's records, unjittered, at most ``jitter`` further), so a window split in two gets the
    same delays as the whole.

    Args:
        spec: the spec whose ``jitter`` applies (``PT0S``: records returned as they are).
        records: the window's records, ordered as :func:`rule_occurrences` orders them.
        to_utc: the window's end (exclusive).
        beyond: the spec's unjittered records of a later window.
    """
    if not spec.jitter:
        return records
    instants = _planned_instants(records)
    if instants and instants[-1] + spec.jitter > to_utc:
        beyond_end = min(instants[-1] + spec.jitter, LAST_WINDOW_END)
        instants += _planned_instants(beyond(to_utc, beyond_end))
    jittered = []
    for record in records:
        if record.disposition is Disposition.PLANNED:
            instant = _instant(record)
            after = bisect_right(instants, instant)
            cap = spec.jitter
            if after < len(instants):
                cap = min(cap, instants[after] - instant)
            record = replace(record, jitter_delay=jitter_delay(record.occurrence_id, cap))
        jittered.append(record)
    return jittered


def _local_bounds(zone: tzinfo, from_utc: datetime, to_utc: datetime) -> tuple[datetime, datetime]:
    """The floating local window whose resolutions can land in ``[from_utc, to_utc)``.

    A record placed at UTC ``t`` has a nominal time of ``t`` plus an offset in force near ``t``;
    a shifted gap time may collide with a natural time later by the gap's length. So the window is
    widened by the smallest and largest offsets seen (sampled daily from a day before to a day
    after) and by their difference, plus slack: a window with no transition costs nothing extra.
    """
    day = timedelta(days=1)
    first, last = from_utc - day, to_utc + day
    # Every day from ``first`` while before ``last``, and ``last``.
    samples = [first + day * k for k in range(-(-(last - first) // day))]
    samples.append(last)
    offsets: set[timedelta] = set()
    for moment in samples:
        offset = moment.astimezone(zone).utcoffset()
        assert offset is not None
        offsets.add(offset)
    low, high = min(offsets), max(offsets)
    spread = high - low + _SLACK
    return (
        from_utc.replace(tzinfo=None) + low - spread,
        to_utc.replace(tzinfo=None) + high + spread,
    )


def _table_bounds(
    table: ZoneTransitions, zone: tzinfo, from_utc: datetime, to_utc: datetime
) -> tuple[datetime, datetime]:
    """:func:`_local_bounds` from the zone's transition table: the same or a wider window.

    The offsets are every offset in force between a day before and a day after the window
    (``ZoneTransitions.offsets_between``, a superset of :func:`_local_bounds`' daily samples,
    which it also takes at both ends), so the window contains :func:`_local_bounds`' and costs
    no daily sampling. Wider is harmless where records are filtered by their placed instant (the
    rules without COUNT); the COUNT paths keep :func:`_local_bounds`.
    """
    day = timedelta(days=1)
    first, last = from_utc - day, to_utc + day
    seconds = table.offsets_between(
        int((first - _EPOCH_UTC).total_seconds()), int((last - _EPOCH_UTC).total_seconds())
    )
    offsets = {timedelta(seconds=s) for s in seconds}
    for moment in (first, last):
        offset = moment.astimezone(zone).utcoffset()
        assert offset is not None
        offsets.add(offset)
    low, high = min(offsets), max(offsets)
    spread = high - low + _SLACK
    return (
        from_utc.replace(tzinfo=None) + low - spread,
        to_utc.replace(tzinfo=None) + high + spread,
    )


def _resolved(
    spec: ScheduleSpecV1, zone: tzinfo, nominals: Iterable[datetime]
) -> Iterator[tuple[datetime, list[Resolution]]]:
    for nominal_local in nominals:
        if spec.end is not None and nominal_local > spec.end:
            return
        yield nominal_local, resolve_local(nominal_local, zone, spec.gap_policy, spec.fold_policy)


def _build_all(
    spec: ScheduleSpecV1,
    rule: Rule,
    zone: tzinfo,
    nominals: Iterable[datetime],
    bands: list[tuple[datetime, datetime]] | None = None,
) -> tuple[list[OccurrenceRecord], list[OccurrenceRecord], bool]:
    """``list(_build(spec, rule, _resolved(spec, zone, nominals)))``, faster, in two lists.

    A nominal time whose two PEP 495 offsets agree (all but those next to a transition) becomes
    its ``UNAMBIGUOUS`` record here directly; the others go through :func:`resolve_local`.
    ``bands`` (``timecontract.transitions``: naive local intervals outside which every time's two
    offsets agree) spare the fold-1 look-up outside them; ``None`` asks for both offsets of every
    time.

    Returns:
        The ``UNAMBIGUOUS`` records built here, the records :func:`resolve_local` decided
        (next to a transition), and whether the first list's instants strictly ascend (they do
        when the nominal times do; see :func:`_assemble`).

    """
    end, until = spec.end, rule.until_utc
    schedule_id, revision, tzdb_version = spec.schedule_id, spec.revision, spec.tzdb_version
    gap_policy, fold_policy = spec.gap_policy, spec.fold_policy
    offset_of, two = zone.utcoffset, TWO_DIGITS
    local_years, utc_years = LOCAL_YEARS, UTC_YEARS
    occurrence_head, slot_head = f"{schedule_id}.r{revision}.", f"{schedule_id}@"
    planned, unambiguous = Disposition.PLANNED, Reason.UNAMBIGUOUS
    make, final, no_jitter = _RecordFields, OccurrenceRecord, _NO_JITTER
    epoch, epoch_utc = _EPOCH, _EPOCH_UTC
    ids = IdFormatter(schedule_id, revision)
    pending = iter(bands if bands is not None else [(datetime.min, datetime.max)])
    band_first, band_end = next(pending, (datetime.max, datetime.max))
    offset: timedelta | None = None
    base: datetime = epoch_utc
    previous = epoch_utc
    ordered = True
    records: list[OccurrenceRecord] = []
    irregular: list[OccurrenceRecord] = []
    append = records.append
    for n in nominals:
        if end is not None and n > end:
            break
        earlier = offset_of(n)
        if n >= band_first:
            while n >= band_end:
                band_first, band_end = next(pending, (datetime.max, datetime.max))
            if n >= band_first and (
                earlier is None or n.fold or earlier != offset_of(_with_fold_1(n))
            ):
                irregular.extend(
                    _build(spec, rule, [(n, resolve_local(n, zone, gap_policy, fold_policy))], ids)
                )
                continue
        if earlier is not offset:
            offset, base = earlier, epoch_utc - earlier  # type: ignore[operator]
        # n.replace(tzinfo=UTC) - offset, without the keyword call.
        instant = base + (n - epoch)
        if until is not None and instant > until:
            continue
        if instant <= previous:
            ordered = False
        previous = instant
        # The IDs as IdFormatter.occurrence and .slot build them, in one f-string each.
        r = make(
            f"{occurrence_head}{local_years[n.year]}{two[n.month]}{two[n.day]}"
            f"T{two[n.hour]}{two[n.minute]}{two[n.second]}.f0",
            f"{slot_head}{utc_years[instant.year]}{two[instant.month]}{two[instant.day]}"
            f"T{two[instant.hour]}{two[instant.minute]}{two[instant.second]}Z",
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
            no_jitter,
        )
        r.__class__ = final  # type: ignore[assignment]
        append(r)  # type: ignore[arg-type]
    return records, irregular, ordered


def counts_arithmetically(rule: Rule) -> bool:
    """Whether a COUNT rule's window is counted arithmetically (``timecontract.countwindow``)."""
    return constant_per_period(rule)


def _counted(
    spec: ScheduleSpecV1,
    rule: RscaleRule,
    zone: tzinfo,
    nominals: Iterable[datetime],
    counted_before: int,
) -> Iterator[OccurrenceRecord]:
    """Count nominal times that exist (see the module docstring) until COUNT is reached.

    ``nominals`` continue the series after ``counted_before`` existing instances (every one
    from DTSTART when ``counted_before`` is 0).
    """
    remaining = (rule.rule.count or 0) - counted_before
    resolved = _resolved(spec, zone, nominals)
    ids = IdFormatter(spec.schedule_id, spec.revision)
    for nominal_local, resolutions in resolved:
        if remaining <= 0:
            return
        if resolutions[0].reason is not Reason.GAP_SKIPPED:
            remaining -= 1
        yield from _build(spec, rule.rule, [(nominal_local, resolutions)], ids)


def _build(
    spec: ScheduleSpecV1,
    rule: Rule,
    resolved: Iterable[tuple[datetime, list[Resolution]]],
    ids: IdFormatter | None = None,
) -> Iterator[OccurrenceRecord]:
    ids = ids or IdFormatter(spec.schedule_id, spec.revision)
    until = rule.until_utc
    for nominal_local, resolutions in resolved:
        for resolution in resolutions:
            record = _record(spec, nominal_local, resolution, ids)
            # Filtered, not a stop: near a fold, nominal order and instant order differ.
            if until is None or record.placed_at_utc <= until:
                yield record


def _record(
    spec: ScheduleSpecV1, nominal_local: datetime, res: Resolution, ids: IdFormatter
) -> OccurrenceRecord:
    instant = res.instant_utc
    return _new_record(
        ids.occurrence(nominal_local, res.fold),
        None if instant is None else ids.slot(instant),
        spec.schedule_id,
        spec.revision,
        nominal_local,
        res.fold,
        instant,
        res.gap_at_utc,
        res.utc_offset,
        spec.tzdb_version,
        Disposition.SKIPPED_GAP if instant is None else Disposition.PLANNED,
        res.reason,
    )


def _record_setters() -> tuple[Callable[[OccurrenceRecord, object], None], ...]:
    names = [f.name for f in fields(OccurrenceRecord)]
    assert names[-1] == "jitter_delay" and len(names) == 13
    return tuple(getattr(OccurrenceRecord, name).__set__ for name in names)


_RECORD_SETTERS = _record_setters()
"""The slots' descriptors, in field order: a record built through them is the same object as
``OccurrenceRecord(...)`` (same fields, equality and hash, still frozen) at about half the cost
(the frozen dataclass's ``__init__`` goes through ``object.__setattr__`` once per field)."""
_NO_JITTER = timedelta(0)
assert OccurrenceRecord.__dataclass_fields__["jitter_delay"].default == _NO_JITTER


@dataclass(slots=True)
class _RecordFields:
    """:class:`OccurrenceRecord`'s slots, in its field order, without ``frozen``.

    :func:`_build_all` builds a record as one of these (the plain ``__init__`` stores each slot
    directly) and then sets its ``__class__`` to :class:`OccurrenceRecord`, which Python allows
    because the two layouts are the same (same ``__slots__``, same base); the object is then an
    ``OccurrenceRecord`` in every respect (frozen, equality, hash), at a third of the cost of the
    slot descriptors and a tenth of the frozen ``__init__``'s ``object.__setattr__`` per field.
    """

    occurrence_id: object
    logical_slot_id: object
    schedule_id: object
    revision: object
    nominal_local: object
    fold: object
    instant_utc: object
    gap_at_utc: object
    utc_offset: object
    tzdb_version: object
    disposition: object
    reason: object
    jitter_delay: object


assert _RecordFields.__slots__ == OccurrenceRecord.__slots__
assert [f.name for f in fields(_RecordFields)] == [f.name for f in fields(OccurrenceRecord)]
_EPOCH = datetime(1970, 1, 1)
_EPOCH_UTC = _EPOCH.replace(tzinfo=UTC)


def _new_record(*values: object) -> OccurrenceRecord:
    """``OccurrenceRecord(*values)`` for the twelve fields before ``jitter_delay``."""
    record = object.__new__(OccurrenceRecord)
    for setter, value in zip(_RECORD_SETTERS, (*values, _NO_JITTER), strict=True):
        setter(record, value)
    return record


def settle_collisions(records: list[OccurrenceRecord]) -> list[OccurrenceRecord]:
    """Give each logical slot to one record: a natural occurrence beats a moved one.

    Moved records (:data:`MOVED_REASONS`: a shifted gap time, a holiday move) yield to any
    record not moved that holds the slot, and among themselves the earliest nominal time
    (then fold) keeps it; the others become collisions (:func:`_collided`). Order is kept.
    """
    natural = {
        r.logical_slot_id
        for r in records
        if r.reason not in MOVED_REASONS and r.logical_slot_id is not None
    }
    moved = sorted((r for r in records if r.reason in MOVED_REASONS), key=_nominal_order)
    losers: set[OccurrenceId] = set()
    taken: set[LogicalSlotId | None] = set()
    for record in moved:
        if record.logical_slot_id in natural or record.logical_slot_id in taken:
            losers.add(record.occurrence_id)
        taken.add(record.logical_slot_id)
    if not losers:
        return records
    return [_collided(r) if r.occurrence_id in losers else r for r in records]


def _nominal_order(record: OccurrenceRecord) -> tuple[datetime, int]:
    return record.nominal_local, record.fold


def _collided(record: OccurrenceRecord) -> OccurrenceRecord:
    """A moved record whose slot another holds, recorded as a collision.

    ``GAP_SHIFT_COLLISION`` for a gap shift; ``HOLIDAY_MOVE_COLLISION`` for a holiday move, which
    keeps the instant it would have taken, as evidence.
    """
    if record.holiday is not None:
        return replace(
            record,
            logical_slot_id=None,
            disposition=Disposition.SKIPPED_HOLIDAY,
            reason=Reason.HOLIDAY_MOVE_COLLISION,
            jitter_delay=_NO_JITTER,
        )
    return replace(
        record,
        logical_slot_id=None,
        instant_utc=None,
        utc_offset=None,
        disposition=Disposition.SKIPPED_GAP,
        reason=Reason.GAP_SHIFT_COLLISION,
    )
