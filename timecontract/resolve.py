"""Resolution: nominal local date-times → occurrence records, with gap/fold policy and evidence.

For each nominal local date-time the RRULE yields (floating local time, ``timecontract.expand``),
the zone of the pinned tz release decides (DESIGN §3):

- **exists once** → one ``PLANNED`` record, reason ``UNAMBIGUOUS``.
- **fold** (occurs twice) → ``FIRST_ONLY``: the earlier instant (fold 0, ``FOLD_FIRST``);
  ``SECOND_ONLY``: the later (fold 1, ``FOLD_SECOND``); ``BOTH``: two records.
- **gap** (does not exist) → ``SKIP``: a ``SKIPPED_GAP`` record (no instant; ``gapAt`` is the
  transition's instant), reason ``GAP_SKIPPED``; ``SHIFT_FORWARD``: ``PLANNED`` at the RFC 5545
  §3.3.5 instant (local time read with the offset before the gap), reason
  ``GAP_SHIFTED_FORWARD``, ``gapAt`` kept as evidence.
- **collision**: a shifted instant that equals a natural occurrence's instant (an hourly rule across
  a gap) — the natural occurrence keeps the logical slot; the shifted one is recorded
  ``SKIPPED_GAP`` with reason ``GAP_SHIFT_COLLISION``.

We resolve with ``ZoneInfo`` and PEP 495 ourselves rather than through dateutil, which attaches a
zone without checking and so yields nonexistent times and only one side of a fold.

COUNT (RFC 5545 §3.3.10) counts nominal times that exist: a gap time under SKIP is not counted;
under SHIFT_FORWARD the shifted instance counts (also when it then collides); a fold counts once,
whatever the fold policy. UNTIL is compared, inclusively, with the instant (``gapAt`` for
skipped records).
"""

from __future__ import annotations

from bisect import bisect_right
from collections.abc import Callable, Iterable, Iterator
from dataclasses import replace
from datetime import UTC, datetime, timedelta, tzinfo
from pathlib import Path

from timecontract import fastpath, zones
from timecontract.calendars import BusinessCalendar
from timecontract.countwindow import (
    business_count_before,
    gap_nominals_before,
    nominal_count_before,
)
from timecontract.ids import IdFormatter, interval_occurrence_id, logical_slot_id
from timecontract.interval import interval_readings
from timecontract.jitter import jitter_delay
from timecontract.policies import FoldPolicy, GapPolicy
from timecontract.records import (
    Disposition,
    OccurrenceRecord,
    Reason,
    Resolution,
    instant_of,
    placed_order,
    settle_collisions,
)
from timecontract.rrule import Rule
from timecontract.rscale import RscaleRule
from timecontract.spec import ScheduleSpecV1
from timecontract.transitions import ZoneTransitions, first_change

# Slack around the offsets in force when a UTC window becomes a floating local one (see
# _local_bounds).
_SLACK = timedelta(hours=1)


