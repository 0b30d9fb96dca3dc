"""RFC 5545 §3.3.10 / issue 2: COUNT counts instances that exist. A gap time under SKIP is not
counted; under SHIFT_FORWARD the shifted instance counts (also when it then collides); a fold
counts once whatever the fold policy. New York 2026-03-08 07:00Z and 2026-11-01 06:00Z."""

from tcsupport import row, utc

from timecontract import occurrences


def records_of(spec_factory, **overrides):
    spec = spec_factory(cutoverAt="2026-01-01T00:00:00Z", **overrides)
    return occurrences(spec, utc("2026-01-01T00:00:00"), utc("2027-01-01T00:00:00"))


def summary(records) -> list[tuple[str, int, str]]:
    return [(r.nominal_local.isoformat(), r.fold, r.reason.value) for r in records]


def test_count_does_not_count_a_skipped_gap_time(spec_factory) -> None:
    records = records_of(
        spec_factory,
        rule="FREQ=DAILY;BYHOUR=2;BYMINUTE=30;COUNT=3",
        start="2026-03-06T02:30:00",
        gapPolicy="SKIP",
    )
    assert summary(records) == [
        ("2026-03-06T02:30:00", 0, "UNAMBIGUOUS"),
        ("2026-03-07T02:30:00", 0, "UNAMBIGUOUS"),
        ("2026-03-08T02:30:00", 0, "GAP_SKIPPED"),
        ("2026-03-09T02:30:00", 0, "UNAMBIGUOUS"),
    ]


def test_count_counts_a_shifted_gap_time(spec_factory) -> None:
    records = records_of(
        spec_factory,
        rule="FREQ=DAILY;BYHOUR=2;BYMINUTE=30;COUNT=3",
        start="2026-03-06T02:30:00",
        gapPolicy="SHIFT_FORWARD",
    )
    assert [row(r)[:3] for r in records] == [
        ("2026-03-06T02:30:00", 0, "2026-03-06T07:30:00Z"),
        ("2026-03-07T02:30:00", 0, "2026-03-07T07:30:00Z"),
        ("2026-03-08T02:30:00", 0, "2026-03-08T07:30:00Z"),
    ]


def test_count_counts_a_shifted_time_that_collides(spec_factory) -> None:
    records = records_of(
        spec_factory,
        rule="FREQ=HOURLY;COUNT=4",
        start="2026-03-08T00:00:00",
        gapPolicy="SHIFT_FORWARD",
    )
    assert summary(records) == [
        ("2026-03-08T00:00:00", 0, "UNAMBIGUOUS"),
        ("2026-03-08T01:00:00", 0, "UNAMBIGUOUS"),
        ("2026-03-08T02:00:00", 0, "GAP_SHIFT_COLLISION"),
        ("2026-03-08T03:00:00", 0, "UNAMBIGUOUS"),
    ]


def test_hourly_count_under_skip_runs_past_the_gap(spec_factory) -> None:
    records = records_of(
        spec_factory, rule="FREQ=HOURLY;COUNT=3", start="2026-03-08T01:00:00", gapPolicy="SKIP"
    )
    assert summary(records) == [
        ("2026-03-08T01:00:00", 0, "UNAMBIGUOUS"),
        ("2026-03-08T02:00:00", 0, "GAP_SKIPPED"),
        ("2026-03-08T03:00:00", 0, "UNAMBIGUOUS"),
        ("2026-03-08T04:00:00", 0, "UNAMBIGUOUS"),
    ]


def test_fold_counts_once_even_under_both(spec_factory) -> None:
    records = records_of(
        spec_factory,
        rule="FREQ=DAILY;BYHOUR=1;BYMINUTE=30;COUNT=2",
        start="2026-10-31T01:30:00",
        foldPolicy="BOTH",
    )
    assert summary(records) == [
        ("2026-10-31T01:30:00", 0, "UNAMBIGUOUS"),
        ("2026-11-01T01:30:00", 0, "FOLD_FIRST"),
        ("2026-11-01T01:30:00", 1, "FOLD_SECOND"),
    ]


def test_count_is_counted_from_start_not_from_the_window(spec_factory) -> None:
    spec = spec_factory(
        rule="FREQ=DAILY;BYHOUR=12;COUNT=10",
        start="2026-06-01T12:00:00",
        cutoverAt="2026-01-01T00:00:00Z",
    )
    later = occurrences(spec, utc("2026-06-08T00:00:00"), utc("2027-01-01T00:00:00"))
    assert [r.nominal_local.day for r in later] == [8, 9, 10]
