"""The ledger's branch of the error hierarchy, and the one place driver errors are translated.

``LedgerError(AlmanacError)`` is the root. Expected outcomes are return values, not errors: a claim
refusal is a :class:`ledger.states.ClaimRefusal`, a repeated materialization reports what it
created. Errors mean the caller asked for something the ledger cannot do.
"""

from __future__ import annotations

import re
from typing import TYPE_CHECKING

from timecontract import AlmanacError

if TYPE_CHECKING:
    from sqlalchemy import exc as sa_exc
    from sqlalchemy.engine import URL

    from ledger.states import OccurrenceState


class LedgerError(AlmanacError):
    """Root of the ledger's errors."""


class LedgerUnavailable(LedgerError):
    """The database could not be reached or kept failing transiently (an operational failure)."""


class LedgerIntegrityError(LedgerError):
    """The database rejected a write: a constraint the schema holds was violated."""


class LedgerDataError(LedgerError, ValueError):
    """The database refused a value as data (SQLSTATE class 22: too long, out of range, …).

    Permanent: the same write fails again, so it is never retried or reported as the ledger
    being unavailable. The message names the value's field (the statement parameter) and its
    size, never the value.

    Attributes:
        field: the parameter the value was bound to (``None`` when the driver does not say).
    """

    def __init__(self, message: str, field: str | None = None) -> None:
        self.field = field
        super().__init__(message)


class IllegalTransition(LedgerError):
    """The occurrence is not in a state from which the requested transition is legal.

    Attributes:
        occurrence_id: the occurrence.
        from_state: its state when the transition was attempted (``None`` if unknown).
        to_state: the requested state.

    """

    def __init__(
        self, occurrence_id: str, from_state: OccurrenceState | None, to_state: OccurrenceState
    ) -> None:
        self.occurrence_id = occurrence_id
        self.from_state = from_state
        self.to_state = to_state
        shown = from_state.value if from_state is not None else "?"
        super().__init__(f"{occurrence_id}: illegal transition {shown} → {to_state.value}")


class ClaimLost(LedgerError):
    """A compare-and-set updated no row: a concurrent change won (the caller re-reads).

    Attributes:
        what: the row the CAS targeted (an occurrence ID, a schedule ID, a case).
        detail: what the CAS expected.

    """

    def __init__(self, what: str, detail: str) -> None:
        self.what = what
        self.detail = detail
        super().__init__(f"{what}: compare-and-set lost ({detail})")


class InvalidLedgerUrl(LedgerError, ValueError):
    """The ledger URL is malformed or names an unsupported backend.

    The message never repeats the URL: it may hold a password.
    """


class RevisionRejected(LedgerError, ValueError):
    """A revision cannot be published: it does not increase, or its cutoverAt lies in the past.

    Attributes:
        field: the spec field refused (``revision`` or ``cutoverAt``).
        value: its value, as published.

    """

    def __init__(self, message: str, *, field: str = "revision", value: object = None) -> None:
        self.field = field
        self.value = value
        super().__init__(message)


class ScheduleDeleted(LedgerError, ValueError):
    """The schedule is deleted: only publishing a higher revision revives it."""

    def __init__(self, schedule_id: str, what: str) -> None:
        self.schedule_id = schedule_id
        super().__init__(
            f"{schedule_id!r} is deleted: cannot {what} (publish a higher revision to revive it)"
        )


class ScheduleNotFound(LedgerError, LookupError):
    """No schedule (gate row) with this ID."""

    def __init__(self, schedule_id: str) -> None:
        self.schedule_id = schedule_id
        super().__init__(f"schedule not found: {schedule_id!r}")


class RevisionNotFound(LedgerError, LookupError):
    """The schedule has no published revision with this number."""

    def __init__(self, schedule_id: str, revision: int) -> None:
        self.schedule_id = schedule_id
        self.revision = revision
        super().__init__(f"revision not found: {schedule_id!r} r{revision}")


class OccurrenceNotFound(LedgerError, LookupError):
    """No occurrence with this ID."""

    def __init__(self, occurrence_id: str) -> None:
        self.occurrence_id = occurrence_id
        super().__init__(f"occurrence not found: {occurrence_id!r}")


