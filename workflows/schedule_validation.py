"""The schedule workflow's update validators: a malformed or refused change never enters history.

Pure checks of an update's payload, run by ``workflows.schedule.ScheduleWorkflow``'s validators
before the update is admitted. A refusal is an ``ApplicationError`` of type
:data:`INVALID_UPDATE` (or :data:`ENDING`) whose message reads ``field=value: problem`` and whose
details name the field and value: the caller (``almanac.client``) maps it to a one-line error.
Passed through the workflow sandbox (imported once, not per instance).
"""

from __future__ import annotations

import json
from datetime import UTC, datetime
from typing import Any, NoReturn

from temporalio.exceptions import ApplicationError

from activities import io
from timecontract.secrets import REDACTED, secret_problems
from workflows.contracts import DeleteInput, DisableInput

MAX_SPEC_BYTES = 64 * 1024
"""Size bound of a published spec (JSON), checked by the update validator."""
MAX_REASON_CHARS = 500
"""Size bound of a disable or delete reason."""
MAX_BY_CHARS = 200
"""Size bound of who decides a gate change (the ledger's ``by`` columns hold 200)."""
MAX_BACKFILL_BOUND = 2000
"""The largest ``max_occurrences`` a backfill may ask for (the validator refuses more): the
ledger's cap on a window's occurrences (``ledger.backfill.MAX_WINDOW_OCCURRENCES``)."""
INVALID_UPDATE = "InvalidUpdate"
"""The error type of a validator's refusal (a malformed or refused change)."""
ENDING = "ScheduleEnding"
"""The error type of a refusal because this run is ending (deleted, or nothing to run): a new run
of the same workflow ID can take the change once this one has closed."""


def refuse(field_: str, value: Any, problem: str, *, kind: str = INVALID_UPDATE) -> NoReturn:
    """Reject an update in its validator: ``field=value: problem`` (details: field, value).

    Raises:
        ApplicationError: always, of type ``kind``, non-retryable.
    """
    raise ApplicationError(
        f"{field_}={value!r}: {problem}",
        {"field": field_, "value": value if _is_json_scalar(value) else repr(value)},
        type=kind,
        non_retryable=True,
    )


def refuse_ending(schedule_id: str) -> NoReturn:
    """Reject a change because the run is deleted or ending (type :data:`ENDING`)."""
    refuse(
        "scheduleId",
        schedule_id,
        "the schedule is deleted or ending; re-apply it (a higher revision) to revive it",
        kind=ENDING,
    )


def check_spec(spec: dict[str, Any], schedule_id: str, gate: io.GateSnapshot | None) -> None:
    """Check a ``publish_revision`` update's spec before it enters history.

    Args:
        spec: the scheduleSpec.v1 data as sent.
        schedule_id: this workflow's schedule; the spec must name it.
        gate: the latest gate reading (``None`` before the first): a revision below its active
            revision is refused. The active revision again goes on to the ledger: the same
            digest is "unchanged" (an apply repeated is harmless), another digest is refused
            there, naming the revision.

    Raises:
        ApplicationError: :data:`INVALID_UPDATE`: not a mapping, larger than
            :data:`MAX_SPEC_BYTES`, a literal secret (its value never named: the rule of
            ``timecontract.secrets`` that ``validate`` and the client apply), another
            scheduleId, or a revision that is not a positive integer or does not increase.
    """
    if not isinstance(spec, dict):
        refuse("spec", type(spec).__name__, "needs a scheduleSpec.v1 mapping")
    size = len(json.dumps(spec, default=str))
    if size > MAX_SPEC_BYTES:
        refuse("spec", f"{size} bytes", f"larger than {MAX_SPEC_BYTES} bytes")
    for problem in secret_problems(spec)[:1]:
        refuse(problem.field, REDACTED, problem.problem)
    spec_schedule_id = spec.get("scheduleId")
    if spec_schedule_id != schedule_id:
        refuse("scheduleId", spec_schedule_id, f"this schedule is {schedule_id!r}")
    revision = spec.get("revision")
    if not isinstance(revision, int) or isinstance(revision, bool) or revision < 1:
        refuse("revision", revision, "needs a positive integer")
    if gate is not None and revision < gate.active_revision:
        refuse(
            "revision",
            revision,
            f"{spec_schedule_id} revision {revision} does not increase (the active revision is "
            f"{gate.active_revision}; publish revision {gate.active_revision + 1} or higher)",
        )


