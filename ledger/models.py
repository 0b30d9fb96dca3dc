"""The ledger's tables (DESIGN §4), as SQLAlchemy 2 typed ORM models.

The schema is created only by the Alembic migrations in ``ledger/migrations``; these models are
what the migrations must produce (a test compares them with autogenerate on both backends).

Conventions: instants are ``*_utc`` columns of :class:`ledger.types.UtcDateTime` (aware UTC in,
aware UTC out); ``nominal_local`` is naive wall time stored as ISO text; constraint names come
from :data:`NAMING_CONVENTION`; relationships are ``lazy="raise"`` so every read says what it
loads. Facts are never deleted: no operation issues a DELETE.

References: every foreign key declared here is one on SQLite. On PostgreSQL four of them, the
ones each materialized occurrence writes (occurrence → revision, slot → gate, slot → owner
occurrence, event → occurrence), are the same rule checked by triggers once per statement, and
their referenced rows can never be deleted or re-keyed (migration 0011); the schema test accepts
exactly those four as the difference between the models and a migrated PostgreSQL ledger.

CHECK lists: on SQLite the five state and reason lists of ``occurrences`` and
``occurrence_events`` are stored as the equivalent chains of comparisons (migration 0017: SQLite
builds an ``IN`` list's temporary table again for every row a CHECK tests); the rule is the one
declared here.
"""

from __future__ import annotations

from datetime import datetime

from sqlalchemy import (
    BigInteger,
    Boolean,
    CheckConstraint,
    ForeignKey,
    ForeignKeyConstraint,
    Index,
    Integer,
    MetaData,
    SmallInteger,
    String,
    Text,
    UniqueConstraint,
    text,
)
from sqlalchemy.orm import DeclarativeBase, Mapped, mapped_column, relationship

from ledger.states import (
    AttemptOutcome,
    OccurrenceState,
    ReconciliationResolution,
    ScheduleEventKind,
)
from ledger.types import NominalLocal, UtcDateTime
from timecontract import Reason
from timecontract.ids import MAX_LOGICAL_SLOT_ID_LENGTH, MAX_OCCURRENCE_ID_LENGTH

OCCURRENCE_ID_LENGTH = MAX_OCCURRENCE_ID_LENGTH
"""Characters an occurrence ID column holds: the longest ID the spec's bounds allow (migration
0013 widened them from 120)."""
SLOT_ID_LENGTH = MAX_LOGICAL_SLOT_ID_LENGTH
"""Characters a logical slot ID column holds (migration 0013 widened them from 90)."""

NAMING_CONVENTION = {
    "ix": "ix_%(column_0_label)s",
    "uq": "uq_%(table_name)s_%(column_0_N_name)s",
    "ck": "ck_%(table_name)s_%(constraint_name)s",
    "fk": "fk_%(table_name)s_%(column_0_N_name)s_%(referred_table_name)s",
    "pk": "pk_%(table_name)s",
}
"""Deterministic constraint names, so migrations can refer to them on every backend."""

# An auto-incrementing 64-bit key; SQLite only auto-increments a column declared INTEGER.
BigId = BigInteger().with_variant(Integer(), "sqlite")


def _in(column: str, values: list[str]) -> str:
    return f"{column} IN ({', '.join(repr(v) for v in values)})"


STATES = [s.value for s in OccurrenceState]
_CALENDAR_STATES = "('SKIPPED_HOLIDAY', 'EXCLUDED')"
"""States a calendar decision creates: an instant as evidence, never a slot (migration 0014)."""
MANUAL_REASON = "MANUAL"
"""The reason of a manual occurrence (``almanac trigger``; migration 0007)."""
REASONS = [*(r.value for r in Reason), MANUAL_REASON]
OUTCOMES = [o.value for o in AttemptOutcome]
LOST_IS_DETECTED = (
    "(outcome = 'LOST' AND finished_at_utc IS NULL AND lost_detected_at_utc IS NOT NULL"
    " AND lost_detected_by IS NOT NULL)"
    " OR ((outcome IS NULL OR outcome <> 'LOST') AND lost_detected_at_utc IS NULL"
    " AND lost_detected_by IS NULL)"
)
"""A lost attempt has no finish (nobody saw it end) and names when and by whom it was found lost;
no other attempt carries those two fields (migration 0012)."""
RESOLUTIONS = [r.value for r in ReconciliationResolution]
SCHEDULE_EVENT_KINDS = [k.value for k in ScheduleEventKind]


