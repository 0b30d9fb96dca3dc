"""The error hierarchy's root and the time contract's branch.

Every error Almanac raises on purpose derives from :class:`AlmanacError`; each layer adds one
branch (``SpecError`` here, ``LedgerError`` in ``ledger``), so callers can catch a layer's failures
without catching programming errors.
"""

from __future__ import annotations

import math
from collections.abc import Iterator, Mapping
from datetime import date, timedelta
from enum import Enum
from pathlib import Path
from typing import Any

from timecontract.iso8601 import format_duration

MAX_SHOWN = 100
"""The most characters a problem shows of a field's name or of a value; a longer one is cut and
ends in ``…`` (a 1,001-entry list or a 20,000-character name is no readable line)."""


def shorten(text: str, limit: int = MAX_SHOWN) -> str:
    """``text``, or its first ``limit - 1`` characters and ``…`` when longer than ``limit``."""
    return text if len(text) <= limit else text[: limit - 1] + "…"


def shown_value(value: Any) -> str | int | float | bool | None:
    """A problem's value as it is shown: JSON data of at most :data:`MAX_SHOWN` characters.

    A string, number, boolean or ``None`` is itself (a string or number cut by :func:`shorten`); a
    date, date-time, duration or enum member is its spec text (ISO 8601, the member's value); a
    list or mapping is its flow-style text (``[SA, FUNDAY]``), cut after :data:`MAX_SHOWN`
    characters with its length added (``[2027-01-01T09:00:00, … (1001 entries)``). An infinite or
    NaN float is YAML's ``.inf``, ``-.inf`` or ``.nan`` as text (JSON has no such number). Anything
    else is its cut ``repr``.
    """
    if value is None or isinstance(value, bool):
        return value
    if isinstance(value, float) and not math.isfinite(value):
        return _scalar_text(value)  # JSON has no infinity or NaN: YAML's spelling, as text
    if isinstance(value, int | float):
        return value if len(repr(value)) <= MAX_SHOWN else shorten(repr(value))
    if isinstance(value, Mapping | list | tuple):
        text = ""
        for piece in _flow_pieces(value):  # stops once past the limit: a huge value costs little
            text += piece
            if len(text) > MAX_SHOWN:
                return f"{shorten(text)} ({len(value)} entr{'y' if len(value) == 1 else 'ies'})"
        return text
    return shorten(_scalar_text(value))


def _scalar_text(value: Any) -> str:
    if isinstance(value, str):
        return value
    if value is None or isinstance(value, bool):
        return yaml_word(value)
    if isinstance(value, float) and not math.isfinite(value):
        return ".nan" if math.isnan(value) else ".inf" if value > 0 else "-.inf"
    if isinstance(value, date):  # a datetime too
        return value.isoformat()
    if isinstance(value, timedelta):
        return format_duration(value)
    if isinstance(value, Enum):
        return str(value.value)
    return repr(value)


def yaml_word(value: bool | None) -> str:
    """``null``, ``true`` or ``false``: how the spec (YAML or JSON) spells ``None`` and a bool."""
    return "null" if value is None else "true" if value else "false"


def _flow_pieces(value: Any) -> Iterator[str]:
    """``value`` as YAML flow-style text, piece by piece (lazily: the caller stops at its limit)."""
    if isinstance(value, Mapping):
        yield "{"
        for index, (key, item) in enumerate(value.items()):
            yield f"{', ' if index else ''}{_scalar_text(key)}: "
            yield from _flow_pieces(item)
        yield "}"
    elif isinstance(value, list | tuple):
        yield "["
        for index, item in enumerate(value):
            yield ", " if index else ""
            yield from _flow_pieces(item)
        yield "]"
    else:
        yield _scalar_text(value)


class AlmanacError(Exception):
    """Root of every error Almanac raises on purpose."""


class SpecError(AlmanacError, ValueError):
    """A scheduleSpec field holds a value the contract does not accept.

    The message is one line, ``field=value: problem``, bounded: the field's name cut by
    :func:`shorten`, the value as :func:`shown_value` shows it (a string quoted; ``null``,
    ``true`` and ``false`` as the spec spells them). A field that is not given at all has no
    value to show: its message is ``field: problem`` (``rule: is required``).

    Attributes:
        field: the camelCase field name as written in the spec file (e.g. ``rule``), or a dotted
            path for nested fields (``action.name``); at most :data:`MAX_SHOWN` characters.
        value: the offending value, as given.
        problem: what is wrong with it, in words.
        given: whether the field is in the spec at all; ``False`` for a missing field, whose
            ``value`` is ``None``.

    """

    def __init__(self, field: str, value: Any, problem: str, *, given: bool = True) -> None:
        self.field = shorten(field)
        self.value = value
        self.problem = problem
        self.given = given
        where = f"{self.field}={self.shown}" if given else self.field
        super().__init__(f"{where}: {problem}")

    @classmethod
    def missing(cls, field: str, problem: str) -> SpecError:
        """The problem of a field the spec does not give: ``field: problem``, value ``None``."""
        return cls(field, None, problem, given=False)

    @property
    def shown(self) -> str:
        """The value as the message shows it (:func:`shown_value`, worded as the class says)."""
        shown = shown_value(self.value)
        if shown is None or isinstance(shown, bool):
            return yaml_word(shown)
        if isinstance(self.value, float) and isinstance(shown, str):  # .inf, -.inf, .nan
            return shown
        if isinstance(shown, str) and isinstance(self.value, Mapping | list | tuple):
            return shown
        return repr(shown)


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

    def __init__(self, zone: str, release: str, meant: str | None = None) -> None:
        """Name the zone and release; ``meant``: the release's zone closest to ``zone``, if any."""
        hint = f"; did you mean {meant}?" if meant else ""
        super().__init__(
            "timeZone", zone, f"no such IANA zone in tz database release {release}{hint}"
        )
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
