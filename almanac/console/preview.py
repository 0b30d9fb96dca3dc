"""Preview a pasted or uploaded spec: every problem, or the occurrences of a window. No writes.

The spec text is checked as ``almanac validate`` checks a file (``timecontract.read_spec_data``
then ``load_spec``: YAML or JSON, size and depth bounds, literal secrets refused and shown
``<redacted>``), then the action against the registered adapters; a valid spec's window is
resolved by ``timecontract`` with its DST reasons, at most :data:`MAX_RECORDS` records.
"""

from __future__ import annotations

import tempfile
from dataclasses import dataclass, field
from datetime import datetime, timedelta
from itertools import islice
from pathlib import Path
from typing import Any

from timecontract import (
    InvalidSpec,
    OccurrenceRecord,
    ScheduleSpecV1,
    SpecError,
    iter_occurrences,
    load_spec,
)
from timecontract.spec_file import read_spec_data

MAX_SPEC_BYTES = 64 * 1024
"""The largest spec text accepted (a spec is a few hundred bytes)."""
MAX_RECORDS = 1000
DEFAULT_WINDOW = timedelta(days=31)


@dataclass(frozen=True)
class Problem:
    """One problem of a spec: the field, the value as shown (secrets redacted) and why.

    ``value`` is ``None`` for a field the spec does not give (shown as ``field: problem``).
    """

    field: str
    value: str | None
    problem: str


@dataclass
class PreviewResult:
    """Problems (the spec is invalid), or the window's records (``truncated``: more than shown)."""

    problems: list[Problem] = field(default_factory=list)
    spec: ScheduleSpecV1 | None = None
    records: list[OccurrenceRecord] = field(default_factory=list)
    from_utc: datetime | None = None
    to_utc: datetime | None = None
    truncated: bool = False


def _problem(error: SpecError) -> Problem:
    return Problem(error.field, error.shown if error.given else None, error.problem)


def _text_problem(error: SpecError, path: Path, size: int) -> Problem:
    """A problem of the spec text: the file read on the server is the form's ``spec`` field."""
    if error.field != "file":
        return _problem(error)
    return Problem("spec", f"{size} bytes", error.problem.replace(str(path), "the spec"))


def check(text: bytes, tzdb_store: Path | None, *, json_file: bool = False) -> PreviewResult:
    """Every problem of a spec text, or the valid spec (``problems`` empty).

    ``json_file``: the text is an uploaded ``.json`` file, read as JSON (RFC 8259), as
    ``almanac validate`` reads one; otherwise YAML (of which JSON is nearly a subset).
    """
    if len(text) > MAX_SPEC_BYTES:
        return PreviewResult([Problem("spec", f"{len(text)} bytes", "larger than 64 KiB")])
    with tempfile.TemporaryDirectory(prefix="almanac-preview-") as folder:
        path = Path(folder) / ("spec.json" if json_file else "spec.yaml")
        path.write_bytes(text)
        try:
            data: Any = read_spec_data(path)
            spec = load_spec(data, tzdb_store)
        except InvalidSpec as exc:
            return PreviewResult([_text_problem(p, path, len(text)) for p in exc.problems])
    if spec.actions():
        from activities.actions.catalog import spec_action_problems

        if problems := spec_action_problems(spec):
            return PreviewResult([_problem(p) for p in problems], spec)
    return PreviewResult(spec=spec)


def window(
    spec: ScheduleSpecV1,
    from_utc: datetime | None,
    to_utc: datetime | None,
    tzdb_store: Path | None,
) -> PreviewResult:
    """The records of ``[from_utc, to_utc)`` (default: cutoverAt and 31 days), bounded.

    A day of the window outside the pinned calendar's years is one problem on
    ``calendar.release``, not records.
    """
    start = from_utc or spec.cutover_at
    end = to_utc or start + DEFAULT_WINDOW
    try:
        records = list(
            islice(iter_occurrences(spec, start, end, tzdb_store=tzdb_store), MAX_RECORDS + 1)
        )
    except SpecError as exc:  # the pinned calendar does not cover a day of the window
        return PreviewResult([_problem(exc)], spec, from_utc=start, to_utc=end)
    return PreviewResult(
        spec=spec,
        records=records[:MAX_RECORDS],
        from_utc=start,
        to_utc=end,
        truncated=len(records) > MAX_RECORDS,
    )
