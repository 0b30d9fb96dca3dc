"""Overlap enforcement: what a release does while the schedule's previous occurrence still runs.

The spec's ``overlapPolicy`` (``timecontract.OverlapPolicy``, Temporal's vocabulary) is enforced
here, at release time, inside :func:`ledger.release_due`'s one transaction: every decision is a
compare-and-set through :mod:`ledger.transitions` with an event naming the occurrence it yielded
to, so the choice is a recorded fact, the same on every worker, and workflow code never makes it.

*In flight* means released and not finished: ``DUE`` (released, its workflow about to claim),
``DISPATCHING``, ``RUNNING`` or ``RETRY_WAIT``, across all the schedule's revisions, ordered by
instant. A ``DUE`` occurrence still waiting out its jitter (instant + ``jitter_ms`` after the
release instant) has not started and overlaps nothing: it is not in flight for the decisions
below, as Temporal Schedules judge overlap when a jittered action is taken. ``UNKNOWN_EFFECT`` is
not in flight: its attempt ended and reconciliation may take up to 30 minutes (or a human,
longer); waiting for it would stall the schedule. Each occurrence obeys the policy of its own
revision:

- ``ALLOW_ALL``: released (``DUE``) whatever runs — the behaviour before the field existed.
- ``SKIP``: while another occurrence is in flight, ``PLANNED → SKIPPED_OVERLAP`` ("overlap: <id>
  is RUNNING (overlapPolicy SKIP)"); otherwise released.
- ``BUFFER_ALL``: released (``DUE``), but *held*: the releaser starts only the oldest in-flight
  occurrence; the next starts when it ends (:func:`held_back`).
- ``BUFFER_ONE``: as ``BUFFER_ALL`` for one waiting occurrence; any further one is
  ``SKIPPED_OVERLAP`` ("buffer full").
- ``CANCEL_OTHER``: released; every older in-flight occurrence that has not dispatched (``DUE``,
  ``RETRY_WAIT``) is ``CANCELLED`` ("overlap: superseded by <id>"). One that is ``DISPATCHING`` or
  ``RUNNING`` is never treated as cancelled (DESIGN §4 invariant 5): its attempt finishes, and if
  it then waits for a retry, that retry's claim cancels it instead (:func:`superseded_by`).
"""

from __future__ import annotations

import json
from collections.abc import Callable, Sequence
from datetime import datetime, timedelta
from functools import lru_cache

from sqlalchemy import Connection, select

from ledger.db import Ledger
from ledger.events import OCCURRENCES, REVISIONS, load_occurrence
from ledger.states import OccurrenceState
from ledger.transitions import transition
from ledger.views import OccurrenceView
from timecontract import OverlapPolicy, ScheduleSpecV1, parse_spec

S = OccurrenceState
IN_FLIGHT: tuple[OccurrenceState, ...] = (S.DUE, S.DISPATCHING, S.RUNNING, S.RETRY_WAIT)
"""Released and not finished (module docstring)."""
BUFFERING = frozenset({OverlapPolicy.BUFFER_ONE, OverlapPolicy.BUFFER_ALL})
_DISPATCHED = frozenset({S.DISPATCHING, S.RUNNING})


@lru_cache(maxsize=512)
def _parsed(spec_json: str, source: str) -> ScheduleSpecV1:
    # A published revision's JSON never changes (facts), so its parse can be shared.
    return parse_spec(json.loads(spec_json), source=source)


def revision_spec(connection: Connection, schedule_id: str, revision: int) -> ScheduleSpecV1:
    """The published spec of ``schedule_id`` revision ``revision`` (parsed once per text).

    Raises:
        LookupError: the revision is not published (``RevisionNotFound`` is raised by callers
            that need the ledger's error).

    """
    text = connection.execute(
        select(REVISIONS.c.spec_json).where(
            REVISIONS.c.schedule_id == schedule_id, REVISIONS.c.revision == revision
        )
    ).scalar_one_or_none()
    if text is None:
        raise LookupError(f"{schedule_id} r{revision} is not published")
    return _parsed(text, f"{schedule_id} r{revision}")


def _in_flight(
    connection: Connection, schedule_id: str, started_by: datetime | None = None
) -> list[tuple[str, int, str]]:
    """The schedule's in-flight occurrences: ``(occurrence_id, revision, state)``, oldest first.

    With ``started_by``, a ``DUE`` occurrence whose jittered dispatch (instant + ``jitter_ms``) is
    later than it is left out: it has not started.
    """
    columns = OCCURRENCES.c
    rows = connection.execute(
        select(columns.occurrence_id, columns.revision, columns.state, columns.instant_utc)
        .add_columns(columns.jitter_ms)
        .where(columns.schedule_id == schedule_id)
        .where(columns.state.in_([s.value for s in IN_FLIGHT]))
        .order_by(columns.instant_utc, columns.occurrence_id)
    )
    return [
        (row.occurrence_id, row.revision, row.state)
        for row in rows
        if started_by is None
        or row.state != S.DUE.value
        or row.instant_utc + timedelta(milliseconds=row.jitter_ms or 0) <= started_by
    ]


