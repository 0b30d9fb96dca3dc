"""The Python client's errors: refusals name the field and value, the rest are operational.

One module below :mod:`almanac.client`, :mod:`almanac.schedule_reader` and
:mod:`almanac.ledger_client`, so each raises the same types without importing the others.
"""

from __future__ import annotations

from datetime import datetime
from typing import TYPE_CHECKING, Any

from timecontract import AlmanacError, format_instant

if TYPE_CHECKING:
    from temporalio.service import RPCError


class ChangeRejected(AlmanacError, ValueError):
    """The schedule refused a change: its validator, or the ledger's verdict.

    Attributes:
        field: what was refused (``revision``, ``cutoverAt``, ``action.name``, ``reason`` …), or
            empty when the refusal is not about one field.
        value: the refused value (JSON data), or ``None``.
        verdict: the ledger's verdict object, when the ledger refused (``None``: the validator).

    """

    def __init__(
        self,
        message: str,
        *,
        field: str = "",
        value: Any = None,
        verdict: Any = None,
        code: str = "",
    ) -> None:
        """Keep the message verbatim (it names the field and value when there is one)."""
        super().__init__(message)
        self.field = field
        self.value = value
        self.verdict = verdict
        self.code = code
        """The validator's error type (``InvalidUpdate``, ``ScheduleEnding``), else empty."""


class ApplyRefused(ChangeRejected):
    """A spec cannot be applied: no action, or a revision or cutover the schedule refuses."""


class ScheduleNotRunning(AlmanacError, LookupError):
    """No schedule workflow runs for this scheduleId: never applied, or deleted.

    ``deleted_at_utc`` (aware UTC) and ``deleted_reason`` are set when the ledger, read here,
    says the schedule was deleted; the message then says so instead of "apply its spec first".
    ``meant`` is a scheduleId the ledger knows that is close to an unknown one (a typo).
    """

    def __init__(
        self,
        schedule_id: str,
        *,
        deleted_at_utc: datetime | None = None,
        deleted_reason: str | None = None,
        meant: str | None = None,
    ) -> None:
        """Name the schedule in the message (and when and why it was deleted, if known)."""
        if deleted_at_utc is None:
            message = f"schedule {schedule_id!r} is not running (apply its spec first)"
            if meant is not None:
                message += f"; did you mean {meant}?"
        else:
            why = f" ({deleted_reason})" if deleted_reason else ""
            message = (
                f"schedule {schedule_id!r} was deleted at {format_instant(deleted_at_utc)}{why}: "
                "every fact is kept in the ledger (almanac ledger list); re-apply its spec with a "
                "higher revision to revive it"
            )
        super().__init__(message)
        self.schedule_id = schedule_id
        self.deleted_at_utc = deleted_at_utc
        self.deleted_reason = deleted_reason
        self.meant = meant


class TriggerRefused(AlmanacError, ValueError):
    """A manual run the schedule's gate would refuse (disabled or deleted): nothing was started."""


class TemporalUnavailable(AlmanacError):
    """The Temporal frontend could not be reached, or failed the call (an operational error)."""


class NoWorkerAnswered(AlmanacError):
    """A query timed out: no Almanac worker polls the task queue (start ``almanac worker``)."""


class ChangeNotApplied(AlmanacError):
    """The schedule admitted a change but its activity failed: nothing was changed.

    An operational failure (the ledger unreachable past the retry bound), or a deterministic
    error the activity recorded on the schedule (its ``schedule_events`` say why).
    """


class NoVerdict(AlmanacError):
    """A change got no verdict in time: no worker applied it (it may still be, when one polls)."""


def failed_call(exc: RPCError) -> TemporalUnavailable:
    """The error for a Temporal call that failed, with its status and first line."""
    first = (exc.message or str(exc)).splitlines()[0]
    return TemporalUnavailable(f"Temporal failed the call ({exc.status.name}): {first}")
