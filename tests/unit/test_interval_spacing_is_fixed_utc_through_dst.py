"""Issue 13: ``interval`` — fixed UTC spacing from the Unix epoch plus phase, through DST.

Expected instants and wall readings are computed by hand from America/New_York's 2026
transitions (tz database: EST -05:00 until 2026-03-08T07:00Z, EDT -04:00 until
2026-11-01T06:00Z, then EST) and Temporal's IntervalSpec definition (epoch + phase + k × interval).
"""

from __future__ import annotations

import itertools
from datetime import timedelta

import pytest
from specdata import SEED_SPEC
from tcsupport import iso, offset, utc

from timecontract import INTERVAL_EPOCH_UTC, interval_instants, occurrences, parse_spec

INTERVAL_SPEC = {
    **{k: v for k, v in SEED_SPEC.items() if k != "rule"},
    "revision": 1,
    "scheduleId": "pump-check",
    "cutoverAt": "2026-01-01T00:00:00Z",
    "interval": "PT2H",
}


def rows(spec_data: dict, start: str, stop: str) -> list[tuple]:
    spec = parse_spec(spec_data)
    return [
        (iso(r.instant_utc), r.nominal_local.isoformat(), r.fold, offset(r.utc_offset))
        for r in occurrences(spec, utc(start), utc(stop))
    ]


def test_two_hourly_interval_has_no_hole_on_the_spring_forward_night() -> None:
    assert rows(INTERVAL_SPEC, "2026-03-08T02:00:00", "2026-03-08T11:00:00") == [
        ("2026-03-08T02:00:00Z", "2026-03-07T21:00:00", 0, "-05:00"),
        ("2026-03-08T04:00:00Z", "2026-03-07T23:00:00", 0, "-05:00"),
        ("2026-03-08T06:00:00Z", "2026-03-08T01:00:00", 0, "-05:00"),
        ("2026-03-08T08:00:00Z", "2026-03-08T04:00:00", 0, "-04:00"),  # 3 h of wall clock
        ("2026-03-08T10:00:00Z", "2026-03-08T06:00:00", 0, "-04:00"),
    ]


def test_half_hourly_interval_runs_through_both_readings_of_the_fold() -> None:
    data = {**INTERVAL_SPEC, "interval": "PT30M"}
    assert rows(data, "2026-11-01T05:00:00", "2026-11-01T07:01:00") == [
        ("2026-11-01T05:00:00Z", "2026-11-01T01:00:00", 0, "-04:00"),
        ("2026-11-01T05:30:00Z", "2026-11-01T01:30:00", 0, "-04:00"),
        ("2026-11-01T06:00:00Z", "2026-11-01T01:00:00", 1, "-05:00"),
        ("2026-11-01T06:30:00Z", "2026-11-01T01:30:00", 1, "-05:00"),
        ("2026-11-01T07:00:00Z", "2026-11-01T02:00:00", 0, "-05:00"),
    ]


def test_ids_come_from_the_utc_instant_and_are_distinct_in_the_fold() -> None:
    spec = parse_spec({**INTERVAL_SPEC, "interval": "PT30M"})
    records = occurrences(spec, utc("2026-11-01T05:00:00"), utc("2026-11-01T07:00:00"))
    assert [r.occurrence_id for r in records] == [
        "pump-check.r1.20261101T050000Z",
        "pump-check.r1.20261101T053000Z",
        "pump-check.r1.20261101T060000Z",
        "pump-check.r1.20261101T063000Z",
    ]
    assert [r.logical_slot_id for r in records] == [
        "pump-check@20261101T050000Z",
        "pump-check@20261101T053000Z",
        "pump-check@20261101T060000Z",
        "pump-check@20261101T063000Z",
    ]
    assert {r.reason.value for r in records} == {"ELAPSED_INTERVAL"}
    assert {r.disposition.value for r in records} == {"PLANNED"}


