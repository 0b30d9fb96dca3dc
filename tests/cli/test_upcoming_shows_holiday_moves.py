"""``upcoming`` names the holiday and calendar release of an occurrence a holiday policy moved.

NYSE: Good Friday 2027 is 26 March; PRECEDING runs it Thursday 25 March 09:00 EDT (13:00Z).
"""

from __future__ import annotations

from datetime import UTC, datetime

from almanac.readings import project
from timecontract import parse_spec

SPEC = {
    "schema": "scheduleSpec.v1",
    "scheduleId": "friday-report",
    "revision": 1,
    "timeZone": "America/New_York",
    "tzdbVersion": "2026a",
    "rule": "FREQ=WEEKLY;BYDAY=FR;BYHOUR=9",
    "calendar": {"name": "NYSE", "release": "holidays-0.108"},
    "holidayPolicy": "PRECEDING",
    "cutoverAt": "2027-03-01T00:00:00Z",
}


def test_projected_upcoming_rows_carry_the_holiday_of_a_moved_occurrence() -> None:
    rows = project([parse_spec(SPEC)], datetime(2027, 3, 20, tzinfo=UTC), 2)
    assert [(r.nominal_local, r.instant_utc, r.holiday, r.calendar) for r in rows] == [
        (
            "2027-03-26T09:00:00",
            datetime(2027, 3, 25, 13, tzinfo=UTC),
            "Good Friday",
            "NYSE@holidays-0.108",
        ),
        ("2027-04-02T09:00:00", datetime(2027, 4, 2, 13, tzinfo=UTC), None, None),
    ]
