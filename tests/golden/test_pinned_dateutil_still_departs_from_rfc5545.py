"""The pinned python-dateutil still departs from RFC 5545 on every case Almanac corrects.

Each case is an issue-16 golden expansion (``test_rrule_issue16_examples``: expected date-times
worked out by hand from RFC 5545 §3.3.10), run here through raw ``dateutil.rrule`` instead of
timecontract. The test fails the day a dateutil release gets a case right: the message names the
correction that case no longer needs (docs/reference/resolution.md, "Where Almanac corrects
python-dateutil"). Remove that correction and its case then; never the other way round.
"""

from __future__ import annotations

from datetime import datetime
from itertools import takewhile

import pytest
from _pytest.mark import ParameterSet
from dateutil import rrule as du
from test_rrule_issue16_examples import (
    BYWEEKNO_INTERVAL,
    BYWEEKNO_MINUS_53,
    CASES,
    CASES_WINDOW,
    WindowedExample,
)

MIXED_BYDAY = "timecontract.dayset: BYDAY mixing plain and ordinal weekdays (the union)"
WEEKLY_BYSETPOS = "timecontract.expand._from_period: a WEEKLY rule's first set starts on WKST"
WEEK_NUMBERING = "timecontract.dayset: YEARLY with BYWEEKNO over week-numbering years"

CORRECTION = {
    "monthly-every-monday-plus-first-monday": MIXED_BYDAY,
    "monthly-every-monday-plus-last-wednesday": MIXED_BYDAY,
    "yearly-march-every-friday-plus-last-friday": MIXED_BYDAY,
    "weekly-bysetpos-counts-the-first-week-from-wkst": WEEKLY_BYSETPOS,
}


def _examples() -> list[ParameterSet]:
    """Every issue-16 golden expansion as a ``WindowedExample``, with the correction it needs."""
    examples = []
    for case in CASES:
        rule, start, dates = case.values
        expected = [datetime.fromisoformat(f"{day}T{start[11:]}") for day in dates]
        example = WindowedExample(rule, start, *CASES_WINDOW, expected)
        examples.append(pytest.param(example, CORRECTION[case.id], id=case.id))
    examples.append(
        pytest.param(BYWEEKNO_INTERVAL, WEEK_NUMBERING, id="yearly-interval-2-byweekno-1")
    )
    examples.append(pytest.param(BYWEEKNO_MINUS_53, WEEK_NUMBERING, id="byweekno-minus-53"))
    return examples


@pytest.mark.parametrize(("example", "correction"), _examples())
def test_pinned_dateutil_still_needs_the_correction(
    example: WindowedExample, correction: str
) -> None:
    # rrulestr with an explicit DTSTART reads no clock. The specs are in Etc/UTC, so the window's
    # UTC instants are also its floating local bounds.
    recurrence = du.rrulestr(
        example.rule, dtstart=datetime.fromisoformat(example.start), cache=False
    )
    begin, end = (
        datetime.fromisoformat(bound).replace(tzinfo=None)
        for bound in (example.window_from, example.window_to)
    )
    dateutil_says = [value for value in takewhile(end.__gt__, recurrence) if value >= begin]
    assert dateutil_says != example.expected, (
        f"python-dateutil now expands {example.rule} as RFC 5545 does: the correction in "
        f"{correction} is no longer needed for it (docs/reference/resolution.md)"
    )
