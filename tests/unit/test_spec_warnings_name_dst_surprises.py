"""``timecontract.spec_warnings``: valid specs that would surprise on a DST night are named.

Expected values are hand-computed from the zones' published rules, not from the code under test:

- America/New_York (US rules since 2007): DST starts the second Sunday of March at 02:00 EST
  (07:00Z) and ends the first Sunday of November at 02:00 EDT (06:00Z). 2026: 2026-03-08 and
  2026-11-01; 2027: 2027-03-14 and 2027-11-07. On 2026-11-01 local 01:00–02:00 happens twice:
  05:00Z–06:00Z (EDT, -04:00) and 06:00Z–07:00Z (EST, -05:00); on 2027-03-14 local 02:00–03:00
  does not exist (07:00Z is 03:00 EDT).
- Europe/London (EU rules): summer time ends the last Sunday of October at 01:00Z: 2026-10-25,
  local 01:00–02:00 twice (00:00Z–01:00Z BST, 01:00Z–02:00Z GMT).
- Australia/Lord_Howe: +11:00 in summer, +10:30 in winter; summer time ends the first Sunday of
  April at 02:00 local summer time: 2027-04-04 02:00 +11:00 = 2027-04-03T15:00Z, local 01:30–02:00
  twice (14:30Z–15:00Z and 15:00Z–15:30Z): a fold of 30 minutes.
"""

from __future__ import annotations

from datetime import UTC, datetime, timedelta
from typing import Any

import pytest

from timecontract import WarningCode, parse_spec, spec_warnings, zones
from timecontract.advisories import transitions


def spec(**overrides: Any) -> Any:
    data: dict[str, Any] = {
        "schema": "scheduleSpec.v1",
        "scheduleId": "warn",
        "revision": 1,
        "timeZone": "America/New_York",
        "tzdbVersion": "2026a",
        "rule": "FREQ=HOURLY",
        "cutoverAt": "2026-10-01T00:00:00Z",
    }
    data.update(overrides)
    return parse_spec(data)


def codes(**overrides: Any) -> list[str]:
    return [w.code.value for w in spec_warnings(spec(**overrides))]


def z(text: str) -> datetime:
    return datetime.fromisoformat(text.replace("Z", "+00:00"))


def test_transitions_of_new_york_2026_are_the_us_rule_dates() -> None:
    zone = zones.load("America/New_York", "2026a")
    found = transitions(zone, z("2026-01-01T00:00:00Z"), z("2027-01-01T00:00:00Z"))
    assert [(t.at_utc, t.offset_before, t.offset_after, t.is_fold) for t in found] == [
        (z("2026-03-08T07:00:00Z"), timedelta(hours=-5), timedelta(hours=-4), False),
        (z("2026-11-01T06:00:00Z"), timedelta(hours=-4), timedelta(hours=-5), True),
    ]


def test_transitions_of_lord_howe_have_a_thirty_minute_fold() -> None:
    zone = zones.load("Australia/Lord_Howe", "2026a")
    found = transitions(zone, z("2027-04-01T00:00:00Z"), z("2027-04-10T00:00:00Z"))
    assert [(t.at_utc, t.length, t.is_fold) for t in found] == [
        (z("2027-04-03T15:00:00Z"), timedelta(minutes=30), True)
    ]


# -- REPEATED_HOUR_SILENT -------------------------------------------------------------------------


def test_hourly_first_only_is_silent_for_the_second_pass_of_new_yorks_fold() -> None:
    (warning,) = spec_warnings(spec())
    assert warning.code is WarningCode.REPEATED_HOUR_SILENT
    assert (warning.field, warning.value) == ("foldPolicy", "FIRST_ONLY")
    assert "2026-11-01" in warning.message and "01:00–02:00" in warning.message
    assert "from 2026-11-01T06:00:00Z to 2026-11-01T07:00:00Z" in warning.message
    assert "BOTH" in warning.message
    assert str(warning).startswith("foldPolicy=FIRST_ONLY: ")
    assert warning.to_json()["code"] == "REPEATED_HOUR_SILENT"


def test_hourly_second_only_is_silent_for_the_first_pass() -> None:
    (warning,) = spec_warnings(spec(foldPolicy="SECOND_ONLY"))
    assert "from 2026-11-01T05:00:00Z to 2026-11-01T06:00:00Z" in warning.message


def test_london_fold_is_named_with_its_own_instants() -> None:
    (warning,) = spec_warnings(spec(timeZone="Europe/London", rule="FREQ=MINUTELY;INTERVAL=15"))
    assert "2026-10-25" in warning.message
    assert "from 2026-10-25T01:00:00Z to 2026-10-25T02:00:00Z" in warning.message


def test_lord_howe_half_hour_fold_is_thirty_silent_minutes() -> None:
    (warning,) = spec_warnings(
        spec(
            timeZone="Australia/Lord_Howe",
            rule="FREQ=MINUTELY;INTERVAL=10",
            cutoverAt="2027-03-01T00:00:00Z",
        )
    )
    assert "01:30–02:00" in warning.message
    assert "from 2027-04-03T15:00:00Z to 2027-04-03T15:30:00Z" in warning.message


@pytest.mark.parametrize(
    "rule",
    ["FREQ=HOURLY;BYMINUTE=30", "FREQ=MINUTELY", "FREQ=DAILY;BYHOUR=0,1,2,3,4,5,6,7;BYMINUTE=5"],
)
def test_every_rule_firing_at_least_hourly_around_the_fold_is_warned(rule: str) -> None:
    assert codes(rule=rule) == ["REPEATED_HOUR_SILENT"]