def test_gap_and_fold_policies_do_not_apply_to_intervals() -> None:
    base = {**INTERVAL_SPEC, "interval": "PT30M"}
    window = ("2026-03-08T05:00:00", "2026-03-08T09:00:00")
    variants = [
        rows({**base, "gapPolicy": g, "foldPolicy": f}, *window)
        for g in ("SKIP", "SHIFT_FORWARD")
        for f in ("FIRST_ONLY", "SECOND_ONLY", "BOTH")
    ]
    assert all(v == variants[0] for v in variants)
    assert len(variants[0]) == 8  # every half hour of real time, none skipped


def test_phase_offsets_the_grid_from_the_epoch() -> None:
    # Temporal IntervalSpec: every hour at :15 is interval PT1H, phase PT15M.
    data = {**INTERVAL_SPEC, "interval": "PT1H", "phase": "PT15M"}
    got = [r[0] for r in rows(data, "2026-06-01T00:00:00", "2026-06-01T03:00:00")]
    assert got == ["2026-06-01T00:15:00Z", "2026-06-01T01:15:00Z", "2026-06-01T02:15:00Z"]


def test_grid_is_anchored_at_the_unix_epoch_not_the_window() -> None:
    # 2026-01-01T00:00Z is 1767225600 s after the epoch = 98179.2 × 5 h, so the first 5-hour
    # grid point at or after it is 98180 × 18000 s = 1767240000 s = 2026-01-01T04:00:00Z
    # (`date -u -d @1767240000`).
    assert utc("1970-01-01T00:00:00") == INTERVAL_EPOCH_UTC
    data = {**INTERVAL_SPEC, "interval": "PT5H"}
    got = [r[0] for r in rows(data, "2026-01-01T00:00:00", "2026-01-01T15:00:00")]
    assert got == ["2026-01-01T04:00:00Z", "2026-01-01T09:00:00Z", "2026-01-01T14:00:00Z"]


def test_splitting_a_window_yields_the_same_instants() -> None:
    whole = list(
        interval_instants(
            timedelta(minutes=7), timedelta(0), utc("2026-03-08T00:00:00"), utc("2026-03-09")
        )
    )
    parts = [
        *interval_instants(
            timedelta(minutes=7), timedelta(0), utc("2026-03-08T00:00:00"), utc("2026-03-08T07:03")
        ),
        *interval_instants(
            timedelta(minutes=7), timedelta(0), utc("2026-03-08T07:03"), utc("2026-03-09")
        ),
    ]
    assert parts == whole
    assert all(b - a == timedelta(minutes=7) for a, b in itertools.pairwise(whole))


def test_start_and_end_bound_the_wall_clock_reading() -> None:
    data = {**INTERVAL_SPEC, "start": "2026-06-01T10:00:00", "end": "2026-06-01T13:00:00"}
    got = [r[1] for r in rows(data, "2026-06-01T00:00:00", "2026-06-02T00:00:00")]
    assert got == ["2026-06-01T10:00:00", "2026-06-01T12:00:00"]  # EDT: even UTC hours


def test_cutover_bounds_an_interval_spec_like_a_rule() -> None:
    data = {**INTERVAL_SPEC, "cutoverAt": "2026-06-01T03:00:00Z"}
    got = [r[0] for r in rows(data, "2026-06-01T00:00:00", "2026-06-01T07:00:00")]
    assert got == ["2026-06-01T04:00:00Z", "2026-06-01T06:00:00Z"]


@pytest.mark.parametrize(
    ("bad", "field"),
    [
        ({"interval": "P1M"}, "interval"),
        ({"interval": "P1Y"}, "interval"),
        ({"interval": "PT0S"}, "interval"),
        ({"interval": "PT1.5S"}, "interval"),
        ({"interval": "P3661D"}, "interval"),
        ({"phase": "PT2H"}, "phase"),
        ({"phase": "-PT1M"}, "phase"),
    ],
)
def test_bad_interval_or_phase_is_named(bad: dict, field: str) -> None:
    from timecontract import InvalidSpec

    with pytest.raises(InvalidSpec) as caught:
        parse_spec({**INTERVAL_SPEC, **bad})
    assert [p.field for p in caught.value.problems] == [field]
