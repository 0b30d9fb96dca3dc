"""Column types that keep the clock's meaning: aware UTC instants and naive local wall times.

- :class:`UtcDateTime` stores instants. It rejects naive values (a naive datetime has no instant),
  converts aware ones to UTC, and always returns aware UTC datetimes. PostgreSQL stores
  ``TIMESTAMP WITH TIME ZONE``; SQLite stores SQLAlchemy's fixed-width text
  ``YYYY-MM-DD HH:MM:SS.ffffff`` of the UTC wall time, which sorts and compares as time does.
- :class:`NominalLocal` stores a naive wall-clock date-time (``nominal_local``) as ISO 8601 text
  ``YYYY-MM-DDTHH:MM:SS`` on both backends — never a timestamp type, which would invite a zone
  conversion. Whole seconds only (the time contract has no fractional seconds).
"""

from __future__ import annotations

from datetime import UTC, datetime
from typing import Any

from sqlalchemy import DateTime, Dialect, String
from sqlalchemy.types import TypeDecorator


class UtcDateTime(TypeDecorator[datetime]):
    """An aware UTC instant; naive values are rejected on the way in (``ValueError``)."""

    impl = DateTime(timezone=True)
    cache_ok = True

    def process_bind_param(self, value: datetime | None, dialect: Dialect) -> datetime | None:
        """Check and normalize an instant to UTC (naive UTC wall time on SQLite)."""
        if value is None:
            return None
        if not isinstance(value, datetime):
            raise TypeError(f"expected an aware datetime, got {type(value).__name__}")
        if value.tzinfo is None or value.utcoffset() is None:
            raise ValueError(
                f"naive datetime {value.isoformat()} where an aware UTC instant belongs"
            )
        value = value.astimezone(UTC)
        return value.replace(tzinfo=None) if dialect.name == "sqlite" else value

    def process_result_value(self, value: Any, dialect: Dialect) -> datetime | None:
        """Return stored instants as aware UTC datetimes."""
        if value is None:
            return None
        assert isinstance(value, datetime)
        if value.tzinfo is None:
            return value.replace(tzinfo=UTC)
        return value.astimezone(UTC)


class NominalLocal(TypeDecorator[datetime]):
    """A naive local wall-clock date-time stored as ``YYYY-MM-DDTHH:MM:SS`` text."""

    impl = String(19)
    cache_ok = True

    def process_bind_param(self, value: datetime | None, dialect: Dialect) -> str | None:
        """Format a naive date-time; aware or fractional values are rejected (``ValueError``)."""
        if value is None:
            return None
        if value.tzinfo is not None:
            raise ValueError(f"aware datetime {value.isoformat()} where a naive local time belongs")
        if value.microsecond:
            raise ValueError(f"nominal local time {value.isoformat()} has fractional seconds")
        return value.strftime("%Y-%m-%dT%H:%M:%S")

    def process_result_value(self, value: Any, dialect: Dialect) -> datetime | None:
        """Parse the stored text back to a naive datetime."""
        if value is None:
            return None
        return datetime.strptime(str(value), "%Y-%m-%dT%H:%M:%S")
