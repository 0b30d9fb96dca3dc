"""``timecontract.ids.IdFormatter`` (the time contract's fast path) builds exactly the strings of
the readable definitions ``occurrence_id`` and ``logical_slot_id``, for any day and time, in any
order of calls (its per-day prefix cache must never leak into another day)."""

from datetime import UTC, datetime

from hypothesis import given, settings
from hypothesis import strategies as st

from timecontract.ids import IdFormatter, logical_slot_id, occurrence_id
from timecontract.spec import SCHEDULE_ID_PATTERN

slugs = st.from_regex(SCHEDULE_ID_PATTERN, fullmatch=True)
# Years 1..9999: strftime's %Y in logical_slot_id does not pad years before 1000 (glibc); the
# fast form must reproduce whatever the readable one prints.
moments = st.datetimes(datetime(1, 1, 1), datetime(9999, 12, 31, 23, 59, 59)).map(
    lambda d: d.replace(microsecond=0, fold=0)
)


@settings(max_examples=500, derandomize=True, database=None)
@given(
    schedule_id=slugs,
    revision=st.integers(1, 2**31 - 1),
    calls=st.lists(st.tuples(moments, st.integers(0, 1)), min_size=1, max_size=20),
)
def test_fast_ids_equal_the_readable_definitions(
    schedule_id: str, revision: int, calls: list[tuple[datetime, int]]
) -> None:
    ids = IdFormatter(schedule_id, revision)
    for moment, fold in calls:
        assert ids.occurrence(moment, fold) == occurrence_id(schedule_id, revision, moment, fold)
        instant = moment.replace(tzinfo=UTC)
        assert ids.slot(instant) == logical_slot_id(schedule_id, instant)


def test_days_next_to_each_other_do_not_share_a_prefix() -> None:
    ids = IdFormatter("s", 1)
    assert ids.occurrence(datetime(2026, 1, 1, 23, 59, 59), 0) == "s.r1.20260101T235959.f0"
    assert ids.occurrence(datetime(2026, 1, 2, 0, 0, 0), 1) == "s.r1.20260102T000000.f1"
    assert ids.slot(datetime(999, 12, 31, 23, 0, tzinfo=UTC)) == logical_slot_id(
        "s", datetime(999, 12, 31, 23, 0, tzinfo=UTC)
    )
    assert ids.slot(datetime(2026, 3, 8, 7, 0, tzinfo=UTC)) == "s@20260308T070000Z"
