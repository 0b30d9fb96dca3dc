"""Helpers for the time-contract unit tests (not a test module).

Records are compared as plain tuples of text — ``(instant_utc, utc_offset, fold)`` — never as aware
datetimes: two aware datetimes with the same tzinfo compare by wall time and ignore ``fold``.
"""

from __future__ import annotations

from datetime import UTC, datetime, timedelta
from typing import Any

from timecontract import OccurrenceRecord


def utc(text: str) -> datetime:
    """``utc("2026-11-01T06:00:00")`` → an aware UTC datetime."""
    return datetime.fromisoformat(text).replace(tzinfo=UTC)


def iso(instant: datetime | None) -> str | None:
    """An aware instant as ``YYYY-MM-DDTHH:MM:SSZ`` (independent of timecontract's formatter)."""
    if instant is None:
        return None
    assert instant.utcoffset() is not None
    return instant.astimezone(UTC).strftime("%Y-%m-%dT%H:%M:%SZ")


def offset(value: timedelta | None) -> str | None:
    """A UTC offset as ``±HH:MM`` (independent of timecontract's formatter)."""
    if value is None:
        return None
    minutes = int(value.total_seconds()) // 60
    sign = "-" if minutes < 0 else "+"
    return f"{sign}{abs(minutes) // 60:02d}:{abs(minutes) % 60:02d}"


def triple(record: Any) -> tuple[str | None, str | None, int]:
    """``(instant_utc, utc_offset, fold)`` of a record or a Resolution."""
    return iso(record.instant_utc), offset(record.utc_offset), record.fold


def row(record: OccurrenceRecord) -> tuple[Any, ...]:
    """Everything a record states, as text: nominal, fold, instant, offset, gapAt, disposition."""
    return (
        record.nominal_local.isoformat(),
        record.fold,
        iso(record.instant_utc),
        offset(record.utc_offset),
        iso(record.gap_at_utc),
        record.disposition.value,
        record.reason.value,
    )
