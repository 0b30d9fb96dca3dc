"""A spec's durations are ISO 8601 text, its flags booleans and its counts numbers: a bare number,
a ``"yes"`` or a ``true`` count is refused naming the field and the value, not read as seconds, as
true or as 1."""

from __future__ import annotations

from typing import Any

import pytest

from timecontract import InvalidSpec, parse_spec

BASE: dict[str, Any] = {
    "schema": "scheduleSpec.v1",
    "scheduleId": "strict",
    "revision": 1,
    "timeZone": "Etc/UTC",
    "tzdbVersion": "2026a",
    "rule": "FREQ=DAILY",
    "cutoverAt": "2026-11-01T00:00:00Z",
}
POLICY = {"notifyAfter": 2, "action": {"name": "noop"}}


@pytest.mark.parametrize(
    ("extra", "field"),
    [
        ({"lateness": 3}, "lateness=3"),
        ({"deadline": 5}, "deadline=5"),
        ({"catchUpSpacing": 3}, "catchUpSpacing=3"),
        ({"jitter": 1.5}, "jitter=1.5"),
        ({"failureStreak": {**POLICY, "pause": "yes"}}, "failureStreak.pause='yes'"),
        ({"revision": True}, "revision=true"),
        ({"maxCatchUp": False}, "maxCatchUp=false"),
        ({"failureStreak": {**POLICY, "notifyAfter": True}}, "failureStreak.notifyAfter=true"),
        ({"failureStreak": {**POLICY, "recoverAfter": True}}, "failureStreak.recoverAfter=true"),
        ({"calendar": {"name": "NYSE", "release": "holidays-0.108"}, "businessDaysOnly": "yes"},
         "businessDaysOnly='yes'"),
    ],
)  # fmt: skip
def test_a_bare_number_or_a_word_for_a_flag_is_refused(extra: dict[str, Any], field: str) -> None:
    with pytest.raises(InvalidSpec) as refused:
        parse_spec({**BASE, **extra})
    assert [str(p).split(":")[0] for p in refused.value.problems] == [field]


def test_the_documented_forms_still_parse() -> None:
    spec = parse_spec({**BASE, "lateness": "PT3S", "failureStreak": {**POLICY, "pause": True}})
    assert spec.lateness.total_seconds() == 3 and spec.failure_streak is not None
    assert spec.failure_streak.pause is True
