"""``ended_before`` names ``end`` or ``UNTIL`` only for a window starting after the last record.

Golden instants by hand from the Europe/Berlin rules (EU: summer time from the last Sunday of
March, 01:00Z, to the last Sunday of October, 01:00Z; CET +01:00, CEST +02:00) and RFC 5545
§3.3.5 (a gap time is read with the offset before the gap). ``end`` bounds the nominal local
time, so near a transition the last record may be placed after ``end`` read as an instant.
"""

from __future__ import annotations

from datetime import timedelta

import pytest
from tcsupport import iso, utc

from timecontract import ended_before, occurrences, starts_after

BERLIN = {"timeZone": "Europe/Berlin", "cutoverAt": "2026-01-01T00:00:00Z"}


@pytest.mark.parametrize(
    ("fields", "last"),
    [
        # 02:30 on 29 March does not exist; shifted it is 02:30+01:00 = 01:30Z, later than the
        # end itself, 03:00+02:00 = 01:00Z.
        (
            {"end": "2026-03-29T03:00:00", "gapPolicy": "SHIFT_FORWARD"},
            "2026-03-29T01:30:00",
        ),
        # Under NEXT_VALID it runs at the transition, 01:00Z.
        ({"end": "2026-03-29T02:30:00", "gapPolicy": "NEXT_VALID"}, "2026-03-29T01:00:00"),
        # 02:30 on 25 October occurs twice; its second pass is 02:30+01:00 = 01:30Z.
        ({"end": "2026-10-25T02:30:00", "foldPolicy": "SECOND_ONLY"}, "2026-10-25T01:30:00"),
        ({"end": "2026-10-25T02:30:00", "foldPolicy": "BOTH"}, "2026-10-25T01:30:00"),
    ],
)
def test_end_is_named_only_after_the_last_record(spec_factory, fields, last) -> None:
    spec = spec_factory(**BERLIN, rule="FREQ=HOURLY;BYMINUTE=30", **fields)
    last_utc = utc(last)
    records = occurrences(spec, last_utc - timedelta(days=1), last_utc + timedelta(days=1))
    assert iso(records[-1].placed_at_utc) == iso(last_utc)
    assert ended_before(spec, last_utc) is None
    named = f"end {fields['end']} (Europe/Berlin)"
    assert ended_before(spec, last_utc + timedelta(hours=3)) == named


def test_until_is_named_only_after_it(spec_factory) -> None:
    spec = spec_factory(**BERLIN, rule="FREQ=HOURLY;UNTIL=20260630T210000Z")
    assert ended_before(spec, utc("2026-06-30T21:00:00")) is None
    assert ended_before(spec, utc("2026-06-30T21:00:01")) == "UNTIL 2026-06-30T21:00:00Z"


def test_a_spec_without_end_or_until_names_nothing(spec_factory) -> None:
    spec = spec_factory(**BERLIN, rule="FREQ=HOURLY;COUNT=3")
    assert ended_before(spec, utc("2030-01-01T00:00:00")) is None


def test_the_last_rdate_is_named_only_after_its_record(spec_factory) -> None:
    # rdates alone: the series ends with its last date, 09:00 CEST (+02:00) = 07:00Z.
    spec = spec_factory(**BERLIN, rule=None, rdates=["2026-05-01T09:00:00", "2026-06-30T09:00:00"])
    records = occurrences(spec, utc("2026-06-30T00:00:00"), utc("2026-07-01T00:00:00"))
    assert [iso(r.placed_at_utc) for r in records] == [iso(utc("2026-06-30T07:00:00"))]
    assert ended_before(spec, utc("2026-06-30T07:00:00")) is None
    named = "the last rdate 2026-06-30T09:00:00 (Europe/Berlin)"
    # Named once no offset near the window's start (+01:00 or +02:00) reads it before 09:00.
    assert ended_before(spec, utc("2026-06-30T08:00:00")) is None
    assert ended_before(spec, utc("2026-06-30T08:00:01")) == named


def test_start_is_named_only_a_day_before_the_first_record(spec_factory) -> None:
    # The first nominal time, 00:00 CET (+01:00) on 1 January 2030, is 2029-12-31T23:00Z.
    spec = spec_factory(**BERLIN, rule="FREQ=HOURLY", start="2030-01-01T00:00:00")
    first = occurrences(spec, utc("2029-12-30T00:00:00"), utc("2030-01-01T00:00:00"))
    assert [iso(r.placed_at_utc) for r in first] == [iso(utc("2029-12-31T23:00:00"))]
    named = "start 2030-01-01T00:00:00 (Europe/Berlin)"
    assert starts_after(spec, utc("2029-12-31T00:00:00")) == named
    assert starts_after(spec, utc("2029-12-31T00:00:01")) is None
    assert starts_after(spec, utc("2029-12-31T23:00:01")) is None
