"""RFC 7529 ``RSCALE=GREGORIAN`` with ``SKIP``: what a rule means on a date that does not exist.

An RRULE may name a day some months lack: ``BYMONTHDAY=31`` in April, or the 29th of February
(a ``FREQ=YEARLY`` rule from a leap day). RFC 5545 drops such an instance; RFC 7529 §3.1 adds
``RSCALE`` (the calendar: only ``GREGORIAN`` here) and ``SKIP``, which says what to do instead:

- ``OMIT`` (the default): drop it, as RFC 5545 does;
- ``BACKWARD``: the last day the month has (Feb 28 for the 29th, 30, 31; Apr 30 for the 31st);
- ``FORWARD``: the first day of the next month (Mar 1 for Feb 29).

Instances moved onto the same date-time are one instance; COUNT counts after the move (RFC 7529
§3.1: SKIP is applied before BYSETPOS and COUNT). ``SKIP`` without ``RSCALE`` is an error
(RFC 7529 §3.1: "MUST NOT be present unless RSCALE is present").

This module works around the RFC 5545 expansion (``timecontract.expand``) rather than inside it:
``BACKWARD``/``FORWARD`` rules expand an *anchor* rule — the same rule with its month days
replaced by the 1st — and place each wanted day in the anchor's month, moved when the month is
too short. That covers the shapes SKIP exists for, and only those are accepted with ``BACKWARD``
or ``FORWARD``: ``FREQ=MONTHLY`` or ``FREQ=YEARLY``, the days from positive ``BYMONTHDAY`` values
or from ``start``, optionally ``BYMONTH``, ``BYHOUR``, ``BYMINUTE``, ``BYSECOND``, ``INTERVAL``,
``COUNT``, ``UNTIL`` — not ``BYDAY``, ``BYYEARDAY``, ``BYWEEKNO``, ``BYSETPOS`` or negative
month days (a clear :class:`RuleError` names the part).
"""

from __future__ import annotations

import heapq
from calendar import monthrange
from collections.abc import Iterable, Iterator
from dataclasses import dataclass, replace
from datetime import date, datetime, timedelta
from enum import StrEnum

from timecontract.expand import check_satisfiable, expand, iterate_from_start
from timecontract.rrule import Rule, RuleError, parse_rule

RSCALES = ("GREGORIAN",)
"""The calendar scales accepted in ``RSCALE`` (RFC 7529 §3.1; CLDR names)."""


class Skip(StrEnum):
    """RFC 7529 §3.1 ``SKIP``: what an instance on a date the month lacks becomes."""

    OMIT = "OMIT"
    """Dropped (RFC 5545's behaviour; the default)."""
    BACKWARD = "BACKWARD"
    """Moved to the month's last day."""
    FORWARD = "FORWARD"
    """Moved to the first day of the next month."""


@dataclass(frozen=True, slots=True)
class RscaleRule:
    """An RRULE with its RFC 7529 parts: the RFC 5545 rule, the scale and the SKIP behaviour.

    Attributes:
        rule: the rule without ``RSCALE`` and ``SKIP`` (``timecontract.rrule.Rule``).
        rscale: ``"GREGORIAN"``, or ``None`` when the rule has no ``RSCALE``.
        skip: the ``SKIP`` value (``OMIT`` when absent).

    """

    rule: Rule
    rscale: str | None = None
    skip: Skip = Skip.OMIT

    @property
    def moves_invalid_dates(self) -> bool:
        """Whether expansion differs from RFC 5545's (``SKIP=BACKWARD`` or ``FORWARD``)."""
        return self.skip is not Skip.OMIT

    def check_satisfiable(self, dtstart: datetime) -> None:
        """Refuse a rule that can never produce a date-time (see ``expand.check_satisfiable``).

        Raises:
            RuleError: the rule (or, for a moving SKIP, its anchor rule) produces nothing.

        """
        if self.moves_invalid_dates:
            anchor, anchor_start = _anchor(self.rule, dtstart)
            check_satisfiable(anchor, anchor_start)
        else:
            check_satisfiable(self.rule, dtstart)

    def expand(
        self, dtstart: datetime, window_start: datetime, window_end: datetime
    ) -> Iterator[datetime]:
        """Yield floating local date-times in ``[window_start, window_end]`` (``expand.expand``).

        Like ``expand.expand``: ignores COUNT, applies UNTIL loosely (the caller compares
        instants); cost follows the window.
        """
        if not self.moves_invalid_dates:
            return expand(self.rule, dtstart, window_start, window_end)
        return self._moved(dtstart, window_start, window_end)

    def _moved(
        self, dtstart: datetime, window_start: datetime, window_end: datetime
    ) -> Iterator[datetime]:
        anchor, anchor_start = _anchor(self.rule, dtstart)
        # An anchor's month places days in that month or on the 1st of the next: start one
        # month before the window's.
        previous = window_start.replace(day=1) - timedelta(days=1)
        low = max(datetime(previous.year, previous.month, 1), anchor_start)
        high = window_end
        if self.rule.until_utc is not None:
            high = min(high, self.rule.until_utc.replace(tzinfo=None) + timedelta(days=1))
        anchors = expand(anchor, anchor_start, low, high)
        for nominal_local in _placed(anchors, self._days(dtstart), self.skip, dtstart):
            if nominal_local > window_end:
                return
            if nominal_local >= window_start:
                yield nominal_local

    def iterate_from_start(self, dtstart: datetime) -> Iterator[datetime]:
        """Yield every floating local date-time from ``dtstart`` on, in order (for COUNT)."""
        if not self.moves_invalid_dates:
            yield from iterate_from_start(self.rule, dtstart)
            return
        anchor, anchor_start = _anchor(self.rule, dtstart)
        anchors = iterate_from_start(anchor, anchor_start)
        yield from _placed(anchors, self._days(dtstart), self.skip, dtstart)

    def _days(self, dtstart: datetime) -> tuple[int, ...]:
        return tuple(sorted(set(self.rule.by_month_day or (dtstart.day,))))