def resolve_local(
    nominal_local: datetime, zone: tzinfo, gap_policy: GapPolicy, fold_policy: FoldPolicy
) -> list[Resolution]:
    """Resolve one nominal local date-time in ``zone`` under the gap and fold policies.

    Args:
        nominal_local: naive wall time in ``zone``, as the RRULE yields it.
        zone: a PEP 495 zone (``ZoneInfo`` from ``timecontract.zones.load``).
        gap_policy: what to do when the time does not exist.
        fold_policy: what to do when it exists twice.

    Returns:
        Resolutions ordered by UTC instant: one, or two for a fold under ``BOTH``. A gap under
        SKIP yields one resolution without an instant.

    Source: RFC 5545 §3.3.5 (shifted instant); PEP 495 (fold); seed: fold ordinals.

    """
    # The zone's utcoffset reads the wall-clock fields and the fold of a naive date-time
    # (PEP 495), the same answer as attaching the zone first, without copying it twice.
    earlier = zone.utcoffset(nominal_local.replace(fold=0) if nominal_local.fold else nominal_local)
    later = zone.utcoffset(_with_fold_1(nominal_local))
    assert earlier is not None and later is not None
    if earlier == later:
        return [Resolution(0, _utc(nominal_local, earlier), None, earlier, Reason.UNAMBIGUOUS)]
    if earlier > later:
        # PEP 495: fold=0 uses the offset before the transition. Offset shrinking → a fold.
        first = Resolution(0, _utc(nominal_local, earlier), None, earlier, Reason.FOLD_FIRST)
        second = Resolution(1, _utc(nominal_local, later), None, later, Reason.FOLD_SECOND)
        chosen = {
            FoldPolicy.FIRST_ONLY: [first],
            FoldPolicy.SECOND_ONLY: [second],
            FoldPolicy.BOTH: [first, second],
        }
        return chosen[fold_policy]
    # Offset growing → a gap. The transition T satisfies T + earlier <= nominal < T + later.
    gap_at = first_change(zone, _utc(nominal_local, later), _utc(nominal_local, earlier))
    if gap_policy is GapPolicy.SKIP:
        return [Resolution(0, None, gap_at, None, Reason.GAP_SKIPPED)]
    if gap_policy is GapPolicy.NEXT_VALID:
        return [Resolution(0, gap_at, gap_at, later, Reason.GAP_NEXT_VALID)]
    return [Resolution(0, _utc(nominal_local, earlier), gap_at, later, Reason.GAP_SHIFTED_FORWARD)]


def _with_fold_1(n: datetime) -> datetime:
    # The constructor is about twice as fast as ``n.replace(fold=1)``.
    return datetime(n.year, n.month, n.day, n.hour, n.minute, n.second, n.microsecond, fold=1)


def _utc(nominal_local: datetime, offset: timedelta) -> datetime:
    return (nominal_local - offset).replace(tzinfo=UTC)


LAST_WINDOW_END = datetime(9999, 12, 1, tzinfo=UTC)
"""The latest window end resolved: the local window around it is widened by offsets and a day
each side, which must stay inside ``datetime``'s year 9999 (a later end is refused, not clamped)."""


def check_window(from_utc: datetime, to_utc: datetime) -> None:
    """Refuse a naive bound or an end after :data:`LAST_WINDOW_END` (``ValueError``)."""
    if from_utc.tzinfo is None or to_utc.tzinfo is None:
        raise ValueError("window bounds must be aware UTC datetimes")
    if to_utc > LAST_WINDOW_END:
        raise ValueError(
            f"window end {to_utc.isoformat().replace('+00:00', 'Z')} lies after "
            f"{LAST_WINDOW_END.isoformat().replace('+00:00', 'Z')}, the last instant resolved"
        )


