"""DST and holidays together: a holiday move lands on another day's local time, which goes
through the gap and fold policies like any nominal time. A user calendar (weekend: none) closes
Saturday 2027-03-13 and Saturday 2027-11-06; FOLLOWING moves to the Sunday, which in New York is
the spring-forward day (02:00 EST → 03:00 EDT at 07:00Z) and the fall-back day (02:00 EDT →
01:00 EST at 06:00Z: 01:30 happens at 05:30Z and again at 06:30Z)."""

from pathlib import Path

import pytest
from calsupport import records, row, write_calendar_file

FILE = """
name: acme
holidays:
  - {date: 2027-03-13, name: "Founders' Day"}
  - {date: 2027-11-06, name: Harvest Day}
"""


def _fields(store: Path, rule: str, **more: str) -> dict[str, object]:
    release = write_calendar_file(store, FILE)
    calendar = {"name": "acme", "release": release, "weekend": []}
    return {"rule": rule, "calendar": calendar, "holidayPolicy": "FOLLOWING", **more}


@pytest.mark.parametrize(
    ("gap_policy", "expected"),
    [
        ("SHIFT_FORWARD", ("2027-03-14T07:30:00Z", "PLANNED", "HOLIDAY_FOLLOWING")),
        ("NEXT_VALID", ("2027-03-14T07:00:00Z", "PLANNED", "HOLIDAY_FOLLOWING")),
        ("SKIP", (None, "SKIPPED_GAP", "GAP_SKIPPED")),
    ],
)
def test_a_move_into_the_spring_forward_gap_follows_the_gap_policy(
    tmp_path: Path, gap_policy: str, expected: tuple[str | None, str, str]
) -> None:
    fields = _fields(tmp_path, "FREQ=WEEKLY;BYDAY=SA;BYHOUR=2;BYMINUTE=30", gapPolicy=gap_policy)
    found = records(fields, "2027-03-13T00:00:00", "2027-03-15T00:00:00", tmp_path)
    assert [row(r) for r in found] == [("2027-03-13T02:30:00", *expected, "Founders' Day")]
    assert found[0].gap_at_utc is not None and found[0].gap_at_utc.hour == 7


@pytest.mark.parametrize(
    ("fold_policy", "instant"),
    [("FIRST_ONLY", "2027-11-07T05:30:00Z"), ("SECOND_ONLY", "2027-11-07T06:30:00Z")],
)
def test_a_move_into_the_fall_back_fold_follows_the_fold_policy(
    tmp_path: Path, fold_policy: str, instant: str
) -> None:
    fields = _fields(tmp_path, "FREQ=WEEKLY;BYDAY=SA;BYHOUR=1;BYMINUTE=30", foldPolicy=fold_policy)
    found = records(fields, "2027-11-06T00:00:00", "2027-11-08T00:00:00", tmp_path)
    assert [row(r) for r in found] == [
        ("2027-11-06T01:30:00", instant, "PLANNED", "HOLIDAY_FOLLOWING", "Harvest Day")
    ]
    assert found[0].occurrence_id == "cal.r1.20271106T013000.f0"
