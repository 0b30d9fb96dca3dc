"""The fast resolution path decides every record exactly as the straightforward one (issue 14).

``timecontract.occurrences`` resolves a rule without COUNT through ``timecontract.fastpath``:
outside the transition *bands* of the zone's TZif file (``timecontract.transitions``) it asks the
zone for the fold-0 offset only, computes instants by arithmetic, and cuts an already ordered list
by bisection. The oracle here is the straightforward path, written out from the public pieces:
``resolve_local`` (both PEP 495 offsets from ``ZoneInfo``) for *every* nominal time, the records
built one by one, collisions settled over the whole list, the window filtered and sorted. Records
are compared field by field as text (fold and tzinfo included, see ``tcsupport``).

Zones are chosen for their transitions: the usual DST (New York, London), negative DST (Dublin),
30-minute DST (Lord Howe), a 2-hour DST (Troll), footer rules at 24:00 and later (Santiago,
Jerusalem), negative rule times (Nuuk), many explicit transitions (Casablanca), a date-line
jump (Apia), and none (UTC, Kolkata).
"""

from __future__ import annotations

from datetime import UTC, datetime, timedelta
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from tcsupport import iso, offset

from timecontract import OccurrenceRecord, occurrences, parse_spec, resolve_local, zones
from timecontract.ids import logical_slot_id, occurrence_id
from timecontract.resolve import Disposition, Reason

ZONES = [
    "America/New_York",
    "Europe/London",
    "Europe/Dublin",
    "Australia/Lord_Howe",
    "Antarctica/Troll",
    "America/Santiago",
    "Asia/Jerusalem",
    "America/Nuuk",
    "Africa/Casablanca",
    "Pacific/Apia",
    "Asia/Kolkata",
    "UTC",
]
RULES = [
    ("FREQ=MINUTELY;INTERVAL={i}", timedelta(days=2)),
    ("FREQ=HOURLY;INTERVAL={i};BYMINUTE=0,15,30,45", timedelta(days=4)),
    ("FREQ=HOURLY;BYMINUTE={m}", timedelta(days=20)),
    ("FREQ=DAILY;BYHOUR=0,1,2,3,23;BYMINUTE={m}", timedelta(days=120)),
    ("FREQ=WEEKLY;BYDAY=SU,MO;BYHOUR=1,2", timedelta(days=400)),
    ("FREQ=SECONDLY;INTERVAL={s}", timedelta(hours=2)),
]


def straightforward(spec: Any, from_utc: datetime, to_utc: datetime) -> list[OccurrenceRecord]:
    """Every nominal time through ``resolve_local``; settle, filter and sort the whole list."""
    zone = zones.load(spec.time_zone, spec.tzdb_version)
    rule = spec.rscale_rule
    # A generous floating window (two days each side): records are filtered by instant below.
    low = from_utc.replace(tzinfo=None) - timedelta(days=2)
    high = to_utc.replace(tzinfo=None) + timedelta(days=2)
    built = []
    for nominal in rule.expand(spec.start, low, high):
        if spec.end is not None and nominal > spec.end:
            break
        for res in resolve_local(nominal, zone, spec.gap_policy, spec.fold_policy):
            built.append(
                OccurrenceRecord(
                    occurrence_id=occurrence_id(spec.schedule_id, spec.revision, nominal, res.fold),
                    logical_slot_id=None
                    if res.instant_utc is None
                    else logical_slot_id(spec.schedule_id, res.instant_utc),
                    schedule_id=spec.schedule_id,
                    revision=spec.revision,
                    nominal_local=nominal,
                    fold=res.fold,
                    instant_utc=res.instant_utc,
                    gap_at_utc=res.gap_at_utc,
                    utc_offset=res.utc_offset,
                    tzdb_version=spec.tzdb_version,
                    disposition=Disposition.PLANNED
                    if res.instant_utc is not None
                    else Disposition.SKIPPED_GAP,
                    reason=res.reason,
                )
            )
    natural = {r.logical_slot_id for r in built if r.reason is not Reason.GAP_SHIFTED_FORWARD}
    settled = []
    for r in built:
        if r.reason is Reason.GAP_SHIFTED_FORWARD and r.logical_slot_id in natural:
            r = OccurrenceRecord(
                **{
                    **{f: getattr(r, f) for f in r.__dataclass_fields__},
                    "logical_slot_id": None,
                    "instant_utc": None,
                    "utc_offset": None,
                    "disposition": Disposition.SKIPPED_GAP,
                    "reason": Reason.GAP_SHIFT_COLLISION,
                }
            )
        if from_utc <= r.placed_at_utc < to_utc:
            settled.append(r)
    return sorted(settled, key=lambda r: (r.placed_at_utc, r.nominal_local, r.fold))


