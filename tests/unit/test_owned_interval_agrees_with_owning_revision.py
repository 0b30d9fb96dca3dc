"""DESIGN §3 ownership, one rule: ``owned_interval`` and ``owning_revision`` agree with a scan.

The ledger takes its materialization window, its claim check and its supersession from these two
functions, so this property is what keeps every ownership decision half-open and consistent. The
oracle is independent: revision N owns t iff N's cutover is the greatest cutover at or before t.
"""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from timecontract import Cutover, owned_interval, owning_revision, owns

EPOCH = datetime(2026, 1, 1, tzinfo=UTC)


def brute_owner(instant: datetime, cutovers: list[Cutover]) -> int | None:
    at_or_before = [c for c in cutovers if c.cutover_at_utc <= instant]
    if not at_or_before:
        return None
    return max(at_or_before, key=lambda c: c.cutover_at_utc).revision


@st.composite
def schedules(draw: st.DrawFn) -> tuple[list[Cutover], list[datetime]]:
    """Published revisions (increasing with their cutovers, in any order) and probe instants."""
    offsets = sorted(draw(st.sets(st.integers(0, 10_000), min_size=1, max_size=6)))
    revisions = sorted(draw(st.sets(st.integers(1, 50), min_size=len(offsets), max_size=6)))
    cutovers = [
        Cutover(revision, EPOCH + timedelta(minutes=offset))
        for revision, offset in zip(revisions, offsets, strict=False)
    ]
    shuffled = draw(st.permutations(cutovers))
    # Probe at, just before and just after every cutover, plus random instants.
    edges = [c.cutover_at_utc + timedelta(seconds=d) for c in cutovers for d in (-1, 0, 1)]
    extra = draw(st.lists(st.integers(-100, 10_100), max_size=10))
    return list(shuffled), edges + [EPOCH + timedelta(minutes=m) for m in extra]


@settings(max_examples=400, derandomize=True, database=None, deadline=None)
@given(schedules())
def test_owned_interval_and_owning_revision_agree_with_the_brute_owner(
    schedule: tuple[list[Cutover], list[datetime]],
) -> None:
    cutovers, instants = schedule
    intervals = {c.revision: owned_interval(c.revision, cutovers) for c in cutovers}
    for instant in instants:
        expected = brute_owner(instant, cutovers)
        assert owning_revision(instant, cutovers) == expected
        owners = [n for n, (start, end) in intervals.items() if owns(instant, start, end)]
        assert owners == ([] if expected is None else [expected])


def test_owned_interval_of_an_unpublished_revision_is_an_error() -> None:
    with pytest.raises(ValueError, match="revision 3"):
        owned_interval(3, [Cutover(1, EPOCH), Cutover(2, EPOCH + timedelta(days=1))])
