"""Issue 2: UNTIL is a UTC instant (RFC 5545, zoned DTSTART), compared as an instant, inclusive;
skipped records are placed by gapAt. Seed schedule: daily 02:30 America/New_York."""

import pytest
from tcsupport import iso, utc

from timecontract import occurrences


def last_placed(spec_factory, until: str, gap_policy: str = "SKIP") -> str | None:
    spec = spec_factory(
        rule=f"FREQ=DAILY;BYHOUR=2;BYMINUTE=30;UNTIL={until}",
        gapPolicy=gap_policy,
        cutoverAt="2026-01-01T00:00:00Z",
    )
    records = occurrences(spec, utc("2026-01-01T00:00:00"), utc("2027-01-01T00:00:00"))
    return iso(records[-1].placed_at_utc) if records else None


@pytest.mark.parametrize(
    ("until", "expected_last"),
    [
        # 2026-06-10 02:30 EDT is 06:30Z.
        ("20260610T063000Z", "2026-06-10T06:30:00Z"),  # inclusive
        ("20260610T062959Z", "2026-06-09T06:30:00Z"),
        # 02:30Z is not 02:30 local: compared as an instant, June 10 is after it.
        ("20260610T023000Z", "2026-06-09T06:30:00Z"),
        # Winter: 2026-01-05 02:30 EST is 07:30Z.
        ("20260105T073000Z", "2026-01-05T07:30:00Z"),
        ("20260105T072959Z", "2026-01-04T07:30:00Z"),
    ],
)
def test_until_is_inclusive_and_compared_as_an_instant(spec_factory, until, expected_last):
    assert last_placed(spec_factory, until) == expected_last


def test_skipped_gap_record_is_kept_when_its_gap_at_is_the_until(spec_factory) -> None:
    # 2026-03-08 02:30 does not exist; the transition is 07:00Z.
    assert last_placed(spec_factory, "20260308T070000Z") == "2026-03-08T07:00:00Z"
    assert last_placed(spec_factory, "20260308T065959Z") == "2026-03-07T07:30:00Z"


def test_shifted_record_is_compared_by_its_shifted_instant(spec_factory) -> None:
    # Shifted 02:30 → 07:30Z (03:30 EDT).
    assert last_placed(spec_factory, "20260308T073000Z", "SHIFT_FORWARD") == (
        "2026-03-08T07:30:00Z"
    )
    assert last_placed(spec_factory, "20260308T072959Z", "SHIFT_FORWARD") == (
        "2026-03-07T07:30:00Z"
    )


def test_until_before_start_yields_nothing(spec_factory) -> None:
    spec = spec_factory(
        rule="FREQ=DAILY;UNTIL=20250101T000000Z",
        start="2026-01-01T00:00:00",
        cutoverAt="2020-01-01T00:00:00Z",
    )
    assert occurrences(spec, utc("2020-01-01T00:00:00"), utc("2027-01-01T00:00:00")) == []