class Base(DeclarativeBase):
    """Declarative base: naming convention and the UTC type for every ``datetime`` column."""

    metadata = MetaData(naming_convention=NAMING_CONVENTION)
    type_annotation_map = {datetime: UtcDateTime()}  # noqa: RUF012 (SQLAlchemy's API)


class ScheduleGate(Base):
    """One row per schedule: the gate every claim, disable, publish and rollback updates.

    ``disable_generation`` grows on every disable and enable, ``execution_epoch`` on every rollback;
    a claim succeeds only if both still equal what the claimer read (DESIGN §4 invariant 3).
    ``deleted_at_utc`` is set when the schedule is deleted (it is then also disabled, so every
    claim is refused); publishing a higher revision clears it.
    """

    __tablename__ = "schedule_gates"
    __table_args__ = (
        CheckConstraint("active_revision >= 1", name="active_revision_positive"),
        CheckConstraint("disable_generation >= 0", name="disable_generation_nonnegative"),
        CheckConstraint("execution_epoch >= 0", name="execution_epoch_nonnegative"),
        CheckConstraint(
            "(disabled AND disabled_reason IS NOT NULL) OR NOT disabled", name="disabled_reason"
        ),
    )

    schedule_id: Mapped[str] = mapped_column(String(63), primary_key=True)
    active_revision: Mapped[int] = mapped_column(Integer)
    disabled: Mapped[bool] = mapped_column(Boolean, default=False)
    disabled_reason: Mapped[str | None] = mapped_column(Text)
    disable_generation: Mapped[int] = mapped_column(Integer, default=0)
    execution_epoch: Mapped[int] = mapped_column(Integer, default=0)
    implementation_alias: Mapped[str] = mapped_column(String(128))
    created_at_utc: Mapped[datetime]
    updated_at_utc: Mapped[datetime]
    updated_by: Mapped[str] = mapped_column(String(200))
    deleted_at_utc: Mapped[datetime | None]


class Revision(Base):
    """A published revision: its canonical spec JSON, digest and cutover (owns ``[cutover, next)``).

    ``spec_json`` is :meth:`ScheduleSpecV1.canonical_json` verbatim (text, so the digest can be
    recomputed from the stored bytes); ``digest`` is :meth:`ScheduleSpecV1.digest`.
    """

    __tablename__ = "revisions"
    __table_args__ = (
        CheckConstraint("revision >= 1", name="revision_positive"),
        UniqueConstraint("schedule_id", "cutover_at_utc"),
    )

    schedule_id: Mapped[str] = mapped_column(
        String(63), ForeignKey("schedule_gates.schedule_id"), primary_key=True
    )
    revision: Mapped[int] = mapped_column(Integer, primary_key=True)
    spec_json: Mapped[str] = mapped_column(Text)
    digest: Mapped[str] = mapped_column(String(71))
    cutover_at_utc: Mapped[datetime]
    published_at_utc: Mapped[datetime]
    published_by: Mapped[str] = mapped_column(String(200))


