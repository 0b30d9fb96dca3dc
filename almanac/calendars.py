"""The calendar store: pinned holiday-calendar releases beside the tz releases (DESIGN §12).

Layout and lookup are ``timecontract.calendars``' (``<tz store>/calendars/<name>/<release>.json``).
This module writes it, at the edges: ``almanac calendar add NAME`` (the installed ``holidays``
library's dates for NAME), ``almanac calendar add-file FILE`` (a user calendar file, its release
the file's ``sha256-<hex>``), and ``almanac apply``, which stores the release a spec pins when
it is the installed library's, so a worker keeps reading it after the library is upgraded.
Files are written to a temporary name and renamed, so a reader never sees half a file.
"""

from __future__ import annotations

import json
import os
import tempfile
from datetime import datetime
from pathlib import Path
from typing import Any

from almanac.tzdb import Change, changes_between
from timecontract import ScheduleSpecV1, SpecError
from timecontract.calendars import (
    MAX_CALENDAR_FILE_BYTES,
    RELEASE_PATTERN,
    installed_release,
    library_document,
    parse_calendar_file,
    store_path,
)


def _write(store: Path, document: dict[str, Any]) -> Path:
    path = store_path(store, document["name"], document["release"])
    path.parent.mkdir(parents=True, exist_ok=True)
    if path.is_file():
        return path  # a release's content never changes: its name is its version or digest
    with tempfile.NamedTemporaryFile(
        "w", encoding="utf-8", dir=path.parent, suffix=".tmp", delete=False
    ) as handle:
        json.dump(document, handle, indent=1, sort_keys=True)
    os.replace(handle.name, path)
    return path


def add_library(store: Path, name: str) -> tuple[str, Path]:
    """Store the installed ``holidays`` release's dates for calendar ``name``.

    Returns:
        The release (``holidays-<version>``) and the file.

    Raises:
        SpecError: the library has no such market or country.

    """
    document = library_document(name)
    return document["release"], _write(store, document)


def add_file(store: Path, source: Path) -> tuple[str, str, Path]:
    """Store a user calendar file; returns its name, release (``sha256-<hex>``) and stored file.

    Raises:
        SpecError: the file is unreadable, larger than the limit, or malformed.

    """
    try:
        with source.open("rb") as handle:
            raw = handle.read(MAX_CALENDAR_FILE_BYTES + 1)
    except OSError as exc:
        raise SpecError(
            "calendar file", str(source), (exc.strerror or "unreadable").lower()
        ) from exc
    document = parse_calendar_file(raw, str(source))
    return document["name"], document["release"], _write(store, document)


def list_releases(store: Path) -> list[tuple[str, str]]:
    """``(name, release)`` of every stored calendar release, sorted."""
    folder = store / "calendars"
    if not folder.is_dir():
        return []
    return sorted((path.parent.name, path.stem) for path in folder.glob("*/*.json"))


def pin_spec_calendar(spec: ScheduleSpecV1, store: Path) -> None:
    """Store the calendar release ``spec`` pins, if it is the installed library's (at apply).

    Raises:
        SpecError: an unknown calendar name.

    """
    if spec.calendar is None or spec.calendar.release != installed_release():
        return
    if not store_path(store, spec.calendar.name, spec.calendar.release).is_file():
        add_library(store, spec.calendar.name)


def diff_calendar_releases(
    spec: ScheduleSpecV1, to_release: str, from_utc: datetime, until_utc: datetime, store: Path
) -> list[Change]:
    """Records of ``spec`` in ``[from, until)`` that resolve differently under ``to_release``.

    The same comparison as ``almanac tzdb diff`` (``almanac.tzdb.changes_between``), with the
    spec's ``calendar.release`` replaced instead of its ``tzdbVersion``.

    Raises:
        SpecError: the spec has no calendar, ``to_release`` is malformed or not available.

    """
    if spec.calendar is None:
        raise SpecError("calendar", None, "the spec names no calendar to compare")
    if not RELEASE_PATTERN.fullmatch(to_release):
        raise SpecError("--to", to_release, "not a calendar release (holidays-0.108, sha256-…)")
    calendar = spec.calendar.model_copy(update={"release": to_release})
    target = spec.model_copy(update={"calendar": calendar})
    return changes_between(spec, target, from_utc, until_utc, store=store)