def rule_occurrences(
    spec: ScheduleSpecV1,
    from_utc: datetime,
    to_utc: datetime,
    *,
    tzdb_store: Path | None = None,
) -> list[OccurrenceRecord]:
    """Every record the revision owns in ``[from, to)``, for a spec without calendar fields.

    ``timecontract.recurrence.occurrences`` is the public entry, which sends a spec with
    calendar fields to its own path.

    "Owns" means placed at or after the spec's ``cutoverAt`` (a later revision's cutover is the
    ledger's business), with the nominal time within ``start``/``end`` and the rule's COUNT/UNTIL.

    Args:
        spec: a validated spec.
        from_utc: window start, aware, inclusive.
        to_utc: window end, aware, exclusive.
        tzdb_store: the local tz release store (``None``: only the installed release).

    Returns:
        Records sorted by (placed instant, nominal local, fold). Splitting a window in two yields
        the same records as the whole.

    Raises:
        TzdbReleaseNotFound, ZoneNotFound: the pinned release or zone is not available.
        ValueError: a naive bound, or an end after :data:`LAST_WINDOW_END`.

    An ``interval`` spec yields its grid's instants instead (``timecontract.interval``), reason
    ``ELAPSED_INTERVAL``. No record carries a ``jitter_delay`` yet: :func:`jittered` gives them
    theirs (``timecontract.recurrence.occurrences``).

    Cost: proportional to the window; for rules with COUNT too when every period yields the same
    instants (``timecontract.countwindow``), else walked from DTSTART (at most COUNT instances).

    """
    check_window(from_utc, to_utc)
    from_utc = max(from_utc, spec.cutover_at)
    if to_utc <= from_utc:
        return []
    zone = zones.load(spec.time_zone, spec.tzdb_version, tzdb_store)
    if spec.interval is not None:
        return _interval_records(spec, zone, from_utc, to_utc)
    rule = spec.rscale_rule
    table = zones.transitions(spec.time_zone, spec.tzdb_version, tzdb_store)
    low, high = _local_bounds(zone, table, from_utc, to_utc)
    if rule.rule.count is None:
        # Every band when the zone's file gave no table: both offsets asked for every time.
        bands = [(datetime.min, datetime.max)] if table is None else table.bands(low, high)
        nominals = rule.expand(spec.start, low, high)
        regular, near, ordered = fastpath.unambiguous_records(
            spec.schedule_id,
            spec.revision,
            spec.tzdb_version,
            spec.end,
            rule.rule,
            zone,
            nominals,
            bands,
        )
        irregular = list(_build(spec, rule.rule, _resolved(spec, zone, near)))
        if ordered:
            return fastpath.assemble(regular, irregular, from_utc, to_utc)
        records = regular + irregular
    elif rule.moves_invalid_dates or not counts_arithmetically(rule.rule):
        records = list(_counted(spec, rule, zone, rule.iterate_from_start(spec.start), 0))
    else:
        # Cost follows the window: the instances before it are counted, not walked.
        before = counted_before(spec, zone, low)
        nominals = rule.expand(spec.start, low, high)
        records = list(_counted(spec, rule, zone, nominals, before))
    owned = [r for r in settle_collisions(records) if from_utc <= r.placed_at_utc < to_utc]
    return sorted(owned, key=placed_order)


def _interval_records(
    spec: ScheduleSpecV1, zone: tzinfo, from_utc: datetime, to_utc: datetime
) -> list[OccurrenceRecord]:
    assert spec.interval is not None
    end_utc = None if spec.end is None else _bound_instant(spec.end, zone)
    readings = interval_readings(
        spec.interval, spec.phase, zone, from_utc, to_utc, _bound_instant(spec.start, zone), end_utc
    )
    return [
        OccurrenceRecord(
            occurrence_id=interval_occurrence_id(
                spec.schedule_id, spec.revision, reading.instant_utc
            ),
            logical_slot_id=logical_slot_id(spec.schedule_id, reading.instant_utc),
            schedule_id=spec.schedule_id,
            revision=spec.revision,
            nominal_local=reading.nominal_local,
            fold=reading.fold,
            instant_utc=reading.instant_utc,
            gap_at_utc=None,
            utc_offset=reading.utc_offset,
            tzdb_version=spec.tzdb_version,
            disposition=Disposition.PLANNED,
            reason=Reason.ELAPSED_INTERVAL,
        )
        for reading in readings
    ]


def _bound_instant(nominal_local: datetime, zone: tzinfo) -> datetime:
    """A ``start``/``end`` bound as one instant (RFC 5545 §3.3.5).

    A local time that occurs twice is its first occurrence; one that does not exist is read with
    the offset before the gap.
    """
    (first,) = resolve_local(nominal_local, zone, GapPolicy.SHIFT_FORWARD, FoldPolicy.FIRST_ONLY)
    assert first.instant_utc is not None
    return first.instant_utc


def _planned_instants(records: Iterable[OccurrenceRecord]) -> list[datetime]:
    """The distinct instants of the planned records, ascending."""
    return sorted({instant_of(r) for r in records if r.disposition is Disposition.PLANNED})