class Occurrence(Base):
    """One nominal slot of one revision, with its resolution evidence and its state.

    ``nominal_local`` is naive wall time in the revision's zone, stored as ISO text. A
    ``SKIPPED_GAP`` record has no instant (``instant_utc`` NULL) and no slot; a ``SKIPPED_HOLIDAY``
    or ``EXCLUDED`` one keeps the instant it would have run at (if it had one) and no slot; every
    other record has both (migration 0014). ``claim_generation`` is the number of the current
    attempt (0 until the first dispatch; each won claim or redelivery adds one).
    """

    __tablename__ = "occurrences"
    __table_args__ = (
        ForeignKeyConstraint(
            ["schedule_id", "revision"], ["revisions.schedule_id", "revisions.revision"]
        ),
        CheckConstraint(_in("state", STATES), name="state_valid"),
        CheckConstraint(_in("reason", REASONS), name="reason_valid"),
        CheckConstraint("fold IN (0, 1)", name="fold_valid"),
        CheckConstraint("claim_generation >= 0", name="claim_generation_nonnegative"),
        CheckConstraint(
            f"(instant_utc IS NULL) = (state = 'SKIPPED_GAP') OR state IN {_CALENDAR_STATES}",
            name="instant_unless_skipped",
        ),
        CheckConstraint(
            "(instant_utc IS NULL) = (logical_slot_id IS NULL) OR "
            f"(logical_slot_id IS NULL AND state IN {_CALENDAR_STATES})",
            name="slot_iff_instant",
        ),
        CheckConstraint(
            "instant_utc IS NOT NULL OR gap_at_utc IS NOT NULL", name="placed_on_utc_line"
        ),
        CheckConstraint(
            "claim_generation = 0 OR state NOT IN ('PLANNED', 'DUE', 'SKIPPED_GAP', "
            "'MISFIRE_EXPIRED')",
            name="undispatched_states",
        ),
        Index("ix_occurrences_schedule_instant", "schedule_id", "instant_utc"),
        Index("ix_occurrences_schedule_state", "schedule_id", "state"),
        # Invariant 1: at most one occurrence per logical slot ever reaches DISPATCHING.
        Index(
            "uq_occurrences_dispatched_slot",
            "schedule_id",
            "logical_slot_id",
            unique=True,
            postgresql_where=text("claim_generation > 0"),
            sqlite_where=text("claim_generation > 0"),
        ),
    )

    occurrence_id: Mapped[str] = mapped_column(String(OCCURRENCE_ID_LENGTH), primary_key=True)
    schedule_id: Mapped[str] = mapped_column(String(63))
    revision: Mapped[int] = mapped_column(Integer)
    logical_slot_id: Mapped[str | None] = mapped_column(String(SLOT_ID_LENGTH))
    nominal_local: Mapped[datetime] = mapped_column(NominalLocal())
    fold: Mapped[int] = mapped_column(SmallInteger)
    instant_utc: Mapped[datetime | None]
    gap_at_utc: Mapped[datetime | None]
    utc_offset_seconds: Mapped[int | None] = mapped_column(Integer)
    tzdb_version: Mapped[str] = mapped_column(String(16))
    reason: Mapped[str] = mapped_column(String(32))
    state: Mapped[str] = mapped_column(String(16))
    state_reason: Mapped[str | None] = mapped_column(Text)
    claim_generation: Mapped[int] = mapped_column(Integer, default=0)
    next_attempt_at_utc: Mapped[datetime | None]
    created_at_utc: Mapped[datetime]
    updated_at_utc: Mapped[datetime]
    id_format: Mapped[int] = mapped_column(SmallInteger, server_default=text("1"))
    """The occurrence-ID format version the row was written with (migration 0004)."""
    jitter_ms: Mapped[int | None] = mapped_column(Integer)
    """Dispatch delay from the spec's ``jitter`` (``timecontract.jitter``), milliseconds; NULL on
    rows materialized before migration 0005. Evidence: never part of the ID, slot or lateness."""
    event_sequence: Mapped[int] = mapped_column(Integer, default=0, server_default="0")
    """The ``sequence`` of this occurrence's latest event: each transition's compare-and-set
    increments it in its ``UPDATE`` and numbers its event with the result (migration 0006)."""
    backfill_at_utc: Mapped[datetime | None]
    holiday: Mapped[str | None] = mapped_column(Text)
    """The holiday (or weekend day) a calendar decision names; NULL otherwise (migration 0014)."""
    calendar_release: Mapped[str | None] = mapped_column(String(90))
    """``<calendar>@<release>`` of that decision, e.g. ``NYSE@holidays-0.108`` (migration 0014)."""
    """When an operator's backfill released this occurrence (``almanac backfill``, migration
    0009): the recorded decision that it runs although its instant is past. NULL otherwise."""

    attempts: Mapped[list[Attempt]] = relationship(
        lazy="raise", order_by="Attempt.claim_generation", viewonly=True
    )
    events: Mapped[list[OccurrenceEvent]] = relationship(
        lazy="raise", order_by="OccurrenceEvent.sequence", viewonly=True
    )


