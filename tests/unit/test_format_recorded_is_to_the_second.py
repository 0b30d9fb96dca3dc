"""``timecontract.format_recorded``: a time read from a clock prints to the whole second, in UTC.

Expected texts written by hand (ISO 8601 extended format with ``Z``, as ``format_instant``): the
fraction is cut, never rounded up into the next second, and an offset is converted to UTC first.
"""

from __future__ import annotations

from datetime import UTC, datetime, timedelta, timezone

import pytest

from timecontract import format_recorded


@pytest.mark.parametrize(
    ("instant", "text"),
    [
        (datetime(2026, 12, 18, 19, 9, 21, 288581, tzinfo=UTC), "2026-12-18T19:09:21Z"),
        (datetime(2026, 12, 31, 23, 59, 59, 999999, tzinfo=UTC), "2026-12-31T23:59:59Z"),
        (datetime(2026, 11, 1, 6, 0, tzinfo=UTC), "2026-11-01T06:00:00Z"),
        (
            datetime(2026, 3, 8, 3, 0, 1, 500000, tzinfo=timezone(timedelta(hours=-4))),
            "2026-03-08T07:00:01Z",
        ),
    ],
)
def test_a_recorded_time_prints_to_the_second(instant: datetime, text: str) -> None:
    assert format_recorded(instant) == text
