"""DESIGN §3: revision N owns [cutoverAt(N), cutoverAt(N+1)), half-open, UTC; skipped records are
placed by gapAt."""

from datetime import UTC, datetime, timedelta, timezone

import pytest
from tcsupport import iso, utc

from timecontract import Cutover, occurrences, owning_revision, owns

A, B, C = utc("2026-01-01T00:00:00"), utc("2026-06-01T00:00:00"), utc("2026-11-01T06:00:00")
CUTOVERS = [Cutover(3, C), Cutover(1, A), Cutover(2, B)]  # any order


@pytest.mark.parametrize(
    ("instant", "expected"),
    [
        (A - timedelta(seconds=1), None),
        (A, 1),
        (B - timedelta(seconds=1), 1),
        (B, 2),
        (C - timedelta(seconds=1), 2),
        (C, 3),
        (C + timedelta(days=3650), 3),
    ],
)
def test_owning_revision_is_half_open_at_each_cutover(instant, expected) -> None:
    assert owning_revision(instant, CUTOVERS) == expected


def test_owning_revision_compares_instants_not_wall_times() -> None:
    # 2026-06-01T00:00Z written at -04:00 is 2026-05-31T20:00-04:00.
    at_b = datetime(2026, 5, 31, 20, 0, tzinfo=timezone(timedelta(hours=-4)))
    assert owning_revision(at_b, CUTOVERS) == 2
    assert owning_revision(at_b - timedelta(seconds=1), CUTOVERS) == 1


def test_owning_revision_rejects_naive_instants() -> None:
    with pytest.raises(ValueError):
        owning_revision(datetime(2026, 6, 1), CUTOVERS)


def test_owning_revision_rejects_revisions_out_of_cutover_order() -> None:
    with pytest.raises(ValueError):
        owning_revision(B, [Cutover(2, A), Cutover(1, B)])


def test_owning_revision_without_cutovers_is_none() -> None:
    assert owning_revision(B, []) is None


@pytest.mark.parametrize(
    ("instant", "nxt", "expected"),
    [
        (A, B, True),
        (A - timedelta(seconds=1), B, False),
        (B - timedelta(seconds=1), B, True),
        (B, B, False),
        (B, None, True),
    ],
)
def test_owns_is_half_open(instant, nxt, expected) -> None:
    assert owns(instant, A, nxt) is expected


def first_placed(spec_factory, cutover: str, **overrides) -> str | None:
    spec = spec_factory(cutoverAt=cutover, **overrides)
    records = occurrences(spec, utc("2026-10-30T00:00:00"), utc("2027-12-31T00:00:00"))
    return iso(records[0].placed_at_utc) if records else None


def test_seed_cutover_drops_earlier_instants(spec_factory) -> None:
    # Cutover 2026-11-01T06:00Z; 2026-10-31 02:30 EDT = 06:30Z on the 31st is before it, and
    # 2026-11-01 02:30 EST = 07:30Z is the first owned.
    assert first_placed(spec_factory, "2026-11-01T06:00:00Z") == "2026-11-01T07:30:00Z"


def test_occurrence_exactly_at_cutover_is_owned(spec_factory) -> None:
    assert first_placed(spec_factory, "2026-11-02T07:30:00Z") == "2026-11-02T07:30:00Z"
    assert first_placed(spec_factory, "2026-11-02T07:30:01Z") == "2026-11-03T07:30:00Z"


def test_skipped_gap_record_is_owned_by_its_gap_at(spec_factory) -> None:
    # 2027-03-14 02:30 is skipped with gapAt 07:00Z; the would-be 07:30Z does not matter.
    assert first_placed(spec_factory, "2027-03-14T07:00:00Z") == "2027-03-14T07:00:00Z"
    assert first_placed(spec_factory, "2027-03-14T07:00:01Z") == "2027-03-15T06:30:00Z"


def test_window_end_is_exclusive_and_start_inclusive(spec_factory) -> None:
    spec = spec_factory(cutoverAt="2026-01-01T00:00:00Z")
    records = occurrences(spec, utc("2026-06-10T06:30:00"), utc("2026-06-11T06:30:00"))
    assert [iso(r.instant_utc) for r in records] == ["2026-06-10T06:30:00Z"]


def test_naive_window_bounds_are_rejected(spec_factory) -> None:
    with pytest.raises(ValueError):
        occurrences(spec_factory(), datetime(2026, 6, 1), datetime(2026, 6, 2, tzinfo=UTC))
