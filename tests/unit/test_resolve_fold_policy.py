"""DESIGN §3 folds: FIRST_ONLY → the earlier instant (fold 0), SECOND_ONLY → the later (fold 1),
BOTH → two occurrences.

Transitions worked by hand from the tzdb rules (instant, offset before → after):
  America/New_York    2026-11-01 06:00Z  -04:00 → -05:00   (01:00–02:00 local twice)
  Europe/London       2026-10-25 01:00Z  +01:00 → +00:00   (01:00–02:00 twice)
  Europe/Dublin       2026-10-25 01:00Z  +01:00 → +00:00   (negative DST in tzdb: same offsets)
  Australia/Lord_Howe 2026-04-04 15:00Z  +11:00 → +10:30   (01:30–02:00 twice, 30 minutes)
  Antarctica/Troll    2026-10-25 01:00Z  +02:00 → +00:00   (01:00–03:00 twice, two hours)
  America/Havana      2026-11-01 05:00Z  -04:00 → -05:00   (00:00–01:00 twice)
  America/Santiago    2026-04-05 03:00Z  -03:00 → -04:00   (04-04 23:00–24:00 twice)
"""

from datetime import datetime

import pytest
from tcsupport import row, triple, utc

from timecontract import FoldPolicy, GapPolicy, occurrences, resolve_local, zones

FOLDS = [
    # zone, nominal local, first (instant, offset), second (instant, offset)
    (
        "America/New_York",
        "2026-11-01T01:30:00",
        ("2026-11-01T05:30:00Z", "-04:00"),
        ("2026-11-01T06:30:00Z", "-05:00"),
    ),
    (
        "America/New_York",
        "2026-11-01T01:00:00",
        ("2026-11-01T05:00:00Z", "-04:00"),
        ("2026-11-01T06:00:00Z", "-05:00"),
    ),
    (
        "America/New_York",
        "2026-11-01T01:59:59",
        ("2026-11-01T05:59:59Z", "-04:00"),
        ("2026-11-01T06:59:59Z", "-05:00"),
    ),
    (
        "Europe/London",
        "2026-10-25T01:30:00",
        ("2026-10-25T00:30:00Z", "+01:00"),
        ("2026-10-25T01:30:00Z", "+00:00"),
    ),
    (
        "Europe/Dublin",
        "2026-10-25T01:30:00",
        ("2026-10-25T00:30:00Z", "+01:00"),
        ("2026-10-25T01:30:00Z", "+00:00"),
    ),
    (
        "Australia/Lord_Howe",
        "2026-04-05T01:45:00",
        ("2026-04-04T14:45:00Z", "+11:00"),
        ("2026-04-04T15:15:00Z", "+10:30"),
    ),
    (
        "Antarctica/Troll",
        "2026-10-25T02:00:00",
        ("2026-10-25T00:00:00Z", "+02:00"),
        ("2026-10-25T02:00:00Z", "+00:00"),
    ),
    (
        "America/Havana",
        "2026-11-01T00:30:00",
        ("2026-11-01T04:30:00Z", "-04:00"),
        ("2026-11-01T05:30:00Z", "-05:00"),
    ),
    (
        "America/Santiago",
        "2026-04-04T23:30:00",
        ("2026-04-05T02:30:00Z", "-03:00"),
        ("2026-04-05T03:30:00Z", "-04:00"),
    ),
]


def resolve(zone_name: str, local: str, policy: FoldPolicy) -> list[tuple]:
    zone = zones.load(zone_name, "2026a")
    nominal = datetime.fromisoformat(local)
    return [triple(r) for r in resolve_local(nominal, zone, GapPolicy.SKIP, policy)]


@pytest.mark.parametrize(("zone_name", "local", "first", "second"), FOLDS)
def test_fold_first_only_yields_the_earlier_instant_with_ordinal_0(
    zone_name: str, local: str, first: tuple, second: tuple
) -> None:
    assert resolve(zone_name, local, FoldPolicy.FIRST_ONLY) == [(*first, 0)]


@pytest.mark.parametrize(("zone_name", "local", "first", "second"), FOLDS)
def test_fold_second_only_yields_the_later_instant_with_ordinal_1(
    zone_name: str, local: str, first: tuple, second: tuple
) -> None:
    assert resolve(zone_name, local, FoldPolicy.SECOND_ONLY) == [(*second, 1)]


