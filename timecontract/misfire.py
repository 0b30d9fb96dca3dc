"""Misfire planning: which overdue occurrences run and which expire after downtime.

DESIGN §4 and the seed: "After the platform recovers, first calculate the set of missed occurrences
and then apply the misfire policy." The rules, at a given ``now_utc``:

1. An occurrence whose instant lies in the future is not considered.
2. One overdue by at most ``lateness`` (``now - instant <= lateness``) is *on time*: released under
   every policy.
3. The others are *missed*. ``SKIP`` expires them all (``MISFIRE_EXPIRED``). ``CATCH_UP_BOUNDED``
   releases the most recent ``max_catch_up`` of them and expires the rest; ``CATCH_UP_LATEST``
   releases only the most recent one. Zero releases beyond the bound, ever.

Releases are returned oldest first (so a catch-up runs in calendar order). The plan depends only on
its inputs: the caller must pass the whole overdue set at once (computing "missed" first).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from datetime import datetime, timedelta

from timecontract.ids import OccurrenceId
from timecontract.policies import MisfirePolicy


@dataclass(frozen=True, slots=True)
class Overdue:
    """An occurrence not yet released, with its resolved instant (aware UTC)."""

    occurrence_id: OccurrenceId
    instant_utc: datetime


@dataclass(frozen=True, slots=True)
class MisfirePlan:
    """The decision for one overdue set: ``release`` (oldest first) and ``expire`` (oldest first).

    ``on_time`` are the released occurrences that were within ``lateness``; ``caught_up`` the
    released ones that were missed. ``release == on_time + caught_up`` sorted by instant.
    """

    release: tuple[OccurrenceId, ...]
    expire: tuple[OccurrenceId, ...]
    on_time: tuple[OccurrenceId, ...]
    caught_up: tuple[OccurrenceId, ...]


def plan_misfires(
    overdue: Sequence[Overdue],
    now_utc: datetime,
    lateness: timedelta,
    policy: MisfirePolicy,
    max_catch_up: int,
) -> MisfirePlan:
    """Split overdue occurrences into those to release and those to expire.

    Args:
        overdue: occurrences still waiting to be released (PLANNED), any order; ones in the future
            of ``now_utc`` are ignored.
        now_utc: the decision instant (aware; a parameter, never the wall clock).
        lateness: how late an occurrence may start and still be on time (>= 0).
        policy: the spec's misfirePolicy.
        max_catch_up: the spec's maxCatchUp (>= 0), used by ``CATCH_UP_BOUNDED``.

    Returns:
        The plan; every due occurrence is in exactly one of ``release`` and ``expire``.

    Raises:
        ValueError: ``now_utc`` naive, negative ``lateness`` or ``max_catch_up``.

    """
    if now_utc.tzinfo is None:
        raise ValueError("now_utc must be aware (UTC)")
    if lateness < timedelta(0) or max_catch_up < 0:
        raise ValueError("lateness and max_catch_up must not be negative")
    due = sorted(
        (o for o in overdue if o.instant_utc <= now_utc),
        key=lambda o: (o.instant_utc, o.occurrence_id),
    )
    on_time = [o for o in due if now_utc - o.instant_utc <= lateness]
    missed = [o for o in due if now_utc - o.instant_utc > lateness]
    if policy is MisfirePolicy.SKIP:
        bound = 0
    elif policy is MisfirePolicy.CATCH_UP_LATEST:
        bound = 1
    else:
        bound = max_catch_up
    caught_up = missed[max(0, len(missed) - bound) :] if bound else []
    expired = missed[: len(missed) - len(caught_up)]
    released = sorted(on_time + caught_up, key=lambda o: (o.instant_utc, o.occurrence_id))
    return MisfirePlan(
        release=tuple(o.occurrence_id for o in released),
        expire=tuple(o.occurrence_id for o in expired),
        on_time=tuple(o.occurrence_id for o in on_time),
        caught_up=tuple(o.occurrence_id for o in caught_up),
    )
