"""Hypothesis property test: 100,000 random boundary times give no duplicates and lose nothing.

Each example is one spec (a random zone from ZONES, a random rule, random gap/fold policies,
sometimes an ``end``, an ``UNTIL`` or a cutover inside the window) and one UTC window that
straddles one of that zone's UTC-offset transitions (found independently below by scanning the
pinned zone day by day from 1970 to 2037 and bisecting to the second). For every example:

- zero duplicate occurrenceIds, zero duplicate live (PLANNED) logicalSlotIds;
- every nominal time is accounted for: the records equal, one for one, those of an independent
  oracle (dateutil ``rrule`` built directly + PEP 495 offsets + the scanned transitions for gapAt
  + the documented collision, UNTIL, end and cutover rules): one record per nominal time, two for
  a fold under BOTH;
- PLANNED instants strictly increase;
- the same input gives the same output (a fresh parse, a second call);
- the window split in two (at a random instant, or exactly at the transition) gives the same
  records as the whole.

How the 100,000 is reached: a *boundary time* is a distinct nominal local time of an example
whose instant (read with the offset before the transition) lies within 24 hours of the
transition the window straddles. Each test counts the boundary times it checked and asserts its
quota; the quotas add up to 100,000 (95,000 + 4,000 + 1,000, asserted too). The examples are
derandomized (``derandomize=True``, no database), but some strategies draw from collections whose
order follows Python's per-process string hashing, so the counts vary by a few percent between
runs; the example counts (330 "focused" examples: DAILY, HOURLY, MINUTELY and SECONDLY rules whose
BYMONTH/BYMONTHDAY/BYHOUR pick the days and hours around the transition, so nearly every nominal
time is a boundary time; 180 HOURLY examples; 150 DAILY examples with BYHOUR/BYMINUTE biased to
the transition's local time) leave that much headroom above each quota. Runtime: about
30-75 s on 2 cores.

The cost is dominated by timecontract itself.
"""

from __future__ import annotations

import bisect
import functools
import itertools
from collections import Counter
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from typing import Any

from dateutil import rrule as du
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from tcsupport import iso, offset

from timecontract import occurrences, parse_spec, zones

RELEASE = "2026a"
ZONES = [
    "America/New_York",
    "Europe/London",
    "Australia/Lord_Howe",  # 30-minute DST
    "America/Santiago",  # midnight transitions
    "America/Havana",  # midnight transitions
    "Pacific/Apia",  # 2011-12-30 missing
    "Antarctica/Troll",  # 2-hour DST
    "Europe/Dublin",  # negative DST in tzdb
    "Asia/Tehran",  # DST abolished 2022
    "Asia/Kathmandu",  # +05:30 → +05:45 in 1986
    "Pacific/Chatham",  # +12:45 / +13:45
    "America/St_Johns",  # -03:30 / -02:30
    "Africa/Casablanca",  # Ramadan suspensions, negative DST since 2018
    "Europe/Moscow",  # 2011 and 2014 standard-offset changes
    "America/Caracas",  # -04:00 ↔ -04:30 in 2007 and 2016
    "Pacific/Kiritimati",  # skipped 1994-12-31
    "Pacific/Kwajalein",  # skipped 1993-08-21
    "America/Sao_Paulo",  # midnight transitions until 2019
    "Australia/Adelaide",  # +09:30 / +10:30, southern hemisphere
    "America/Adak",  # -10:00 / -09:00
]
SCAN_FROM, SCAN_TO = datetime(1970, 1, 1, tzinfo=UTC), datetime(2037, 1, 1, tzinfo=UTC)
NEAR = timedelta(hours=24)
QUOTA = {"focused": 95_000, "hourly": 4_000, "daily": 1_000}
SETTINGS: dict[str, Any] = {
    "deadline": None,
    "derandomize": True,
    "database": None,
    "suppress_health_check": [HealthCheck.too_slow, HealthCheck.data_too_large],
}


