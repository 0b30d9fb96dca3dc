"""DESIGN §4 misfire planning: on-time (overdue by at most lateness) runs under every policy;
missed ones: SKIP expires all, CATCH_UP_BOUNDED releases the most recent maxCatchUp (oldest
first), CATCH_UP_LATEST the most recent one; future ones are ignored; every due occurrence is in
exactly one of release / expire."""

from datetime import datetime, timedelta

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from tcsupport import utc

from timecontract import MisfirePolicy, OccurrenceId, Overdue, plan_misfires

NOW = utc("2026-11-08T12:00:00")
LATENESS = timedelta(minutes=5)


def daily(days_back: list[int]) -> list[Overdue]:
    return [Overdue(OccurrenceId(f"d-{d}"), NOW - timedelta(days=d)) for d in days_back]


def plan(overdue, policy, max_catch_up=2, lateness=LATENESS, now=NOW):
    return plan_misfires(overdue, now, lateness, policy, max_catch_up)


def test_overdue_by_exactly_lateness_is_on_time() -> None:
    at_edge = Overdue(OccurrenceId("edge"), NOW - LATENESS)
    result = plan([at_edge], MisfirePolicy.SKIP)
    assert (result.release, result.expire, result.on_time) == (("edge",), (), ("edge",))


def test_overdue_by_one_second_more_than_lateness_is_missed() -> None:
    late = Overdue(OccurrenceId("late"), NOW - LATENESS - timedelta(seconds=1))
    result = plan([late], MisfirePolicy.SKIP)
    assert (result.release, result.expire) == ((), ("late",))


def test_skip_expires_every_missed_occurrence() -> None:
    result = plan(daily([7, 6, 5, 4, 3, 2, 1]), MisfirePolicy.SKIP)
    assert result.release == ()
    assert result.expire == ("d-7", "d-6", "d-5", "d-4", "d-3", "d-2", "d-1")


def test_catch_up_bounded_releases_the_most_recent_max_catch_up_oldest_first() -> None:
    # The seed: a week-long outage must not produce seven summaries.
    result = plan(daily([1, 7, 3, 5, 2, 6, 4]), MisfirePolicy.CATCH_UP_BOUNDED, max_catch_up=2)
    assert result.release == ("d-2", "d-1")
    assert result.caught_up == ("d-2", "d-1")
    assert result.expire == ("d-7", "d-6", "d-5", "d-4", "d-3")


def test_catch_up_bounded_with_fewer_missed_than_the_bound_releases_all() -> None:
    result = plan(daily([2, 1]), MisfirePolicy.CATCH_UP_BOUNDED, max_catch_up=5)
    assert (result.release, result.expire) == (("d-2", "d-1"), ())


@pytest.mark.parametrize(("missed", "bound"), [(2, 3), (3, 4), (3, 5), (1, 2), (4, 7)])
def test_catch_up_bounded_with_bound_above_the_missed_count_releases_all(missed, bound) -> None:
    days = list(range(missed, 0, -1))
    result = plan(daily(days), MisfirePolicy.CATCH_UP_BOUNDED, max_catch_up=bound)
    assert result.release == tuple(f"d-{d}" for d in days)
    assert result.expire == ()


def test_catch_up_bounded_with_max_catch_up_0_expires_every_missed() -> None:
    result = plan(daily([3, 2, 1]), MisfirePolicy.CATCH_UP_BOUNDED, max_catch_up=0)
    assert (result.release, result.expire) == ((), ("d-3", "d-2", "d-1"))


def test_catch_up_latest_releases_only_the_most_recent_missed() -> None:
    result = plan(daily([3, 2, 1]), MisfirePolicy.CATCH_UP_LATEST, max_catch_up=100)
    assert (result.release, result.expire) == (("d-1",), ("d-3", "d-2"))


def test_on_time_occurrences_are_released_besides_the_catch_up_bound() -> None:
    on_time = Overdue(OccurrenceId("now"), NOW - timedelta(minutes=1))
    result = plan([*daily([3, 2, 1]), on_time], MisfirePolicy.CATCH_UP_BOUNDED, max_catch_up=1)
    assert result.release == ("d-1", "now")
    assert result.on_time == ("now",)
    assert result.caught_up == ("d-1",)
    assert result.expire == ("d-3", "d-2")


def test_future_occurrences_are_ignored() -> None:
    future = Overdue(OccurrenceId("future"), NOW + timedelta(seconds=1))
    result = plan([future, *daily([1])], MisfirePolicy.CATCH_UP_BOUNDED)
    assert "future" not in result.release + result.expire
    assert result.release == ("d-1",)


def test_occurrence_due_exactly_now_is_on_time() -> None:
    result = plan([Overdue(OccurrenceId("now"), NOW)], MisfirePolicy.SKIP)
    assert result.release == ("now",)


def test_zero_lateness_makes_everything_past_missed() -> None:
    result = plan(daily([1]), MisfirePolicy.SKIP, lateness=timedelta(0))
    assert result.expire == ("d-1",)


@pytest.mark.parametrize(
    "kwargs",
    [
        {"now": datetime(2026, 11, 8, 12)},
        {"lateness": timedelta(seconds=-1)},
        {"max_catch_up": -1},
    ],
)
def test_bad_arguments_are_rejected(kwargs) -> None:
    with pytest.raises(ValueError):
        plan(daily([1]), MisfirePolicy.SKIP, **kwargs)


@settings(max_examples=300, derandomize=True, database=None, deadline=None)
@given(
    st.lists(st.integers(-3 * 86400, 30 * 86400), max_size=40, unique=True),
    st.sampled_from(list(MisfirePolicy)),
    st.integers(0, 10),
    st.integers(0, 7200),
)
def test_every_due_occurrence_is_in_exactly_one_list(seconds_back, policy, bound, lateness_s):
    overdue = [Overdue(OccurrenceId(f"o{s}"), NOW - timedelta(seconds=s)) for s in seconds_back]
    lateness = timedelta(seconds=lateness_s)
    result = plan(overdue, policy, max_catch_up=bound, lateness=lateness)

    due = {f"o{s}" for s in seconds_back if s >= 0}
    missed = {f"o{s}" for s in seconds_back if s > lateness_s}
    assert set(result.release) | set(result.expire) == due
    assert not set(result.release) & set(result.expire)
    assert len(result.release) == len(set(result.release))
    limit = {MisfirePolicy.SKIP: 0, MisfirePolicy.CATCH_UP_LATEST: 1}.get(policy, bound)
    assert len(result.caught_up) == min(limit, len(missed))
    assert set(result.on_time) == due - missed
    # Released oldest first; everything expired is older than everything caught up.
    instants = {o.occurrence_id: o.instant_utc for o in overdue}
    assert [instants[i] for i in result.release] == sorted(instants[i] for i in result.release)
    if result.expire and result.caught_up:
        assert max(instants[i] for i in result.expire) < min(instants[i] for i in result.caught_up)
