"""DESIGN §3 identity: occurrenceId = f(scheduleId, revision, nominal local, fold),
logicalSlotId = f(scheduleId, resolved UTC instant) — readable, deterministic, valid Temporal
workflow IDs (ASCII, no whitespace, at most 255 characters)."""

from datetime import UTC, datetime, timedelta, timezone

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from tcsupport import utc

from timecontract import logical_slot_id, occurrence_id, occurrences, parse_occurrence_id
from timecontract.ids import SCHEDULE_ID_PATTERN

slugs = st.from_regex(SCHEDULE_ID_PATTERN, fullmatch=True)
revisions = st.integers(1, 2**31 - 1)
nominals = st.datetimes(datetime(1000, 1, 1), datetime(9999, 12, 31, 23, 59, 59)).map(
    lambda d: d.replace(microsecond=0, fold=0)
)


def is_valid_workflow_id(value: str) -> bool:
    return value.isascii() and not any(c.isspace() for c in value) and 0 < len(value) <= 255


def test_occurrence_id_format_is_readable() -> None:
    value = occurrence_id("daily-ops-summary", 7, datetime(2026, 11, 1, 1, 30), 0)
    assert value == "daily-ops-summary.r7.20261101T013000.f0"


def test_logical_slot_id_format_is_readable() -> None:
    value = logical_slot_id("daily-ops-summary", utc("2026-11-01T05:30:00"))
    assert value == "daily-ops-summary@20261101T053000Z"


def test_logical_slot_id_is_the_same_for_one_instant_in_any_offset() -> None:
    eastern = datetime(2026, 11, 1, 1, 30, tzinfo=timezone(timedelta(hours=-4)))
    assert logical_slot_id("s", eastern) == logical_slot_id("s", utc("2026-11-01T05:30:00"))


def test_fold_ordinal_distinguishes_the_two_occurrences_of_a_folded_time() -> None:
    nominal = datetime(2026, 11, 1, 1, 30)
    assert occurrence_id("s", 1, nominal, 0) != occurrence_id("s", 1, nominal, 1)


@pytest.mark.parametrize(
    "call",
    [
        lambda: occurrence_id("s", 1, datetime(2026, 1, 1, tzinfo=UTC), 0),
        lambda: occurrence_id("s", 1, datetime(2026, 1, 1), 2),
        lambda: logical_slot_id("s", datetime(2026, 1, 1)),
        lambda: parse_occurrence_id("s@20260101T000000Z"),
    ],
)
def test_ids_reject_bad_inputs(call) -> None:
    with pytest.raises(ValueError):
        call()


@settings(max_examples=300, derandomize=True, database=None, deadline=None)
@given(slugs, revisions, nominals, st.sampled_from([0, 1]))
def test_occurrence_id_is_valid_deterministic_and_round_trips(schedule, revision, nominal, fold):
    value = occurrence_id(schedule, revision, nominal, fold)
    assert is_valid_workflow_id(value)
    assert value == occurrence_id(schedule, revision, nominal, fold)
    assert parse_occurrence_id(value) == (schedule, revision, nominal, fold)


@settings(max_examples=300, derandomize=True, database=None, deadline=None)
@given(slugs, nominals, st.integers(-14 * 60, 14 * 60))
def test_logical_slot_id_is_valid_and_deterministic(schedule, nominal, minutes):
    instant = nominal.replace(tzinfo=timezone(timedelta(minutes=minutes)))
    value = logical_slot_id(schedule, instant)
    assert is_valid_workflow_id(value)
    assert value == logical_slot_id(schedule, instant.astimezone(UTC))
    assert "r" not in value.split("@", 1)[1]  # no revision in a slot


@pytest.mark.parametrize("year", [1, 999])
def test_occurrence_id_round_trips_for_years_before_1000(year: int) -> None:
    # scheduleSpec accepts start 0999-01-01T00:00:00; %Y then writes 3 digits on Linux.
    nominal = datetime(year, 1, 1, 0, 0)
    assert parse_occurrence_id(occurrence_id("s", 1, nominal, 0)) == ("s", 1, nominal, 0)


def test_longest_ids_stay_within_255_characters() -> None:
    slug = "a" * 63
    value = occurrence_id(slug, 2**31 - 1, datetime(9999, 12, 31, 23, 59, 59), 1)
    assert is_valid_workflow_id(value)
    assert is_valid_workflow_id(logical_slot_id(slug, utc("9999-12-31T23:59:59")))


def test_record_ids_do_not_depend_on_the_window_or_the_revision(spec_factory) -> None:
    spec7 = spec_factory(cutoverAt="2026-01-01T00:00:00Z")
    spec8 = spec_factory(revision=8, cutoverAt="2026-01-01T00:00:00Z")
    wide = occurrences(spec7, utc("2026-01-01T00:00:00"), utc("2026-12-31T00:00:00"))
    narrow = occurrences(spec7, utc("2026-06-10T00:00:00"), utc("2026-06-11T00:00:00"))
    [other] = occurrences(spec8, utc("2026-06-10T00:00:00"), utc("2026-06-11T00:00:00"))
    [same] = [r for r in wide if r.occurrence_id == narrow[0].occurrence_id]
    assert same.logical_slot_id == narrow[0].logical_slot_id
    assert other.occurrence_id == "daily-ops-summary.r8.20260610T023000.f0"
    assert (
        other.logical_slot_id == narrow[0].logical_slot_id == ("daily-ops-summary@20260610T063000Z")
    )
