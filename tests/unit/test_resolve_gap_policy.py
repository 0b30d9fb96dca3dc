"""DESIGN §3 gaps: SKIP → SKIPPED_GAP (no instant, gapAt = the transition); SHIFT_FORWARD → the
RFC 5545 §3.3.5 instant (the local time read with the offset before the gap).

Transitions worked by hand from the tzdb rules (instant, offset before → after):
  America/New_York    2026-03-08 07:00Z  -05:00 → -04:00   (02:00 → 03:00 local)
  America/New_York    2027-03-14 07:00Z  -05:00 → -04:00
  Australia/Lord_Howe 2026-10-03 15:30Z  +10:30 → +11:00   (02:00 → 02:30 local, 30 minutes)
  America/Havana      2026-03-08 05:00Z  -05:00 → -04:00   (00:00 → 01:00: midnight missing)
  America/Santiago    2026-09-06 04:00Z  -04:00 → -03:00   (00:00 → 01:00: midnight missing)
  Antarctica/Troll    2026-03-29 01:00Z  +00:00 → +02:00   (01:00 → 03:00, two hours)
  Europe/London       2026-03-29 01:00Z  +00:00 → +01:00
  Pacific/Apia        2011-12-30 10:00Z  -10:00 → +14:00   (the whole of 2011-12-30 missing)
  Asia/Tehran         2022-03-21 20:30Z  +03:30 → +04:30   (last DST start; abolished after 2022)
"""

from datetime import datetime

import pytest
from tcsupport import iso, row, triple, utc

from timecontract import FoldPolicy, GapPolicy, occurrences, resolve_local, zones

GAPS = [
    # zone, nominal local, gapAt, SHIFT_FORWARD (instant, offset)
    (
        "America/New_York",
        "2026-03-08T02:30:00",
        "2026-03-08T07:00:00Z",
        "2026-03-08T07:30:00Z",
        "-04:00",
    ),
    (
        "America/New_York",
        "2026-03-08T02:00:00",
        "2026-03-08T07:00:00Z",
        "2026-03-08T07:00:00Z",
        "-04:00",
    ),
    (
        "America/New_York",
        "2026-03-08T02:59:59",
        "2026-03-08T07:00:00Z",
        "2026-03-08T07:59:59Z",
        "-04:00",
    ),
    (
        "America/New_York",
        "2027-03-14T02:30:00",
        "2027-03-14T07:00:00Z",
        "2027-03-14T07:30:00Z",
        "-04:00",
    ),
    (
        "Australia/Lord_Howe",
        "2026-10-04T02:15:00",
        "2026-10-03T15:30:00Z",
        "2026-10-03T15:45:00Z",
        "+11:00",
    ),
    (
        "America/Havana",
        "2026-03-08T00:00:00",
        "2026-03-08T05:00:00Z",
        "2026-03-08T05:00:00Z",
        "-04:00",
    ),
    (
        "America/Santiago",
        "2026-09-06T00:00:00",
        "2026-09-06T04:00:00Z",
        "2026-09-06T04:00:00Z",
        "-03:00",
    ),
    (
        "Antarctica/Troll",
        "2026-03-29T02:00:00",
        "2026-03-29T01:00:00Z",
        "2026-03-29T02:00:00Z",
        "+02:00",
    ),
    (
        "Antarctica/Troll",
        "2026-03-29T01:00:00",
        "2026-03-29T01:00:00Z",
        "2026-03-29T01:00:00Z",
        "+02:00",
    ),
    (
        "Europe/London",
        "2026-03-29T01:30:00",
        "2026-03-29T01:00:00Z",
        "2026-03-29T01:30:00Z",
        "+01:00",
    ),
    (
        "Pacific/Apia",
        "2011-12-30T12:00:00",
        "2011-12-30T10:00:00Z",
        "2011-12-30T22:00:00Z",
        "+14:00",
    ),
    (
        "Asia/Tehran",
        "2022-03-22T00:30:00",
        "2022-03-21T20:30:00Z",
        "2022-03-21T21:00:00Z",
        "+04:30",
    ),
]


@pytest.mark.parametrize(("zone_name", "local", "gap_at", "shifted", "shifted_offset"), GAPS)
def test_gap_time_under_skip_has_no_instant_and_gap_at_the_transition(
    zone_name: str, local: str, gap_at: str, shifted: str, shifted_offset: str
) -> None:
    zone = zones.load(zone_name, "2026a")
    [res] = resolve_local(
        datetime.fromisoformat(local), zone, GapPolicy.SKIP, FoldPolicy.FIRST_ONLY
    )
    assert triple(res) == (None, None, 0)
    assert iso(res.gap_at_utc) == gap_at
    assert res.reason.value == "GAP_SKIPPED"


@pytest.mark.parametrize(("zone_name", "local", "gap_at", "shifted", "shifted_offset"), GAPS)
def test_gap_time_under_shift_forward_is_read_with_the_offset_before_the_gap(
    zone_name: str, local: str, gap_at: str, shifted: str, shifted_offset: str
) -> None:
    zone = zones.load(zone_name, "2026a")
    [res] = resolve_local(
        datetime.fromisoformat(local), zone, GapPolicy.SHIFT_FORWARD, FoldPolicy.BOTH
    )
    assert triple(res) == (shifted, shifted_offset, 0)
    assert iso(res.gap_at_utc) == gap_at
    assert res.reason.value == "GAP_SHIFTED_FORWARD"