class CaseNotFound(LedgerError, LookupError):
    """No open reconciliation case for this occurrence."""

    def __init__(self, occurrence_id: str) -> None:
        self.occurrence_id = occurrence_id
        super().__init__(f"no open reconciliation case for occurrence {occurrence_id!r}")


class ImplementationNotRegistered(LedgerError, LookupError):
    """No worker of this implementation alias has registered the ID formats it recognises."""

    def __init__(self, alias: str) -> None:
        self.alias = alias
        super().__init__(
            f"implementation alias not registered: {alias!r} (start one of its workers, "
            "or name the ID formats it recognises)"
        )


_TRANSIENT_SQLSTATES = frozenset({"40001", "40P01", "55P03"})
"""serialization_failure, deadlock_detected, lock_not_available (PostgreSQL)."""


def is_transient(error: sa_exc.DBAPIError) -> bool:
    """Whether a driver error is worth retrying the whole transaction for.

    Transient: PostgreSQL serialization failures and deadlocks (SQLSTATE 40001, 40P01, 55P03),
    SQLite ``database is locked``/``busy`` after ``busy_timeout`` elapsed, and dropped connections
    (``connection_invalidated``).
    """
    from sqlalchemy import exc as sa_exc  # the error's own library: loaded already

    if error.connection_invalidated:
        return True
    sqlstate = getattr(error.orig, "sqlstate", None)
    if sqlstate in _TRANSIENT_SQLSTATES:
        return True
    message = str(error.orig).lower()
    return isinstance(error, sa_exc.OperationalError) and (
        "database is locked" in message or "database is busy" in message
    )


def translate(error: Exception, url: URL | None = None) -> LedgerError:
    """Map a SQLAlchemy/driver error to the ledger's hierarchy (callers ``raise … from error``).

    ``url``: the ledger's; a :class:`LedgerUnavailable` then reads ``ledger <url> unavailable:
    <the driver's message on one line>``, the URL without its password and query (a setting's
    secret: neither may reach a log, a payload or the status).
    """
    from sqlalchemy import exc as sa_exc

    if isinstance(error, sa_exc.IntegrityError):
        return LedgerIntegrityError(str(error.orig))
    if isinstance(error, sa_exc.DataError):
        return data_error(error)
    message = str(error.orig) if isinstance(error, sa_exc.DBAPIError) else str(error)
    message = "; ".join(line.strip() for line in message.splitlines() if line.strip())
    if url is not None:
        shown = url.set(query={}).render_as_string(hide_password=True)
        message = f"ledger {shown} unavailable: {message}"
    return LedgerUnavailable(message)


_VARCHAR = re.compile(r"character varying\((\d+)\)")
_PARAMETER_SUFFIX = re.compile(r"(_m?\d+)+$")


def data_error(error: sa_exc.DBAPIError) -> LedgerDataError:
    """A :class:`LedgerDataError` for a driver's data exception, naming the refused field.

    For a string too long (SQLSTATE 22001, ``character varying(N)``) the field is the statement
    parameter holding a string longer than ``N`` (``occurrence_id``, ``by``…, a multi-row
    insert's ``_m<i>`` suffix removed); the message gives its length and the column's width.
    Otherwise the driver's condition, on one line, up to its first colon (which is where a
    driver quotes the value).
    """
    sqlstate = getattr(error.orig, "sqlstate", None) or "22000"
    primary = str(error.orig).strip().splitlines()[0] if str(error.orig).strip() else "data error"
    width = _VARCHAR.search(primary)
    params = error.params
    rows = params if isinstance(params, list | tuple) else [params]
    if width is not None:
        limit = int(width.group(1))
        for row in rows:
            if not isinstance(row, dict):
                continue
            for key, value in row.items():
                if isinstance(value, str) and len(value) > limit:
                    field = _PARAMETER_SUFFIX.sub("", key)
                    return LedgerDataError(
                        f"{field}: {len(value)} characters, more than the ledger's column holds "
                        f"({limit}; SQLSTATE {sqlstate})",
                        field,
                    )
    condition = primary.split(":", 1)[0]
    return LedgerDataError(f"a value the ledger refused: {condition} (SQLSTATE {sqlstate})")
