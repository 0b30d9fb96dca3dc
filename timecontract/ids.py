"""Occurrence and logical-slot identity: readable, deterministic, valid Temporal workflow IDs.

Seed: "The occurrenceId is calculated from the schedule ID, revision, nominal local date and time,
and fold ordinal. A separate logicalSlotId that excludes the revision binds the schedule ID to the
policy-resolved UTC instant. Neither ID may use discovery or start time."

Formats (ASCII, no spaces; at most :data:`MAX_OCCURRENCE_ID_LENGTH` and
:data:`MAX_LOGICAL_SLOT_ID_LENGTH` characters, computed from the spec's bounds)::

    occurrenceId   = <scheduleId>.r<revision>.<nominal local, YYYYMMDDTHHMMSS>.f<fold>
                     daily-ops-summary.r7.20261101T013000.f0
    logicalSlotId  = <scheduleId>@<resolved instant, YYYYMMDDTHHMMSSZ>
                     daily-ops-summary@20261101T053000Z

An elapsed-time ``interval`` spec (``timecontract.interval``) has no nominal wall time of its own:
its occurrenceId carries the UTC instant instead, with a ``Z`` and no fold (an instant is unique)::

    occurrenceId   = <scheduleId>.r<revision>.<instant, YYYYMMDDTHHMMSSZ>
                     pump-check.r3.20260308T070000Z

A manual run (``almanac trigger``, ``ledger.manual``) has no slot of the calendar at all: its
occurrenceId is its own namespace, the schedule and the caller's request ID::

    occurrenceId   = <scheduleId>.manual.<requestId>
                     daily-ops-summary.manual.req-1

The three forms cannot be confused (``.f<fold>`` vs. ``Z`` at the end vs. ``.manual.`` where
``.r<revision>`` stands); all are lowercase letters, digits, ``-``, ``.``, ``T`` and ``Z``: valid
Temporal workflow IDs.
"""

from __future__ import annotations

import re
from datetime import UTC, datetime
from typing import NewType

ID_FORMAT_VERSION = 1
"""The version of the occurrenceId format above, recorded on every occurrence (ledger column
``id_format``). Bump it when the format changes: a rollback requeues only occurrences whose
format the implementation it returns to recognises."""

OccurrenceId = NewType("OccurrenceId", str)
LogicalSlotId = NewType("LogicalSlotId", str)

_OCCURRENCE = re.compile(
    r"^(?P<schedule>[a-z0-9-]+)\.r(?P<revision>\d+)\.(?P<local>\d{8}T\d{6})\.f(?P<fold>[01])$"
)

_INTERVAL_OCCURRENCE = re.compile(
    r"^(?P<schedule>[a-z0-9-]+)\.r(?P<revision>\d+)\.(?P<instant>\d{8}T\d{6})Z$"
)

MANUAL_INFIX = ".manual."
"""What separates the scheduleId from the request ID in a manual occurrenceId."""

REQUEST_ID_PATTERN = re.compile(r"^[a-z0-9](?:[a-z0-9-]{0,62}[a-z0-9])?$")
"""A request ID: 1–64 of ``a-z 0-9 -``, not starting or ending with ``-`` (it becomes part of a
workflow ID and the idempotency key)."""