@pytest.mark.parametrize(
    ("zone_name", "local", "expected"),
    [
        # Just outside the New York gap [02:00, 03:00) on 2026-03-08.
        ("America/New_York", "2026-03-08T01:59:59", ("2026-03-08T06:59:59Z", "-05:00", 0)),
        ("America/New_York", "2026-03-08T03:00:00", ("2026-03-08T07:00:00Z", "-04:00", 0)),
        # Lord Howe's 30-minute gap [02:00, 02:30).
        ("Australia/Lord_Howe", "2026-10-04T02:30:00", ("2026-10-03T15:30:00Z", "+11:00", 0)),
        ("Australia/Lord_Howe", "2026-10-04T01:59:59", ("2026-10-03T15:29:59Z", "+10:30", 0)),
        # Apia: 2011-12-29 23:59:59 -10:00 is followed by 2011-12-31 00:00:00 +14:00.
        ("Pacific/Apia", "2011-12-29T23:59:59", ("2011-12-30T09:59:59Z", "-10:00", 0)),
        ("Pacific/Apia", "2011-12-31T00:00:00", ("2011-12-30T10:00:00Z", "+14:00", 0)),
        # Tehran abolished DST: 2023-03-22 00:30 exists once at +03:30.
        ("Asia/Tehran", "2023-03-22T00:30:00", ("2023-03-21T21:00:00Z", "+03:30", 0)),
        # A zone without DST.
        ("Asia/Kolkata", "2026-03-08T02:30:00", ("2026-03-07T21:00:00Z", "+05:30", 0)),
    ],
)
def test_time_next_to_a_gap_exists_once(zone_name: str, local: str, expected: tuple) -> None:
    zone = zones.load(zone_name, "2026a")
    for gap_policy in GapPolicy:
        for fold_policy in FoldPolicy:
            [res] = resolve_local(datetime.fromisoformat(local), zone, gap_policy, fold_policy)
            assert triple(res) == expected
            assert res.gap_at_utc is None
            assert res.reason.value == "UNAMBIGUOUS"


def test_seed_schedule_records_2027_03_14_0230_as_skipped_gap(spec_factory) -> None:
    spec = spec_factory()
    records = occurrences(spec, utc("2027-03-13T00:00:00"), utc("2027-03-16T00:00:00"))
    assert [row(r) for r in records] == [
        (
            "2027-03-13T02:30:00",
            0,
            "2027-03-13T07:30:00Z",
            "-05:00",
            None,
            "PLANNED",
            "UNAMBIGUOUS",
        ),
        (
            "2027-03-14T02:30:00",
            0,
            None,
            None,
            "2027-03-14T07:00:00Z",
            "SKIPPED_GAP",
            "GAP_SKIPPED",
        ),
        (
            "2027-03-15T02:30:00",
            0,
            "2027-03-15T06:30:00Z",
            "-04:00",
            None,
            "PLANNED",
            "UNAMBIGUOUS",
        ),
    ]
    skipped = records[1]
    assert skipped.logical_slot_id is None
    assert skipped.occurrence_id == "daily-ops-summary.r7.20270314T023000.f0"
    assert skipped.to_json()["instant"] is None
    assert skipped.to_json()["gapAt"] == "2027-03-14T07:00:00Z"


def test_shift_forward_record_holds_the_slot_of_its_shifted_instant(spec_factory) -> None:
    spec = spec_factory(gapPolicy="SHIFT_FORWARD", cutoverAt="2026-01-01T00:00:00Z")
    [record] = occurrences(spec, utc("2026-03-08T07:00:00"), utc("2026-03-08T08:00:00"))
    assert row(record) == (
        "2026-03-08T02:30:00",
        0,
        "2026-03-08T07:30:00Z",
        "-04:00",
        "2026-03-08T07:00:00Z",
        "PLANNED",
        "GAP_SHIFTED_FORWARD",
    )
    assert record.logical_slot_id == "daily-ops-summary@20260308T073000Z"


def test_apia_missing_day_under_skip_is_one_skipped_record(spec_factory) -> None:
    spec = spec_factory(
        timeZone="Pacific/Apia", rule="FREQ=DAILY;BYHOUR=12", cutoverAt="2011-01-01T00:00:00Z"
    )
    records = occurrences(spec, utc("2011-12-28T00:00:00"), utc("2012-01-01T12:00:00"))
    assert [
        (r.nominal_local.isoformat(), iso(r.placed_at_utc), r.disposition.value) for r in records
    ] == [
        ("2011-12-28T12:00:00", "2011-12-28T22:00:00Z", "PLANNED"),
        ("2011-12-29T12:00:00", "2011-12-29T22:00:00Z", "PLANNED"),
        ("2011-12-30T12:00:00", "2011-12-30T10:00:00Z", "SKIPPED_GAP"),
        ("2011-12-31T12:00:00", "2011-12-30T22:00:00Z", "PLANNED"),
        ("2012-01-01T12:00:00", "2011-12-31T22:00:00Z", "PLANNED"),
    ]
