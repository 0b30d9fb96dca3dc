"""The transition bands hold every local time whose two PEP 495 offsets differ (issue 14).

``timecontract.transitions`` reads the pinned release's TZif file and says where a nominal time
may be in a gap or a fold; ``timecontract.resolve`` then skips the fold-1 look-up outside those
bands. Oracle: ``ZoneInfo`` itself. For every zone of the release, its offset changes are found by
probing UTC instants (every 6 hours, then bisection to the second) and each change's ambiguous
local interval ``[T + min(a, b), T + max(a, b))`` must lie inside one band; random local times
outside all bands must have equal fold-0 and fold-1 offsets. Years: the era of explicit
transitions and the footer rule's years (New York's explicit transitions end in 2007).
"""

from __future__ import annotations

import random
from datetime import UTC, datetime, timedelta

import pytest

from timecontract import zones

RELEASE = "2026a"
NAMES = sorted(zones.zone_names(RELEASE))


def changes(
    name: str, first: datetime, last: datetime
) -> list[tuple[datetime, timedelta, timedelta]]:
    zone = zones.load(name, RELEASE)
    step = timedelta(hours=6)
    found = []
    moment, before = first, first.astimezone(zone).utcoffset()
    while moment < last:
        later = moment + step
        after = later.astimezone(zone).utcoffset()
        if after != before:
            low, high = moment, later
            while high - low > timedelta(seconds=1):
                middle = (low + (high - low) / 2).replace(microsecond=0)
                if middle.astimezone(zone).utcoffset() == before:
                    low = middle
                else:
                    high = middle
            assert before is not None and after is not None
            found.append((high.replace(tzinfo=None), before, after))
        moment, before = later, after
    return found


@pytest.mark.parametrize(
    "years", [(1916, 1920), (1940, 1947), (1995, 2000), (2024, 2029), (2090, 2092)]
)
def test_every_zone_change_lies_in_a_band(years: tuple[int, int]) -> None:
    first, last = (datetime(y, 1, 1, tzinfo=UTC) for y in years)
    missed = []
    for name in NAMES:
        table = zones.transitions(name, RELEASE)
        assert table is not None, name  # every file of the release is read
        bands = table.bands(
            first.replace(tzinfo=None) - timedelta(days=2),
            last.replace(tzinfo=None) + timedelta(days=2),
        )
        for at, before, after in changes(name, first, last):
            start, end = at + min(before, after), at + max(before, after)
            if not any(low <= start and end <= high for low, high in bands):
                missed.append((name, at, before, after))
    assert missed == []


def test_outside_the_bands_both_offsets_agree() -> None:
    rng = random.Random(14)
    disagree = []
    for name in NAMES:
        zone = zones.load(name, RELEASE)
        table = zones.transitions(name, RELEASE)
        assert table is not None
        for year in (1900, 1960, 2010, 2030, 2200):
            low, high = datetime(year, 1, 1), datetime(year + 20, 1, 1)
            bands = table.bands(low, high)
            span = int((high - low).total_seconds())
            points = [low + timedelta(seconds=rng.randrange(span)) for _ in range(200)]
            for band_low, band_high in bands:  # just outside each band
                points += [band_low - timedelta(seconds=1), band_high]
            for point in points:
                if not low <= point <= high or any(a <= point < b for a, b in bands):
                    continue
                if zone.utcoffset(point) != zone.utcoffset(point.replace(fold=1)):
                    disagree.append((name, point))
    assert disagree == []


def test_offsets_between_hold_every_daily_sample() -> None:
    # What resolve._table_bounds relies on (a superset of resolve._local_bounds' samples).
    missing = []
    for name in NAMES[::7]:
        zone = zones.load(name, RELEASE)
        table = zones.transitions(name, RELEASE)
        assert table is not None
        first = datetime(1995, 1, 1, tzinfo=UTC)
        epoch = datetime(1970, 1, 1, tzinfo=UTC)
        for start_day in range(0, 365 * 40, 173):
            low = first + timedelta(days=start_day)
            high = low + timedelta(days=90)
            seconds = table.offsets_between(
                int((low - epoch).total_seconds()), int((high - epoch).total_seconds())
            )
            for day in range(91):
                sample = (low + timedelta(days=day)).astimezone(zone).utcoffset()
                assert sample is not None
                if int(sample.total_seconds()) not in seconds:
                    missing.append((name, low + timedelta(days=day)))
    assert missing == []
