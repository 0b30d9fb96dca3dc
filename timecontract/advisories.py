"""Warnings about valid specs that would surprise their author on a DST night (pure, no clock).

A spec can be valid and still do something its author did not expect. These checks find three
such cases around the DST transitions of the revision's zone and return them as
:class:`SpecWarning` values with a stable code; they never make a spec invalid (``almanac
validate``, ``apply`` and ``preview`` print them on stderr and still exit 0).

- ``REPEATED_HOUR_SILENT`` — the rule fires at least once an hour around a fold (``HOURLY``,
  ``MINUTELY``, ``BYHOUR=0,…,23``) and ``foldPolicy`` is ``FIRST_ONLY`` or ``SECOND_ONLY``: one of
  the two passes through the repeated local hour runs nothing, so the schedule is silent for the
  length of the fold (an hour in New York; 30 minutes on Lord Howe). ``BOTH`` runs both passes.
  "At least once an hour" is read from the records themselves: under ``BOTH``, from an hour
  before the fold's first pass to an hour after its second, no stretch longer than an hour is
  without an instant, and a nominal time falls inside the repeated interval. A daily 01:30 rule
  is not warned about: one run that day is what it asks for.
- ``CUTOVER_SPLITS_FOLD`` — ``cutoverAt`` lies between the two instants of a nominal time the rule
  yields in a fold (first < cutoverAt ≤ second). This revision owns only the second instant; under
  ``FIRST_ONLY`` the nominal time resolves to the first, which it does not own, so that day has no
  occurrence from this revision (for a first revision: none at all).
- ``CUTOVER_IN_GAP`` — ``cutoverAt`` lies inside a gap's span ``(gapAt, gapAt + gap length)``, the
  instants at which the wall clock reads the times just after the jump, and a gap time the rule
  yields is placed before it (``SKIP`` records it at ``gapAt``; ``SHIFT_FORWARD`` at ``gapAt`` plus
  its distance into the gap): this revision does not own that record, while the rule's times just
  after the gap are its own.

- ``JITTER_CAPPED`` — ``jitter`` is longer than the gap between two occurrences among the first
  :data:`JITTER_SAMPLE` the revision yields: each delay is capped at the gap to the next
  occurrence (``timecontract.resolve``, as Temporal Schedules do), so the spread is smaller than
  asked for there, and a run never starts after its successor is due.

Transitions are found by sampling the zone's offset hourly around the cutover and daily over the
rule's look-ahead (:data:`FOLD_SCAN`), then bisecting to the second, as
``timecontract.resolve`` does; the records are ``timecontract.occurrences`` itself, so the checks
agree with what the ledger would materialize.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta, tzinfo
from enum import StrEnum
from itertools import islice, pairwise
from pathlib import Path
from typing import TypeVar

from timecontract import zones
from timecontract.calendars import CalendarYearsNotCovered
from timecontract.iso8601 import format_duration, format_instant
from timecontract.policies import FoldPolicy, GapPolicy
from timecontract.records import Disposition, OccurrenceRecord, Reason
from timecontract.recurrence import iter_occurrences, occurrences
from timecontract.spec import ScheduleSpecV1
from timecontract.transitions import first_change

JITTER_SAMPLE = 200
"""How many of the revision's first occurrences ``JITTER_CAPPED`` compares the jitter with."""
FOLD_SCAN = timedelta(days=2 * 366)
"""How far after the revision's first instant folds are looked for (two fall-back nights)."""
_HOUR = timedelta(hours=1)
_FAR_PAST = datetime(1900, 1, 1, tzinfo=UTC)


class WarningCode(StrEnum):
    """The stable code of a :class:`SpecWarning` (what scripts match on)."""

    REPEATED_HOUR_SILENT = "REPEATED_HOUR_SILENT"
    """A frequent rule under FIRST_ONLY/SECOND_ONLY is silent for one pass of the fold."""
    CUTOVER_SPLITS_FOLD = "CUTOVER_SPLITS_FOLD"
    """cutoverAt lies between the two instants of a nominal time the rule yields in a fold."""
    CUTOVER_IN_GAP = "CUTOVER_IN_GAP"
    """cutoverAt lies in a gap's span, after where a gap time of the rule is placed."""
    JITTER_CAPPED = "JITTER_CAPPED"
    """jitter is longer than a gap between occurrences: delays are capped at the gap."""
    EGRESS_REFUSED = "EGRESS_REFUSED"
    """An action's URL that a worker with this environment's egress policy refuses (issued by
    ``activities.actions.catalog.egress_warnings``: the time contract knows no network)."""


