"""The checks of a valid spec against what lies outside it: its zone, its density, its deadline.

:func:`~timecontract.spec.load_spec` runs them where a spec enters (``validate``, ``apply``, the
publish activity), after the fields are valid one by one; :func:`~timecontract.spec.parse_spec`
does not, so a revision published before a bound existed still loads. Each returns zero or one
:class:`~timecontract.errors.SpecError`, reported together with every other problem.
"""

from __future__ import annotations

from collections.abc import Mapping
from datetime import timedelta
from pathlib import Path
from typing import TYPE_CHECKING, Any

from timecontract import zones
from timecontract.density import MAX_PER_MINUTE, MIN_INTERVAL, density_problem, most_within
from timecontract.errors import SpecError
from timecontract.iso8601 import format_duration
from timecontract.spacing import smallest_spacing

if TYPE_CHECKING:
    from timecontract.spec import ScheduleSpecV1


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


def density_problems(spec: ScheduleSpecV1) -> list[SpecError]:
    """Zero or one problem: the spec is denser than Almanac supports (``timecontract.density``).

    Checked where a spec enters (:func:`load_spec`: ``validate``, ``apply``, the publish
    activity), in constant time from the rule's parts; not by :func:`parse_spec`, which also reads
    revisions already published, so one published before the bound still loads (and its work is
    bounded in occurrences all the same).
    """
    if spec.interval is not None:
        if spec.interval >= MIN_INTERVAL:
            return []
        problem = (
            f"is shorter than PT{MIN_INTERVAL.seconds}S, the densest supported schedule "
            f"({MAX_PER_MINUTE} occurrences a minute)"
        )
        return [SpecError("interval", format_duration(spec.interval), problem)]
    if spec.rule is not None:
        too_dense = density_problem(spec.parsed_rule)
        if too_dense is not None:
            return [SpecError("rule", spec.rule, too_dense)]
    crowded = most_within(spec.rdates, timedelta(minutes=1))
    if crowded > MAX_PER_MINUTE:
        problem = (
            f"lists {crowded} date-times within one minute; the densest supported schedule has "
            f"{MAX_PER_MINUTE} occurrences a minute"
        )
        return [SpecError("rdates", f"{len(spec.rdates)} date-times", problem)]
    return []


def deadline_problems(spec: ScheduleSpecV1) -> list[SpecError]:
    """Zero or one problem: ``deadline`` is longer than the smallest spacing of two occurrences.

    Checked where a spec enters (:func:`load_spec`), after the density bound (so the sample it
    reads is bounded, ``timecontract.spacing``); a deadline longer than the spacing would make two
    occurrences' deadlines overlap.
    """
    if spec.deadline is None:
        return []
    spacing = smallest_spacing(
        interval=spec.interval,
        rule=spec.parsed_rule if spec.rule is not None else None,
        start=spec.start,
        rdates=spec.rdates,
    )
    if spacing is None or spec.deadline <= spacing:
        return []
    problem = (
        f"is longer than {format_duration(spacing)}, the smallest spacing between two "
        "occurrences of the schedule"
    )
    return [SpecError("deadline", format_duration(spec.deadline), problem)]