@dataclass(frozen=True)
class Transition:
    at: datetime  # aware UTC
    before: timedelta
    after: timedelta


@functools.cache
def transitions(name: str) -> tuple[Transition, ...]:
    """The zone's UTC-offset changes: scan day by day, bisect to the second."""
    zone = zones.load(name, RELEASE)
    found: list[Transition] = []
    t = SCAN_FROM
    prev = t.astimezone(zone).utcoffset()
    while t < SCAN_TO:
        nxt = t + timedelta(days=1)
        now = nxt.astimezone(zone).utcoffset()
        if now != prev:
            lo, hi = 0, 86400
            while hi - lo > 1:
                mid = (lo + hi) // 2
                if (t + timedelta(seconds=mid)).astimezone(zone).utcoffset() == prev:
                    lo = mid
                else:
                    hi = mid
            assert prev is not None and now is not None
            found.append(Transition(t + timedelta(seconds=hi), prev, now))
            prev = now
        t = nxt
    return tuple(found)


def gap_at(name: str, low: datetime, high: datetime) -> datetime:
    """The one transition instant in (low, high]."""
    instants = [tr.at for tr in transitions(name)]
    i = bisect.bisect_right(instants, low)
    assert i < len(instants) and instants[i] <= high, (name, low, high)
    assert i + 1 >= len(instants) or instants[i + 1] > high
    return instants[i]


def naive(instant: datetime) -> datetime:
    return instant.astimezone(UTC).replace(tzinfo=None)


def aware(moment: datetime) -> datetime:
    return moment.replace(tzinfo=UTC)


def stamp(moment: datetime) -> str:
    return moment.strftime("%Y%m%dT%H%M%SZ")


@dataclass
class Case:
    zone: str
    transition: Transition
    freq: str
    by: dict[str, tuple[int, ...]]
    interval: int
    start: datetime  # floating local
    end: datetime | None
    until: datetime | None  # aware UTC
    cutover: datetime  # aware UTC
    gap_policy: str
    fold_policy: str
    window: tuple[datetime, datetime]
    split: datetime
    again: bool

    def rule_text(self) -> str:
        parts = [f"FREQ={self.freq}"]
        if self.interval > 1:
            parts.append(f"INTERVAL={self.interval}")
        parts += [f"{k}={','.join(map(str, v))}" for k, v in self.by.items()]
        if self.until is not None:
            parts.append(f"UNTIL={stamp(naive(self.until))}")
        return ";".join(parts)

    def spec_data(self) -> dict[str, Any]:
        data: dict[str, Any] = {
            "schema": "scheduleSpec.v1",
            "scheduleId": "boundary-prop",
            "revision": 3,
            "timeZone": self.zone,
            "tzdbVersion": RELEASE,
            "rule": self.rule_text(),
            "start": self.start.isoformat(),
            "gapPolicy": self.gap_policy,
            "foldPolicy": self.fold_policy,
            "cutoverAt": iso(self.cutover),
        }
        if self.end is not None:
            data["end"] = self.end.isoformat()
        return data


def _seconds(draw: st.DrawFn, low: timedelta, high: timedelta) -> timedelta:
    return timedelta(seconds=draw(st.integers(int(low.total_seconds()), int(high.total_seconds()))))


def _near(draw: st.DrawFn, value: int, modulo: int, count: int) -> tuple[int, ...]:
    """1..count distinct values, biased to ``value`` and its neighbours (mod ``modulo``)."""
    pool = st.one_of(
        st.sampled_from([(value + d) % modulo for d in (-1, 0, 0, 1, 2)]),
        st.integers(0, modulo - 1),
    )
    return tuple(sorted(set(draw(st.lists(pool, min_size=1, max_size=count)))))


