"""Query and form input of the console, checked at the edge: one ``field=value: why`` line each.

The message has the CLI's shape (``almanac.cli.output``): the field, the value as given, and
what is expected; nothing is read or written with a bad value.
"""

from __future__ import annotations

import base64
import re
from dataclasses import dataclass
from datetime import UTC, datetime
from typing import Any

from ledger import OccurrenceState
from ledger.browse import MAX_PAGE, OccurrenceCursor
from timecontract.iso8601 import read_instant

MAX_FIELD = 2000
"""The longest text a form field may hold (characters)."""
MONTH = re.compile(r"^(\d{4})-(\d{2})$")


class FormError(ValueError):
    """Bad input: names the field and the value it was given."""

    def __init__(self, field: str, value: object, why: str) -> None:
        """Build the one-line message ``field='value': why``."""
        shown = value if not isinstance(value, str) or len(value) <= 80 else value[:80] + "…"
        super().__init__(f"{field}={shown!r}: {why}")
        self.field = field
        self.value = value


def submitted(form: Any, name: str) -> str | None:
    """A submitted form's text field ``name`` (``None``: absent, or an upload, not text)."""
    value = form.get(name)
    return value if isinstance(value, str) else None


def text(field: str, value: str | None, *, required: bool = True) -> str:
    """A text field, stripped: bounded, valid Unicode, and non-blank when ``required``."""
    value = (value or "").strip()
    if required and not value:
        raise FormError(field, value, "required")
    if len(value) > MAX_FIELD:
        raise FormError(field, value, f"longer than {MAX_FIELD} characters")
    if "\x00" in value:
        raise FormError(field, value, "holds a NUL character")
    return value


def states(values: list[str]) -> list[OccurrenceState] | None:
    """``state`` filters (repeatable); ``None`` when none given (every state)."""
    found = []
    for value in values:
        try:
            found.append(OccurrenceState(value))
        except ValueError:
            known = ", ".join(s.value for s in OccurrenceState)
            raise FormError("state", value, f"unknown state (one of {known})") from None
    return found or None


def revisions(values: list[str]) -> list[int] | None:
    """``revision`` filters (repeatable positive integers); ``None`` when none given."""
    found = []
    for value in values:
        if not value.isdigit() or int(value) < 1 or len(value) > 9:
            raise FormError("revision", value, "a revision number (1, 2, …)")
        found.append(int(value))
    return found or None


def month(value: str | None, default: tuple[int, int]) -> tuple[int, int]:
    """``month`` as ``YYYY-MM`` (``default`` when absent)."""
    if not value:
        return default
    found = MONTH.match(value)
    if found is None or not 1 <= int(found.group(2)) <= 12:
        raise FormError("month", value, "a month as YYYY-MM")
    if not 1900 <= int(found.group(1)) <= 9998:
        raise FormError("month", value, "a year from 1900 to 9998")
    return int(found.group(1)), int(found.group(2))


def instant(field: str, value: str | None) -> datetime | None:
    """An optional instant, ISO 8601 with ``Z`` or an offset (``2026-11-01T06:00:00Z``), in UTC.

    Read as the CLI reads ``--from``/``--to`` (``timecontract.iso8601.read_instant``): the
    same problems, a date told the instant of its midnight. Empty: ``None``.

    Raises:
        FormError: naming the field and the value.
    """
    value = (value or "").strip()
    if not value:
        return None
    try:
        return read_instant(value)
    except ValueError as exc:
        raise FormError(field, value, str(exc)) from None


def limit(value: str | None, default: int = 100) -> int:
    """A page size, 1 to the ledger's page bound."""
    if not value:
        return default
    if not value.isdigit() or not 1 <= int(value) <= MAX_PAGE:
        raise FormError("limit", value, f"a page size from 1 to {MAX_PAGE}")
    return int(value)


@dataclass(frozen=True, slots=True)
class CursorCodec:
    """Encodes a page cursor into one opaque URL-safe token and back."""

    @staticmethod
    def dump(cursor: OccurrenceCursor) -> str:
        """``<placed ISO UTC>|<occurrence ID>`` in URL-safe base64."""
        raw = f"{cursor.placed_at_utc.isoformat()}|{cursor.occurrence_id}".encode()
        return base64.urlsafe_b64encode(raw).decode().rstrip("=")

    @staticmethod
    def load(value: str | None) -> OccurrenceCursor | None:
        """The cursor of an ``after`` token (``None`` when absent)."""
        if not value:
            return None
        try:
            raw = base64.urlsafe_b64decode(value + "=" * (-len(value) % 4)).decode()
            placed, _, occurrence_id = raw.partition("|")
            instant = datetime.fromisoformat(placed)
        except ValueError:
            raise FormError("after", value, "not a page cursor of this console") from None
        if instant.tzinfo is None or not occurrence_id:
            raise FormError("after", value, "not a page cursor of this console")
        return OccurrenceCursor(instant.astimezone(UTC), occurrence_id)