class LogicalSlot(Base):
    """The cutover ledger: who owns (scheduleId, logicalSlotId) across revisions.

    ``owner_occurrence_id`` is NULL after publish released the slot (its owner was superseded); a
    new owner takes it only by compare-and-set on ``owner_occurrence_id IS NULL``.
    """

    __tablename__ = "logical_slots"
    __table_args__ = (
        CheckConstraint(
            "(owner_occurrence_id IS NULL) = (owner_revision IS NULL)", name="owner_complete"
        ),
        UniqueConstraint("owner_occurrence_id"),
    )

    schedule_id: Mapped[str] = mapped_column(
        String(63), ForeignKey("schedule_gates.schedule_id"), primary_key=True
    )
    logical_slot_id: Mapped[str] = mapped_column(String(SLOT_ID_LENGTH), primary_key=True)
    instant_utc: Mapped[datetime]
    owner_occurrence_id: Mapped[str | None] = mapped_column(
        String(OCCURRENCE_ID_LENGTH), ForeignKey("occurrences.occurrence_id")
    )
    owner_revision: Mapped[int | None] = mapped_column(Integer)
    claimed_at_utc: Mapped[datetime]
    released_at_utc: Mapped[datetime | None]
    release_reason: Mapped[str | None] = mapped_column(Text)


class Attempt(Base):
    """One try of an occurrence, identified by ``(occurrence_id, claim_generation)`` (invariant 4).

    A won claim, or a redelivery after a lost acknowledgement, bumps the occurrence's
    ``claim_generation`` (1, 2, …) and opens the attempt of that generation; the gate fields record
    what the claim was checked against.
    """

    __tablename__ = "attempts"
    __table_args__ = (
        CheckConstraint("claim_generation >= 1", name="claim_generation_positive"),
        CheckConstraint(f"outcome IS NULL OR {_in('outcome', OUTCOMES)}", name="outcome_valid"),
        CheckConstraint(LOST_IS_DETECTED, name="lost_is_detected"),
    )

    occurrence_id: Mapped[str] = mapped_column(
        String(OCCURRENCE_ID_LENGTH), ForeignKey("occurrences.occurrence_id"), primary_key=True
    )
    claim_generation: Mapped[int] = mapped_column(Integer, primary_key=True)
    worker_identity: Mapped[str] = mapped_column(String(200))
    implementation_alias: Mapped[str] = mapped_column(String(128))
    execution_epoch: Mapped[int] = mapped_column(Integer)
    disable_generation: Mapped[int] = mapped_column(Integer)
    gate_revision: Mapped[int] = mapped_column(Integer)
    input_digest: Mapped[str] = mapped_column(String(200))
    started_at_utc: Mapped[datetime]
    finished_at_utc: Mapped[datetime | None]
    outcome: Mapped[str | None] = mapped_column(String(32))
    error_class: Mapped[str | None] = mapped_column(String(200))
    error_message: Mapped[str | None] = mapped_column(Text)
    lost_detected_at_utc: Mapped[datetime | None]
    """When a later try of the same dispatch found this attempt lost (``outcome = 'LOST'``)."""
    lost_detected_by: Mapped[str | None] = mapped_column(String(200))
    """The worker identity that found it lost."""