def parse_rscale_rule(text: str) -> RscaleRule:
    """Parse an RRULE value that may carry RFC 7529's ``RSCALE`` and ``SKIP`` parts.

    Args:
        text: the RRULE value (as ``rrule.parse_rule`` takes it), e.g.
            ``RSCALE=GREGORIAN;FREQ=MONTHLY;BYMONTHDAY=31;SKIP=BACKWARD``.

    Returns:
        The rule; without ``RSCALE`` it is exactly ``rrule.parse_rule(text)``.

    Raises:
        RuleError: everything ``parse_rule`` refuses; an ``RSCALE`` other than ``GREGORIAN``;
            ``SKIP`` without ``RSCALE`` or not one of ``OMIT``, ``BACKWARD``, ``FORWARD``; either
            part twice; a moving SKIP on a rule shape this module does not expand (see above).

    Source: RFC 7529 §3.1 (RSCALE, SKIP); RFC 5545 §3.3.10.

    """
    if not isinstance(text, str):
        return RscaleRule(parse_rule(text))
    body = text.strip()
    if body.upper().startswith("RRULE:"):
        body = body[len("RRULE:") :]
    kept: list[str] = []
    found: dict[str, str] = {}
    for chunk in body.split(";"):
        name, sep, value = chunk.partition("=")
        key = name.strip().upper()
        if sep and key in {"RSCALE", "SKIP"}:
            if key in found:
                raise RuleError(f"part {key} given twice")
            found[key] = value.strip().upper()
        else:
            kept.append(chunk)
    if not found:
        return RscaleRule(parse_rule(text))
    rscale = found.get("RSCALE")
    if rscale is None:
        raise RuleError("SKIP needs RSCALE (RFC 7529 §3.1), e.g. RSCALE=GREGORIAN;SKIP=BACKWARD")
    if rscale not in RSCALES:
        raise RuleError(f"RSCALE={rscale} is not supported: only RSCALE=GREGORIAN")
    skip_text = found.get("SKIP", Skip.OMIT.value)
    if skip_text not in Skip.__members__:
        raise RuleError(f"SKIP={skip_text} is not one of {', '.join(Skip)}")
    rule = parse_rule(";".join(kept))
    parsed = RscaleRule(rule, rscale, Skip(skip_text))
    if parsed.moves_invalid_dates:
        _check_shape(rule, parsed.skip)
    return parsed


def _check_shape(rule: Rule, skip: Skip) -> None:
    what = f"SKIP={skip.value}"
    if rule.freq not in {"MONTHLY", "YEARLY"}:
        raise RuleError(
            f"{what} is supported with FREQ=MONTHLY or FREQ=YEARLY, not FREQ={rule.freq}"
        )
    for part, values in (
        ("BYDAY", rule.by_day),
        ("BYYEARDAY", rule.by_year_day),
        ("BYWEEKNO", rule.by_week_no),
        ("BYSETPOS", rule.by_set_pos),
    ):
        if values:
            raise RuleError(f"{what} with {part} is not supported (only month days move)")
    if any(day < 0 for day in rule.by_month_day):
        raise RuleError(f"{what} with a negative BYMONTHDAY is not supported")


def _anchor(rule: Rule, dtstart: datetime) -> tuple[Rule, datetime]:
    """The anchor rule (every wanted month's 1st, at the rule's times) and its start.

    A YEARLY rule without month days takes its month from ``start`` (RFC 5545 §3.3.10), so the
    anchor keeps that month explicitly; with month days and no BYMONTH it runs every month.
    """
    by_month = rule.by_month
    if rule.freq == "YEARLY" and not rule.by_month_day and not by_month:
        by_month = (dtstart.month,)
    anchor = replace(
        rule, by_month_day=(1,), by_month=by_month, count=None, until_utc=None, by_set_pos=()
    )
    return anchor, dtstart.replace(day=1)


def _placed(
    anchors: Iterable[datetime], days: tuple[int, ...], skip: Skip, dtstart: datetime
) -> Iterator[datetime]:
    """Place ``days`` in each anchor's month, moved per ``skip``; yield them sorted, once each.

    An anchor's days lie in its month or (FORWARD) on the next month's 1st, so everything before
    an anchor's month is final when that anchor arrives.
    """
    pending: list[datetime] = []
    last: datetime | None = None
    for anchor in anchors:
        month_start = datetime(anchor.year, anchor.month, 1)
        while pending and pending[0] < month_start:
            item = heapq.heappop(pending)
            if item != last:
                last = item
                yield item
        length = monthrange(anchor.year, anchor.month)[1]
        for day in days:
            placed = _move(anchor.year, anchor.month, day, length, skip)
            if placed is not None:
                candidate = datetime.combine(placed, anchor.time())
                if candidate >= dtstart:
                    heapq.heappush(pending, candidate)
    while pending:
        item = heapq.heappop(pending)
        if item != last:
            last = item
            yield item


def _move(year: int, month: int, day: int, length: int, skip: Skip) -> date | None:
    if day <= length:
        return date(year, month, day)
    if skip is Skip.BACKWARD:
        return date(year, month, length)
    if skip is Skip.FORWARD:
        return date(year, month, length) + timedelta(days=1)
    return None
