"""Manual occurrences (``almanac trigger``): one run now, in its own ID namespace, recorded.

A manual occurrence's ID is ``<scheduleId>.manual.<requestId>`` and its logical slot is that same
string, a namespace no calendar occurrence uses (calendar IDs are ``<scheduleId>.r<N>.…`` and
calendar slots ``<scheduleId>@<instant>``), so a trigger never takes a calendar occurrence's ID or
slot and never stops one from running. It belongs to the revision that owns the instant it was
requested at, is recorded with reason ``MANUAL`` (migration 0007), its instant (whole seconds),
the local time in the revision's zone and pinned tz release, and events naming who asked and why;
it is released (``DUE``) in the same transaction. Its claim, attempts and outcome are a calendar
occurrence's: the same gate checks, the same idempotency key (its ID).

The same request ID twice records one occurrence: the second call finds it and writes nothing
(``created=False``), so it runs once.
"""

from __future__ import annotations

import hashlib
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from pathlib import Path

from sqlalchemy import Connection, insert, select

from ledger import overlap
from ledger.db import Ledger
from ledger.errors import RevisionNotFound
from ledger.events import EVENTS, OCCURRENCES, SLOTS, require_aware
from ledger.gate import lock_gate, schedule_cutovers
from ledger.models import MANUAL_REASON
from ledger.states import OccurrenceState
from ledger.transitions import transition
from ledger.views import OccurrenceView
from timecontract import owning_revision
from timecontract.ids import (
    ID_FORMAT_VERSION,
    MANUAL_INFIX,
    REQUEST_ID_PATTERN,
    manual_occurrence_id,
)
from timecontract.zones import load

# The manual ID format lives with the other occurrenceId forms (timecontract.ids), so every parser
# of occurrence IDs (metrics, activity error labels) knows it.
__all__ = [
    "MANUAL_INFIX",
    "REQUEST_ID_PATTERN",
    "TriggerResult",
    "default_request_id",
    "manual_occurrence_id",
    "record_trigger",
]


def default_request_id(schedule_id: str, reason: str, by: str, requested_at_utc: datetime) -> str:
    """The request ID when the caller gives none: the caller's input and the minute it asked.

    ``m`` + the first 16 hex digits of the sha256 of scheduleId, ``by``, ``reason`` and the
    request's UTC minute (``YYYYMMDDTHHMMZ``) joined by newlines (UTF-8). The same trigger sent
    twice within one UTC minute (a double submit, a retried command) runs once; the same trigger
    next week runs again, as ``temporal schedule trigger`` and Airflow's manual runs do. For
    exactly once across minutes, give an explicit ``--request-id``.

    Raises:
        ValueError: ``requested_at_utc`` is naive.
    """
    minute = require_aware("requested_at_utc", requested_at_utc).astimezone(UTC)
    text = f"{schedule_id}\n{by}\n{reason}\n{minute:%Y%m%dT%H%MZ}"
    return "m" + hashlib.sha256(text.encode("utf-8")).hexdigest()[:16]


@dataclass(frozen=True, slots=True)
class TriggerResult:
    """The manual occurrence and whether this call recorded it (``False``: the request existed)."""

    occurrence: OccurrenceView
    created: bool


def record_trigger(
    ledger: Ledger,
    schedule_id: str,
    request_id: str,
    now_utc: datetime,
    *,
    by: str,
    reason: str,
    tzdb_store: Path | None = None,
) -> TriggerResult:
    """Record (once) and release a manual occurrence of ``schedule_id`` at ``now_utc``.

    Args:
        ledger: the ledger.
        schedule_id: the schedule.
        request_id: the caller's request ID (:data:`REQUEST_ID_PATTERN`).
        now_utc: when it was requested (aware UTC): its instant, to whole seconds.
        by: who asked (events).
        reason: why (events and ``state_reason``).
        tzdb_store: the local tz release store (its local time's evidence).

    Returns:
        The occurrence (``DUE`` when created now) and ``created``.

    Raises:
        ValueError: a malformed request ID or a naive ``now_utc``.
        ScheduleNotFound: no such schedule.
        RevisionNotFound: no revision owns ``now_utc`` (before the first cutover).

    """
    require_aware("now_utc", now_utc)
    occurrence_id = manual_occurrence_id(schedule_id, request_id)
    instant = now_utc.replace(microsecond=0)

    def work(connection: Connection) -> TriggerResult:
        found = connection.execute(
            select(OCCURRENCES).where(OCCURRENCES.c.occurrence_id == occurrence_id)
        ).one_or_none()
        if found is not None:
            return TriggerResult(OccurrenceView.from_row(found), created=False)
        gate = lock_gate(connection, schedule_id)
        revision = owning_revision(instant, schedule_cutovers(connection, schedule_id))
        if revision is None:
            raise RevisionNotFound(schedule_id, gate.active_revision)
        spec = overlap.revision_spec(connection, schedule_id, revision)
        local = instant.astimezone(load(spec.time_zone, spec.tzdb_version, tzdb_store))
        offset = local.utcoffset() or timedelta(0)
        asked = f"manual trigger by {by}: {reason} (request {request_id})"
        connection.execute(
            insert(OCCURRENCES).values(
                occurrence_id=occurrence_id,
                schedule_id=schedule_id,
                revision=revision,
                logical_slot_id=occurrence_id,
                nominal_local=local.replace(tzinfo=None, fold=0),
                fold=local.fold,
                instant_utc=instant,
                gap_at_utc=None,
                utc_offset_seconds=int(offset.total_seconds()),
                tzdb_version=spec.tzdb_version,
                reason=MANUAL_REASON,
                state=OccurrenceState.PLANNED.value,
                state_reason=asked,
                claim_generation=0,
                next_attempt_at_utc=None,
                created_at_utc=now_utc,
                updated_at_utc=now_utc,
                id_format=ID_FORMAT_VERSION,
                jitter_ms=None,
                event_sequence=1,
            )
        )
        connection.execute(
            insert(SLOTS).values(
                schedule_id=schedule_id,
                logical_slot_id=occurrence_id,
                instant_utc=instant,
                owner_occurrence_id=occurrence_id,
                owner_revision=revision,
                claimed_at_utc=now_utc,
            )
        )
        connection.execute(
            insert(EVENTS).values(
                occurrence_id=occurrence_id,
                from_state=None,
                to_state=OccurrenceState.PLANNED.value,
                at_utc=now_utc,
                by=by,
                why=f"materialized: {MANUAL_REASON}: {asked}",
                sequence=1,
            )
        )
        before = transition(
            connection,
            occurrence_id,
            OccurrenceState.DUE,
            now_utc=now_utc,
            by=by,
            why=f"released: {asked}",
        )
        view = OccurrenceView.from_row(
            connection.execute(
                select(OCCURRENCES).where(OCCURRENCES.c.occurrence_id == before.occurrence_id)
            ).one()
        )
        return TriggerResult(view, created=True)

    return ledger.write(work)
