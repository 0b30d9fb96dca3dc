"""``deadline`` (issue 30): a positive duration, at most the smallest spacing of two occurrences.

Refused with one problem naming ``deadline`` and its value: zero, negative, fractional seconds,
months, and longer than the spacing — for a daily rule one day, for ``BYHOUR=9,17`` (uneven, the
smallest spacing is 8 h, not the 24 h period), for an interval the interval. Spacings here are
read off the rule by hand (RFC 5545 §3.3.10), not from the code under test. A spec without a
deadline keeps the digest it had before the field existed (the additive-fields rule).
"""

from __future__ import annotations

from typing import Any

import pytest

from timecontract import InvalidSpec, load_spec

SEED = {
    "schema": "scheduleSpec.v1",
    "scheduleId": "daily-ops-summary",
    "revision": 7,
    "timeZone": "America/New_York",
    "tzdbVersion": "2026a",
    "rule": "FREQ=DAILY;BYHOUR=2;BYMINUTE=30",
    "gapPolicy": "SKIP",
    "foldPolicy": "FIRST_ONLY",
    "misfirePolicy": "CATCH_UP_BOUNDED",
    "maxCatchUp": 2,
    "cutoverAt": "2026-11-01T06:00:00Z",
}


SEED_DIGEST = "sha256:3669469aaa04d6d418f2fb0a550ac6034c27284cda0ee4f4676670cd536551f3"
"""The seed's digest as computed before ``deadline`` existed (main before issue 30)."""


def load(**overrides: Any) -> Any:
    data = {**SEED, **overrides}
    return load_spec({k: v for k, v in data.items() if v is not None})


def refusal(**overrides: Any) -> str:
    with pytest.raises(InvalidSpec) as caught:
        load(**overrides)
    problems = caught.value.problems
    assert len(problems) == 1
    assert problems[0].field == "deadline"
    return str(caught.value).splitlines()[-1]


@pytest.mark.parametrize("value", ["PT0S", "-PT5M", "PT0.5S", "P1M"])
def test_zero_negative_fractional_and_month_deadlines_are_refused(value: str) -> None:
    line = refusal(deadline=value)
    assert "deadline=" in line


@pytest.mark.parametrize(
    ("overrides", "longest"),
    [
        ({"rule": "FREQ=DAILY;BYHOUR=2;BYMINUTE=30"}, "P1D"),
        ({"rule": "FREQ=DAILY;BYHOUR=9,17;BYMINUTE=0"}, "PT8H"),
        ({"rule": "FREQ=MONTHLY;BYMONTHDAY=1,3;BYHOUR=0;BYMINUTE=0"}, "P2D"),
        ({"rule": None, "interval": "PT10M"}, "PT10M"),
    ],
)
def test_deadline_up_to_the_smallest_spacing_is_accepted_and_longer_refused(
    overrides: dict[str, Any], longest: str
) -> None:
    assert load(**overrides, deadline=longest).deadline is not None
    longer = longest.replace("P1D", "PT24H1S").replace("PT8H", "PT8H1S")
    longer = longer.replace("P2D", "P2DT1S").replace("PT10M", "PT10M1S")
    line = refusal(**overrides, deadline=longer)
    assert "deadline=" in line
    assert "smallest spacing" in line


def test_a_spec_without_deadline_keeps_its_digest_and_one_with_it_differs() -> None:
    without = load()
    assert "deadline" not in without.resolved()
    assert without.digest() == SEED_DIGEST
    with_deadline = load(deadline="PT30M")
    assert with_deadline.resolved()["deadline"] == "PT30M"
    assert with_deadline.digest() != without.digest()
