"""Issue 13: deterministic jitter — sha256 of the occurrenceId, never hash(), in [0, jitter).

Golden values: the first 16 hex digits of ``printf '%s' ID | sha256sum`` (coreutils, an
independent sha256), taken modulo the jitter in milliseconds.
"""

from __future__ import annotations

import os
import subprocess
import sys
from datetime import timedelta

import pytest
from specdata import SEED_SPEC
from tcsupport import utc

from timecontract import format_duration, jitter_delay, occurrences, parse_spec

GOLDEN = [
    # (occurrenceId, sha256 prefix from sha256sum, jitter, expected delay)
    ("daily-ops-summary.r7.20261101T013000.f0", "2eacc76a1c4c84fb", "PT30S", 15_515),
    ("pump.r1.20260308T060000Z", "0a4c157e94cf0ebb", "PT30S", 29_499),
    ("x", "2d711642b726b044", "PT1S", 876),
]


@pytest.mark.parametrize(("occurrence_id", "prefix", "jitter", "millis"), GOLDEN)
def test_delay_is_the_documented_sha256_formula(
    occurrence_id: str, prefix: str, jitter: str, millis: int
) -> None:
    span = parse_spec({**SEED_SPEC, "jitter": jitter}).jitter
    assert int(prefix, 16) % (span // timedelta(milliseconds=1)) == millis  # the formula
    assert jitter_delay(occurrence_id, span) == timedelta(milliseconds=millis)


def test_delay_is_the_same_in_another_process_with_another_hash_seed() -> None:
    code = (
        "from datetime import timedelta; from timecontract import jitter_delay; "
        "print(jitter_delay('pump.r1.20260308T060000Z', timedelta(seconds=30)).total_seconds())"
    )
    env = {**os.environ, "PYTHONHASHSEED": "12345"}
    out = subprocess.run([sys.executable, "-c", code], env=env, capture_output=True, text=True)
    assert out.stdout.strip() == "29.499"


def test_no_jitter_is_no_delay_and_delays_stay_below_the_jitter() -> None:
    assert jitter_delay("anything", timedelta(0)) == timedelta(0)
    delays = {jitter_delay(f"s.r1.2026010{i}T000000.f0", timedelta(seconds=2)) for i in range(10)}
    assert all(timedelta(0) <= d < timedelta(seconds=2) for d in delays)
    assert len(delays) > 1


def test_jitter_changes_neither_id_slot_nor_instant() -> None:
    window = (utc("2026-11-01T06:00:00"), utc("2026-11-10T00:00:00"))
    plain = occurrences(parse_spec(SEED_SPEC), *window)
    jittered = occurrences(parse_spec({**SEED_SPEC, "jitter": "PT30S"}), *window)
    key = [(r.occurrence_id, r.logical_slot_id, r.instant_utc) for r in plain]
    assert [(r.occurrence_id, r.logical_slot_id, r.instant_utc) for r in jittered] == key
    assert {r.jitter_delay for r in plain} == {timedelta(0)}
    assert [r.jitter_delay for r in jittered] == [
        jitter_delay(r.occurrence_id, timedelta(seconds=30)) for r in jittered
    ]


def test_preview_json_shows_the_delay_as_an_iso_duration() -> None:
    spec = parse_spec({**SEED_SPEC, "jitter": "PT30S"})
    first = occurrences(spec, utc("2026-11-01T06:00:00"), utc("2026-11-03T00:00:00"))[0]
    assert first.to_json()["jitter"] == format_duration(first.jitter_delay)
    assert [format_duration(timedelta(milliseconds=m)) for m in (0, 1500, 12_345, 90_000)] == [
        "PT0S",
        "PT1.5S",
        "PT12.345S",
        "PT1M30S",
    ]