SCHEDULE_ID_PATTERN = r"^[a-z0-9](?:[a-z0-9-]{0,61}[a-z0-9])?$"
"""scheduleId: 1–63 characters of ``a-z``, ``0-9`` and ``-``, not starting or ending with ``-``
(a DNS label). It becomes part of workflow IDs, metric labels and file names."""
MAX_SCHEDULE_ID_LENGTH = 63
"""The longest scheduleId the spec accepts (:data:`SCHEDULE_ID_PATTERN`)."""
MAX_REVISION_DIGITS = 10
"""Digits of the largest revision the spec accepts (``timecontract.spec.MAX_REVISION``, 2³¹−1)."""
MAX_REQUEST_ID_LENGTH = 64
"""The longest request ID (:data:`REQUEST_ID_PATTERN`)."""
_CALENDAR_ID_LENGTH = (
    MAX_SCHEDULE_ID_LENGTH + len(".r") + MAX_REVISION_DIGITS + len(".YYYYMMDDTHHMMSS.f0")
)
_MANUAL_ID_LENGTH = MAX_SCHEDULE_ID_LENGTH + len(MANUAL_INFIX) + MAX_REQUEST_ID_LENGTH
MAX_OCCURRENCE_ID_LENGTH = max(_CALENDAR_ID_LENGTH, _MANUAL_ID_LENGTH)
"""The longest occurrenceId of any form the bounds above allow: 135 (a manual one; a calendar ID
is at most 94 characters, an interval ID 92). The ledger's ID columns hold this many."""
MAX_LOGICAL_SLOT_ID_LENGTH = max(
    MAX_SCHEDULE_ID_LENGTH + len("@YYYYMMDDTHHMMSSZ"), _MANUAL_ID_LENGTH
)
"""The longest logicalSlotId: 135 (a manual occurrence's slot is its ID; a calendar slot is at
most 80 characters)."""

_MANUAL_OCCURRENCE = re.compile(
    r"^(?P<schedule>[a-z0-9-]+)\.manual\.(?P<request>[a-z0-9](?:[a-z0-9-]{0,62}[a-z0-9])?)$"
)


def occurrence_id(
    schedule_id: str, revision: int, nominal_local: datetime, fold: int
) -> OccurrenceId:
    """Build the occurrenceId of one nominal local date-time of one revision.

    Args:
        schedule_id: the spec's scheduleId (a slug).
        revision: the revision (positive).
        nominal_local: the naive wall-clock date-time the rule produced (whole seconds).
        fold: the fold ordinal, 0 or 1 (1 only for the second instant of a fold).

    Raises:
        ValueError: ``nominal_local`` is aware, or ``fold`` is not 0 or 1.

    """
    if nominal_local.tzinfo is not None:
        raise ValueError("nominal_local must be naive (floating local time)")
    if fold not in (0, 1):
        raise ValueError(f"fold must be 0 or 1, not {fold!r}")
    return IdFormatter(schedule_id, revision).occurrence(nominal_local, fold)


def interval_occurrence_id(schedule_id: str, revision: int, instant_utc: datetime) -> OccurrenceId:
    """Build the occurrenceId of one instant of an elapsed-time interval spec.

    Raises:
        ValueError: ``instant_utc`` is naive.

    """
    if instant_utc.tzinfo is None:
        raise ValueError("instant_utc must be an aware UTC datetime")
    instant = instant_utc.astimezone(UTC)
    return OccurrenceId(f"{schedule_id}.r{revision}.{instant.year:04d}{instant:%m%dT%H%M%S}Z")


def manual_occurrence_id(schedule_id: str, request_id: str) -> OccurrenceId:
    """Build the occurrenceId of a manual run: ``<scheduleId>.manual.<requestId>``.

    Raises:
        ValueError: ``request_id`` does not match :data:`REQUEST_ID_PATTERN`.

    """
    if not REQUEST_ID_PATTERN.fullmatch(request_id):
        raise ValueError(
            f"request ID {request_id!r}: use 1-64 of a-z 0-9 -, not starting or ending with -"
        )
    return OccurrenceId(f"{schedule_id}{MANUAL_INFIX}{request_id}")


def occurrence_schedule_id(value: str) -> str:
    """The scheduleId of an occurrenceId of any form (calendar, interval or manual).

    Raises:
        ValueError: ``value`` is none of the three forms.

    """
    match = (
        _OCCURRENCE.fullmatch(value)
        or _INTERVAL_OCCURRENCE.fullmatch(value)
        or _MANUAL_OCCURRENCE.fullmatch(value)
    )
    if not match:
        raise ValueError(f"not an occurrenceId: {value!r}")
    return match["schedule"]


