"""DESIGN §3: two nominal times resolving to one instant share one logical slot; the natural
occurrence keeps it, the shifted one is recorded with a reason, never dropped silently.

New York 2026-03-08: 02:00 does not exist; read with -05:00 it is 07:00Z, the instant of the
natural 03:00 EDT. Apia 2011-12-30 12:00 read with -10:00 is 22:00Z, the natural 12-31 12:00 +14.
"""

from tcsupport import row, utc

from timecontract import occurrences


def test_hourly_rule_shifted_gap_time_collides_and_natural_keeps_the_slot(spec_factory) -> None:
    spec = spec_factory(
        rule="FREQ=HOURLY;BYMINUTE=0", gapPolicy="SHIFT_FORWARD", cutoverAt="2026-01-01T00:00:00Z"
    )
    records = occurrences(spec, utc("2026-03-08T06:00:00"), utc("2026-03-08T08:30:00"))
    assert [row(r) for r in records] == [
        (
            "2026-03-08T01:00:00",
            0,
            "2026-03-08T06:00:00Z",
            "-05:00",
            None,
            "PLANNED",
            "UNAMBIGUOUS",
        ),
        (
            "2026-03-08T02:00:00",
            0,
            None,
            None,
            "2026-03-08T07:00:00Z",
            "SKIPPED_GAP",
            "GAP_SHIFT_COLLISION",
        ),
        (
            "2026-03-08T03:00:00",
            0,
            "2026-03-08T07:00:00Z",
            "-04:00",
            None,
            "PLANNED",
            "UNAMBIGUOUS",
        ),
        (
            "2026-03-08T04:00:00",
            0,
            "2026-03-08T08:00:00Z",
            "-04:00",
            None,
            "PLANNED",
            "UNAMBIGUOUS",
        ),
    ]
    assert records[1].logical_slot_id is None
    assert records[2].logical_slot_id == "daily-ops-summary@20260308T070000Z"


def test_hourly_rule_under_skip_records_the_gap_time_as_skipped(spec_factory) -> None:
    spec = spec_factory(
        rule="FREQ=HOURLY;BYMINUTE=30", gapPolicy="SKIP", cutoverAt="2026-01-01T00:00:00Z"
    )
    records = occurrences(spec, utc("2026-03-08T06:00:00"), utc("2026-03-08T08:00:00"))
    assert [(r.nominal_local.strftime("%H:%M"), r.reason.value) for r in records] == [
        ("01:30", "UNAMBIGUOUS"),
        ("02:30", "GAP_SKIPPED"),
        ("03:30", "UNAMBIGUOUS"),
    ]


def test_shifted_time_with_no_natural_twin_keeps_its_own_slot(spec_factory) -> None:
    # 02:30 daily: nothing natural at 03:30 EDT, so the shifted occurrence runs.
    spec = spec_factory(gapPolicy="SHIFT_FORWARD", cutoverAt="2026-01-01T00:00:00Z")
    [record] = occurrences(spec, utc("2026-03-08T00:00:00"), utc("2026-03-09T00:00:00"))
    assert record.reason.value == "GAP_SHIFTED_FORWARD"
    assert record.logical_slot_id == "daily-ops-summary@20260308T073000Z"


def test_apia_whole_missing_day_shifts_onto_the_next_day_and_collides(spec_factory) -> None:
    spec = spec_factory(
        timeZone="Pacific/Apia",
        rule="FREQ=DAILY;BYHOUR=12",
        gapPolicy="SHIFT_FORWARD",
        cutoverAt="2011-01-01T00:00:00Z",
    )
    records = occurrences(spec, utc("2011-12-30T00:00:00"), utc("2011-12-31T00:00:00"))
    assert [row(r) for r in records] == [
        (
            "2011-12-30T12:00:00",
            0,
            None,
            None,
            "2011-12-30T10:00:00Z",
            "SKIPPED_GAP",
            "GAP_SHIFT_COLLISION",
        ),
        (
            "2011-12-31T12:00:00",
            0,
            "2011-12-30T22:00:00Z",
            "+14:00",
            None,
            "PLANNED",
            "UNAMBIGUOUS",
        ),
    ]


def test_collision_is_the_same_whichever_window_sees_it(spec_factory) -> None:
    spec = spec_factory(
        rule="FREQ=HOURLY;BYMINUTE=0", gapPolicy="SHIFT_FORWARD", cutoverAt="2026-01-01T00:00:00Z"
    )
    whole = occurrences(spec, utc("2026-03-08T00:00:00"), utc("2026-03-09T00:00:00"))
    # The shifted instant (07:00Z) and gapAt (07:00Z) sit on the split point.
    left = occurrences(spec, utc("2026-03-08T00:00:00"), utc("2026-03-08T07:00:00"))
    right = occurrences(spec, utc("2026-03-08T07:00:00"), utc("2026-03-09T00:00:00"))
    assert [row(r) for r in left + right] == [row(r) for r in whole]
    assert sum(r.reason.value == "GAP_SHIFT_COLLISION" for r in whole) == 1
