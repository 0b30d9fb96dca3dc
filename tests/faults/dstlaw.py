"""America/New_York in 2027 by the US DST law — an expectation independent of ``timecontract``.

The law (Energy Policy Act of 2005): EST is UTC-5, EDT is UTC-4. DST starts on the second Sunday
of March at 02:00 local standard time (2027-03-14: 02:00 EST → 03:00 EDT, at 07:00Z) and ends on
the first Sunday of November at 02:00 local daylight time (2027-11-07: 02:00 EDT → 01:00 EST, at
06:00Z). So on 2027-03-14 local times [02:00, 03:00) do not exist, and on 2027-11-07 local times
[01:00, 02:00) happen twice. Valid for local times in 2027 only, which is all the tests ask.

From there, the seed's policies (DESIGN §3) give each nominal local time its records:

- exists once → one occurrence (fold 0, reason ``UNAMBIGUOUS``);
- gap, ``SKIP`` → a ``SKIPPED_GAP`` record, no instant, ``gapAt`` = the transition instant;
- gap, ``SHIFT_FORWARD`` → the local time read with the offset before the gap (RFC 5545 §3.3.5),
  reason ``GAP_SHIFTED_FORWARD``, ``gapAt`` kept; if that instant is a natural occurrence's, the
  natural one keeps the slot and the shifted one is ``SKIPPED_GAP`` / ``GAP_SHIFT_COLLISION``;
- fold: ``FIRST_ONLY`` → fold 0 (EDT), ``SECOND_ONLY`` → fold 1 (EST), ``BOTH`` → both.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta

EST = timedelta(hours=-5)
EDT = timedelta(hours=-4)
SPRING_LOCAL = (datetime(2027, 3, 14, 2), datetime(2027, 3, 14, 3))
SPRING_AT_UTC = datetime(2027, 3, 14, 7, tzinfo=UTC)
FALL_LOCAL = (datetime(2027, 11, 7, 1), datetime(2027, 11, 7, 2))
FALL_AT_UTC = datetime(2027, 11, 7, 6, tzinfo=UTC)


@dataclass(frozen=True)
class Expected:
    """One record the ledger should hold (``instant_utc`` None for a skipped one)."""

    occurrence_id: str
    state: str
    instant_utc: datetime | None
    gap_at_utc: datetime | None
    utc_offset: timedelta | None
    reason: str

    @property
    def placed_utc(self) -> datetime:
        """Where the record sits in time: its instant, else its ``gapAt``."""
        placed = self.instant_utc or self.gap_at_utc
        assert placed is not None
        return placed

    @property
    def logical_slot_id(self) -> str | None:
        """``scheduleId@instant`` for a planned record (DESIGN §3), else None."""
        if self.instant_utc is None:
            return None
        return f"{self.occurrence_id.split('.')[0]}@{self.instant_utc:%Y%m%dT%H%M%SZ}"


def _at(local: datetime, offset: timedelta) -> datetime:
    return (local - offset).replace(tzinfo=UTC)


def offsets(local: datetime) -> list[timedelta]:
    """The offsets at which ``local`` exists: none (gap), one, or two (fold, earlier first)."""
    assert local.year == 2027, "the law is written out for 2027 only"
    if SPRING_LOCAL[0] <= local < SPRING_LOCAL[1]:
        return []
    if FALL_LOCAL[0] <= local < FALL_LOCAL[1]:
        return [EDT, EST]
    if SPRING_LOCAL[1] <= local < FALL_LOCAL[0]:
        return [EDT]
    return [EST]


def occurrence_id(schedule_id: str, local: datetime, fold: int) -> str:
    """``<scheduleId>.r1.<YYYYMMDDTHHMMSS>.f<fold>`` (revision 1)."""
    return f"{schedule_id}.r1.{local:%Y%m%dT%H%M%S}.f{fold}"


def records(
    schedule_id: str, nominals: Iterable[datetime], gap_policy: str, fold_policy: str
) -> list[Expected]:
    """Every record of ``nominals`` (naive local times) under the two policies."""
    natural: list[Expected] = []
    shifted: list[Expected] = []
    for local in nominals:
        found = offsets(local)
        if not found:
            gap_at = SPRING_AT_UTC
            if gap_policy == "SKIP":
                natural.append(
                    Expected(
                        occurrence_id(schedule_id, local, 0),
                        "SKIPPED_GAP",
                        None,
                        gap_at,
                        None,
                        "GAP_SKIPPED",
                    )
                )
            else:
                instant = _at(local, EST)  # read with the offset before the gap
                shifted.append(
                    Expected(
                        occurrence_id(schedule_id, local, 0),
                        "PLANNED",
                        instant,
                        gap_at,
                        EDT,
                        "GAP_SHIFTED_FORWARD",
                    )
                )
        elif len(found) == 1:
            natural.append(
                Expected(
                    occurrence_id(schedule_id, local, 0),
                    "PLANNED",
                    _at(local, found[0]),
                    None,
                    found[0],
                    "UNAMBIGUOUS",
                )
            )
        else:
            folds = {"FIRST_ONLY": [0], "SECOND_ONLY": [1], "BOTH": [0, 1]}[fold_policy]
            for fold in folds:
                natural.append(
                    Expected(
                        occurrence_id(schedule_id, local, fold),
                        "PLANNED",
                        _at(local, found[fold]),
                        None,
                        found[fold],
                        "FOLD_FIRST" if fold == 0 else "FOLD_SECOND",
                    )
                )
    taken = {r.instant_utc for r in natural if r.instant_utc is not None}
    for record in shifted:
        if record.instant_utc in taken:
            record = Expected(
                record.occurrence_id,
                "SKIPPED_GAP",
                None,
                record.gap_at_utc,
                None,
                "GAP_SHIFT_COLLISION",
            )
        natural.append(record)
    return sorted(natural, key=lambda r: (r.placed_utc, r.occurrence_id))


def daily(at_hour: int, at_minute: int, first: datetime, days: int) -> list[datetime]:
    """Local ``at_hour:at_minute`` on ``days`` consecutive days from ``first``'s date."""
    start = first.replace(hour=at_hour, minute=at_minute, second=0, microsecond=0)
    return [start + timedelta(days=i) for i in range(days)]


def hourly(at_minute: int, first: datetime, hours: int) -> list[datetime]:
    """Local ``HH:at_minute`` for ``hours`` consecutive local hours from ``first``'s hour."""
    start = first.replace(minute=at_minute, second=0, microsecond=0)
    return [start + timedelta(hours=i) for i in range(hours)]