def logical_slot_id(schedule_id: str, instant_utc: datetime) -> LogicalSlotId:
    """Build the logicalSlotId of a resolved UTC instant (no revision: shared across revisions).

    Raises:
        ValueError: ``instant_utc`` is naive.

    """
    if instant_utc.tzinfo is None:
        raise ValueError("instant_utc must be an aware UTC datetime")
    return IdFormatter(schedule_id, 0).slot(instant_utc.astimezone(UTC))


def parse_occurrence_id(value: str) -> tuple[str, int, datetime, int]:
    """Split an occurrenceId into ``(schedule_id, revision, nominal_local, fold)``.

    Raises:
        ValueError: ``value`` is not an occurrenceId.

    """
    match = _OCCURRENCE.fullmatch(value)
    if not match:
        raise ValueError(f"not an occurrenceId: {value!r}")
    nominal_local = datetime.strptime(match["local"], "%Y%m%dT%H%M%S")
    return match["schedule"], int(match["revision"]), nominal_local, int(match["fold"])


_TWO_DIGITS = tuple(f"{n:02d}" for n in range(60))
"""``00`` … ``59``: the months, days, hours, minutes and seconds of an ID."""


class IdFormatter:
    """Writes the occurrenceIds and logicalSlotIds of one schedule revision (the formats above).

    The one place these two formats are written: :func:`occurrence_id` and
    :func:`logical_slot_id` check their arguments and call it, and the time contract calls it
    for every record it builds. Each ID is its day's prefix (written once per day) followed by
    the time's ``HHMMSS`` and the suffix, because formatting a whole date-time per record cost
    more than the RRULE expansion itself. No argument checks: see the two functions.
    """

    __slots__ = (
        "_local_day",
        "_local_prefix",
        "_revision",
        "_schedule_id",
        "_utc_day",
        "_utc_prefix",
    )

    def __init__(self, schedule_id: str, revision: int) -> None:
        self._schedule_id = schedule_id
        self._revision = revision
        self._local_day: tuple[int, int, int] | None = None
        self._local_prefix = ""
        self._utc_day: tuple[int, int, int] | None = None
        self._utc_prefix = ""

    def occurrence(self, nominal_local: datetime, fold: int) -> OccurrenceId:
        """``<scheduleId>.r<revision>.<YYYYMMDDTHHMMSS>.f<fold>`` of a naive nominal time.

        The year is zero-padded to four digits.
        """
        day = (nominal_local.year, nominal_local.month, nominal_local.day)
        if day != self._local_day:
            self._local_day = day
            self._local_prefix = (
                f"{self._schedule_id}.r{self._revision}."
                f"{nominal_local.year:04d}{nominal_local:%m%d}T"
            )
        two = _TWO_DIGITS
        return OccurrenceId(
            f"{self._local_prefix}{two[nominal_local.hour]}{two[nominal_local.minute]}"
            f"{two[nominal_local.second]}.f{fold}"
        )

    def slot(self, instant_utc: datetime) -> LogicalSlotId:
        """``<scheduleId>@<YYYYMMDDTHHMMSS>Z`` of an instant whose tzinfo is UTC.

        The year as ``strftime``'s ``%Y`` writes it (not zero-padded before 1000 with glibc;
        a spec's years start at 1900).
        """
        day = (instant_utc.year, instant_utc.month, instant_utc.day)
        if day != self._utc_day:
            self._utc_day = day
            self._utc_prefix = f"{self._schedule_id}@{instant_utc:%Y%m%d}T"
        two = _TWO_DIGITS
        return LogicalSlotId(
            f"{self._utc_prefix}{two[instant_utc.hour]}{two[instant_utc.minute]}"
            f"{two[instant_utc.second]}Z"
        )
