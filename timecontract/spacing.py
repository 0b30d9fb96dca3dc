"""Spacing: the smallest distance between two consecutive nominal date-times of a schedule.

A ``deadline`` (``scheduleSpec.v1``) longer than this spacing would let two occurrences' deadlines
overlap, so "the 09:00 run must have succeeded by 09:30" would no longer name one occurrence:
validation refuses it. For an ``interval`` the spacing is the interval itself; for a rule (and
``rdates``) it is measured on the floating local date-times of the first :data:`SAMPLE`
expanded from ``start`` (plus every ``rdate``), which covers every pattern a rule repeats within
its period (the densest supported rule repeats within a minute, ``timecontract.density``). Wall
time is measured, as the rule is written; a DST transition moves a resolved instant by its
offset change, not the rule's spacing.
"""

from __future__ import annotations

from collections.abc import Iterable
from datetime import datetime, timedelta
from itertools import islice, pairwise

from timecontract.expand import iterate_from_start
from timecontract.rrule import Rule

SAMPLE = 2000
"""Nominal date-times of a rule read to measure its spacing (bounded work at validation)."""


def smallest_spacing(
    *,
    interval: timedelta | None,
    rule: Rule | None,
    start: datetime,
    rdates: Iterable[datetime] = (),
) -> timedelta | None:
    """The smallest distance between consecutive nominal date-times, or ``None`` for one or none.

    Args:
        interval: the spec's elapsed-time spacing (then the answer is ``interval``).
        rule: the parsed RRULE (RFC 5545 §3.3.10), or ``None``.
        start: the floating local DTSTART (the spec's ``start``).
        rdates: floating local one-off date-times (RFC 5545 RDATE).

    Returns:
        A positive duration; ``None`` when the schedule has fewer than two distinct date-times
        in its sample (nothing to overlap with).

    """
    if interval is not None:
        return interval
    moments = set(rdates)
    if rule is not None:
        moments.update(islice(iterate_from_start(rule, start), SAMPLE))
    ordered = sorted(moments)
    return min((later - earlier for earlier, later in pairwise(ordered)), default=None)
