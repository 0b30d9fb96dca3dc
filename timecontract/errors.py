"""The error hierarchy's root and the time contract's branch.

Every error Almanac raises on purpose derives from :class:`AlmanacError`; each layer adds one
branch (``SpecError`` here, ``LedgerError`` in ``ledger``), so callers can catch a layer's failures
without catching programming errors.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any


class AlmanacError(Exception):
    """Root of every error Almanac raises on purpose."""


class SpecError(AlmanacError, ValueError):
    """A scheduleSpec field holds a value the contract does not accept.

    Attributes:
        field: the camelCase field name as written in the spec file (e.g. ``rule``), or a dotted
            path for nested fields (``action.name``).
        value: the offending value, as given.
        problem: what is wrong with it, in words.

    """

    def __init__(self, field: str, value: Any, problem: str) -> None:
        self.field = field
        self.value = value
        self.problem = problem
        super().__init__(f"{field}={value!r}: {problem}")


class TzdbReleaseNotFound(SpecError, LookupError):
    """The pinned tz database release is neither the installed ``tzdata`` nor in the local store.

    Never answered by a fallback to another release or to the operating system's zone files
    (DESIGN §3): add the release with ``almanac tzdb add RELEASE``.
    """

    def __init__(self, release: str, available: list[str]) -> None:
        shown = ", ".join(available) or "none"
        super().__init__(
            "tzdbVersion",
            release,
            f"tz database release not available (available: {shown}); "
            f"add it with `almanac tzdb add {release}`",
        )
        self.release = release
        self.available = available


class ZoneNotFound(SpecError, LookupError):
    """The IANA zone name does not exist in the pinned tz database release."""

    def __init__(self, zone: str, release: str) -> None:
        super().__init__("timeZone", zone, f"no such IANA zone in tz database release {release}")
        self.zone = zone
        self.release = release


class InvalidSpec(AlmanacError, ValueError):
    """A spec has one or more problems; ``problems`` lists each as a :class:`SpecError`.

    Attributes:
        problems: every problem found.
        source: the file, if the spec came from one.
        schedule_id: the spec's ``scheduleId`` when that field is itself valid (so a report can
            still name the schedule), else ``None``.
        revision: the spec's ``revision`` when that field is itself valid, else ``None``.

    """

    def __init__(
        self,
        problems: list[SpecError],
        source: str | None = None,
        *,
        schedule_id: str | None = None,
        revision: int | None = None,
    ) -> None:
        self.problems = problems
        self.source = source
        self.schedule_id = schedule_id
        self.revision = revision
        where = f"{source}: " if source else ""
        lines = "\n".join(f"  - {problem}" for problem in problems)
        count = f"{len(problems)} problem{'' if len(problems) == 1 else 's'}"
        super().__init__(f"{where}invalid scheduleSpec ({count}):\n{lines}")


class SpecFileUnreadable(InvalidSpec):
    """A spec file that cannot be read at all: missing, a directory, not permitted.

    Not a spec with problems, so its message is the one line ``<path>: <reason>`` (``no such
    file``), not "invalid scheduleSpec"; it is still an :class:`InvalidSpec` (bad input, exit 2)
    with one problem (field ``file``, the path as value, the reason) for a ``--json`` report.

    Attributes:
        reason: what is wrong (``no such file``, ``is a directory``, ``permission denied``).
    """

    def __init__(self, path: Path, reason: str) -> None:
        super().__init__([SpecError("file", str(path), reason)], str(path))
        self.reason = reason
        self.args = (f"{path}: {reason}",)
