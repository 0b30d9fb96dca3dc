"""The recurrence set and its resolution: the public ``occurrences`` and ``iter_occurrences``.

A spec without calendar fields is resolved by ``timecontract.resolve`` (the rule, or the interval
grid). One with calendar fields (RDATE/EXDATE, a holiday calendar, business days) is resolved
here, as follows.

The recurrence set is RFC 5545 §3.8.5's: the rule's nominal times (with ``businessDaysOnly``, only
the calendar's business days, before ``BYSETPOS`` selects; ``timecontract.calendar_spec``) and the
``rdates``, a time given by both counted once. Then, per nominal local date-time, in this order:

1. **exdates**: an excluded time is recorded ``EXCLUDED`` (reason ``EXDATE_EXCLUDED``) with the
   instant it would have had; a date excludes every time on that local day.
2. **holiday policy**, on the nominal *local date*: a day that is not a business day is skipped
   (``SKIPPED_HOLIDAY``, ``HOLIDAY_SKIPPED``, naming the holiday) or moved to another day at the
   same local time (``FOLLOWING``, ``PRECEDING``, ``MODIFIED_FOLLOWING``). The moved-to local
   time goes through the gap and fold policies like any other (a move into a spring-forward gap
   is shifted or skipped; into a fold, it takes its own fold ordinal's instant if the policy
   yields it, else the one the policy yields). A moved record keeps its occurrence ID (the
   nominal identity) and records the moved-to instant, the holiday and the calendar release.
3. **gap and fold** resolution of the nominal time itself, as ``timecontract.resolve`` does.
4. **collisions**: a moved record (gap shift or holiday move) landing on a slot another record
   holds is recorded as a collision, never a second run (``records.settle_collisions``).

Cost follows the window: the nominal times are expanded for the window widened by
:data:`timecontract.calendars.MAX_ROLL_DAYS` (as far as a move can reach) and the calendar is a
dictionary look-up per date, whatever the calendar's length.
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator
from dataclasses import replace
from datetime import date, datetime, timedelta, tzinfo
from itertools import dropwhile
from pathlib import Path

from timecontract import zones
from timecontract.calendars import MAX_ROLL_DAYS, BusinessCalendar, HolidayPolicy, load_calendar
from timecontract.density import span_for
from timecontract.expand import _from_period, period_start_at_or_before
from timecontract.ids import IdFormatter
from timecontract.records import (
    Disposition,
    OccurrenceRecord,
    Reason,
    placed_order,
    settle_collisions,
    with_holiday,
)
from timecontract.resolve import (
    _build,
    _counted,
    _local_bounds,
    _record,
    _resolved,
    check_window,
    counted_before,
    counts_arithmetically,
    jittered,
    resolve_local,
    rule_occurrences,
)
from timecontract.rrule import Rule
from timecontract.rscale import RscaleRule
from timecontract.spec import ScheduleSpecV1

_PERIOD_REACH = timedelta(days=372)
"""Past the window's end, the rule's expansion may need one more period (a YEARLY one, with a
week-numbering year's margin) to finish the last period's set."""
_FROM_BEFORE = {HolidayPolicy.FOLLOWING, HolidayPolicy.MODIFIED_FOLLOWING}
_FROM_AFTER = {HolidayPolicy.PRECEDING, HolidayPolicy.MODIFIED_FOLLOWING}
_MOVE_REASON = {
    HolidayPolicy.FOLLOWING: Reason.HOLIDAY_FOLLOWING,
    HolidayPolicy.PRECEDING: Reason.HOLIDAY_PRECEDING,
    HolidayPolicy.MODIFIED_FOLLOWING: Reason.HOLIDAY_MODIFIED_FOLLOWING,
}


def uses_calendar(spec: ScheduleSpecV1) -> bool:
    """Whether the spec uses a calendar field (rdates, exdates, calendar), resolved here."""
    return bool(spec.rdates or spec.exdates or spec.calendar is not None)


def occurrences(
    spec: ScheduleSpecV1,
    from_utc: datetime,
    to_utc: datetime,
    *,
    tzdb_store: Path | None = None,
) -> list[OccurrenceRecord]:
    """Every record the spec's revision owns whose placed instant lies in ``[from, to)``.

    "Owns" means placed at or after the spec's ``cutoverAt`` (a later revision's cutover is the
    ledger's business), with the nominal time within ``start``/``end`` and the rule's COUNT/UNTIL.
    A record is placed at its instant, or at ``gapAt`` for a skipped gap time.

    Args:
        spec: a validated spec.
        from_utc: window start, aware, inclusive.
        to_utc: window end, aware, exclusive.
        tzdb_store: the local tz release store, which also holds calendar releases (``None``:
            only the installed tz and ``holidays`` releases).

    Returns:
        Records sorted by (placed instant, nominal local, fold). Splitting a window in two yields
        the same records as the whole.

    Raises:
        TzdbReleaseNotFound, ZoneNotFound, CalendarReleaseNotFound: pinned data is missing.
        SpecError: a date outside the calendar data's years.
        ValueError: a naive bound, or an end after ``resolve.LAST_WINDOW_END``.

    Cost: see ``resolve.rule_occurrences``; with calendar fields, the window widened by
    :data:`~timecontract.calendars.MAX_ROLL_DAYS` (a rule with COUNT is walked from DTSTART).

    """
    check_window(from_utc, to_utc)
    records = _unjittered(spec, from_utc, to_utc, tzdb_store)
    return jittered(
        spec, records, to_utc, lambda low, high: _unjittered(spec, low, high, tzdb_store)
    )


def _unjittered(
    spec: ScheduleSpecV1, from_utc: datetime, to_utc: datetime, tzdb_store: Path | None
) -> list[OccurrenceRecord]:
    """:func:`occurrences` before each planned record is given its ``jitter_delay``."""
    if not uses_calendar(spec):
        return rule_occurrences(spec, from_utc, to_utc, tzdb_store=tzdb_store)
    from_utc = max(from_utc, spec.cutover_at)
    if to_utc <= from_utc:
        return []
    return calendar_occurrences(spec, from_utc, to_utc, tzdb_store)


STREAM_PERIODS = 10_000
""":func:`iter_occurrences` resolves its window in pieces of at most this many rule periods…"""
STREAM_OCCURRENCES = 10_000
"""… and of about this many occurrences (``timecontract.density``), never shorter than an hour."""
_SHORTEST_PIECE = timedelta(hours=1)


def iter_occurrences(
    spec: ScheduleSpecV1,
    from_utc: datetime,
    to_utc: datetime,
    *,
    tzdb_store: Path | None = None,
) -> Iterator[OccurrenceRecord]:
    """:func:`occurrences`, yielded piece by piece: memory follows a piece, not the window.

    The window is cut into consecutive pieces of :data:`STREAM_PERIODS` periods or about
    :data:`STREAM_OCCURRENCES` occurrences, whichever is shorter (at least an hour: at most
    ``60 × MAX_PER_MINUTE`` records for a valid spec), and each is resolved by
    :func:`occurrences`; splitting a window yields the same records as the whole, in the same
    order (records are sorted by their placed instant, and pieces split the UTC line), so the
    concatenation is exactly ``occurrences(spec, from_utc, to_utc)``. A COUNT rule that is walked
    from DTSTART is resolved in one piece (a walk per piece would repeat it).

    Raises:
        The same as :func:`occurrences`.

    """
    check_window(from_utc, to_utc)
    walked = spec.rule is not None and spec.interval is None and walks_count(spec)
    piece = max(
        min(
            min(spec.nominal_period, timedelta(days=366)) * STREAM_PERIODS,
            span_for(STREAM_OCCURRENCES, spec.per_day_bound),
        ),
        _SHORTEST_PIECE,
    )
    start = from_utc
    while True:
        end = to_utc if walked or to_utc - start <= piece else start + piece
        yield from occurrences(spec, start, end, tzdb_store=tzdb_store)
        if end >= to_utc:
            return
        start = end


def walks_count(spec: ScheduleSpecV1) -> bool:
    """Whether the spec's rule has a COUNT whose window is walked from DTSTART.

    A COUNT of a rule whose periods all hold the same times (``fastpath.is_periodic``; no
    ``BYSETPOS``, no RFC 7529 move) is counted arithmetically up to the window, also on a
    calendar's business days (``countwindow.business_count_before``); any other is walked,
    at most COUNT instances.
    """
    rule = spec.rscale_rule
    return rule.rule.count is not None and (
        rule.moves_invalid_dates or not counts_arithmetically(rule.rule)
    )


def spec_calendar(spec: ScheduleSpecV1, tzdb_store: Path | None) -> BusinessCalendar | None:
    """The spec's pinned calendar (``None`` without one).

    Raises:
        CalendarReleaseNotFound: the release is neither in the store nor installed.
        SpecError: an unknown calendar name.

    """
    if spec.calendar is None:
        return None
    return load_calendar(
        spec.calendar.name, spec.calendar.release, spec.calendar.weekend, tzdb_store
    )


def calendar_occurrences(
    spec: ScheduleSpecV1, from_utc: datetime, to_utc: datetime, tzdb_store: Path | None
) -> list[OccurrenceRecord]:
    """:func:`occurrences` for a spec with calendar fields (before jitter).

    Args:
        spec: a validated spec with a rule or rdates (not an interval).
        from_utc: window start, aware, inclusive, at or after ``cutoverAt``.
        to_utc: window end, aware, exclusive.
        tzdb_store: the tz store (calendar releases live in its ``calendars/`` folder).

    Returns:
        The records placed in ``[from_utc, to_utc)``, sorted like :func:`occurrences`.

    Raises:
        TzdbReleaseNotFound, ZoneNotFound, CalendarReleaseNotFound: pinned data missing.
        SpecError: a date outside the calendar data's years.

    """
    zone = zones.load(spec.time_zone, spec.tzdb_version, tzdb_store)
    calendar = spec_calendar(spec, tzdb_store)
    # A nominal time outside the window can move into it: from before under FOLLOWING, from
    # after under PRECEDING, from either side under MODIFIED_FOLLOWING (at most MAX_ROLL_DAYS).
    policy = spec.holiday_policy or HolidayPolicy.SKIP
    reach = timedelta(days=MAX_ROLL_DAYS + 1) if calendar is not None else timedelta(0)
    early = reach if policy in _FROM_BEFORE else timedelta(0)
    late = reach if policy in _FROM_AFTER else timedelta(0)
    table = zones.transitions(spec.time_zone, spec.tzdb_version, tzdb_store)
    low, high = _local_bounds(zone, table, from_utc - early, to_utc + late)
    records = _rule_records(spec, zone, calendar, low, high)
    seen = {r.nominal_local for r in records}
    ids = IdFormatter(spec.schedule_id, spec.revision)
    for nominal in sorted(set(spec.rdates)):
        if low <= nominal <= high and nominal not in seen:
            resolutions = resolve_local(nominal, zone, spec.gap_policy, spec.fold_policy)
            records.extend(_record(spec, nominal, res, ids) for res in resolutions)
    records = _excluded(spec, records)
    if calendar is not None:
        records = _holidays(spec, zone, calendar, records, ids)
    owned = [r for r in settle_collisions(records) if from_utc <= r.placed_at_utc < to_utc]
    return sorted(owned, key=placed_order)


def _rule_records(
    spec: ScheduleSpecV1,
    zone: tzinfo,
    calendar: BusinessCalendar | None,
    low: datetime,
    high: datetime,
) -> list[OccurrenceRecord]:
    if spec.rule is None:
        return []
    rule = spec.rscale_rule
    only = calendar if spec.business_days_only else None
    if rule.rule.count is not None and walks_count(spec):
        # COUNT counts the rule's instances from DTSTART (RFC 5545 §3.3.10): walked from there.
        nominals = (
            rule.iterate_from_start(spec.start)
            if only is None
            else business_nominals(rule, spec.start, spec.start, datetime.max, only)
        )
        counted = _counted(spec, rule, zone, _until(nominals, high), 0)
        return [r for r in counted if r.nominal_local >= low]
    if rule.rule.count is not None:
        # The instances before the window are counted arithmetically, the window's resolved.
        nominals = (
            rule.expand(spec.start, low, high)
            if only is None
            else business_nominals(rule, spec.start, low, high, only)
        )
        before = counted_before(spec, zone, low, only)
        return list(_counted(spec, rule, zone, _until(nominals, high), before))
    nominals = (
        rule.expand(spec.start, low, high)
        if only is None
        else business_nominals(rule, spec.start, low, high, only)
    )
    return list(_build(spec, rule.rule, _resolved(spec, zone, nominals)))


def _until(nominals: Iterable[datetime], high: datetime) -> Iterator[datetime]:
    for nominal in nominals:
        if nominal > high:
            return
        yield nominal


def business_nominals(
    rule: RscaleRule, dtstart: datetime, low: datetime, high: datetime, calendar: BusinessCalendar
) -> Iterator[datetime]:
    """The rule's floating local date-times in ``[low, high]`` on the calendar's business days.

    Each FREQ period's set is built without ``BYSETPOS``, its non-business days removed, and
    ``BYSETPOS`` then selects from what is left (RFC 5545 §3.3.10's BYSETPOS over the smaller
    set); without ``BYSETPOS`` the set is only filtered. Periods are whole, also the first one
    (what falls before ``dtstart`` is dropped after the selection, as ``expand`` does).

    Raises:
        SpecError: a date outside the calendar data's years.

    """
    plain = replace(rule.rule, by_set_pos=())
    positions = rule.rule.by_set_pos
    first = period_start_at_or_before(plain, dtstart, max(low, dtstart))
    end = high + _PERIOD_REACH if high < datetime.max - _PERIOD_REACH else datetime.max
    stream = _from_period(plain, dtstart, first, end)
    chosen = _select(plain, dtstart, stream, positions, calendar, high)
    return dropwhile(max(low, dtstart).__gt__, chosen)


def _select(
    rule: Rule,
    dtstart: datetime,
    stream: Iterable[datetime],
    positions: tuple[int, ...],
    calendar: BusinessCalendar,
    high: datetime,
) -> Iterator[datetime]:
    period: datetime | None = None
    members: list[datetime] = []
    for nominal in stream:
        start = period_start_at_or_before(rule, dtstart, nominal)
        if start != period:
            yield from _pick(members, positions)
            if period is not None and start > high:
                return
            period, members = start, []
        if calendar.is_business_day(nominal.date()):
            members.append(nominal)
    yield from _pick(members, positions)


def _pick(members: list[datetime], positions: tuple[int, ...]) -> Iterator[datetime]:
    if not positions:
        yield from members
        return
    picked = {
        members[p - 1 if p > 0 else p] for p in positions if -len(members) <= p <= len(members)
    }
    yield from sorted(picked)


def _excluded(spec: ScheduleSpecV1, records: list[OccurrenceRecord]) -> list[OccurrenceRecord]:
    if not spec.exdates:
        return records
    days = {d for d in spec.exdates if not isinstance(d, datetime)}
    times = {d for d in spec.exdates if isinstance(d, datetime)}
    return [
        replace(
            r,
            logical_slot_id=None,
            disposition=Disposition.EXCLUDED,
            reason=Reason.EXDATE_EXCLUDED,
        )
        if r.nominal_local in times or r.nominal_local.date() in days
        else r
        for r in records
    ]


def _holidays(
    spec: ScheduleSpecV1,
    zone: tzinfo,
    calendar: BusinessCalendar,
    records: list[OccurrenceRecord],
    ids: IdFormatter,
) -> list[OccurrenceRecord]:
    policy = spec.holiday_policy or HolidayPolicy.SKIP
    decided: list[OccurrenceRecord] = []
    for record in records:
        day = record.nominal_local.date()
        holiday = calendar.closed(day) if record.disposition is not Disposition.EXCLUDED else None
        if holiday is None:
            decided.append(record)
            continue
        target = calendar.roll(day, policy)
        if target is None:
            if policy is not HolidayPolicy.SKIP:
                holiday = f"{holiday} (no business day within {MAX_ROLL_DAYS} days)"
            skipped = replace(
                record,
                logical_slot_id=None,
                disposition=Disposition.SKIPPED_HOLIDAY,
                reason=Reason.HOLIDAY_SKIPPED,
            )
            decided.append(with_holiday(skipped, holiday, calendar.label))
            continue
        moved = _moved(spec, zone, record, target, policy, ids)
        decided.append(with_holiday(moved, holiday, calendar.label))
    return decided


def _moved(
    spec: ScheduleSpecV1,
    zone: tzinfo,
    record: OccurrenceRecord,
    target: date,
    policy: HolidayPolicy,
    ids: IdFormatter,
) -> OccurrenceRecord:
    """``record`` moved to the same local time on ``target``, through gap and fold policy."""
    local = datetime.combine(target, record.nominal_local.time())
    resolutions = resolve_local(local, zone, spec.gap_policy, spec.fold_policy)
    res = next((r for r in resolutions if r.fold == record.fold), resolutions[0])
    if res.instant_utc is None:  # moved into a gap under SKIP
        return replace(
            record,
            logical_slot_id=None,
            instant_utc=None,
            gap_at_utc=res.gap_at_utc,
            utc_offset=None,
            disposition=Disposition.SKIPPED_GAP,
            reason=Reason.GAP_SKIPPED,
        )
    return replace(
        record,
        logical_slot_id=ids.slot(res.instant_utc),
        instant_utc=res.instant_utc,
        gap_at_utc=res.gap_at_utc,
        utc_offset=res.utc_offset,
        disposition=Disposition.PLANNED,
        reason=_MOVE_REASON[policy],
    )