def check_by(by: str | None) -> None:
    """Who decides a gate change: absent, or 1 to ``MAX_BY_CHARS`` printable characters.

    Raises:
        ApplicationError: :data:`INVALID_UPDATE` naming ``by``.
    """
    if by is None:
        return
    if not isinstance(by, str) or not by.strip() or not by.isprintable():
        refuse("by", by, "needs a non-empty, printable name of who decides")
    if len(by) > MAX_BY_CHARS:
        refuse("by", f"{len(by)} characters", f"longer than {MAX_BY_CHARS}")


def check_reason(params: DisableInput | DeleteInput | io.BackfillRequest) -> None:
    """A change's reason: 1 to ``MAX_REASON_CHARS`` characters of text a ledger can store.

    Raises:
        ApplicationError: :data:`INVALID_UPDATE` naming ``reason`` (an unpaired surrogate, a
            byte that was not UTF-8, by its position, never its value).
    """
    reason = getattr(params, "reason", None)
    if not isinstance(reason, str) or not reason.strip():
        refuse("reason", reason, "needs a non-empty reason")
    if len(reason) > MAX_REASON_CHARS:
        refuse("reason", f"{len(reason)} characters", f"longer than {MAX_REASON_CHARS}")
    try:
        reason.encode("utf-8")
    except UnicodeEncodeError as exc:
        refuse(
            "reason", f"{len(reason)} characters", f"not valid text at character {exc.start + 1}"
        )


def check_backfill(params: io.BackfillRequest, now: datetime) -> None:
    """Check a ``backfill`` update: reason, who asks, a past window and its bound.

    Args:
        params: the request as sent.
        now: the schedule's clock; the window must end at or before it (a backfill runs the past).

    Raises:
        ApplicationError: :data:`INVALID_UPDATE` naming ``reason``, ``by``, ``from``, ``to`` or
            ``max`` (1 to :data:`MAX_BACKFILL_BOUND`).
    """
    check_reason(params)
    if not isinstance(params.by, str) or not params.by.strip() or len(params.by) > 200:
        refuse("by", params.by, "needs 1-200 characters (who asks)")
    for name, value in (("from", params.from_utc), ("to", params.to_utc)):
        if not isinstance(value, datetime) or value.utcoffset() is None:
            refuse(name, str(value), "needs an instant with a UTC offset")
    if params.from_utc >= params.to_utc:
        refuse("to", _z(params.to_utc), f"must be after from={_z(params.from_utc)}")
    if params.to_utc > now:
        refuse(
            "to",
            _z(params.to_utc),
            f"lies after the schedule's now {_z(now)} (a backfill runs the past)",
        )
    bound = params.max_occurrences
    if not isinstance(bound, int) or not 1 <= bound <= MAX_BACKFILL_BOUND:
        refuse("max", bound, f"needs 1 to {MAX_BACKFILL_BOUND}")


def _z(instant: datetime) -> str:
    """An instant as the README writes them: UTC, whole seconds, ``Z``."""
    utc = instant.astimezone(UTC).replace(microsecond=0)
    return utc.isoformat().replace("+00:00", "Z")


def _is_json_scalar(value: Any) -> bool:
    return value is None or isinstance(value, str | int | float | bool)


__all__ = [
    "ENDING",
    "INVALID_UPDATE",
    "MAX_BACKFILL_BOUND",
    "check_backfill",
    "check_by",
    "check_reason",
    "check_spec",
    "refuse",
    "refuse_ending",
]
