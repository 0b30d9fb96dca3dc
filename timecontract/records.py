"""The time contract's records: what was decided for each nominal time, and slot ownership.

An :class:`OccurrenceRecord` is one fact of the time contract (an occurrence, or a nominal time
skipped, excluded or moved, with its reason); ``timecontract.resolve`` and
``timecontract.recurrence`` make them. Records of one revision that land on one logical slot are
settled here (:func:`settle_collisions`): a natural occurrence keeps the slot, a moved one is
recorded as a collision, never a second run (DESIGN §3).
"""

from __future__ import annotations

from dataclasses import dataclass, fields, replace
from datetime import datetime, timedelta
from enum import StrEnum
from typing import Any

from timecontract.ids import LogicalSlotId, OccurrenceId
from timecontract.iso8601 import format_duration, format_instant


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

    A subclass: only the records a calendar decided carry the holiday and the release.

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


def instant_of(record: OccurrenceRecord) -> datetime:
    """The instant of a record that has one (a planned, moved, excluded or holiday record)."""
    assert record.instant_utc is not None
    return record.instant_utc


def placed_order(r: OccurrenceRecord) -> tuple[datetime, datetime, int]:
    """The order of records: placed instant (``gapAt`` when skipped), nominal time, fold."""
    placed = r.instant_utc if r.instant_utc is not None else r.gap_at_utc
    assert placed is not None  # every record has one or the other
    return placed, r.nominal_local, r.fold


def settle_collisions(records: list[OccurrenceRecord]) -> list[OccurrenceRecord]:
    """Give each logical slot to one record: a natural occurrence beats a moved one.

    Moved records (:data:`MOVED_REASONS`: a shifted gap time, a holiday move) yield to any
    record not moved that holds the slot, and among themselves the earliest nominal time
    (then fold) keeps it; the others become collisions (:func:`collided`). Order is kept.
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
    return [collided(r) if r.occurrence_id in losers else r for r in records]


def _nominal_order(record: OccurrenceRecord) -> tuple[datetime, int]:
    return record.nominal_local, record.fold


def collided(record: OccurrenceRecord) -> OccurrenceRecord:
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
            jitter_delay=timedelta(0),
        )
    return replace(
        record,
        logical_slot_id=None,
        instant_utc=None,
        utc_offset=None,
        disposition=Disposition.SKIPPED_GAP,
        reason=Reason.GAP_SHIFT_COLLISION,
    )
