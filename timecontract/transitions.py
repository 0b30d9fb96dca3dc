"""Where a zone's offset can change: the transitions of one TZif file, as local-time *bands*.

``timecontract.resolve`` asks the zone (``ZoneInfo``, PEP 495) for both offsets of a nominal
local time — fold 0 and fold 1 — to tell a time that exists once from one in a gap or a fold. Far
from every transition the two always agree, so this module says where "near" is, from the same
TZif bytes the zone was built from (``timecontract.zones``: the pinned release, never the OS):

- the file's explicit transitions (RFC 8536 §3.2, the 64-bit data block of a version 2+ file),
- and, after the last of them, the POSIX TZ string of its footer (RFC 8536 §3.3) — a zone whose
  rule is still in force (New York's "EST5EDT,M3.2.0,M11.1.0") has no explicit transitions past
  2007 in the "slim" files ``tzdata`` ships; ``ZoneInfo`` computes them per year from the footer,
  and so does this module (the rule's local dates and times, as ``zoneinfo`` reads them).

A *band* is a naive local interval that contains every local time whose two offsets may differ:
around each transition ``T`` with offsets ``a`` before and ``b`` after, ``[T + min(a, b), T +
max(a, b))`` widened by :data:`MARGIN` on both sides; around each footer transition the same from
the rule's local time; and around every January 1 after the last explicit transition (``zoneinfo``
evaluates the footer per local year). Bands are a superset: outside them the resolver may take the
fold-0 offset as the only one; inside them it still asks the zone for both. The margin makes the
superset robust to the reading of the rule's times (standard vs. daylight wall clock); the
property tests compare every zone of the release with ``ZoneInfo``.

A file this module cannot read (an unknown footer form) gives no table (:func:`parse` returns
``None``) and the resolver asks the zone for both offsets everywhere, as before.
"""

from __future__ import annotations

import bisect
import calendar
import re
import struct
from dataclasses import dataclass
from datetime import datetime, timedelta, tzinfo

MARGIN = 86_400
"""Seconds added on both sides of every band (a day)."""

_EPOCH = datetime(1970, 1, 1)
_MIN_S = int((datetime.min - _EPOCH).total_seconds())
_MAX_S = int((datetime.max.replace(microsecond=0) - _EPOCH).total_seconds())
_SPAN = 3 * 86_400  # a band lies within this distance of its transition (offsets < 26 h)

_NAME = r"(?:[^<0-9:.,+-]+|<[a-zA-Z0-9+-]+>)"
_OFFSET = r"[+-]?\d{1,3}(?::\d{2}(?::\d{2})?)?"
_FOOTER = re.compile(
    rf"(?P<std>{_NAME})(?P<stdoff>{_OFFSET})"
    rf"(?:(?P<dst>{_NAME})(?P<dstoff>{_OFFSET})?,(?P<start>[^,]+),(?P<end>[^,]+))?",
    re.ASCII,
)
_RULE = re.compile(
    r"(?:M(\d{1,2})\.(\d)\.(\d)|J(\d{1,3})|(\d{1,3}))(?:/(" + _OFFSET + "))?", re.ASCII
)


def _seconds(text: str) -> int:
    sign = -1 if text.startswith("-") else 1
    parts = [int(p) for p in text.lstrip("+-").split(":")] + [0, 0]
    return sign * (parts[0] * 3600 + parts[1] * 60 + parts[2])


def _days_before_year(year: int) -> int:
    """Days from 1970-01-01 to January 1 of ``year``."""
    y = year - 1
    return y * 365 + y // 4 - y // 100 + y // 400 - 719_162


