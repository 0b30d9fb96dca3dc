"""A jitter longer than the gap to the next occurrence is capped at that gap (Temporal's rule).

Temporal Schedules never let a jittered action reach the next scheduled time. Almanac's delay is
``sha256(occurrenceId) mod min(jitter, next instant - instant)`` milliseconds; the goldens below
compute that formula here with ``hashlib`` from the instants the rule itself gives (every 10 s;
the last occurrence of a window finds its successor past the window's end).
"""

from __future__ import annotations

import hashlib
from datetime import timedelta

from specdata import SEED_SPEC
from tcsupport import utc

from timecontract import WarningCode, occurrences, parse_spec, spec_warnings

EVERY_TEN_SECONDS = {
    **SEED_SPEC,
    "timeZone": "UTC",
    "rule": "FREQ=SECONDLY;INTERVAL=10",
    "cutoverAt": "2027-01-04T00:00:00Z",
}
WINDOW = (utc("2027-01-04T09:00:00"), utc("2027-01-04T09:05:00"))


def _formula(occurrence_id: str, span: timedelta) -> timedelta:
    prefix = hashlib.sha256(occurrence_id.encode()).digest()[:8]
    return timedelta(
        milliseconds=int.from_bytes(prefix, "big") % (span // timedelta(milliseconds=1))
    )


def test_a_jitter_longer_than_the_period_is_capped_at_the_period() -> None:
    records = occurrences(parse_spec({**EVERY_TEN_SECONDS, "jitter": "PT25S"}), *WINDOW)

    assert len(records) == 30
    for record in records:
        assert record.jitter_delay == _formula(record.occurrence_id, timedelta(seconds=10))
        assert record.jitter_delay < timedelta(seconds=10)


def test_a_jitter_shorter_than_the_gap_is_not_capped() -> None:
    records = occurrences(parse_spec({**EVERY_TEN_SECONDS, "jitter": "PT7S"}), *WINDOW)

    assert [r.jitter_delay for r in records] == [
        _formula(r.occurrence_id, timedelta(seconds=7)) for r in records
    ]


def test_a_split_window_gives_the_same_delays_as_the_whole() -> None:
    spec = parse_spec({**EVERY_TEN_SECONDS, "jitter": "PT25S"})
    middle = utc("2027-01-04T09:02:05")
    whole = occurrences(spec, *WINDOW)
    split = occurrences(spec, WINDOW[0], middle) + occurrences(spec, middle, WINDOW[1])

    assert [(r.occurrence_id, r.jitter_delay) for r in split] == [
        (r.occurrence_id, r.jitter_delay) for r in whole
    ]


def test_the_last_occurrence_of_a_series_keeps_the_whole_jitter() -> None:
    """No successor (the rule's COUNT ends the series): nothing to cap at."""
    spec = parse_spec({**EVERY_TEN_SECONDS, "rule": "FREQ=SECONDLY;INTERVAL=10;COUNT=3",
                       "start": "2027-01-04T09:00:00", "jitter": "PT25S"})  # fmt: skip
    first, second, last = occurrences(spec, *WINDOW)

    assert first.jitter_delay == _formula(first.occurrence_id, timedelta(seconds=10))
    assert second.jitter_delay == _formula(second.occurrence_id, timedelta(seconds=10))
    assert last.jitter_delay == _formula(last.occurrence_id, timedelta(seconds=25))


def test_validate_says_when_a_jitter_will_be_capped() -> None:
    [warning] = spec_warnings(parse_spec({**EVERY_TEN_SECONDS, "jitter": "PT25S"}))

    assert (warning.code, warning.field, warning.value) == (
        WarningCode.JITTER_CAPPED,
        "jitter",
        "PT25S",
    )
    assert "longer than the PT10S between the occurrences at 2027-01-04T00:00:00Z" in str(warning)
    assert spec_warnings(parse_spec({**EVERY_TEN_SECONDS, "jitter": "PT10S"})) == []