class OccurrenceEvent(Base):
    """Append-only audit trail: one row per transition (DESIGN §4 invariant 6).

    ``from_state`` is NULL for the creation of an occurrence by materialization. ``sequence``
    orders an occurrence's events (1, 2, 3, … without holes): the ledger assigns it from
    ``occurrences.event_sequence`` in the transition's compare-and-set, never from a clock; a
    trigger rejects any other number (migration 0006). ``at_utc`` is when, by the writer's clock.
    """

    __tablename__ = "occurrence_events"
    __table_args__ = (
        CheckConstraint(
            f"from_state IS NULL OR {_in('from_state', STATES)}", name="from_state_valid"
        ),
        CheckConstraint(_in("to_state", STATES), name="to_state_valid"),
        CheckConstraint("sequence >= 1", name="sequence_positive"),
        # Also the index of every lookup by occurrence (migration 0010 dropped the one on
        # ``(occurrence_id, id)``: events are read in ``sequence`` order).
        UniqueConstraint("occurrence_id", "sequence"),
    )

    id: Mapped[int] = mapped_column(BigId, primary_key=True, autoincrement=True)
    occurrence_id: Mapped[str] = mapped_column(
        String(OCCURRENCE_ID_LENGTH), ForeignKey("occurrences.occurrence_id")
    )
    from_state: Mapped[str | None] = mapped_column(String(16))
    to_state: Mapped[str] = mapped_column(String(16))
    at_utc: Mapped[datetime]
    by: Mapped[str] = mapped_column(String(200))
    why: Mapped[str] = mapped_column(Text)
    sequence: Mapped[int] = mapped_column(Integer)


class ReconciliationCase(Base):
    """An UNKNOWN_EFFECT occurrence awaiting reconciliation (DESIGN §4 invariant 5).

    Opened with ``deadline_utc = opened_at_utc + 30 minutes``. ``resolution`` NULL: open;
    ``HUMAN``: in the human queue (still open); ``SUCCEEDED``/``NOT_APPLIED``: closed.
    """

    __tablename__ = "reconciliation_cases"
    __table_args__ = (
        CheckConstraint(
            f"resolution IS NULL OR {_in('resolution', RESOLUTIONS)}", name="resolution_valid"
        ),
        CheckConstraint("deadline_utc > opened_at_utc", name="deadline_after_open"),
        CheckConstraint(
            "(resolution IS NULL) = (resolved_at_utc IS NULL)", name="resolved_at_iff_resolution"
        ),
        UniqueConstraint("occurrence_id"),
    )

    id: Mapped[int] = mapped_column(BigId, primary_key=True, autoincrement=True)
    occurrence_id: Mapped[str] = mapped_column(
        String(OCCURRENCE_ID_LENGTH), ForeignKey("occurrences.occurrence_id")
    )
    claim_generation: Mapped[int] = mapped_column(Integer)
    """The attempt whose outcome is unknown."""
    opened_at_utc: Mapped[datetime]
    deadline_utc: Mapped[datetime]
    resolution: Mapped[str | None] = mapped_column(String(16))
    resolved_by: Mapped[str | None] = mapped_column(String(200))
    resolved_at_utc: Mapped[datetime | None]
    note: Mapped[str | None] = mapped_column(Text)


class ImplementationAlias(Base):
    """An implementation alias a worker ran, and the occurrence-ID formats it recognises."""

    __tablename__ = "implementation_aliases"

    alias: Mapped[str] = mapped_column(String(128), primary_key=True)
    id_formats: Mapped[str] = mapped_column(String(64))
    """Comma-separated format versions, ascending (``"1"``, ``"1,2"``)."""
    registered_at_utc: Mapped[datetime]
    registered_by: Mapped[str] = mapped_column(String(200))


