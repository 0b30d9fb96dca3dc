"""The checks of a valid spec against what lies outside it: its zone, its density, its deadline.

:func:`~timecontract.spec.load_spec` runs them where a spec enters (``validate``, ``apply``, the
publish activity), after the fields are valid one by one; :func:`~timecontract.spec.parse_spec`
does not, so a revision published before a bound existed still loads. Each returns zero or one
:class:`~timecontract.errors.SpecError`, reported together with every other problem.
"""

from __future__ import annotations

from collections.abc import Mapping
from datetime import datetime, timedelta
from pathlib import Path
from typing import Any

from timecontract import zones
from timecontract.density import MAX_PER_MINUTE, MIN_INTERVAL, density_problem, most_within
from timecontract.errors import SpecError
from timecontract.iso8601 import format_duration
from timecontract.rscale import parse_rscale_rule
from timecontract.spacing import smallest_spacing


def zone_problems(data: Mapping[str, Any], tzdb_store: Path | None) -> list[SpecError]:
    """Check the data's ``timeZone`` in its ``tzdbVersion``.

    Fields that are not even well-formed strings are left to the model's own problems.

    Returns:
        Zero or one problem: the release is not available, or it has no such zone.
    """
    zone, release = data.get("timeZone"), data.get("tzdbVersion")
    if not isinstance(release, str) or not zones.RELEASE_PATTERN.fullmatch(release):
        return []
    try:
        zones.zone_names(release, tzdb_store)
        if isinstance(zone, str) and zone:
            zones.load(zone, release, tzdb_store)
    except SpecError as exc:
        return [exc]
    return []


def density_problems(
    interval: timedelta | None, rule: str | None, rdates: list[datetime]
) -> list[SpecError]:
    """Zero or one problem: the spec is denser than Almanac supports (``timecontract.density``).

    Args: the valid spec's ``interval``, ``rule`` (its text) and ``rdates``.

    Checked where a spec enters (:func:`load_spec`: ``validate``, ``apply``, the publish
    activity), in constant time from the rule's parts; not by :func:`parse_spec`, which also reads
    revisions already published, so one published before the bound still loads (and its work is
    bounded in occurrences all the same).
    """
    if interval is not None:
        if interval >= MIN_INTERVAL:
            return []
        problem = (
            f"is shorter than PT{MIN_INTERVAL.seconds}S, the densest supported schedule "
            f"({MAX_PER_MINUTE} occurrences a minute)"
        )
        return [SpecError("interval", format_duration(interval), problem)]
    if rule is not None:
        too_dense = density_problem(parse_rscale_rule(rule).rule)
        if too_dense is not None:
            return [SpecError("rule", rule, too_dense)]
    crowded = most_within(rdates, timedelta(minutes=1))
    if crowded > MAX_PER_MINUTE:
        problem = (
            f"lists {crowded} date-times within one minute; the densest supported schedule has "
            f"{MAX_PER_MINUTE} occurrences a minute"
        )
        return [SpecError("rdates", f"{len(rdates)} date-times", problem)]
    return []


def deadline_problems(
    deadline: timedelta | None,
    interval: timedelta | None,
    rule: str | None,
    start: datetime,
    rdates: list[datetime],
) -> list[SpecError]:
    """Zero or one problem: ``deadline`` is longer than the smallest spacing of two occurrences.

    Args: the valid spec's ``deadline``, ``interval``, ``rule`` (its text), ``start``, ``rdates``.

    Checked where a spec enters (:func:`load_spec`), after the density bound (so the sample it
    reads is bounded, ``timecontract.spacing``); a deadline longer than the spacing would make two
    occurrences' deadlines overlap.
    """
    if deadline is None:
        return []
    spacing = smallest_spacing(
        interval=interval,
        rule=parse_rscale_rule(rule).rule if rule is not None else None,
        start=start,
        rdates=rdates,
    )
    if spacing is None or deadline <= spacing:
        return []
    problem = (
        f"is longer than {format_duration(spacing)}, the smallest spacing between two "
        "occurrences of the schedule"
    )
    return [SpecError("deadline", format_duration(deadline), problem)]
