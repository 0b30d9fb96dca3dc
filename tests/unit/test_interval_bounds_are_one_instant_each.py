"""An ``interval`` series' ``start`` and ``end`` are one instant each, even inside a fold or a gap.

RFC 5545 §3.3.5 reads a local time that occurs twice as its first occurrence, and one that does
not exist with the offset before the gap. Expected instants are computed by hand from
Australia/Melbourne's 2024 transitions (tz database: AEDT +11:00 until 2024-04-06T16:00Z, when
wall clocks go from 03:00 back to 02:00 AEST +10:00, so 02:00–03:00 on 2024-04-07 happens twice:
15:00Z–16:00Z and 16:00Z–17:00Z; AEST until 2024-10-05T16:00Z, when 02:00 jumps to 03:00 AEDT,
so 02:00–03:00 on 2024-10-06 does not exist). Every 30 minutes from the Unix epoch: :00 and :30 UTC.
"""

from __future__ import annotations

from specdata import SEED_SPEC
from tcsupport import iso, utc

from timecontract import occurrences, parse_spec

MELBOURNE = {
    **{k: v for k, v in SEED_SPEC.items() if k != "rule"},
    "revision": 1,
    "scheduleId": "pump-check",
    "timeZone": "Australia/Melbourne",
    "cutoverAt": "2024-01-01T00:00:00Z",
    "interval": "PT30M",
}


def instants(window_from: str, window_to: str, **bounds: str) -> list[str]:
    spec = parse_spec({**MELBOURNE, **bounds})
    return [iso(r.instant_utc) for r in occurrences(spec, utc(window_from), utc(window_to))]


def test_an_end_in_the_fold_is_its_first_pass_and_nothing_runs_after_it() -> None:
    # 02:15 first occurs at 15:15Z: the series ends with 15:00Z (02:00 AEDT).
    assert instants("2024-04-06T14:00:00", "2024-04-06T18:00:00", end="2024-04-07T02:15:00") == [
        "2024-04-06T14:00:00Z",
        "2024-04-06T14:30:00Z",
        "2024-04-06T15:00:00Z",
    ]


def test_a_start_in_the_fold_leaves_no_hole_in_the_series() -> None:
    # 02:15 first occurs at 15:15Z: every grid point from 15:30Z on, 16:00Z included.
    assert instants("2024-04-06T14:00:00", "2024-04-06T17:30:00", start="2024-04-07T02:15:00") == [
        "2024-04-06T15:30:00Z",
        "2024-04-06T16:00:00Z",
        "2024-04-06T16:30:00Z",
        "2024-04-06T17:00:00Z",
    ]


def test_a_start_in_the_gap_is_read_with_the_offset_before_it() -> None:
    # 02:15 does not exist on 2024-10-06; read at +10:00 it is 16:15Z, so the series starts 16:30Z.
    assert instants("2024-10-05T15:00:00", "2024-10-05T17:30:00", start="2024-10-06T02:15:00") == [
        "2024-10-05T16:30:00Z",
        "2024-10-05T17:00:00Z",
    ]