class ImplementationSwitch(Base):
    """One rollout or rollback of one schedule's gate: alias flipped, execution epoch bumped."""

    __tablename__ = "implementation_switches"
    __table_args__ = (
        CheckConstraint("kind IN ('ROLLOUT', 'ROLLBACK')", name="kind_valid"),
        CheckConstraint("epoch_after = epoch_before + 1", name="epoch_bumped"),
    )

    id: Mapped[int] = mapped_column(BigId, primary_key=True, autoincrement=True)
    schedule_id: Mapped[str] = mapped_column(String(63), ForeignKey("schedule_gates.schedule_id"))
    kind: Mapped[str] = mapped_column(String(16))
    from_alias: Mapped[str] = mapped_column(String(128))
    to_alias: Mapped[str] = mapped_column(String(128))
    epoch_before: Mapped[int] = mapped_column(Integer)
    epoch_after: Mapped[int] = mapped_column(Integer)
    reason: Mapped[str] = mapped_column(Text)
    at_utc: Mapped[datetime]
    by: Mapped[str] = mapped_column(String(200))


class ShadowRun(Base):
    """One shadow computation of one schedule's window ``[from, to)`` by a candidate alias."""

    __tablename__ = "shadow_runs"
    __table_args__ = (
        CheckConstraint("from_utc < to_utc", name="window_ordered"),
        Index("ix_shadow_runs_alias_schedule", "alias", "schedule_id"),
    )

    id: Mapped[int] = mapped_column(BigId, primary_key=True, autoincrement=True)
    alias: Mapped[str] = mapped_column(String(128))
    schedule_id: Mapped[str] = mapped_column(String(63))
    from_utc: Mapped[datetime]
    to_utc: Mapped[datetime]
    run_at_utc: Mapped[datetime]
    by: Mapped[str] = mapped_column(String(200))
    records: Mapped[int] = mapped_column(Integer)
    mismatches: Mapped[int] = mapped_column(Integer)
    """Mismatches with the live ledger over the run's window when it ran (the metric's source)."""


class ShadowOccurrence(Base):
    """An occurrence as a candidate implementation computed it: comparison only, never dispatched.

    The same evidence columns as :class:`Occurrence`, keyed by ``(alias, occurrence_id)``; no state,
    no slot claim, no attempts, no events.
    """

    __tablename__ = "shadow_occurrences"
    __table_args__ = (Index("ix_shadow_occurrences_alias_schedule", "alias", "schedule_id"),)

    alias: Mapped[str] = mapped_column(String(128), primary_key=True)
    occurrence_id: Mapped[str] = mapped_column(String(OCCURRENCE_ID_LENGTH), primary_key=True)
    schedule_id: Mapped[str] = mapped_column(String(63))
    revision: Mapped[int] = mapped_column(Integer)
    logical_slot_id: Mapped[str | None] = mapped_column(String(SLOT_ID_LENGTH))
    nominal_local: Mapped[datetime] = mapped_column(NominalLocal())
    fold: Mapped[int] = mapped_column(SmallInteger)
    instant_utc: Mapped[datetime | None]
    gap_at_utc: Mapped[datetime | None]
    utc_offset_seconds: Mapped[int | None] = mapped_column(Integer)
    tzdb_version: Mapped[str] = mapped_column(String(16))
    disposition: Mapped[str] = mapped_column(String(16))
    reason: Mapped[str] = mapped_column(String(32))
    computed_at_utc: Mapped[datetime]


class ScheduleEvent(Base):
    """Append-only facts about a schedule as a whole (migration 0007).

    Revisions published or rejected, gate changes, deletion, deterministic activity errors.
    ``schedule_id`` has no foreign key: a rejected first revision leaves an event for a schedule
    without a gate. No operation updates or deletes a row.
    """

    __tablename__ = "schedule_events"
    __table_args__ = (
        CheckConstraint(_in("kind", SCHEDULE_EVENT_KINDS), name="kind_valid"),
        Index("ix_schedule_events_schedule", "schedule_id", "id"),
    )

    id: Mapped[int] = mapped_column(BigId, primary_key=True, autoincrement=True)
    schedule_id: Mapped[str] = mapped_column(String(63))
    kind: Mapped[str] = mapped_column(String(32))
    revision: Mapped[int | None] = mapped_column(Integer)
    at_utc: Mapped[datetime]
    by: Mapped[str] = mapped_column(String(200))
    detail: Mapped[str] = mapped_column(Text)