def release(
    connection: Connection,
    schedule_id: str,
    ids: Sequence[str],
    policy: OverlapPolicy,
    *,
    at_utc: datetime,
    by: str,
) -> tuple[list[str], list[str]]:
    """Release ``ids`` (``PLANNED``, overdue, oldest first) of one revision under ``policy``.

    Runs in the caller's transaction (:func:`ledger.release_due`, under the gate lock).

    Returns:
        ``(released, skipped)``: the IDs moved to ``DUE`` and to ``SKIPPED_OVERLAP``, in order.

    """
    flight = [
        (oid, S(state)) for oid, _revision, state in _in_flight(connection, schedule_id, at_utc)
    ]
    released: list[str] = []
    skipped: list[str] = []
    for oid in ids:
        head = flight[0] if flight else None
        waiting = [i for i, state in flight[1:] if state is S.DUE]
        name = f"(overlapPolicy {policy.value})"
        if policy is OverlapPolicy.SKIP and head is not None:
            why = f"overlap: {head[0]} is {head[1].value} {name}"
            _move(connection, oid, S.SKIPPED_OVERLAP, at_utc, by, why)
            skipped.append(oid)
            continue
        if policy is OverlapPolicy.BUFFER_ONE and head is not None and waiting:
            why = f"overlap: buffer full ({waiting[0]} waits behind {head[0]}) {name}"
            _move(connection, oid, S.SKIPPED_OVERLAP, at_utc, by, why)
            skipped.append(oid)
            continue
        if policy is OverlapPolicy.CANCEL_OTHER:
            for other, _state in [f for f in flight if f[1] not in _DISPATCHED]:
                why = f"overlap: superseded by {oid} {name}"
                _move(connection, other, S.CANCELLED, at_utc, by, why)
            flight = [f for f in flight if f[1] in _DISPATCHED]
        why = "released"
        if policy in BUFFERING and head is not None:
            why = f"released; buffered behind {head[0]} {name}"
        _move(connection, oid, S.DUE, at_utc, by, why)
        released.append(oid)
        flight.append((oid, S.DUE))
    return released, skipped


def held_back(
    connection: Connection,
    schedule_id: str,
    policy_of: Callable[[int], OverlapPolicy],
) -> tuple[str, ...]:
    """The ``DUE`` occurrences a releaser must not start yet: buffered behind an older one.

    A ``DUE`` occurrence of a ``BUFFER_ONE``/``BUFFER_ALL`` revision is held while any older
    occurrence of the schedule is in flight; the oldest in-flight one is never held.

    Args:
        connection: the caller's connection.
        schedule_id: the schedule.
        policy_of: a revision's ``overlapPolicy``.

    Returns:
        The held IDs, oldest first.

    """
    held: list[str] = []
    ahead = False
    for oid, revision, state in _in_flight(connection, schedule_id):
        if state == S.DUE.value and ahead and policy_of(revision) in BUFFERING:
            held.append(oid)
        ahead = True
    return tuple(held)


def superseded_by(connection: Connection, occurrence: OccurrenceView) -> str | None:
    """Under ``CANCEL_OTHER``, the newer occurrence that supersedes a ``RETRY_WAIT`` one, if any.

    An occurrence that was ``DISPATCHING`` or ``RUNNING`` when a newer one came due was not
    cancelled then (an effect may exist); if it failed without effect and waits for a retry, the
    retry's claim asks this and cancels it rather than run it after its successor.

    Returns:
        The ID of the oldest newer occurrence of the schedule released so far, or ``None`` (not
        ``RETRY_WAIT``, another policy, or nothing newer was released).

    """
    if occurrence.state is not S.RETRY_WAIT or occurrence.instant_utc is None:
        return None
    spec = revision_spec(connection, occurrence.schedule_id, occurrence.revision)
    if spec.overlap_policy is not OverlapPolicy.CANCEL_OTHER:
        return None
    released = [S.DUE, S.DISPATCHING, S.RUNNING, S.RETRY_WAIT, S.SUCCEEDED, S.FAILED]
    released_states = [s.value for s in (*released, S.UNKNOWN_EFFECT)]
    newer = connection.execute(
        select(OCCURRENCES.c.occurrence_id)
        .where(OCCURRENCES.c.schedule_id == occurrence.schedule_id)
        .where(OCCURRENCES.c.instant_utc > occurrence.instant_utc)
        .where(OCCURRENCES.c.state.in_(released_states))
        .order_by(OCCURRENCES.c.instant_utc, OCCURRENCES.c.occurrence_id)
        .limit(1)
    ).scalar_one_or_none()
    return newer


def _move(
    connection: Connection,
    occurrence_id: str,
    to_state: OccurrenceState,
    at_utc: datetime,
    by: str,
    why: str,
) -> None:
    transition(connection, occurrence_id, to_state, now_utc=at_utc, by=by, why=why)


def cancel_superseded(
    ledger: Ledger, occurrence_id: str, now_utc: datetime, *, by: str
) -> str | None:
    """Cancel a ``RETRY_WAIT`` occurrence superseded under ``CANCEL_OTHER`` (:func:`superseded_by`).

    One transaction: read, decide, ``RETRY_WAIT → CANCELLED`` by compare-and-set with the reason
    "overlap: superseded by <id> (overlapPolicy CANCEL_OTHER)".

    Returns:
        The superseding occurrence's ID when it cancelled, else ``None`` (nothing written).

    """

    def work(connection: Connection) -> str | None:
        occurrence = load_occurrence(connection, occurrence_id)
        newer = superseded_by(connection, occurrence)
        if newer is not None:
            why = f"overlap: superseded by {newer} (overlapPolicy CANCEL_OTHER)"
            transition(connection, occurrence, S.CANCELLED, now_utc=now_utc, by=by, why=why)
        return newer

    return ledger.write(work)
