"""gapPolicy NEXT_VALID: a nominal time in a gap runs at the first instant after the gap (ISC
cron, croniter, Dagster). New York 2026-03-08: 02:00 EST → 03:00 EDT at 07:00Z, so 02:30 runs at
03:00 EDT = 07:00Z. Lord Howe 2026-10-04: 02:00 → 02:30 at 2026-10-03T15:30Z."""

from tcsupport import iso, utc

from timecontract import FoldPolicy, GapPolicy, occurrences, parse_spec, resolve_local, zones

SPEC = {
    "schema": "scheduleSpec.v1",
    "scheduleId": "gap",
    "revision": 1,
    "timeZone": "America/New_York",
    "tzdbVersion": "2026a",
    "cutoverAt": "2026-01-01T00:00:00Z",
    "gapPolicy": "NEXT_VALID",
}


def _rows(rule: str, zone: str = "America/New_York") -> list[tuple[str, str | None, str]]:
    spec = parse_spec(SPEC | {"rule": rule, "timeZone": zone})
    found = occurrences(spec, utc("2026-03-08T06:00:00"), utc("2026-03-08T09:00:00"))
    return [(r.nominal_local.time().isoformat(), iso(r.instant_utc), r.reason.value) for r in found]


def test_0230_on_the_spring_forward_night_runs_at_0300_edt() -> None:
    zone = zones.load("America/New_York", "2026a")
    [res] = resolve_local(
        utc("2026-03-08T02:30:00").replace(tzinfo=None),
        zone,
        GapPolicy.NEXT_VALID,
        FoldPolicy.FIRST_ONLY,
    )
    assert (iso(res.instant_utc), iso(res.gap_at_utc), res.reason.value) == (
        "2026-03-08T07:00:00Z",
        "2026-03-08T07:00:00Z",
        "GAP_NEXT_VALID",
    )


def test_a_natural_0300_keeps_the_slot_and_gap_times_collide_recorded() -> None:
    rows = _rows("FREQ=DAILY;BYHOUR=2,3;BYMINUTE=0,30")
    assert rows == [
        ("02:00:00", None, "GAP_SHIFT_COLLISION"),
        ("02:30:00", None, "GAP_SHIFT_COLLISION"),
        ("03:00:00", "2026-03-08T07:00:00Z", "UNAMBIGUOUS"),
        ("03:30:00", "2026-03-08T07:30:00Z", "UNAMBIGUOUS"),
    ]


def test_of_two_gap_times_the_earliest_keeps_the_end_of_the_gap() -> None:
    rows = _rows("FREQ=DAILY;BYHOUR=2;BYMINUTE=0,30")
    assert rows == [
        ("02:00:00", "2026-03-08T07:00:00Z", "GAP_NEXT_VALID"),
        ("02:30:00", None, "GAP_SHIFT_COLLISION"),
    ]


def test_half_hour_gap_of_lord_howe() -> None:
    spec = parse_spec(
        SPEC | {"rule": "FREQ=DAILY;BYHOUR=2;BYMINUTE=15", "timeZone": "Australia/Lord_Howe"}
    )
    found = occurrences(spec, utc("2026-10-03T12:00:00"), utc("2026-10-03T18:00:00"))
    assert [(iso(r.instant_utc), r.reason.value) for r in found] == [
        ("2026-10-03T15:30:00Z", "GAP_NEXT_VALID")
    ]


def test_the_calendar_path_settles_gap_times_the_same_way() -> None:
    # exdates sends the spec through timecontract.recurrence (resolve.settle_collisions).
    spec = parse_spec(
        SPEC | {"rule": "FREQ=DAILY;BYHOUR=2;BYMINUTE=0,30", "exdates": ["2026-01-01"]}
    )
    found = occurrences(spec, utc("2026-03-08T06:00:00"), utc("2026-03-08T09:00:00"))
    assert [
        (r.nominal_local.time().isoformat(), iso(r.instant_utc), r.reason.value) for r in found
    ] == [
        ("02:00:00", "2026-03-08T07:00:00Z", "GAP_NEXT_VALID"),
        ("02:30:00", None, "GAP_SHIFT_COLLISION"),
    ]
