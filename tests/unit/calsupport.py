"""Helpers for the calendar tests (not a test module): specs, store files, compact rows."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from tcsupport import iso, utc

from timecontract import OccurrenceRecord, occurrences, parse_spec
from timecontract.calendars import parse_calendar_file, store_path

LIBRARY = "holidays-0.108"
"""The pinned holidays release (pyproject.toml)."""
BASE: dict[str, Any] = {
    "schema": "scheduleSpec.v1",
    "scheduleId": "cal",
    "revision": 1,
    "timeZone": "America/New_York",
    "tzdbVersion": "2026a",
    "cutoverAt": "2020-01-01T00:00:00Z",
}


def spec(**fields: Any) -> Any:
    """A spec: :data:`BASE` with ``fields`` (camelCase keys)."""
    return parse_spec(BASE | fields)


def records(fields: dict[str, Any], start: str, end: str, store: Path | None = None) -> list[Any]:
    """The records of ``spec(**fields)`` placed in ``[start, end)`` (UTC, no offset)."""
    return occurrences(spec(**fields), utc(start), utc(end), tzdb_store=store)


def row(r: OccurrenceRecord) -> tuple[str, str | None, str, str, str | None]:
    """``(nominal local, instant, disposition, reason, holiday)`` in text."""
    return (
        r.nominal_local.isoformat(),
        iso(r.instant_utc),
        r.disposition.value,
        r.reason.value,
        r.holiday,
    )


def write_calendar_file(store: Path, text: str) -> str:
    """Store a user calendar file as ``almanac calendar add-file`` does; return its release."""
    document = parse_calendar_file(text.encode(), "test.yaml")
    path = store_path(store, document["name"], document["release"])
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps(document))
    return str(document["release"])