@dataclass(frozen=True, slots=True)
class SpecWarning:
    """A surprise a valid spec holds: the field to change, its value, what happens and why.

    Attributes:
        code: the stable code.
        field: the camelCase field the advice is about (``foldPolicy``, ``cutoverAt``).
        value: that field's value, as JSON text.
        message: what happens, on which night, at which instants, and what to do instead.

    """

    code: WarningCode
    field: str
    value: str
    message: str

    def __str__(self) -> str:
        """``field=value: message [CODE]`` (one line)."""
        return f"{self.field}={self.value}: {self.message} [{self.code.value}]"

    def to_json(self) -> dict[str, str]:
        """The warning as JSON (``code``, ``field``, ``value``, ``message``)."""
        return {
            "code": self.code.value,
            "field": self.field,
            "value": self.value,
            "message": self.message,
        }


@dataclass(frozen=True, slots=True)
class Transition:
    """One change of the zone's UTC offset at ``at_utc`` (a gap when it grows, a fold else)."""

    at_utc: datetime
    offset_before: timedelta
    offset_after: timedelta

    @property
    def length(self) -> timedelta:
        """How much wall time is skipped (gap) or repeated (fold)."""
        return abs(self.offset_after - self.offset_before)

    @property
    def is_fold(self) -> bool:
        """Whether the offset shrinks (wall clocks go back: a fold)."""
        return self.offset_after < self.offset_before


def transitions(
    zone: tzinfo, from_utc: datetime, to_utc: datetime, step: timedelta = _HOUR
) -> list[Transition]:
    """The zone's offset changes in ``(from_utc, to_utc]``, oldest first.

    Offsets are sampled every ``step`` and each change is bisected to the second, so two changes
    closer together than ``step`` may be seen as one (or none); the zones the tz database ships
    change at most twice a year.
    """
    found: list[Transition] = []
    moment = from_utc
    before = moment.astimezone(zone).utcoffset()
    while moment < to_utc:
        following = min(moment + step, to_utc)
        after = following.astimezone(zone).utcoffset()
        assert before is not None and after is not None
        if after != before:
            at = first_change(zone, moment, following)
            found.append(Transition(at, before, after))
        moment, before = following, after
    return found


def spec_warnings(spec: ScheduleSpecV1, *, tzdb_store: Path | None = None) -> list[SpecWarning]:
    """Every warning for ``spec`` (see the module docstring), in a stable order.

    Args:
        spec: a validated spec.
        tzdb_store: the local tz release store (``None``: only the installed release).

    Returns:
        ``REPEATED_HOUR_SILENT`` (at most one: the first fold it happens in), then
        ``CUTOVER_SPLITS_FOLD`` and ``CUTOVER_IN_GAP`` (at most one each). Empty when nothing
        would surprise.

    Raises:
        TzdbReleaseNotFound, ZoneNotFound: the pinned release or zone is not available.

    """
    zone = zones.load(spec.time_zone, spec.tzdb_version, tzdb_store)
    found: list[SpecWarning] = []
    # Each advisory looks ahead of the cutover; a calendar whose data ends sooner ends that look
    # (advice, not a check: the years the schedule runs in are checked where it runs).
    repeated = _within_calendar(lambda: _repeated_hour_silent(spec, zone, tzdb_store))
    if repeated is not None:
        found.append(repeated)
    found.extend(_within_calendar(lambda: _cutover_warnings(spec, zone, tzdb_store)) or [])
    capped = _within_calendar(lambda: _jitter_capped(spec, tzdb_store))
    if capped is not None:
        found.append(capped)
    return found


_T = TypeVar("_T")


def _within_calendar(advise: Callable[[], _T]) -> _T | None:
    """``advise()``, or None when it looked past the years the pinned calendar covers."""
    try:
        return advise()
    except CalendarYearsNotCovered:
        return None


