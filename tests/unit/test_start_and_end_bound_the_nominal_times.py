"""Issue 2: a start that does not match the rule is not itself an occurrence (dateutil's and
RFC 5545's "the set is what the rule generates at or after DTSTART"); end is inclusive."""

from tcsupport import utc

from timecontract import occurrences


def nominals(spec) -> list[str]:
    records = occurrences(spec, utc("2026-05-01T00:00:00"), utc("2026-07-01T00:00:00"))
    return [r.nominal_local.isoformat() for r in records]


def test_start_not_matching_the_rule_is_not_an_occurrence(spec_factory) -> None:
    spec = spec_factory(
        start="2026-06-01T00:00:00", end="2026-06-02T23:59:59", cutoverAt="2026-01-01T00:00:00Z"
    )
    assert nominals(spec) == ["2026-06-01T02:30:00", "2026-06-02T02:30:00"]


def test_start_after_the_days_time_begins_the_next_day(spec_factory) -> None:
    spec = spec_factory(
        start="2026-06-01T03:00:00", end="2026-06-03T00:00:00", cutoverAt="2026-01-01T00:00:00Z"
    )
    assert nominals(spec) == ["2026-06-02T02:30:00"]


def test_start_matching_the_rule_is_the_first_occurrence(spec_factory) -> None:
    spec = spec_factory(
        start="2026-06-01T02:30:00", end="2026-06-01T02:30:00", cutoverAt="2026-01-01T00:00:00Z"
    )
    assert nominals(spec) == ["2026-06-01T02:30:00"]


def test_start_not_matching_is_not_counted_by_count(spec_factory) -> None:
    spec = spec_factory(
        rule="FREQ=DAILY;BYHOUR=2;BYMINUTE=30;COUNT=1",
        start="2026-06-01T03:00:00",
        cutoverAt="2026-01-01T00:00:00Z",
    )
    assert nominals(spec) == ["2026-06-02T02:30:00"]


def test_end_is_inclusive(spec_factory) -> None:
    spec = spec_factory(
        start="2026-06-01T00:00:00", end="2026-06-05T02:30:00", cutoverAt="2026-01-01T00:00:00Z"
    )
    assert nominals(spec)[-1] == "2026-06-05T02:30:00"


def test_end_one_second_earlier_excludes_that_day(spec_factory) -> None:
    spec = spec_factory(
        start="2026-06-01T00:00:00", end="2026-06-05T02:29:59", cutoverAt="2026-01-01T00:00:00Z"
    )
    assert nominals(spec)[-1] == "2026-06-04T02:30:00"


def test_default_start_begins_2001_and_weekly_rule_takes_its_monday(spec_factory) -> None:
    spec = spec_factory(rule="FREQ=WEEKLY", cutoverAt="2026-01-01T00:00:00Z")
    records = occurrences(spec, utc("2026-06-01T00:00:00"), utc("2026-06-15T00:00:00"))
    # 2026-06-01 and 2026-06-08 are Mondays; default start 2001-01-01T00:00 gives 00:00 EDT.
    assert [(r.nominal_local.isoformat(), r.instant_utc.strftime("%H:%M")) for r in records] == [
        ("2026-06-01T00:00:00", "04:00"),
        ("2026-06-08T00:00:00", "04:00"),
    ]
