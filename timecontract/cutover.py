"""Revision ownership at UTC cutovers (seed: the cutover interval is half-open).

Revision N owns the resolved instants in ``[cutoverAt(N), cutoverAt(N+1))``. A SKIPPED_GAP record,
which has no instant, is placed by its ``gapAt``. This is the one statement of the rule: the ledger
reads a schedule's published cutovers and asks these functions (materialization's window, a
claim's ownership check, a publish's supersession), and filters its SQL by the bounds they return.
"""

from __future__ import annotations

import bisect
from collections.abc import Sequence
from dataclasses import dataclass
from datetime import datetime


@dataclass(frozen=True, slots=True)
class Cutover:
    """A revision and the UTC instant from which it owns occurrences."""

    revision: int
    cutover_at_utc: datetime


def owning_revision(instant_utc: datetime, cutovers: Sequence[Cutover]) -> int | None:
    """Return the revision that owns ``instant_utc``, or ``None`` before the first cutover.

    Args:
        instant_utc: an aware instant (an occurrence's instant, or a skipped record's gapAt).
        cutovers: the schedule's published revisions, in any order; revisions must increase with
            their cutovers (the ledger enforces it on publish).

    Returns:
        The revision whose half-open interval ``[cutover, next cutover)`` contains the instant.

    Raises:
        ValueError: ``instant_utc`` is naive, or revisions and cutovers are not ordered alike.

    """
    if instant_utc.tzinfo is None:
        raise ValueError("instant_utc must be aware (UTC)")
    ordered = _ordered(cutovers)
    index = bisect.bisect_right([c.cutover_at_utc for c in ordered], instant_utc) - 1
    return ordered[index].revision if index >= 0 else None


def owns(
    instant_utc: datetime, cutover_at_utc: datetime, next_cutover_at_utc: datetime | None
) -> bool:
    """Whether a revision with ``[cutover_at_utc, next_cutover_at_utc)`` owns ``instant_utc``.

    ``next_cutover_at_utc`` is ``None`` for the newest revision (open-ended).
    """
    if instant_utc < cutover_at_utc:
        return False
    return next_cutover_at_utc is None or instant_utc < next_cutover_at_utc


def owned_interval(revision: int, cutovers: Sequence[Cutover]) -> tuple[datetime, datetime | None]:
    """Return ``[cutoverAt(N), cutoverAt(N+1))``, the UTC instants revision ``N`` owns.

    Args:
        revision: the revision ``N``; it must be among ``cutovers``.
        cutovers: the schedule's published revisions, in any order; revisions must increase with
            their cutovers.

    Returns:
        The inclusive start and the exclusive end; the end is ``None`` for the newest revision
        (open-ended). An instant ``t`` is owned iff ``owns(t, start, end)``, iff
        ``owning_revision(t, cutovers) == revision``.

    Raises:
        ValueError: ``revision`` is not among ``cutovers``, or revisions and cutovers are not
            ordered alike.

    """
    ordered = _ordered(cutovers)
    for index, cutover in enumerate(ordered):
        if cutover.revision == revision:
            following = ordered[index + 1] if index + 1 < len(ordered) else None
            return cutover.cutover_at_utc, None if following is None else following.cutover_at_utc
    raise ValueError(f"revision {revision} has no cutover among {[c.revision for c in ordered]}")


def _ordered(cutovers: Sequence[Cutover]) -> list[Cutover]:
    ordered = sorted(cutovers, key=lambda c: (c.cutover_at_utc, c.revision))
    if [c.revision for c in ordered] != sorted(c.revision for c in ordered):
        raise ValueError("revisions must increase with their cutovers")
    return ordered