@dataclass(frozen=True, slots=True)
class _DateRule:
    """One transition date of a POSIX TZ rule and its local time (seconds; may be < 0 or > 24 h)."""

    kind: str  # "M", "J" or "n"
    month: int
    week: int
    weekday: int  # POSIX: 0 = Sunday
    day: int
    time: int

    def local_seconds(self, year: int) -> int:
        """The transition's local wall time in ``year``, as seconds from 1970-01-01 00:00 local."""
        days = _days_before_year(year)
        if self.kind == "M":
            first, length = calendar.monthrange(year, self.month)  # first: 0 = Monday
            mday = (self.weekday - (first + 1)) % 7 + 1 + (self.week - 1) * 7
            if mday > length:
                mday -= 7
            days += (datetime(year, self.month, mday) - datetime(year, 1, 1)).days
        elif self.kind == "J":  # 1..365, February 29 never counted
            days += self.day - 1 + (1 if self.day >= 60 and calendar.isleap(year) else 0)
        else:  # 0..365, February 29 counted
            days += self.day
        return days * 86_400 + self.time

    @classmethod
    def parse(cls, text: str) -> _DateRule | None:
        match = _RULE.fullmatch(text)
        if match is None:
            return None
        month, week, weekday, julian, plain, at = match.groups()
        time = 7200 if at is None else _seconds(at)
        if month is not None:
            m, w, d = int(month), int(week), int(weekday)
            if not (1 <= m <= 12 and 1 <= w <= 5 and 0 <= d <= 6):
                return None
            return cls("M", m, w, d, 0, time)
        if julian is not None:
            return cls("J", 0, 0, 0, int(julian), time) if 1 <= int(julian) <= 365 else None
        assert plain is not None
        return cls("n", 0, 0, 0, int(plain), time) if int(plain) <= 365 else None


@dataclass(frozen=True, slots=True)
class ZoneTransitions:
    """The transitions of one TZif file (seconds since 1970-01-01 UTC) and its footer rule.

    Attributes:
        times_utc: the explicit transitions, ascending.
        offsets: the UTC offset (seconds) in force from each explicit transition on.
        type_offsets: every offset the file's local time types define.
        footer_offsets: the footer's standard and daylight offsets (one value without DST).
        footer_rules: the footer's start and end dates, ``()`` without DST.

    """

    times_utc: tuple[int, ...]
    offsets: tuple[int, ...]
    type_offsets: frozenset[int]
    footer_offsets: frozenset[int]
    footer_rules: tuple[_DateRule, ...]

    def bands(self, low: datetime, high: datetime) -> list[tuple[datetime, datetime]]:
        """The bands (see the module docstring) that meet the naive local window ``[low, high]``.

        Returns:
            Disjoint ``(first, end)`` naive local intervals, ``first`` inclusive and ``end``
            exclusive, ascending; a nominal time outside all of them exists exactly once.

        """
        low_s, high_s = _to_seconds(low), _to_seconds(high)
        spans: list[tuple[int, int]] = []
        times, offsets = self.times_utc, self.offsets
        first = bisect.bisect_left(times, low_s - _SPAN)
        last = bisect.bisect_right(times, high_s + _SPAN)
        for i in range(first, last):
            after = offsets[i]
            before = (offsets[i - 1],) if i else tuple(self.type_offsets)
            spans.append(
                (times[i] + min(*before, after) - MARGIN, times[i] + max(*before, after) + MARGIN)
            )
        footer_from = times[-1] if times else _MIN_S
        if self.footer_rules and high_s + _SPAN > footer_from:
            diff = max(self.footer_offsets) - min(self.footer_offsets)
            first_year = max(_year_of(max(low_s, footer_from)) - 1, 1)
            for year in range(first_year, min(_year_of(high_s) + 1, 9999) + 1):
                jan_1 = _days_before_year(year) * 86_400
                spans.append((jan_1 - MARGIN, jan_1 + MARGIN))
                for rule in self.footer_rules:
                    at = rule.local_seconds(year)
                    spans.append((at - diff - MARGIN, at + diff + MARGIN))
        merged: list[tuple[int, int]] = []
        for start, end in sorted(spans):
            if end <= low_s or start > high_s:
                continue
            if merged and start <= merged[-1][1]:
                merged[-1] = (merged[-1][0], max(merged[-1][1], end))
            else:
                merged.append((start, end))
        return [(_to_local(start), _to_local(end)) for start, end in merged]

    def offsets_between(self, first_utc: int, last_utc: int) -> set[int]:
        """Every offset (seconds) in force at some instant of ``[first_utc, last_utc]`` — or more.

        A superset: the offset at ``first_utc``, each explicit transition's offset in the range,
        and the footer's offsets when the range reaches past the last explicit transition.
        """
        times = self.times_utc
        found: set[int] = set()
        at = bisect.bisect_right(times, first_utc)
        if at == 0:
            found |= self.type_offsets  # before the first transition: whatever zoneinfo picks
        else:
            found.add(self.offsets[at - 1])
        end = bisect.bisect_right(times, last_utc)
        found.update(self.offsets[at:end])
        if not times or last_utc >= times[-1]:
            found |= self.footer_offsets
        return found