def text(record: OccurrenceRecord) -> tuple[object, ...]:
    return (
        record.occurrence_id,
        record.logical_slot_id,
        record.nominal_local.isoformat(),
        record.nominal_local.fold,
        record.fold,
        iso(record.instant_utc),
        None if record.instant_utc is None else record.instant_utc.tzinfo is UTC,
        iso(record.gap_at_utc),
        offset(record.utc_offset),
        record.disposition,
        record.reason,
        record.jitter_delay,
    )


def transition_near(zone_name: str, year: int, fraction: float) -> datetime:
    """An instant of the zone's offset change in ``year`` (or a plain one when it has none)."""
    zone = zones.load(zone_name, "2026a")
    start = datetime(year, 1, 1, tzinfo=UTC)
    changes = []
    previous = start.astimezone(zone).utcoffset()
    for day in range(1, 367):
        moment = start + timedelta(days=day)
        current = moment.astimezone(zone).utcoffset()
        if current != previous:
            changes.append(moment)
        previous = current
    if not changes:
        return start + timedelta(days=365 * fraction)
    return changes[int(fraction * len(changes)) % len(changes)]


@settings(
    max_examples=60,
    deadline=None,
    suppress_health_check=[HealthCheck.too_slow],
)
@given(
    zone=st.sampled_from(ZONES),
    rule=st.sampled_from(RULES),
    year=st.sampled_from([1918, 1945, 1976, 1996, 2011, 2024, 2026, 2031, 2047, 2099]),
    fraction=st.floats(0, 1),
    shift=st.integers(-3 * 86_400, 3 * 86_400),
    i=st.integers(1, 90),
    m=st.integers(0, 59),
    s=st.integers(5, 600),
    gap=st.sampled_from(["SKIP", "SHIFT_FORWARD"]),
    fold=st.sampled_from(["FIRST_ONLY", "SECOND_ONLY", "BOTH"]),
    start_back=st.integers(0, 3000),
)
def test_fast_path_equals_the_straightforward_path_across_transitions(
    zone: str,
    rule: tuple[str, timedelta],
    year: int,
    fraction: float,
    shift: int,
    i: int,
    m: int,
    s: int,
    gap: str,
    fold: str,
    start_back: int,
) -> None:
    template, length = rule
    centre = transition_near(zone, year, fraction) + timedelta(seconds=shift)
    from_utc = (centre - length / 2).replace(microsecond=0)
    to_utc = from_utc + length
    start = from_utc.replace(tzinfo=None) - timedelta(days=start_back)
    spec = parse_spec(
        {
            "schema": "scheduleSpec.v1",
            "scheduleId": "fast",
            "revision": 3,
            "timeZone": zone,
            "tzdbVersion": "2026a",
            "cutoverAt": "1900-01-01T00:00:00Z",
            "rule": template.format(i=i, m=m, s=s),
            "start": start.replace(second=start.second // 10 * 10).isoformat(),
            "gapPolicy": gap,
            "foldPolicy": fold,
        }
    )
    expected = [text(r) for r in straightforward(spec, from_utc, to_utc)]
    assert [text(r) for r in occurrences(spec, from_utc, to_utc)] == expected


@pytest.mark.parametrize(
    ("rule", "years", "reasons"),
    [
        (
            "FREQ=MINUTELY;INTERVAL=30",
            1,
            # 02:00 and 02:30 shift onto 03:00 and 03:30, which keep their slots.
            {"UNAMBIGUOUS", "FOLD_FIRST", "FOLD_SECOND", "GAP_SHIFT_COLLISION"},
        ),
        ("FREQ=DAILY;BYHOUR=2;BYMINUTE=30", 10, {"UNAMBIGUOUS", "GAP_SHIFTED_FORWARD"}),
        ("FREQ=DAILY;BYHOUR=1;BYMINUTE=30", 10, {"UNAMBIGUOUS", "FOLD_FIRST", "FOLD_SECOND"}),
    ],
)
def test_bench_shaped_windows_in_new_york_equal_the_straightforward_path(
    rule: str, years: int, reasons: set[str]
) -> None:
    # The shapes of the throughput bench: windows over both transitions, folds BOTH.
    spec = parse_spec(
        {
            "schema": "scheduleSpec.v1",
            "scheduleId": "bench",
            "revision": 1,
            "timeZone": "America/New_York",
            "tzdbVersion": "2026a",
            "cutoverAt": "1990-01-01T00:00:00Z",
            "rule": rule,
            "start": "2001-01-01T00:00:00",
            "gapPolicy": "SHIFT_FORWARD",
            "foldPolicy": "BOTH",
        }
    )
    window = (datetime(2026, 1, 1, tzinfo=UTC), datetime(2026 + years, 1, 1, tzinfo=UTC))
    got = occurrences(spec, *window)
    assert [text(r) for r in got] == [text(r) for r in straightforward(spec, *window)]
    assert {r.reason.value for r in got} == reasons