def _jitter_capped(spec: ScheduleSpecV1, tzdb_store: Path | None) -> SpecWarning | None:
    if not spec.jitter:
        return None
    begin = spec.cutover_at
    planned = (
        r.instant_utc
        for r in iter_occurrences(spec, begin, begin + FOLD_SCAN, tzdb_store=tzdb_store)
        if r.instant_utc is not None and r.disposition is Disposition.PLANNED
    )
    sample = sorted(set(islice(planned, JITTER_SAMPLE)))
    gaps = [(b - a, a) for a, b in pairwise(sample)]
    if not gaps or min(gaps)[0] >= spec.jitter:
        return None
    gap, at = min(gaps)
    return SpecWarning(
        WarningCode.JITTER_CAPPED,
        "jitter",
        format_duration(spec.jitter),
        f"it is longer than the {format_duration(gap)} between the occurrences at "
        f"{format_instant(at)} and {format_instant(at + gap)}: each delay is capped at the gap "
        "to the next occurrence (as Temporal Schedules do), so a run never starts after its "
        "successor is due and the spread there is smaller than asked for",
    )


def _records_near(
    spec: ScheduleSpecV1,
    transition: Transition,
    margin: timedelta,
    tzdb_store: Path | None,
    *,
    fold_policy: FoldPolicy | None = None,
) -> list[OccurrenceRecord]:
    """The spec's records placed within ``margin`` of ``transition``, ownership ignored."""
    update: dict[str, object] = {"cutover_at": _FAR_PAST}
    if fold_policy is not None:
        update["fold_policy"] = fold_policy
    unowned = spec.model_copy(update=update)
    low = transition.at_utc - transition.length - margin
    high = transition.at_utc + transition.length + margin
    return occurrences(unowned, low, high, tzdb_store=tzdb_store)


def _repeated_hour_silent(
    spec: ScheduleSpecV1, zone: tzinfo, tzdb_store: Path | None
) -> SpecWarning | None:
    if spec.fold_policy is FoldPolicy.BOTH:
        return None
    first_local = spec.start
    begin = max(spec.cutover_at, first_local.replace(tzinfo=UTC) - timedelta(days=1))
    end = begin + FOLD_SCAN
    if spec.end is not None:
        end = min(end, spec.end.replace(tzinfo=UTC) + timedelta(days=1))
    for transition in transitions(zone, begin, end, step=timedelta(days=1)):
        if not transition.is_fold:
            continue
        both = _records_near(spec, transition, _HOUR, tzdb_store, fold_policy=FoldPolicy.BOTH)
        if not any(r.reason is Reason.FOLD_SECOND for r in both):
            continue
        # The window's ends count as points: a rule must also fire in the hour before the
        # fold's first pass and the hour after its second to be "at least once an hour".
        low = transition.at_utc - transition.length - _HOUR
        high = transition.at_utc + transition.length + _HOUR
        points = [low, *(r.instant_utc for r in both if r.instant_utc is not None), high]
        if max(b - a for a, b in pairwise(points)) > _HOUR:
            continue
        return _repeated_warning(spec, transition)
    return None


def _repeated_warning(spec: ScheduleSpecV1, transition: Transition) -> SpecWarning:
    t, length = transition.at_utc, transition.length
    local_from = (t + transition.offset_after).replace(tzinfo=None)
    local_to = local_from + length
    if spec.fold_policy is FoldPolicy.FIRST_ONLY:
        silent_from, silent_to, which = t, t + length, "second"
    else:
        silent_from, silent_to, which = t - length, t, "first"
    return SpecWarning(
        WarningCode.REPEATED_HOUR_SILENT,
        "foldPolicy",
        spec.fold_policy.value,
        f"the rule fires at least once an hour, but on {local_from.date().isoformat()} "
        f"{spec.time_zone} repeats {local_from.time().isoformat('minutes')}–"
        f"{local_to.time().isoformat('minutes')} and {spec.fold_policy.value} runs only its "
        f"{'first' if which == 'second' else 'second'} pass: nothing runs from "
        f"{format_instant(silent_from)} to {format_instant(silent_to)} (the {which} pass), on "
        "that night and every fall-back night like it; use foldPolicy: BOTH to run both passes",
    )


