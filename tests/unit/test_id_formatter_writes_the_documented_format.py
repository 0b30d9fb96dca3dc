"""``timecontract.ids.IdFormatter``, the one writer of occurrenceIds and logicalSlotIds, writes
the formats ``timecontract.ids`` documents, for any day and time, in any order of calls (its
per-day prefix must never leak into another day). The expected strings are built here from the
documented formats with ``strftime``, independently of the formatter."""

from datetime import UTC, datetime

from hypothesis import given, settings
from hypothesis import strategies as st

from timecontract.ids import SCHEDULE_ID_PATTERN, IdFormatter, logical_slot_id, occurrence_id

slugs = st.from_regex(SCHEDULE_ID_PATTERN, fullmatch=True)
moments = st.datetimes(datetime(1, 1, 1), datetime(9999, 12, 31, 23, 59, 59)).map(
    lambda d: d.replace(microsecond=0, fold=0)
)


def documented_occurrence(schedule_id: str, revision: int, nominal: datetime, fold: int) -> str:
    # <scheduleId>.r<revision>.<YYYYMMDDTHHMMSS>.f<fold>, the year zero-padded.
    return f"{schedule_id}.r{revision}.{nominal.year:04d}{nominal:%m%dT%H%M%S}.f{fold}"


def documented_slot(schedule_id: str, instant: datetime) -> str:
    # <scheduleId>@<YYYYMMDDTHHMMSS>Z, the year as strftime's %Y writes it.
    return f"{schedule_id}@{instant:%Y%m%dT%H%M%S}Z"


@settings(max_examples=500, derandomize=True, database=None)
@given(
    schedule_id=slugs,
    revision=st.integers(1, 2**31 - 1),
    calls=st.lists(st.tuples(moments, st.integers(0, 1)), min_size=1, max_size=20),
)
def test_ids_follow_the_documented_formats_in_any_order_of_calls(
    schedule_id: str, revision: int, calls: list[tuple[datetime, int]]
) -> None:
    ids = IdFormatter(schedule_id, revision)
    for moment, fold in calls:
        expected = documented_occurrence(schedule_id, revision, moment, fold)
        assert ids.occurrence(moment, fold) == expected
        assert occurrence_id(schedule_id, revision, moment, fold) == expected
        instant = moment.replace(tzinfo=UTC)
        assert ids.slot(instant) == documented_slot(schedule_id, instant)
        assert logical_slot_id(schedule_id, instant) == documented_slot(schedule_id, instant)


def test_days_next_to_each_other_do_not_share_a_prefix() -> None:
    ids = IdFormatter("s", 1)
    assert ids.occurrence(datetime(2026, 1, 1, 23, 59, 59), 0) == "s.r1.20260101T235959.f0"
    assert ids.occurrence(datetime(2026, 1, 2, 0, 0, 0), 1) == "s.r1.20260102T000000.f1"
    assert ids.slot(datetime(2026, 3, 8, 6, 59, 59, tzinfo=UTC)) == "s@20260308T065959Z"
    assert ids.slot(datetime(2026, 3, 9, 7, 0, tzinfo=UTC)) == "s@20260309T070000Z"