def jittered(
    spec: ScheduleSpecV1,
    records: list[OccurrenceRecord],
    to_utc: datetime,
    beyond: Callable[[datetime, datetime], list[OccurrenceRecord]],
) -> list[OccurrenceRecord]:
    """Give each planned record its ``jitter_delay``, capped at the gap to the next one.

    As Temporal Schedules do, a delay never reaches the next planned instant of the series: the
    range is ``[0, min(jitter, next instant - instant))``, so a delayed run always starts before
    its successor is due, and a jitter longer than the period cannot make two runs overlap. The
    successor of a record near the window's end is found past it, by ``beyond(to_utc, end)`` (the
    spec's records, unjittered, at most ``jitter`` further), so a window split in two gets the
    same delays as the whole.

    Args:
        spec: the spec whose ``jitter`` applies (``PT0S``: records returned as they are).
        records: the window's records, ordered as :func:`rule_occurrences` orders them.
        to_utc: the window's end (exclusive).
        beyond: the spec's unjittered records of a later window.
    """
    if not spec.jitter:
        return records
    instants = _planned_instants(records)
    if instants and instants[-1] + spec.jitter > to_utc:
        beyond_end = min(instants[-1] + spec.jitter, LAST_WINDOW_END)
        instants += _planned_instants(beyond(to_utc, beyond_end))
    jittered = []
    for record in records:
        if record.disposition is Disposition.PLANNED:
            instant = instant_of(record)
            after = bisect_right(instants, instant)
            cap = spec.jitter
            if after < len(instants):
                cap = min(cap, instants[after] - instant)
            record = replace(record, jitter_delay=jitter_delay(record.occurrence_id, cap))
        jittered.append(record)
    return jittered


def _local_bounds(
    zone: tzinfo,
    table: ZoneTransitions | None,
    from_utc: datetime,
    to_utc: datetime,
) -> tuple[datetime, datetime]:
    """The floating local window whose resolutions can land in ``[from_utc, to_utc)``.

    A record placed at UTC ``t`` has a nominal time of ``t`` plus an offset in force near ``t``;
    a shifted gap time may collide with a natural time later by the gap's length. So the window is
    widened by the smallest and largest offsets in force from a day before to a day after, and by
    their difference, plus slack: a window with no transition costs nothing extra.
    """
    day = timedelta(days=1)
    offsets = offsets_between(zone, table, from_utc - day, to_utc + day)
    low, high = min(offsets), max(offsets)
    spread = high - low + _SLACK
    return (
        from_utc.replace(tzinfo=None) + low - spread,
        to_utc.replace(tzinfo=None) + high + spread,
    )


