"""The operator's own writes to the ledger, without Temporal: one ledger operation per method.

Recording a window by hand, computing a shadow and resolving an ``UNKNOWN_EFFECT`` case do not go
through a schedule workflow; the command line and the console call them here so every ledger write
of the top layer has one API. The ledger package is imported on use (the control path loads no
SQLAlchemy).
"""

from __future__ import annotations

from collections.abc import Callable
from contextlib import AbstractContextManager
from datetime import UTC, datetime
from typing import Any

from almanac.client_errors import ChangeRejected
from timecontract import AlmanacError, ScheduleSpecV1

RESOLUTIONS = ("SUCCEEDED", "NOT_APPLIED")
"""What a person may decide for an UNKNOWN_EFFECT case (``ledger.ReconciliationResolution``)."""


def _utc_now() -> datetime:
    return datetime.now(UTC)


class WindowTooLarge(AlmanacError, ValueError):
    """A window holds more occurrences than one materialization writes; nothing was written."""

    def __init__(self, limit: int) -> None:
        super().__init__(
            f"the window holds more than {limit} occurrences, the most one materialization "
            "writes: narrow the window (nothing was written)"
        )
        self.limit = limit


class LedgerClient:
    """The operator's writes to the ledger, without Temporal: each method is one ledger operation.

    Built over an opener — a context manager factory yielding a ``ledger.Ledger`` for the length
    of one operation, opened only once the input has been checked — and a clock ("now" when a
    method is not given one: aware UTC).
    """

    def __init__(
        self,
        open_ledger: Callable[[], AbstractContextManager[Any]],
        clock: Callable[[], datetime] = _utc_now,
    ) -> None:
        """Write through ledgers ``open_ledger`` yields; ``clock`` gives the decision instant."""
        self._open = open_ledger
        self._clock = clock

    def materialize(
        self,
        spec: ScheduleSpecV1,
        from_utc: datetime,
        to_utc: datetime,
        *,
        now_utc: datetime | None = None,
        by: str,
        tzdb_store: Any = None,
    ) -> Any:
        """Publish ``spec``'s revision if new and record its occurrences in ``[from_utc, to_utc)``.

        Bounded as every materialization is: a window holding more than
        ``activities.ledger_activities.MATERIALIZE_LIMIT`` records is refused before anything is
        written (counted lazily). The written window is clamped to what the revision owns from
        its cutover and publication on: materialization never backfills.

        Returns:
            ``ledger.MaterializeResult`` with the window's rows.

        Raises:
            WindowTooLarge: the window holds too many occurrences (nothing written).
            ledger.RevisionRejected: the revision cannot be published.
        """
        from itertools import islice

        import ledger
        from activities.ledger_activities import MATERIALIZE_LIMIT
        from timecontract import iter_occurrences

        window = iter_occurrences(spec, from_utc, to_utc, tzdb_store=tzdb_store)
        if sum(1 for _ in islice(window, MATERIALIZE_LIMIT + 1)) > MATERIALIZE_LIMIT:
            raise WindowTooLarge(MATERIALIZE_LIMIT)
        at = now_utc or self._clock()
        with self._open() as handle:
            ledger.publish_revision(handle, spec, at, by=by)
            return ledger.materialize(
                handle, spec, from_utc, to_utc, at, by=by, tzdb_store=tzdb_store
            )

    def shadow_run(
        self,
        alias: str,
        schedule_id: str,
        from_utc: datetime,
        to_utc: datetime,
        *,
        by: str,
        tzdb_store: Any = None,
        between_batches: Callable[[], None] | None = None,
    ) -> Any:
        """Compute ``schedule_id``'s ``[from_utc, to_utc)`` as ``alias``'s shadow, now.

        Only the shadow tables are written (``ledger.shadow.shadow_materialize``: comparison
        records, never dispatched); ``between_batches`` runs between two write transactions.

        Returns:
            ``ledger.shadow.ShadowRunResult``.
        """
        from ledger.shadow import shadow_materialize

        with self._open() as handle:
            return shadow_materialize(
                handle,
                alias,
                schedule_id,
                from_utc,
                to_utc,
                self._clock(),
                by=by,
                tzdb_store=tzdb_store,
                between_batches=between_batches,
            )

    def resolve(self, occurrence_id: str, outcome: str, *, by: str, note: str | None = None) -> Any:
        """Resolve an ``UNKNOWN_EFFECT`` case by hand now: one compare-and-set, with its event.

        ``SUCCEEDED`` confirms the effect; ``NOT_APPLIED`` ends the occurrence ``FAILED`` (a new
        run is a separate decision, never a blind resend). ``by`` and ``note`` are stored on the
        case (``ledger.resolve_reconciliation``). The CLI and the console both call this.

        Returns:
            ``ledger.CaseView``: the case afterwards.

        Raises:
            ChangeRejected: ``outcome`` is not one of ``RESOLUTIONS`` or ``by`` is blank (named
                with its value); nothing is written.
            ledger.CaseNotFound: no open case for the occurrence (resolved already, or none).
            ledger.ClaimLost: a concurrent resolution won.
        """
        import ledger

        if outcome not in RESOLUTIONS:
            raise ChangeRejected(
                f"outcome={outcome!r}: one of {', '.join(RESOLUTIONS)}",
                field="outcome",
                value=outcome,
            )
        if not by.strip():
            raise ChangeRejected(f"by={by!r}: name who decides", field="by", value=by)
        resolution = ledger.ReconciliationResolution(outcome)
        with self._open() as handle:
            return ledger.resolve_reconciliation(
                handle, occurrence_id, resolution, self._clock(), by=by, note=note
            )
