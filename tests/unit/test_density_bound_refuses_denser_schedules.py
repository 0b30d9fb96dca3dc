"""The densest supported schedule (30 occurrences a minute) is enforced where a spec enters.

Refused with one problem naming the field (``rule`` or ``interval``) and the bound: every second
written through BYxxx lists (issue 27's spec), ``FREQ=MINUTELY`` with every second, a plain
``FREQ=SECONDLY``, ``interval: PT1S``. Accepted: the bound itself (every 2 seconds, however
written) and the examples. The per-minute and per-day bounds are compared with the RFC 5545
reference expander (``rrule_reference``, no shared code): for rules that fire in every minute
they can, the bound is the densest minute and day the reference finds.
"""

from __future__ import annotations

import time
from collections import Counter
from datetime import datetime, timedelta
from pathlib import Path
from typing import Any

import pytest
from rrule_reference import expand as reference_expand

from timecontract import InvalidSpec, load_spec
from timecontract.density import MAX_PER_MINUTE, per_day_bound, per_minute_bound
from timecontract.rrule import parse_rule

REPO = Path(__file__).resolve().parents[2]
EVERY = ",".join(map(str, range(60)))
EVERY_OTHER = ",".join(map(str, range(0, 60, 2)))
HOURS = ",".join(map(str, range(24)))


def spec(**overrides: Any) -> dict[str, Any]:
    return {
        "schema": "scheduleSpec.v1",
        "scheduleId": "dense",
        "revision": 1,
        "timeZone": "UTC",
        "tzdbVersion": "2026a",
        "cutoverAt": "2027-01-01T00:00:00Z",
        **overrides,
    }


@pytest.mark.parametrize(
    ("rule", "peak"),
    [
        (f"FREQ=DAILY;BYHOUR={HOURS};BYMINUTE={EVERY};BYSECOND={EVERY}", 60),
        (f"FREQ=MINUTELY;BYSECOND={EVERY}", 60),
        ("FREQ=SECONDLY", 60),
        (f"FREQ=HOURLY;BYMINUTE=5;BYSECOND={','.join(map(str, range(31)))}", 31),
    ],
)
def test_a_denser_rule_is_refused_naming_rule_and_the_bound(rule: str, peak: int) -> None:
    started = time.monotonic()
    with pytest.raises(InvalidSpec) as caught:
        load_spec(spec(rule=rule))
    assert time.monotonic() - started < 1.0  # from the rule's parts: nothing is expanded
    (problem,) = caught.value.problems
    assert problem.field == "rule"
    assert f"up to {peak} occurrences in one minute" in problem.problem
    assert f"{MAX_PER_MINUTE} a minute" in problem.problem
    assert "\n" not in problem.problem


def test_an_interval_shorter_than_two_seconds_is_refused() -> None:
    with pytest.raises(InvalidSpec) as caught:
        load_spec(spec(interval="PT1S"))
    (problem,) = caught.value.problems
    assert (problem.field, problem.value) == ("interval", "PT1S")
    assert "PT2S" in problem.problem and "30 occurrences a minute" in problem.problem


@pytest.mark.parametrize(
    "fields",
    [
        {"rule": "FREQ=SECONDLY;INTERVAL=2"},
        {"rule": f"FREQ=MINUTELY;BYSECOND={EVERY_OTHER}"},
        {"rule": f"FREQ=DAILY;BYHOUR={HOURS};BYMINUTE={EVERY};BYSECOND={EVERY_OTHER}"},
        {"rule": f"FREQ=MINUTELY;BYSECOND={EVERY};BYSETPOS=1,-1"},
        {"interval": "PT2S"},
    ],
)
def test_the_bound_itself_is_accepted(fields: dict[str, str]) -> None:
    load_spec(spec(**fields))


def test_the_examples_stay_valid() -> None:
    for path in sorted((REPO / "examples").glob("*.yaml")):
        try:
            load_spec(path)
        except InvalidSpec as exc:
            assert not any(p.field in {"rule", "interval"} for p in exc.problems), (path, exc)


@pytest.mark.parametrize(
    ("rule", "days"),
    [
        ("FREQ=SECONDLY;INTERVAL=2", 0),
        ("FREQ=SECONDLY;INTERVAL=7;BYSECOND=0,1,2,3,4,5,6,7,8,9,10,11,12,13", 0),
        ("FREQ=MINUTELY;BYSECOND=0,15,30,45", 1),
        ("FREQ=MINUTELY;INTERVAL=3;BYHOUR=9,10;BYSECOND=5,6", 1),
        ("FREQ=MINUTELY;BYSECOND=1,2,3,4;BYSETPOS=1,-1", 0),
        ("FREQ=HOURLY;BYMINUTE=0,30;BYSECOND=0,1,2", 2),
        ("FREQ=HOURLY;INTERVAL=5;BYMINUTE=10", 3),
        ("FREQ=DAILY;BYHOUR=9,17;BYMINUTE=0", 3),
        ("FREQ=WEEKLY;BYDAY=MO,TU;BYHOUR=1,2;BYMINUTE=5;BYSECOND=1,2", 8),
        ("FREQ=MONTHLY;BYMONTHDAY=1;BYHOUR=3;BYMINUTE=0,1,2", 40),
    ],
)
def test_bounds_equal_the_densest_minute_and_day_of_the_reference(rule: str, days: int) -> None:
    dtstart = datetime(2027, 1, 4)  # a Monday
    length = timedelta(days=days) if days else timedelta(hours=1)
    found = [m for m in reference_expand(rule, dtstart, dtstart + length) if m < dtstart + length]
    assert found
    per_minute = Counter(moment.replace(second=0) for moment in found)
    assert max(per_minute.values()) == per_minute_bound(parse_rule(rule))
    if days:
        per_day = Counter(moment.date() for moment in found)
        assert max(per_day.values()) == per_day_bound(parse_rule(rule))
    else:
        assert per_day_bound(parse_rule(rule)) >= len(found) * 24


def test_dates_only_are_held_to_the_same_bound() -> None:
    """31 one-off date-times within one minute are denser than the bound; 30 a minute are not."""
    start = datetime(2027, 1, 4, 9, 0, 0)
    every_second = [(start + timedelta(seconds=s)).isoformat() for s in range(31)]
    every_other = [(start + timedelta(seconds=s)).isoformat() for s in range(0, 62, 2)]
    with pytest.raises(InvalidSpec) as refused:
        load_spec(spec(rdates=every_second))
    [problem] = refused.value.problems
    assert problem.field == "rdates"
    assert "31 date-times within one minute" in str(problem)
    # 31 date-times 2 s apart: at most 30 in any minute (the 31st is 60 s after the first).
    assert load_spec(spec(rdates=every_other)).rdates[0] == start