@st.composite
def cases(draw: st.DrawFn, family: str) -> Case:
    zone = draw(st.sampled_from(ZONES))
    trs = transitions(zone)
    tr = trs[draw(st.integers(0, len(trs) - 1))]
    local_before, local_after = naive(tr.at + tr.before), naive(tr.at + tr.after)
    by: dict[str, tuple[int, ...]] = {}
    if family == "focused":
        # A sub-daily rule that only fires on the days and hours around the transition, so nearly
        # every nominal time it yields is a boundary time.
        pad = (timedelta(hours=1), timedelta(hours=3))
        low = min(local_before, local_after) - _seconds(draw, *pad)
        high = max(local_before, local_after) + _seconds(draw, *pad)
        dates = {(low + timedelta(days=d)).date() for d in range((high - low).days + 1)}
        dates.add(high.date())
        by["BYMONTH"] = tuple(sorted({d.month for d in dates}))
        by["BYMONTHDAY"] = tuple(sorted({d.day for d in dates}))
        if high - low < timedelta(hours=23):
            hours = {(low + timedelta(hours=h)).hour for h in range((high - low).seconds // 3600)}
            by["BYHOUR"] = tuple(sorted(hours | {high.hour}))
        # Coarse FREQs with many BYMINUTE/BYSECOND values are cheap per nominal time (dateutil
        # walks MINUTELY/SECONDLY periods one by one); those FREQs still appear.
        freq = draw(st.sampled_from(["DAILY", "DAILY", "HOURLY", "MINUTELY", "SECONDLY"]))
        if freq == "SECONDLY":
            # (dateutil walks the unmatched hours second by second: keep INTERVAL large)
            interval = draw(st.sampled_from([20, 30, 59, 60]))
        elif freq == "MINUTELY":
            interval = draw(st.sampled_from([1, 1, 2]))
        else:
            interval = 1
            step = draw(st.sampled_from([1, 1, 2, 3]))
            by["BYMINUTE"] = tuple(range(draw(st.integers(0, step - 1)), 60, step))
            seconds = draw(st.lists(st.integers(0, 59), min_size=2, max_size=4))
            by["BYSECOND"] = tuple(sorted(set(seconds)))
        reach, side = (timedelta(days=4), timedelta(days=40)), timedelta(hours=30)
    elif family == "hourly":
        freq, interval = "HOURLY", draw(st.sampled_from([1, 1, 1, 2]))
        by["BYMINUTE"] = _near(draw, local_before.minute, 60, 5)
        reach, side = (timedelta(days=4), timedelta(days=40)), timedelta(hours=30)
    else:
        freq, interval = "DAILY", 1
        by["BYHOUR"] = tuple(
            sorted(
                set(_near(draw, local_before.hour, 24, 6) + _near(draw, local_after.hour, 24, 4))
            )
        )
        by["BYMINUTE"] = _near(draw, local_before.minute, 60, 4)
        reach, side = (timedelta(days=4), timedelta(days=900)), timedelta(hours=40)
    if (
        freq in {"MINUTELY", "HOURLY", "DAILY"} and "BYSECOND" not in by and draw(st.booleans())
    ):  # (SECONDLY: BYSECOND may be unreachable)
        by["BYSECOND"] = (draw(st.sampled_from([0, 0, 30, 59])),)
    window = (
        tr.at - _seconds(draw, timedelta(hours=8), side),
        tr.at + _seconds(draw, timedelta(hours=8), side),
    )
    anchor = min(local_before, local_after)
    if draw(st.integers(0, 9)) == 0:  # start inside the window
        start = anchor + _seconds(draw, -timedelta(hours=20), timedelta(hours=2))
    else:
        start = anchor - _seconds(draw, *reach)
    end = None
    if draw(st.integers(0, 3)) == 0:
        end = anchor + _seconds(draw, -timedelta(hours=20), timedelta(hours=30))
        end = max(end, start)
    until = None
    if draw(st.integers(0, 4)) == 0:
        until = aware(naive(tr.at) + _seconds(draw, -timedelta(hours=20), timedelta(hours=20)))
    cutover = datetime(1960, 1, 1, tzinfo=UTC)
    if draw(st.integers(0, 4)) == 0:
        cutover = tr.at + _seconds(draw, -timedelta(hours=20), timedelta(hours=20))
    split = (
        tr.at
        if draw(st.booleans())
        else window[0] + _seconds(draw, timedelta(0), window[1] - window[0])
    )
    return Case(
        zone=zone,
        transition=tr,
        freq=freq,
        by=by,
        interval=interval,
        start=start,
        end=end,
        until=until,
        cutover=cutover,
        gap_policy=draw(st.sampled_from(["SKIP", "SHIFT_FORWARD"])),
        fold_policy=draw(st.sampled_from(["FIRST_ONLY", "SECOND_ONLY", "BOTH"])),
        window=window,
        split=split,
        again=draw(st.integers(0, 3)) == 0,
    )


def oracle(case: Case) -> tuple[list[tuple[Any, ...]], set[datetime], int]:
    """Expected records (as rows), the boundary nominal times, and how many were gap/fold."""
    zone = zones.load(case.zone, RELEASE)
    keys = {
        "BYMONTH": "bymonth",
        "BYMONTHDAY": "bymonthday",
        "BYHOUR": "byhour",
        "BYMINUTE": "byminute",
        "BYSECOND": "bysecond",
    }
    recurrence = du.rrule(
        getattr(du, case.freq),
        dtstart=case.start,
        interval=case.interval,
        cache=False,
        **{keys[k]: v for k, v in case.by.items()},
    )
    low = naive(case.window[0]) - timedelta(days=3)
    high = naive(case.window[1]) + timedelta(days=3)
    candidates: list[tuple[datetime, int, str, datetime | None, datetime | None]] = []
    for n in recurrence.xafter(max(low, case.start), inc=True):
        if n > high or (case.end is not None and n > case.end):
            break
        o0 = n.replace(tzinfo=zone, fold=0).utcoffset()
        o1 = n.replace(tzinfo=zone, fold=1).utcoffset()
        assert o0 is not None and o1 is not None
        if o0 == o1:
            candidates.append((n, 0, "UNAMBIGUOUS", aware(n - o0), None))
        elif o0 > o1:  # fold
            if case.fold_policy != "SECOND_ONLY":
                candidates.append((n, 0, "FOLD_FIRST", aware(n - o0), None))
            if case.fold_policy != "FIRST_ONLY":
                candidates.append((n, 1, "FOLD_SECOND", aware(n - o1), None))
        else:  # gap
            g = gap_at(case.zone, aware(n - o1), aware(n - o0))
            if case.gap_policy == "SKIP":
                candidates.append((n, 0, "GAP_SKIPPED", None, g))
            else:
                candidates.append((n, 0, "GAP_SHIFTED_FORWARD", aware(n - o0), g))
    if case.until is not None:
        candidates = [c for c in candidates if (c[3] or c[4]) <= case.until]
    natural = {c[3] for c in candidates if c[2] != "GAP_SHIFTED_FORWARD"}
    rows = []
    boundary: set[datetime] = set()
    special = 0
    start_at = max(case.window[0], case.cutover)
    for n, fold, reason, instant, gap in candidates:
        if reason == "GAP_SHIFTED_FORWARD" and instant in natural:
            reason, instant = "GAP_SHIFT_COLLISION", None
        placed = instant or gap
        assert placed is not None
        if not start_at <= placed < case.window[1]:
            continue
        rows.append(
            (
                n.isoformat(),
                fold,
                reason,
                iso(instant),
                None if instant is None else offset(instant.astimezone(zone).utcoffset()),
                iso(gap),
                iso(placed),
            )
        )
        o0 = n.replace(tzinfo=zone, fold=0).utcoffset()
        assert o0 is not None
        if abs(aware(n - o0) - case.transition.at) <= NEAR and n not in boundary:
            boundary.add(n)
            special += reason != "UNAMBIGUOUS"
    return sorted(rows), boundary, special


def rows_of(records) -> list[tuple[Any, ...]]:
    return [
        (
            r.nominal_local.isoformat(),
            r.fold,
            r.reason.value,
            iso(r.instant_utc),
            offset(r.utc_offset),
            iso(r.gap_at_utc),
            iso(r.placed_at_utc),
        )
        for r in records
    ]


def check(case: Case, tally: Counter[str]) -> None:
    spec = parse_spec(case.spec_data())
    start, stop = case.window
    records = occurrences(spec, start, stop)
    as_json = [r.to_json() for r in records]

    # Zero duplicate occurrenceIds, zero duplicate live logicalSlotIds.
    ids = [r.occurrence_id for r in records]
    assert len(ids) == len(set(ids))
    live = [r.logical_slot_id for r in records if r.disposition.value == "PLANNED"]
    assert None not in live
    assert len(live) == len(set(live))
    assert all(r.logical_slot_id is None for r in records if r.disposition.value != "PLANNED")
    # PLANNED instants strictly increasing; every record placed in order.
    planned = [naive(r.instant_utc) for r in records if r.instant_utc is not None]
    assert all(a < b for a, b in itertools.pairwise(planned))
    placed = [naive(r.placed_at_utc) for r in records]
    assert placed == sorted(placed)
    # Every nominal time accounted for: once, or twice for a fold under BOTH.
    expected, boundary, special = oracle(case)
    assert sorted(rows_of(records)) == expected
    per_nominal = Counter(r.nominal_local for r in records)
    for record in records:
        if per_nominal[record.nominal_local] == 2:
            assert case.fold_policy == "BOTH" and record.reason.value.startswith("FOLD_")
        else:
            assert per_nominal[record.nominal_local] == 1
    # Same input → same output.
    if case.again:
        assert [r.to_json() for r in occurrences(parse_spec(case.spec_data()), start, stop)] == (
            as_json
        )
    # A window split in two gives the same records as the whole.
    left = occurrences(spec, start, case.split)
    right = occurrences(spec, case.split, stop)
    assert [r.to_json() for r in left + right] == as_json

    tally["boundary"] += len(boundary)
    tally["gap_or_fold"] += special
    tally["examples"] += 1


def run_family(family: str, examples: int) -> Counter[str]:
    tally: Counter[str] = Counter()

    @settings(max_examples=examples, **SETTINGS)
    @given(cases(family))
    def run(case: Case) -> None:
        check(case, tally)

    run()
    return tally


def test_focused_rules_across_transitions_lose_nothing_and_duplicate_nothing() -> None:
    tally = run_family("focused", 330)
    assert tally["boundary"] >= QUOTA["focused"], tally
    assert tally["gap_or_fold"] >= 20_000, tally


def test_hourly_rules_across_transitions_lose_nothing_and_duplicate_nothing() -> None:
    tally = run_family("hourly", 180)
    assert tally["boundary"] >= QUOTA["hourly"], tally
    assert tally["gap_or_fold"] >= 400, tally


def test_daily_rules_across_transitions_lose_nothing_and_duplicate_nothing() -> None:
    tally = run_family("daily", 150)
    assert tally["boundary"] >= QUOTA["daily"], tally
    assert tally["gap_or_fold"] >= 80, tally


def test_quotas_add_up_to_100000_boundary_times() -> None:
    assert sum(QUOTA.values()) >= 100_000


def test_transition_scan_finds_the_hand_checked_new_york_2026_transitions() -> None:
    found = [
        (iso(t.at), offset(t.before), offset(t.after))
        for t in transitions("America/New_York")
        if t.at.year == 2026
    ]
    assert found == [
        ("2026-03-08T07:00:00Z", "-05:00", "-04:00"),
        ("2026-11-01T06:00:00Z", "-04:00", "-05:00"),
    ]


def test_every_zone_has_a_transition_to_straddle() -> None:
    assert all(transitions(name) for name in ZONES)