@pytest.mark.parametrize(("zone_name", "local", "first", "second"), FOLDS)
def test_fold_both_yields_two_occurrences_earlier_first(
    zone_name: str, local: str, first: tuple, second: tuple
) -> None:
    assert resolve(zone_name, local, FoldPolicy.BOTH) == [(*first, 0), (*second, 1)]


@pytest.mark.parametrize(
    ("zone_name", "local", "expected"),
    [
        ("America/New_York", "2026-11-01T00:59:59", ("2026-11-01T04:59:59Z", "-04:00", 0)),
        ("America/New_York", "2026-11-01T02:00:00", ("2026-11-01T07:00:00Z", "-05:00", 0)),
        ("Antarctica/Troll", "2026-10-25T03:00:00", ("2026-10-25T03:00:00Z", "+00:00", 0)),
        ("Antarctica/Troll", "2026-10-25T00:59:59", ("2026-10-24T22:59:59Z", "+02:00", 0)),
    ],
)
def test_time_next_to_a_fold_exists_once(zone_name: str, local: str, expected: tuple) -> None:
    for policy in FoldPolicy:
        assert resolve(zone_name, local, policy) == [expected]


def test_fold_both_yields_two_occurrences_one_hour_apart_utc(spec_factory) -> None:
    spec = spec_factory(
        rule="FREQ=DAILY;BYHOUR=1;BYMINUTE=30", foldPolicy="BOTH", cutoverAt="2026-01-01T00:00:00Z"
    )
    records = occurrences(spec, utc("2026-11-01T00:00:00"), utc("2026-11-02T00:00:00"))
    assert [row(r) for r in records] == [
        ("2026-11-01T01:30:00", 0, "2026-11-01T05:30:00Z", "-04:00", None, "PLANNED", "FOLD_FIRST"),
        (
            "2026-11-01T01:30:00",
            1,
            "2026-11-01T06:30:00Z",
            "-05:00",
            None,
            "PLANNED",
            "FOLD_SECOND",
        ),
    ]
    assert [r.occurrence_id for r in records] == [
        "daily-ops-summary.r7.20261101T013000.f0",
        "daily-ops-summary.r7.20261101T013000.f1",
    ]
    assert [r.logical_slot_id for r in records] == [
        "daily-ops-summary@20261101T053000Z",
        "daily-ops-summary@20261101T063000Z",
    ]


def test_fold_second_only_occurrence_id_carries_ordinal_1(spec_factory) -> None:
    spec = spec_factory(
        rule="FREQ=DAILY;BYHOUR=1;BYMINUTE=30",
        foldPolicy="SECOND_ONLY",
        cutoverAt="2026-01-01T00:00:00Z",
    )
    [record] = occurrences(spec, utc("2026-11-01T00:00:00"), utc("2026-11-02T00:00:00"))
    assert record.occurrence_id == "daily-ops-summary.r7.20261101T013000.f1"
    assert triple(record) == ("2026-11-01T06:30:00Z", "-05:00", 1)


@pytest.mark.parametrize(
    ("policy", "expected"),
    [
        ("FIRST_ONLY", [("00:00", 0, "04:00"), ("01:00", 0, "05:00"), ("02:00", 0, "07:00")]),
        ("SECOND_ONLY", [("00:00", 0, "04:00"), ("01:00", 1, "06:00"), ("02:00", 0, "07:00")]),
        (
            "BOTH",
            [
                ("00:00", 0, "04:00"),
                ("01:00", 0, "05:00"),
                ("01:00", 1, "06:00"),
                ("02:00", 0, "07:00"),
            ],
        ),
    ],
)
def test_hourly_rule_across_fall_back_under_each_fold_policy(
    spec_factory, policy: str, expected: list
) -> None:
    spec = spec_factory(
        rule="FREQ=HOURLY;BYMINUTE=0", foldPolicy=policy, cutoverAt="2026-01-01T00:00:00Z"
    )
    records = occurrences(spec, utc("2026-11-01T04:00:00"), utc("2026-11-01T07:30:00"))
    got = [
        (r.nominal_local.strftime("%H:%M"), r.fold, r.instant_utc.strftime("%H:%M"))
        for r in records
    ]
    assert got == expected