def offsets_between(
    zone: tzinfo, table: ZoneTransitions | None, first: datetime, last: datetime
) -> set[timedelta]:
    """Every UTC offset of ``zone`` in force from ``first`` to ``last`` (aware UTC, inclusive).

    From the zone's transition table (``ZoneTransitions.offsets_between``) or, without one, from
    the zone sampled daily; either way also read at both ends.
    """
    day = timedelta(days=1)
    offsets: set[timedelta] = set()
    if table is None:
        # Every day from ``first`` while before ``last``; ``last`` is added below.
        samples = [first + day * k for k in range(-(-(last - first) // day))]
    else:
        samples = []
        seconds = table.offsets_between(
            int((first - _EPOCH_UTC).total_seconds()), int((last - _EPOCH_UTC).total_seconds())
        )
        offsets.update(timedelta(seconds=s) for s in seconds)
    for moment in [*samples, first, last]:
        offset = moment.astimezone(zone).utcoffset()
        assert offset is not None
        offsets.add(offset)
    return offsets


_EPOCH_UTC = datetime(1970, 1, 1, tzinfo=UTC)


def _resolved(
    spec: ScheduleSpecV1, zone: tzinfo, nominals: Iterable[datetime]
) -> Iterator[tuple[datetime, list[Resolution]]]:
    for nominal_local in nominals:
        if spec.end is not None and nominal_local > spec.end:
            return
        yield nominal_local, resolve_local(nominal_local, zone, spec.gap_policy, spec.fold_policy)


def counts_arithmetically(rule: Rule) -> bool:
    """Whether a COUNT rule's window is counted arithmetically (``timecontract.countwindow``)."""
    return fastpath.is_periodic(rule)


def counted_before(
    spec: ScheduleSpecV1,
    zone: tzinfo,
    moment: datetime,
    business_days: BusinessCalendar | None = None,
) -> int:
    """How many instances COUNT has used before ``moment`` (floating local), by arithmetic.

    The rule's nominal times in ``[start, moment)`` — only those on the business days of
    ``business_days`` when given (``businessDaysOnly``) — less, under ``gapPolicy: SKIP``,
    those in a DST gap (see the module docstring). Requires :func:`counts_arithmetically` of
    the spec's rule (and no RFC 7529 SKIP move).

    Raises:
        SpecError: a date outside the calendar data's years.

    """
    rule = spec.rscale_rule.rule
    if business_days is None:
        before = nominal_count_before(rule, spec.start, moment)
    else:
        before = business_count_before(rule, spec.start, moment, business_days)
    if spec.gap_policy is GapPolicy.SKIP:
        counted = None if business_days is None else _on_business_day(business_days)
        before -= gap_nominals_before(rule, spec.start, moment, zone, counted)
    return before


def _on_business_day(calendar: BusinessCalendar) -> Callable[[datetime], bool]:
    return lambda nominal_local: calendar.is_business_day(nominal_local.date())


def _counted(
    spec: ScheduleSpecV1,
    rule: RscaleRule,
    zone: tzinfo,
    nominals: Iterable[datetime],
    counted_before: int,
) -> Iterator[OccurrenceRecord]:
    """Count nominal times that exist (see the module docstring) until COUNT is reached.

    ``nominals`` continue the series after ``counted_before`` existing instances (every one
    from DTSTART when ``counted_before`` is 0).
    """
    remaining = (rule.rule.count or 0) - counted_before
    resolved = _resolved(spec, zone, nominals)
    ids = IdFormatter(spec.schedule_id, spec.revision)
    for nominal_local, resolutions in resolved:
        if remaining <= 0:
            return
        if resolutions[0].reason is not Reason.GAP_SKIPPED:
            remaining -= 1
        yield from _build(spec, rule.rule, [(nominal_local, resolutions)], ids)


def _build(
    spec: ScheduleSpecV1,
    rule: Rule,
    resolved: Iterable[tuple[datetime, list[Resolution]]],
    ids: IdFormatter | None = None,
) -> Iterator[OccurrenceRecord]:
    ids = ids or IdFormatter(spec.schedule_id, spec.revision)
    until = rule.until_utc
    for nominal_local, resolutions in resolved:
        for resolution in resolutions:
            record = _record(spec, nominal_local, resolution, ids)
            # Filtered, not a stop: near a fold, nominal order and instant order differ.
            if until is None or record.placed_at_utc <= until:
                yield record


def _record(
    spec: ScheduleSpecV1, nominal_local: datetime, res: Resolution, ids: IdFormatter
) -> OccurrenceRecord:
    instant = res.instant_utc
    return OccurrenceRecord(
        occurrence_id=ids.occurrence(nominal_local, res.fold),
        logical_slot_id=None if instant is None else ids.slot(instant),
        schedule_id=spec.schedule_id,
        revision=spec.revision,
        nominal_local=nominal_local,
        fold=res.fold,
        instant_utc=instant,
        gap_at_utc=res.gap_at_utc,
        utc_offset=res.utc_offset,
        tzdb_version=spec.tzdb_version,
        disposition=Disposition.SKIPPED_GAP if instant is None else Disposition.PLANNED,
        reason=res.reason,
    )