def _cutover_warnings(
    spec: ScheduleSpecV1, zone: tzinfo, tzdb_store: Path | None
) -> list[SpecWarning]:
    cutover = spec.cutover_at
    found: list[SpecWarning] = []
    near = transitions(zone, cutover - timedelta(days=1), cutover + timedelta(days=1))
    for transition in near:
        t, length = transition.at_utc, transition.length
        if transition.is_fold and t - length < cutover < t + length:
            split = _split_fold(spec, transition, tzdb_store)
            if split is not None and not any(
                w.code is WarningCode.CUTOVER_SPLITS_FOLD for w in found
            ):
                found.append(split)
        if not transition.is_fold and t < cutover < t + length:
            gap = _cutover_in_gap(spec, transition, tzdb_store)
            if gap is not None and not any(w.code is WarningCode.CUTOVER_IN_GAP for w in found):
                found.append(gap)
    return found


def _split_fold(
    spec: ScheduleSpecV1, transition: Transition, tzdb_store: Path | None
) -> SpecWarning | None:
    cutover = spec.cutover_at
    records = _records_near(spec, transition, timedelta(0), tzdb_store, fold_policy=FoldPolicy.BOTH)
    firsts = {r.nominal_local: r for r in records if r.reason is Reason.FOLD_FIRST}
    for second in (r for r in records if r.reason is Reason.FOLD_SECOND):
        first = firsts.get(second.nominal_local)
        if first is None or first.instant_utc is None or second.instant_utc is None:
            continue
        if not first.instant_utc < cutover <= second.instant_utc:
            continue
        consequence = {
            FoldPolicy.FIRST_ONLY: "under FIRST_ONLY it resolves to the first, which this "
            "revision does not own, so that day has no occurrence from this revision",
            FoldPolicy.SECOND_ONLY: "under SECOND_ONLY this revision runs the second, while the "
            "previous revision (if any) still owns the first",
            FoldPolicy.BOTH: "under BOTH this revision runs only the second; the first belongs "
            "before the cutover",
        }[spec.fold_policy]
        return SpecWarning(
            WarningCode.CUTOVER_SPLITS_FOLD,
            "cutoverAt",
            format_instant(cutover),
            f"it lies between the two instants of {second.nominal_local.isoformat()} "
            f"{spec.time_zone} ({format_instant(first.instant_utc)} and "
            f"{format_instant(second.instant_utc)}): this revision owns only the second; "
            f"{consequence}; move cutoverAt to {format_instant(first.instant_utc)} or earlier, "
            f"or after {format_instant(second.instant_utc)}",
        )
    return None


def _cutover_in_gap(
    spec: ScheduleSpecV1, transition: Transition, tzdb_store: Path | None
) -> SpecWarning | None:
    cutover = spec.cutover_at
    records = _records_near(spec, transition, timedelta(0), tzdb_store)
    gap_reasons = {
        Reason.GAP_SKIPPED,
        Reason.GAP_SHIFTED_FORWARD,
        Reason.GAP_NEXT_VALID,
        Reason.GAP_SHIFT_COLLISION,
    }
    lost = [
        r
        for r in records
        if r.reason in gap_reasons and r.gap_at_utc == transition.at_utc
        if r.placed_at_utc < cutover
    ]
    if not lost:
        return None
    t, length = transition.at_utc, transition.length
    local_from = (t + transition.offset_before).replace(tzinfo=None)
    local_to = local_from + length
    if spec.gap_policy is GapPolicy.SKIP:
        placed = f"SKIP records it at gapAt {format_instant(t)}"
    else:
        placed = f"{spec.gap_policy.value} places it at {format_instant(lost[0].placed_at_utc)}"
    return SpecWarning(
        WarningCode.CUTOVER_IN_GAP,
        "cutoverAt",
        format_instant(cutover),
        f"it lies in the gap of {local_from.date().isoformat()} {spec.time_zone} "
        f"({local_from.time().isoformat('minutes')}–{local_to.time().isoformat('minutes')} "
        f"does not exist; the span {format_instant(t)}–{format_instant(t + length)}): the gap "
        f"time {lost[0].nominal_local.isoformat()} is placed before it ({placed}), so this "
        f"revision does not own it; move cutoverAt to {format_instant(t)} or earlier, or to "
        f"{format_instant(t + length)} or later",
    )


__all__ = [
    "FOLD_SCAN",
    "JITTER_SAMPLE",
    "SpecWarning",
    "Transition",
    "WarningCode",
    "spec_warnings",
    "transitions",
]