def _to_seconds(moment: datetime) -> int:
    return int((moment - _EPOCH).total_seconds())


def _to_local(seconds: int) -> datetime:
    return _EPOCH + timedelta(seconds=min(max(seconds, _MIN_S), _MAX_S))


def _year_of(seconds: int) -> int:
    return _to_local(seconds).year


def parse(data: bytes) -> ZoneTransitions | None:
    """Read a TZif file (RFC 8536). Returns ``None`` for a file or footer it does not know."""
    if data[:4] != b"TZif":
        return None
    version = data[4:5]
    counts = struct.unpack(">6l", data[20:44])
    isutcnt, isstdcnt, leapcnt, timecnt, typecnt, charcnt = counts
    size = timecnt * 5 + typecnt * 6 + charcnt + leapcnt * 8 + isstdcnt + isutcnt
    footer = b""
    if version >= b"2":
        # Skip the version 1 block; read the 64-bit one that follows.
        start = 44 + size
        if data[start : start + 4] != b"TZif":
            return None
        isutcnt, isstdcnt, leapcnt, timecnt, typecnt, charcnt = struct.unpack(
            ">6l", data[start + 20 : start + 44]
        )
        body, width = start + 44, 8
        end = body + timecnt * 9 + typecnt * 6 + charcnt + leapcnt * 12 + isstdcnt + isutcnt
        tail = data[end:]
        if not (tail.startswith(b"\n") and tail.count(b"\n") >= 2):
            return None
        footer = tail[1 : tail.index(b"\n", 1)]
    else:
        body, width = 44, 4
    if leapcnt:
        return None  # "right/" zones count leap seconds; zoneinfo ignores them, we do not guess
    times = struct.unpack(
        f">{timecnt}{'q' if width == 8 else 'l'}", data[body : body + timecnt * width]
    )
    at = body + timecnt * width
    indices = data[at : at + timecnt]
    at += timecnt
    type_offsets = [
        struct.unpack(">l", data[at + 6 * k : at + 6 * k + 4])[0] for k in range(typecnt)
    ]
    if not type_offsets or any(index >= typecnt for index in indices):
        return None
    offsets = tuple(type_offsets[index] for index in indices)
    rules: tuple[_DateRule, ...] = ()
    if footer:
        match = _FOOTER.fullmatch(footer.decode("ascii", "replace"))
        if match is None:
            return None
        std = -_seconds(match["stdoff"])  # POSIX offsets are west-positive
        footer_offsets = frozenset({std})
        if match["dst"] is not None:
            dst = std + 3600 if match["dstoff"] is None else -_seconds(match["dstoff"])
            start_rule = _DateRule.parse(match["start"])
            end_rule = _DateRule.parse(match["end"])
            if start_rule is None or end_rule is None:
                return None
            footer_offsets = frozenset({std, dst})
            rules = (start_rule, end_rule)
    else:
        footer_offsets = frozenset({offsets[-1] if offsets else type_offsets[-1]})
    return ZoneTransitions(
        times_utc=tuple(times),
        offsets=offsets,
        type_offsets=frozenset(type_offsets),
        footer_offsets=footer_offsets,
        footer_rules=rules,
    )


def first_change(zone: tzinfo, low_utc: datetime, high_utc: datetime) -> datetime:
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
