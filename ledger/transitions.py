"""The two ways an occurrence's state changes: one occurrence by compare-and-set, or a set at once.

Every change of an existing occurrence's state (and a redelivery, which keeps the state and renews
the claim) goes through one of these two functions. The only other writers of
``occurrence_events`` *create* occurrences (``from_state`` NULL): materialization and backfill
(:mod:`ledger.creation`) and a manual trigger (:mod:`ledger.manual`). Both functions run on the
caller's connection, inside the caller's one transaction, and append the event rows there:

- :func:`transition` — one occurrence: read it, check the transition table, then one Core
  ``UPDATE … WHERE occurrence_id = … AND state = <observed> AND claim_generation = <observed>
  [AND guard]`` that must change exactly one row, then its event row.
- :func:`transition_where` — a set of occurrences in one source state: one ``UPDATE … WHERE state =
  <from> AND <criteria> RETURNING occurrence_id``, then one event row per changed row.

The transition table (:data:`ledger.states.TRANSITIONS`) is checked here before any SQL is sent;
the database trigger of migration 0002 rejects any other state change as a backstop.

Event order: the same ``UPDATE`` increments ``occurrences.event_sequence`` and returns it, and the
event row carries that number. So the number is taken under the row lock the compare-and-set
holds until commit: concurrent writers of one occurrence are serialised by it (a loser changes no
row and appends nothing; a rollback takes its increment with it), and an occurrence's events are
numbered 1, 2, 3, … in commit order, whatever the writers' clocks say (migration 0006).
"""

from __future__ import annotations

from collections.abc import Mapping
from datetime import datetime
from typing import Any

from sqlalchemy import ColumnElement, Connection, update

from ledger.errors import ClaimLost, IllegalTransition
from ledger.events import OCCURRENCES, Event, append_events, load_occurrence
from ledger.states import OccurrenceState, is_legal
from ledger.views import OccurrenceView


def transition(
    connection: Connection,
    occurrence: str | OccurrenceView,
    to_state: OccurrenceState,
    *,
    now_utc: datetime,
    by: str,
    why: str,
    claim_generation: int | None = None,
    guard: ColumnElement[bool] | None = None,
    values: Mapping[str, Any] | None = None,
    same_state: bool = False,
    state_reason: str | None = None,
    backfill: bool = False,
) -> OccurrenceView:
    """Move one occurrence to ``to_state`` by compare-and-set, and append its event row.

    Args:
        connection: the caller's connection, inside its transaction.
        occurrence: the occurrence's ID, or the view the caller read in this transaction (saves
            a read; the compare-and-set still checks that its state and claim generation hold).
        to_state: the target state; must be legal from the current state (``ledger.states``).
        now_utc: when (aware UTC); stored as ``updated_at_utc`` and the event's ``at_utc``.
        by: who (worker identity, user, component).
        why: the reason, stored on the event and as the occurrence's ``state_reason``.
        claim_generation: a fencing token: when given, the row must still carry this claim
            generation (a stale worker cannot move a newer attempt).
        guard: a further SQL condition on the ``occurrences`` row (e.g. "still owns its slot");
            when it does not hold, the update changes no row and :class:`ClaimLost` is raised.
        values: further columns to set in the same update.
        same_state: allow ``to_state`` to be the current state (a redelivery renews the claim
            generation without a state change; its event records ``from == to``).
        state_reason: the occurrence's ``state_reason`` when it should be shorter than ``why``.
        backfill: an operator's backfill (:mod:`ledger.backfill`) asks: the edges of
            :data:`ledger.states.BACKFILL_TRANSITIONS` (``MISFIRE_EXPIRED → DUE``) are legal too.
            The caller sets ``backfill_at_utc`` in ``values`` (the database requires it).

    Returns:
        The occurrence as it was *before* the transition.

    Raises:
        OccurrenceNotFound: no such occurrence.
        IllegalTransition: the current state cannot move to ``to_state``.
        ClaimLost: the claim generation differs, the guard does not hold, or the row changed
            between read and update.

    """
    oid = occurrence if isinstance(occurrence, str) else occurrence.occurrence_id
    before = load_occurrence(connection, oid) if isinstance(occurrence, str) else occurrence
    legal = is_legal(before.state, to_state, backfill=backfill)
    if not (legal or (same_state and before.state is to_state)):
        raise IllegalTransition(oid, before.state, to_state)
    if claim_generation is not None and before.claim_generation != claim_generation:
        raise ClaimLost(
            oid, f"claim generation is {before.claim_generation}, caller holds {claim_generation}"
        )
    statement = (
        update(OCCURRENCES)
        .where(OCCURRENCES.c.occurrence_id == oid)
        .where(OCCURRENCES.c.state == before.state.value)
        .where(OCCURRENCES.c.claim_generation == before.claim_generation)
        .values(
            state=to_state.value,
            state_reason=why if state_reason is None else state_reason,
            updated_at_utc=now_utc,
            event_sequence=OCCURRENCES.c.event_sequence + 1,
            **(values or {}),
        )
        .returning(OCCURRENCES.c.event_sequence)
    )
    if guard is not None:
        statement = statement.where(guard)
    sequences = connection.execute(statement).scalars().all()
    if len(sequences) != 1:
        raise ClaimLost(oid, f"state {before.state.value} changed concurrently or guard failed")
    append_events(connection, [Event(oid, before.state, to_state, now_utc, by, why, sequences[0])])
    return before