class DeadlineMiss(Base):
    """An occurrence not SUCCEEDED by its deadline: recorded once (migration 0015, issue 30).

    A fact beside the occurrence's state, never a state: ``state_at_deadline`` is the state its
    event trail shows at ``deadline_utc`` (its resolved instant + the revision's ``deadline``).
    The primary key is the occurrence: a second sweep, a restarted worker or a concurrent one
    inserts nothing. No operation updates or deletes a row.
    """

    __tablename__ = "deadline_misses"
    __table_args__ = (
        CheckConstraint(_in("state_at_deadline", STATES), name="state_valid"),
        Index("ix_deadline_misses_schedule", "schedule_id", "deadline_utc"),
    )

    occurrence_id: Mapped[str] = mapped_column(
        String(OCCURRENCE_ID_LENGTH), ForeignKey("occurrences.occurrence_id"), primary_key=True
    )
    schedule_id: Mapped[str] = mapped_column(String(63))
    revision: Mapped[int] = mapped_column(Integer)
    instant_utc: Mapped[datetime]
    deadline_utc: Mapped[datetime]
    state_at_deadline: Mapped[str] = mapped_column(String(16))
    recorded_at_utc: Mapped[datetime]
    by: Mapped[str] = mapped_column(String(200))


class DeadlineSweep(Base):
    """How far a schedule's deadlines are decided (migration 0015).

    Every deadline at or before ``swept_through_utc`` has been checked; the mark moves forward
    only, and bounds each sweep's scan.
    """

    __tablename__ = "deadline_sweeps"

    schedule_id: Mapped[str] = mapped_column(String(63), primary_key=True)
    swept_through_utc: Mapped[datetime]
    updated_at_utc: Mapped[datetime]


class FailureStreakFact(Base):
    """A failure streak reached ``notifyAfter``, or a notified one recovered (migration 0016).

    The primary key is the schedule, the streak's first failing occurrence and the kind
    (``STREAK`` or ``RECOVERED``): a repeated, restarted or concurrent decision inserts nothing.
    The notification columns record the action's outcome: ``PENDING`` until it is ``DELIVERED``
    or ``FAILED`` after its bounded attempts (``notify_attempts``).
    """

    __tablename__ = "failure_streak_facts"
    __table_args__ = (
        CheckConstraint("kind IN ('STREAK', 'RECOVERED')", name="kind_valid"),
        CheckConstraint(
            "notify_state IN ('PENDING', 'DELIVERED', 'FAILED')", name="notify_state_valid"
        ),
    )

    schedule_id: Mapped[str] = mapped_column(String(63), primary_key=True)
    streak_start_occurrence_id: Mapped[str] = mapped_column(
        String(OCCURRENCE_ID_LENGTH), primary_key=True
    )
    kind: Mapped[str] = mapped_column(String(10), primary_key=True)
    threshold: Mapped[int] = mapped_column(Integer)
    """``notifyAfter`` (STREAK) or ``recoverAfter`` (RECOVERED) when recorded."""
    occurrence_ids: Mapped[str] = mapped_column(Text)
    """JSON list of the occurrences that made the decision, oldest first (at most 100)."""
    paused: Mapped[bool] = mapped_column(Boolean)
    recorded_at_utc: Mapped[datetime]
    by: Mapped[str] = mapped_column(String(200))
    notify_state: Mapped[str] = mapped_column(String(10))
    notify_attempts: Mapped[int] = mapped_column(Integer)
    notify_detail: Mapped[str | None] = mapped_column(String(500))
    notified_at_utc: Mapped[datetime | None]