@pytest.mark.parametrize(
    "overrides",
    [
        {"foldPolicy": "BOTH"},
        {"rule": "FREQ=DAILY;BYHOUR=1;BYMINUTE=30"},  # once that day, as asked
        {"rule": "FREQ=HOURLY;INTERVAL=2"},  # two hours apart anyway
        {"rule": "FREQ=HOURLY;BYHOUR=9,10,11,12"},  # never near the fold
        {"timeZone": "UTC"},
        {"timeZone": "Asia/Kolkata"},  # no DST
        {"end": "2026-10-31T23:00:00"},  # ends before the fold
    ],
    ids=["both", "daily-0130", "every-2-hours", "office-hours", "utc", "kolkata", "ends-before"],
)
def test_no_repeated_hour_warning_when_nothing_is_silently_dropped(
    overrides: dict[str, Any],
) -> None:
    assert codes(**overrides) == []


# -- CUTOVER_SPLITS_FOLD ------------------------------------------------------------------------


def test_cutover_between_the_two_instants_of_0130_is_a_split() -> None:
    # 01:30 on 2026-11-01 is 05:30Z (EDT) and 06:30Z (EST); 06:00Z lies between them.
    warnings = spec_warnings(
        spec(rule="FREQ=DAILY;BYHOUR=1;BYMINUTE=30", cutoverAt="2026-11-01T06:00:00Z")
    )
    assert [w.code for w in warnings] == [WarningCode.CUTOVER_SPLITS_FOLD]
    (warning,) = warnings
    assert (warning.field, warning.value) == ("cutoverAt", "2026-11-01T06:00:00Z")
    assert "2026-11-01T05:30:00Z and 2026-11-01T06:30:00Z" in warning.message
    assert "FIRST_ONLY" in warning.message and "no occurrence" in warning.message


@pytest.mark.parametrize(
    ("cutover", "split"),
    [
        ("2026-11-01T05:30:00Z", False),  # at the first instant: both owned
        ("2026-11-01T05:30:01Z", True),
        ("2026-11-01T06:30:00Z", True),  # at the second: only the second owned
        ("2026-11-01T06:30:01Z", False),  # after both
        ("2026-11-01T04:00:00Z", False),
    ],
)
def test_split_is_first_before_cutover_and_second_at_or_after(cutover: str, split: bool) -> None:
    found = codes(rule="FREQ=DAILY;BYHOUR=1;BYMINUTE=30", cutoverAt=cutover)
    assert ("CUTOVER_SPLITS_FOLD" in found) is split


def test_the_seed_example_has_a_cutover_at_the_fold_but_no_time_in_it() -> None:
    # cutoverAt 2026-11-01T06:00:00Z is New York's transition, but 02:30 is never repeated.
    seed = spec(
        revision=7,
        rule="FREQ=DAILY;BYHOUR=2;BYMINUTE=30",
        gapPolicy="SKIP",
        misfirePolicy="CATCH_UP_BOUNDED",
        maxCatchUp=2,
        cutoverAt="2026-11-01T06:00:00Z",
    )
    assert spec_warnings(seed) == []


def test_second_only_split_says_the_previous_revision_keeps_the_first() -> None:
    (warning,) = spec_warnings(
        spec(
            rule="FREQ=DAILY;BYHOUR=1;BYMINUTE=30",
            foldPolicy="SECOND_ONLY",
            cutoverAt="2026-11-01T06:00:00Z",
        )
    )
    assert warning.code is WarningCode.CUTOVER_SPLITS_FOLD and "SECOND_ONLY" in warning.message


# -- CUTOVER_IN_GAP -----------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("gap_policy", "cutover", "warned"),
    [
        # 02:30 does not exist on 2027-03-14; gapAt = 07:00Z, the span ends at 08:00Z.
        ("SKIP", "2027-03-14T07:10:00Z", True),  # SKIPPED_GAP placed at 07:00Z < cutover
        ("SKIP", "2027-03-14T07:00:00Z", False),  # at gapAt: the record is owned
        ("SKIP", "2027-03-14T08:00:00Z", False),  # after the span: an ordinary cutover
        ("SHIFT_FORWARD", "2027-03-14T07:10:00Z", False),  # shifted to 07:30Z, still owned
        ("SHIFT_FORWARD", "2027-03-14T07:45:00Z", True),  # 07:30Z < 07:45Z < 08:00Z
    ],
)
def test_cutover_in_the_gap_after_a_gap_time_is_warned(
    gap_policy: str, cutover: str, warned: bool
) -> None:
    found = spec_warnings(
        spec(rule="FREQ=DAILY;BYHOUR=2;BYMINUTE=30", gapPolicy=gap_policy, cutoverAt=cutover)
    )
    assert [w.code for w in found] == ([WarningCode.CUTOVER_IN_GAP] if warned else [])
    if warned:
        assert "02:00–03:00 does not exist" in found[0].message
        assert "2027-03-14T07:00:00Z–2027-03-14T08:00:00Z" in found[0].message


def test_cutover_in_the_gap_without_a_gap_time_of_the_rule_is_not_warned() -> None:
    assert codes(rule="FREQ=DAILY;BYHOUR=12", cutoverAt="2027-03-14T07:30:00Z") == []


def test_warnings_never_read_the_clock_and_are_deterministic() -> None:
    once = spec_warnings(spec())
    assert once == spec_warnings(spec())
    assert datetime(2026, 10, 1, tzinfo=UTC) == spec().cutover_at
