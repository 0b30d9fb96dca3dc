"""Issue 13: a COUNT rule's window costs the window — and yields exactly what the walk yields.

The reference is the walk from DTSTART (RFC 5545 §3.3.10's definition of COUNT, the path every
rule took before), forced by turning the arithmetic off; windows straddle DST gaps and folds
(America/New_York, Europe/London) and the COUNT's last instance.
"""

from __future__ import annotations

import time
from datetime import UTC, datetime, timedelta

import pytest

import timecontract.resolve as resolve
from timecontract import occurrences, parse_spec
from timecontract.fastpath import is_periodic as constant_per_period

BASE = {
    "schema": "scheduleSpec.v1",
    "scheduleId": "counted",
    "revision": 1,
    "tzdbVersion": "2026a",
    "cutoverAt": "2000-01-01T00:00:00Z",
}

CASES = [
    # (zone, rule, start)
    ("America/New_York", "FREQ=MINUTELY;INTERVAL=7;COUNT=20000", "2026-03-07T22:03:00"),
    ("America/New_York", "FREQ=HOURLY;BYMINUTE=0,30;COUNT=500", "2026-03-01T00:00:00"),
    ("America/New_York", "FREQ=HOURLY;INTERVAL=5;BYMINUTE=15;COUNT=300", "2026-02-27T07:40:00"),
    ("America/New_York", "FREQ=DAILY;BYHOUR=1,2,3;BYMINUTE=30;COUNT=400", "2026-01-01T12:00:00"),
    ("Europe/London", "FREQ=WEEKLY;BYDAY=SU,WE;BYHOUR=1;COUNT=120", "2025-12-31T00:00:00"),
    ("Europe/London", "FREQ=WEEKLY;INTERVAL=2;WKST=SU;BYDAY=MO,SU;COUNT=90", "2026-01-07T01:30:00"),
    ("America/New_York", "FREQ=SECONDLY;INTERVAL=97;COUNT=30000", "2026-03-08T01:00:00"),
    ("UTC", "FREQ=DAILY;INTERVAL=3;COUNT=50", "2026-01-01T09:00:00"),
]
WINDOWS = [
    ("2026-03-08T05:00:00", "2026-03-08T09:00:00"),  # New York spring forward (07:00Z)
    ("2026-03-29T00:00:00", "2026-03-29T03:00:00"),  # London spring forward (01:00Z)
    ("2026-11-01T04:30:00", "2026-11-01T07:30:00"),  # New York fall back (06:00Z)
    ("2026-01-01T00:00:00", "2026-01-03T00:00:00"),
    ("2026-03-14T00:00:00", "2026-03-23T00:00:00"),
    ("2026-05-01T00:00:00", "2026-06-01T00:00:00"),
    ("2027-06-01T00:00:00", "2027-06-02T00:00:00"),  # after most COUNTs ran out
]


def _utc(text: str) -> datetime:
    return datetime.fromisoformat(text).replace(tzinfo=UTC)


def _rows(records: list) -> list[tuple]:
    return [(r.occurrence_id, r.instant_utc, r.reason, r.disposition) for r in records]


@pytest.mark.parametrize("gap_policy", ["SKIP", "SHIFT_FORWARD"])
@pytest.mark.parametrize(("zone", "rule", "start"), CASES)
def test_window_equals_the_walk_from_dtstart(
    zone: str, rule: str, start: str, gap_policy: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    spec = parse_spec(
        {**BASE, "timeZone": zone, "rule": rule, "start": start, "gapPolicy": gap_policy}
    )
    assert constant_per_period(spec.parsed_rule)
    windows = [(_utc(a), _utc(b)) for a, b in WINDOWS]
    fast = [_rows(occurrences(spec, *w)) for w in windows]
    monkeypatch.setattr(resolve, "counts_arithmetically", lambda _rule: False)
    walked = [_rows(occurrences(spec, *w)) for w in windows]
    assert fast == walked
    assert any(fast)  # the cases do produce records


def test_a_window_at_the_end_of_the_count_stops_at_the_count() -> None:
    spec = parse_spec(
        {
            **BASE,
            "timeZone": "UTC",
            "rule": "FREQ=MINUTELY;COUNT=100",
            "start": "2026-01-01T00:00:00",
        }
    )
    got = occurrences(spec, _utc("2026-01-01T01:35:00"), _utc("2026-01-01T02:00:00"))
    assert [r.instant_utc for r in got] == [
        _utc("2026-01-01T01:35:00") + timedelta(minutes=i) for i in range(5)
    ]  # instances 96..100 (01:35 … 01:39)


@pytest.mark.parametrize(
    "rule",
    [
        "FREQ=MONTHLY;COUNT=10",
        "FREQ=HOURLY;BYHOUR=9;COUNT=10",
        "FREQ=DAILY;BYMONTH=1;COUNT=10",
        "FREQ=YEARLY;COUNT=3",
        "FREQ=WEEKLY;BYSETPOS=1;BYDAY=MO,TU;COUNT=4",
    ],
)
def test_rules_whose_periods_differ_keep_the_walk(rule: str) -> None:
    spec = parse_spec({**BASE, "timeZone": "UTC", "rule": rule})
    assert not constant_per_period(spec.parsed_rule)


def test_five_minutes_of_a_hundred_thousand_minutely_instances_is_fast() -> None:
    spec = parse_spec(
        {
            **BASE,
            "timeZone": "America/New_York",
            "rule": "FREQ=MINUTELY;COUNT=100000",
            "start": "2026-01-01T00:00:00",
        }
    )
    began = time.perf_counter()
    got = occurrences(spec, _utc("2026-03-10T00:00:00"), _utc("2026-03-10T00:05:00"))
    elapsed = time.perf_counter() - began
    assert len(got) == 5
    assert elapsed < 0.5, f"{elapsed:.2f} s: the window's cost must not follow DTSTART"
