"""One occurrence as it crosses the workflow boundary: an ``upcoming`` row, a child's input.

The ledger builds it (``ledger.OccurrenceView.upcoming``, the one converter); workflows read it.
"""

from dataclasses import dataclass
from datetime import datetime


@dataclass(frozen=True)
class UpcomingOccurrence:
    """One occurrence as shown by the ``upcoming`` query and carried to an occurrence workflow."""

    occurrence_id: str
    schedule_id: str
    revision: int
    nominal_local: str
    """ISO local date-time without offset (``2026-11-01T01:30:00``)."""
    fold: int
    instant_utc: datetime
    state: str
    """An ``OccurrenceState`` (``PLANNED`` or ``DUE``), as its name."""
    jitter_seconds: float = 0.0
    """The dispatch delay recorded at materialization (``occurrences.jitter_ms``): the occurrence
    workflow waits it on a durable timer before its first claim. 0 without ``jitter``."""
    holiday: str | None = None
    """For an occurrence a holiday policy moved: the holiday's name (``Good Friday``); else None."""
    calendar_release: str | None = None
    """The calendar release that decided it (``NYSE@holidays-0.108``); else None."""
