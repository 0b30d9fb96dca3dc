"""Issue 2: every optional field has a documented, deterministic default written out by resolved().

The expected dict is the documented defaults (spec.py field docs / DESIGN §3), written by hand.
"""

import hashlib
import json
import time
from datetime import datetime

import pytest
from specdata import SEED_SPEC

from timecontract import parse_spec

MINIMAL = {
    "schema": "scheduleSpec.v1",
    "scheduleId": "daily-ops-summary",
    "revision": 7,
    "timeZone": "America/New_York",
    "tzdbVersion": "2026a",
    "rule": "FREQ=DAILY;BYHOUR=2;BYMINUTE=30",
    "cutoverAt": "2026-11-01T06:00:00Z",
}

EXPECTED_RESOLVED = {
    "schema": "scheduleSpec.v1",
    "scheduleId": "daily-ops-summary",
    "revision": 7,
    "timeZone": "America/New_York",
    "tzdbVersion": "2026a",
    "rule": "FREQ=DAILY;BYHOUR=2;BYMINUTE=30",
    "start": "2001-01-01T00:00:00",
    "end": None,
    "gapPolicy": "SHIFT_FORWARD",
    "foldPolicy": "FIRST_ONLY",
    "misfirePolicy": "CATCH_UP_BOUNDED",
    "maxCatchUp": 1,
    "lateness": "PT5M",
    "cutoverAt": "2026-11-01T06:00:00Z",
    "action": None,
}


def test_resolved_writes_out_every_default_of_a_minimal_spec() -> None:
    assert parse_spec(MINIMAL).resolved() == EXPECTED_RESOLVED


# Added after scheduleSpec.v1's first release (issue 13); written only when not the default, so
# the digests of revisions published before them do not change.
ADDITIVE = {
    "interval": None,
    "phase": "PT0S",
    "jitter": "PT0S",
    "overlapPolicy": "ALLOW_ALL",
    "rdates": [],
    "exdates": [],
    "calendar": None,
    "holidayPolicy": None,
    "businessDaysOnly": False,
    "deadline": None,
    "catchUpSpacing": None,
    "failureStreak": None,
}


def test_resolved_has_a_key_for_every_spec_field_but_additive_ones_at_default() -> None:
    resolved = parse_spec(SEED_SPEC).resolved()
    aliases = {
        field.alias or name for name, field in type(parse_spec(SEED_SPEC)).model_fields.items()
    }
    assert set(resolved) == aliases - set(ADDITIVE)


def test_additive_fields_are_written_out_when_set() -> None:
    data = {**SEED_SPEC, "jitter": "PT30S", "overlapPolicy": "SKIP"}
    resolved = parse_spec(data).resolved()
    assert (resolved["jitter"], resolved["overlapPolicy"]) == ("PT30S", "SKIP")
    interval = {k: v for k, v in SEED_SPEC.items() if k != "rule"}
    resolved = parse_spec({**interval, "interval": "PT2H", "phase": "PT15M"}).resolved()
    assert (resolved["interval"], resolved["phase"], resolved["rule"]) == ("PT2H", "PT15M", None)
    assert parse_spec(resolved).resolved() == resolved


def test_additive_fields_at_their_default_keep_the_old_digest() -> None:
    explicit = {**MINIMAL, **{k: v for k, v in ADDITIVE.items() if v is not None}}
    assert parse_spec(explicit).digest() == parse_spec(MINIMAL).digest()


def test_defaults_do_not_depend_on_the_clock(monkeypatch: pytest.MonkeyPatch) -> None:
    before = parse_spec(MINIMAL).canonical_json()

    # Move the process clock and local zone far away; nothing resolved may change.
    monkeypatch.setenv("TZ", "Pacific/Kiritimati")
    time.tzset()
    try:
        monkeypatch.setattr(time, "time", lambda: 4_102_444_800.0)  # 2100-01-01
        after = parse_spec(MINIMAL).canonical_json()
    finally:
        monkeypatch.undo()
        time.tzset()

    assert after == before
    assert json.loads(after)["start"] == "2001-01-01T00:00:00"


def test_default_start_is_monday_first_of_january_2001() -> None:
    # The documented anchor: every BYxxx default taken from DTSTART is the "first" one.
    start = parse_spec(MINIMAL).start
    assert (start.year, start.month, start.day, start.hour, start.minute, start.second) == (
        2001,
        1,
        1,
        0,
        0,
        0,
    )
    assert start.weekday() == 0
    assert start.tzinfo is None


def test_resolved_round_trips_to_the_same_spec() -> None:
    spec = parse_spec(SEED_SPEC)
    assert parse_spec(spec.resolved()).resolved() == spec.resolved()


def test_explicit_defaults_and_omitted_defaults_are_the_same_stored_spec() -> None:
    explicit = {**MINIMAL, **{k: v for k, v in EXPECTED_RESOLVED.items() if v is not None}}
    assert parse_spec(explicit).canonical_json() == parse_spec(MINIMAL).canonical_json()


def test_start_is_kept_as_floating_local_time() -> None:
    spec = parse_spec({**MINIMAL, "start": "2026-03-08T02:30:00"})
    assert spec.start == datetime(2026, 3, 8, 2, 30)
    assert spec.start.tzinfo is None
    assert spec.resolved()["start"] == "2026-03-08T02:30:00"


def test_lateness_accepts_iso_8601_duration_and_stores_it_as_one() -> None:
    spec = parse_spec({**MINIMAL, "lateness": "PT1H30M"})
    assert spec.lateness.total_seconds() == 5400
    assert parse_spec(spec.resolved()).lateness.total_seconds() == 5400


def test_digest_is_sha256_of_sorted_compact_resolved_json() -> None:
    text = json.dumps(EXPECTED_RESOLVED, sort_keys=True, separators=(",", ":"))
    expected = "sha256:" + hashlib.sha256(text.encode()).hexdigest()
    assert parse_spec(MINIMAL).digest() == expected


def test_digest_is_stable_across_key_order_and_repeated_parsing() -> None:
    reordered = dict(reversed(list(SEED_SPEC.items())))
    digests = {parse_spec(SEED_SPEC).digest(), parse_spec(reordered).digest()}
    digests |= {parse_spec(SEED_SPEC).digest() for _ in range(3)}
    assert len(digests) == 1


def test_digest_changes_when_any_field_changes() -> None:
    base = parse_spec(SEED_SPEC).digest()
    changes = [
        {"revision": 8},
        {"rule": "FREQ=DAILY;BYHOUR=2;BYMINUTE=31"},
        {"gapPolicy": "SHIFT_FORWARD"},
        {"lateness": "PT6M"},
        {"cutoverAt": "2026-11-01T06:00:01Z"},
    ]
    assert all(parse_spec({**SEED_SPEC, **change}).digest() != base for change in changes)


def test_cutover_with_an_offset_is_stored_as_the_same_utc_instant() -> None:
    spec = parse_spec({**SEED_SPEC, "cutoverAt": "2026-11-01T01:00:00-05:00"})
    assert spec.resolved()["cutoverAt"] == "2026-11-01T06:00:00Z"
