"""The DST and downtime policies of ``scheduleSpec.v1``: what happens at a gap, a fold, a misfire.

Each enum is a spec field's vocabulary (``gapPolicy``, ``foldPolicy``, ``misfirePolicy``,
``overlapPolicy``); its members are the values written in a spec file and in the ledger. A module
of its own so that the resolution and misfire code read the vocabulary without the spec model.
"""

from __future__ import annotations

from enum import StrEnum


class GapPolicy(StrEnum):
    """What to do with a nominal local time that does not exist (a DST gap, "spring forward").

    ``SKIP`` records a ``SKIPPED_GAP`` fact (with ``gapAt``, the transition's instant) and runs
    nothing. ``SHIFT_FORWARD`` runs at the instant RFC 5545 §3.3.5 gives: the local time read with
    the offset in force before the gap, i.e. moved later by the gap's length (02:30 → 03:30 EDT).
    ``NEXT_VALID`` runs at the first instant after the gap, the transition itself (02:30 → 03:00
    EDT; what ISC cron, croniter and Dagster do); several gap times then share that instant, and
    the earliest nominal time keeps the slot (a natural 03:00 occurrence beats them all).
    """

    SKIP = "SKIP"
    SHIFT_FORWARD = "SHIFT_FORWARD"
    NEXT_VALID = "NEXT_VALID"


class FoldPolicy(StrEnum):
    """What to do with a nominal local time that occurs twice (a DST fold, "fall back").

    ``FIRST_ONLY`` runs at the earlier instant (fold ordinal 0, the pre-transition offset, as
    RFC 5545 and cron do); ``SECOND_ONLY`` at the later one (ordinal 1); ``BOTH`` runs twice,
    one occurrence per ordinal.
    """

    FIRST_ONLY = "FIRST_ONLY"
    SECOND_ONLY = "SECOND_ONLY"
    BOTH = "BOTH"


class MisfirePolicy(StrEnum):
    """What to do with occurrences found overdue by more than ``lateness`` (after downtime).

    ``SKIP`` records every missed occurrence as ``MISFIRE_EXPIRED``. ``CATCH_UP_BOUNDED`` runs the
    most recent ``maxCatchUp`` of them (oldest first) and expires the rest (seed: no seven summaries
    after a week-long outage). ``CATCH_UP_LATEST`` runs only the most recent missed occurrence
    (Quartz's "fire once now"; the same as ``CATCH_UP_BOUNDED`` with ``maxCatchUp: 1``).
    Occurrences overdue by at most ``lateness`` are on time and run under every policy.
    """

    SKIP = "SKIP"
    CATCH_UP_BOUNDED = "CATCH_UP_BOUNDED"
    CATCH_UP_LATEST = "CATCH_UP_LATEST"


class OverlapPolicy(StrEnum):
    """What happens when an occurrence comes due while the schedule's previous one still runs.

    The vocabulary is Temporal Schedules' ``ScheduleOverlapPolicy``. "Still runs" means the
    previous occurrence of the same schedule is ``DISPATCHING``, ``RUNNING`` or ``RETRY_WAIT``.

    ``ALLOW_ALL`` (the default) starts it anyway: occurrences are distinct (own IDs, own
    idempotency keys), so running them side by side never duplicates an effect; this is what
    every revision published before the field existed does. ``SKIP`` records the new one
    ``SKIPPED_OVERLAP`` (a terminal fact) and runs nothing. ``BUFFER_ONE`` keeps at most one
    waiting until the running one ends and skips (``SKIPPED_OVERLAP``) any further one;
    ``BUFFER_ALL`` keeps every one waiting, run in order. ``CANCEL_OTHER`` asks the running one to
    stop and then starts the new one — a dispatched occurrence is never treated as cancelled
    (DESIGN §4 invariant 5): only one still in ``RETRY_WAIT`` is cancelled outright.

    The time contract only records the choice; the orchestration enforces it.
    """

    SKIP = "SKIP"
    BUFFER_ONE = "BUFFER_ONE"
    BUFFER_ALL = "BUFFER_ALL"
    CANCEL_OTHER = "CANCEL_OTHER"
    ALLOW_ALL = "ALLOW_ALL"
