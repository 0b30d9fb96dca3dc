"""Revision ownership at UTC cutovers (seed: the cutover interval is half-open).

Revision N owns the resolved instants in ``[cutoverAt(N), cutoverAt(N+1))``. A SKIPPED_GAP record,
which has no instant, is placed by its ``gapAt``.
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
    ordered = sorted(cutovers, key=lambda c: (c.cutover_at_utc, c.revision))
    if [c.revision for c in ordered] != sorted(c.revision for c in ordered):
        raise ValueError("revisions must increase with their cutovers")
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
