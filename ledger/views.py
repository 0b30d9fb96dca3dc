"""Frozen value objects the ledger returns (never ORM instances, which are bound to a session).

Every ``*_utc`` field is an aware UTC datetime; ``nominal_local`` is naive wall time.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from datetime import datetime, timedelta
from typing import TYPE_CHECKING, Any

from ledger.states import ReconciliationResolution
from lifecycle import DEFAULT_IMPLEMENTATION_ALIAS as DEFAULT_IMPLEMENTATION_ALIAS
from lifecycle import ClaimRefusal, OccurrenceState, UpcomingOccurrence
from lifecycle import GateView as GateView  # re-exported: the ledger returns it

if TYPE_CHECKING:
    from sqlalchemy import Row


def gate_from_row(row: Row[Any]) -> GateView:
    """The gate view of a ``schedule_gates`` row."""
    m = row._mapping
    return GateView(
        schedule_id=m["schedule_id"],
        active_revision=m["active_revision"],
        disabled=bool(m["disabled"]),
        disabled_reason=m["disabled_reason"],
        disable_generation=m["disable_generation"],
        execution_epoch=m["execution_epoch"],
        implementation_alias=m["implementation_alias"],
        updated_at_utc=m["updated_at_utc"],
        deleted_at_utc=m.get("deleted_at_utc"),
    )


@dataclass(frozen=True, slots=True)
class OccurrenceView:
    """One occurrence as the ledger holds it (see :class:`ledger.models.Occurrence`).

    ``jitter`` is the dispatch delay recorded at materialization (``jitter_ms``), ``None`` for
    skipped records and rows older than migration 0005. ``holiday`` and ``calendar_release`` are
    a calendar decision's evidence (migration 0014), else ``None``.
    """

    occurrence_id: str
    schedule_id: str
    revision: int
    logical_slot_id: str | None
    nominal_local: datetime
    fold: int
    instant_utc: datetime | None
    gap_at_utc: datetime | None
    utc_offset: timedelta | None
    tzdb_version: str
    reason: str
    state: OccurrenceState
    state_reason: str | None
    claim_generation: int
    next_attempt_at_utc: datetime | None
    created_at_utc: datetime
    updated_at_utc: datetime
    jitter: timedelta | None = None
    holiday: str | None = None
    calendar_release: str | None = None

    @classmethod
    def from_row(cls, row: Row[Any]) -> OccurrenceView:
        """Build from an ``occurrences`` row."""
        m = row._mapping
        offset = m["utc_offset_seconds"]
        jitter_ms = m.get("jitter_ms")
        return cls(
            occurrence_id=m["occurrence_id"],
            schedule_id=m["schedule_id"],
            revision=m["revision"],
            logical_slot_id=m["logical_slot_id"],
            nominal_local=m["nominal_local"],
            fold=m["fold"],
            instant_utc=m["instant_utc"],
            gap_at_utc=m["gap_at_utc"],
            utc_offset=None if offset is None else timedelta(seconds=offset),
            tzdb_version=m["tzdb_version"],
            reason=m["reason"],
            state=OccurrenceState(m["state"]),
            state_reason=m["state_reason"],
            claim_generation=m["claim_generation"],
            next_attempt_at_utc=m["next_attempt_at_utc"],
            created_at_utc=m["created_at_utc"],
            updated_at_utc=m["updated_at_utc"],
            jitter=None if jitter_ms is None else timedelta(milliseconds=jitter_ms),
            holiday=m.get("holiday"),
            calendar_release=m.get("calendar_release"),
        )

    @property
    def placed_at_utc(self) -> datetime:
        """Its instant, or ``gapAt`` for a skipped record (where it sits on the UTC line)."""
        placed = self.instant_utc if self.instant_utc is not None else self.gap_at_utc
        assert placed is not None  # a CHECK constraint guarantees one of them
        return placed

    def upcoming(self) -> UpcomingOccurrence:
        """The occurrence as the workflows see it (``lifecycle.UpcomingOccurrence``).

        Raises:
            ValueError: a record without an instant (a skipped gap): it never runs.
        """
        if self.instant_utc is None:
            raise ValueError(f"occurrence {self.occurrence_id} has no instant (a skipped record)")
        return UpcomingOccurrence(
            occurrence_id=self.occurrence_id,
            schedule_id=self.schedule_id,
            revision=self.revision,
            nominal_local=self.nominal_local.isoformat(),
            fold=self.fold,
            instant_utc=self.instant_utc,
            state=self.state,
            jitter_seconds=self.jitter.total_seconds() if self.jitter else 0.0,
            holiday=self.holiday,
            calendar_release=self.calendar_release,
        )


@dataclass(frozen=True, slots=True)
class AttemptView:
    """One attempt, ``(occurrence_id, claim_generation)``, and how it ended (``None``: running)."""

    occurrence_id: str
    claim_generation: int
    worker_identity: str
    implementation_alias: str
    execution_epoch: int
    disable_generation: int
    gate_revision: int
    input_digest: str
    started_at_utc: datetime
    finished_at_utc: datetime | None
    outcome: str | None
    error_class: str | None
    error_message: str | None
    lost_detected_at_utc: datetime | None = None
    """Only for ``outcome == "LOST"``: when the loss was noticed (``finished_at_utc`` is None)."""
    lost_detected_by: str | None = None
    """Set only for ``outcome == "LOST"``: the worker identity that noticed it."""

    @classmethod
    def from_row(cls, row: Row[Any]) -> AttemptView:
        """Build from an ``attempts`` row."""
        return cls(**{name: row._mapping[name] for name in cls.__slots__})


@dataclass(frozen=True, slots=True)
class EventView:
    """One audit event: ``from_state`` (``None`` at creation) → ``to_state``, when, by whom, why.

    ``sequence`` is the event's place in its occurrence's trail (1, 2, 3, …), assigned by the
    ledger; the trail is ordered by it, not by ``at_utc`` (the writer's clock).
    """

    id: int
    occurrence_id: str
    sequence: int
    from_state: str | None
    to_state: str
    at_utc: datetime
    by: str
    why: str

    @classmethod
    def from_row(cls, row: Row[Any]) -> EventView:
        """Build from an ``occurrence_events`` row."""
        return cls(**{name: row._mapping[name] for name in cls.__slots__})


@dataclass(frozen=True, slots=True)
class CaseView:
    """A reconciliation case (``resolution`` ``None``: open; ``HUMAN``: in the human queue)."""

    id: int
    occurrence_id: str
    claim_generation: int
    opened_at_utc: datetime
    deadline_utc: datetime
    resolution: ReconciliationResolution | None
    resolved_by: str | None
    resolved_at_utc: datetime | None
    note: str | None

    @classmethod
    def from_row(cls, row: Row[Any]) -> CaseView:
        """Build from a ``reconciliation_cases`` row."""
        m = row._mapping
        values = {name: m[name] for name in cls.__slots__}
        resolution = m["resolution"]
        values["resolution"] = None if resolution is None else ReconciliationResolution(resolution)
        return cls(**values)

    def overdue(self, now_utc: datetime) -> bool:
        """Whether the case is unresolved past its deadline at ``now_utc``."""
        return self.resolution is None and now_utc >= self.deadline_utc


@dataclass(frozen=True, slots=True)
class OccurrenceDetail:
    """An occurrence with its attempts (oldest first), event trail (oldest first) and case."""

    occurrence: OccurrenceView
    attempts: tuple[AttemptView, ...]
    events: tuple[EventView, ...]
    case: CaseView | None


@dataclass(frozen=True, slots=True)
class ClaimResult:
    """The outcome of a claim: the new attempt, or a refusal with its reason.

    Attributes:
        attempt: the attempt the claim created (``None`` when refused).
        refusal: why the claim was refused (``None`` when it won).
        detail: the refusal in words (names the values compared).

    """

    attempt: AttemptView | None = None
    refusal: ClaimRefusal | None = None
    detail: str = ""

    @property
    def won(self) -> bool:
        """Whether the claim won (the occurrence is now DISPATCHING under ``attempt``)."""
        return self.attempt is not None


@dataclass(frozen=True, slots=True)
class PublishResult:
    """What publishing a revision did.

    Attributes:
        schedule_id: the schedule.
        revision: the published revision.
        created: ``False`` when the identical revision (same digest) was already published.
        superseded: occurrences of older revisions cancelled because the cutover now owns them.
        gate: the gate after publishing.
        created_schedule: this revision created the schedule's gate (its first revision), or
            revived a deleted schedule.

    """

    schedule_id: str
    revision: int
    created: bool
    superseded: tuple[str, ...]
    gate: GateView
    created_schedule: bool = False


@dataclass(frozen=True, slots=True)
class GateChange:
    """What a disable, enable or delete did to a schedule's gate.

    Attributes:
        gate: the gate afterwards.
        changed: ``False`` when the gate was in that state already (nothing was written).
        cancelled: occurrences the change cancelled (``DUE`` on disable; ``PLANNED``, ``DUE`` and
            ``RETRY_WAIT`` on delete), oldest first.

    """

    gate: GateView
    changed: bool
    cancelled: tuple[str, ...] = ()


@dataclass(frozen=True, slots=True)
class ScheduleEventView:
    """One ``schedule_events`` row (see :class:`ledger.models.ScheduleEvent`)."""

    id: int
    schedule_id: str
    kind: str
    revision: int | None
    at_utc: datetime
    by: str
    detail: str


@dataclass(frozen=True, slots=True)
class MaterializeResult:
    """What materializing a window did, and the window's ledger rows.

    Attributes:
        window_from_utc: the effective window start (after clamping to the revision's ownership
            and to the moment it was published: materialization never backfills).
        window_to_utc: the effective window end (exclusive; clamped to the next cutover).
        created: occurrence IDs this call inserted (the others already existed).
        slot_conflicts: occurrences this call inserted as CANCELLED because another occurrence
            already owned their logical slot.
        rows: the revision's occurrences in the effective window, by instant (gapAt if skipped);
            empty when the caller did not ask for them (``materialize(…, rows=False)``).

    """

    window_from_utc: datetime
    window_to_utc: datetime
    created: tuple[str, ...]
    slot_conflicts: tuple[str, ...]
    rows: tuple[OccurrenceView, ...] = field(default=())


@dataclass(frozen=True, slots=True)
class BoundedMaterialization:
    """What :func:`ledger.materialize_bounded` wrote.

    Attributes:
        through_utc: the window ``[from, through_utc)`` is materialized completely (aware UTC);
            the caller's ``to_utc`` unless the call stopped at its occurrence bound.
        created: how many occurrences this call inserted.
        truncated: the call stopped at its bound before ``to_utc``.

    """

    through_utc: datetime
    created: int
    truncated: bool = False


@dataclass(frozen=True, slots=True)
class ReleaseResult:
    """What :func:`ledger.release_due` did at one ``now_utc`` (occurrence IDs, oldest first)."""

    released: tuple[str, ...]
    expired: tuple[str, ...]
    disabled: bool = False
    """True when the gate was disabled: nothing was released (PLANNED rows wait for enable)."""
    held: tuple[str, ...] = ()
    """``DUE`` occurrences buffered behind an older in-flight one (``overlapPolicy``
    ``BUFFER_ONE``/``BUFFER_ALL``): the releaser must not start them yet (``ledger.overlap``)."""
    skipped: tuple[str, ...] = ()
    """Occurrences this release recorded ``SKIPPED_OVERLAP``, oldest first."""
    gate: GateView | None = None
    """The gate as the release read it under its lock (unchanged until the release committed)."""
    due: tuple[OccurrenceView, ...] = ()
    """Every ``DUE`` occurrence of the schedule when the release committed (held ones included),
    ordered as ``list_occurrences`` orders them."""