def transition_where(
    connection: Connection,
    from_state: OccurrenceState,
    to_state: OccurrenceState,
    *criteria: ColumnElement[bool],
    now_utc: datetime,
    by: str,
    why: str,
    expected: int | None = None,
    values: Mapping[str, Any] | None = None,
) -> tuple[str, ...]:
    """Move every occurrence in ``from_state`` matching ``criteria`` to ``to_state`` at once.

    One ``UPDATE … RETURNING`` (set-based, any number of rows), then one event row per changed
    occurrence, in occurrence-ID order.

    Args:
        connection: the caller's connection, inside its transaction.
        from_state: the one source state (so each event names its ``from_state`` exactly).
        to_state: the target state; ``from_state → to_state`` must be legal.
        *criteria: SQL conditions on ``occurrences`` selecting the set (ANDed).
        now_utc: when (aware UTC).
        by: who (event rows).
        why: the reason (event rows and ``state_reason``).
        expected: if given, exactly this many rows must change (e.g. the caller locked them).
        values: further columns to set in the same update.

    Returns:
        The IDs of the occurrences moved, sorted.

    Raises:
        IllegalTransition: ``from_state → to_state`` is not in the transition table.
        ClaimLost: ``expected`` was given and another number of rows changed (the transaction
            is re-run by :meth:`ledger.Ledger.write`).

    """
    if not is_legal(from_state, to_state):
        raise IllegalTransition(f"occurrences in {from_state.value}", from_state, to_state)
    numbered = sorted(
        connection.execute(
            update(OCCURRENCES)
            .where(OCCURRENCES.c.state == from_state.value, *criteria)
            .values(
                state=to_state.value,
                state_reason=why,
                updated_at_utc=now_utc,
                event_sequence=OCCURRENCES.c.event_sequence + 1,
                **(values or {}),
            )
            .returning(OCCURRENCES.c.occurrence_id, OCCURRENCES.c.event_sequence)
        ).all()
    )
    moved = tuple(oid for oid, _ in numbered)
    if expected is not None and len(moved) != expected:
        raise ClaimLost(
            f"{expected} occurrences",
            f"{from_state.value} → {to_state.value} changed {len(moved)}",
        )
    append_events(
        connection, (Event(i, from_state, to_state, now_utc, by, why, n) for i, n in numbered)
    )
    return moved
