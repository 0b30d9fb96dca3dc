"""``scheduleSpec.v1``: the versioned schedule contract, loaded from YAML or JSON.

A spec freezes everything that decides *which* occurrences exist and *when* (seed: "freeze the time
contract, not just the cron string"). Keys are camelCase, as in the seed's example::

    schema: scheduleSpec.v1
    scheduleId: daily-ops-summary
    revision: 7
    timeZone: America/New_York
    tzdbVersion: 2026a
    rule: "FREQ=DAILY;BYHOUR=2;BYMINUTE=30"
    gapPolicy: SKIP
    foldPolicy: FIRST_ONLY
    misfirePolicy: CATCH_UP_BOUNDED
    maxCatchUp: 2
    cutoverAt: 2026-11-01T06:00:00Z

Required: ``schema``, ``scheduleId``, ``revision``, ``timeZone``, ``tzdbVersion``, ``cutoverAt``,
and exactly one of ``rule`` (calendar recurrence) and ``interval`` (elapsed-time spacing, see
``timecontract.interval``). Every other field has a deterministic default (never "now"), and
:meth:`ScheduleSpecV1.resolved` is the stored form with every default written out — except the
fields added after the contract's first release (:data:`ADDITIVE_FIELDS`), which are written only
when they differ from their default, so that the digest of every revision published before them
stays the same (a published revision's digest is checked on every materialization).
"""

from __future__ import annotations

import difflib
import hashlib
import json
import os
import re
from collections import Counter
from collections.abc import Callable, Mapping
from datetime import UTC, date, datetime, timedelta
from enum import StrEnum
from pathlib import Path
from typing import Annotated, Any, Literal

import yaml
from pydantic import (
    BaseModel,
    ConfigDict,
    Field,
    JsonValue,
    StrictBool,
    StrictInt,
    ValidationError,
    ValidationInfo,
    field_validator,
    model_validator,
)

from timecontract import zones
from timecontract.calendar_spec import (
    CALENDAR_ADDITIVE_FIELDS,
    CALENDAR_PATTERN_WORDING,
    MAX_DATES,
    CalendarSpec,
    calendar_coverage_problems,
    calendar_data_problems,
    calendar_problems,
    parse_exdate,
)
from timecontract.calendars import HolidayPolicy
from timecontract.density import (
    MAX_PER_MINUTE,
    MIN_INTERVAL,
    density_problem,
    interval_per_day,
    per_day_bound,
)
from timecontract.errors import AlmanacError, SpecError
from timecontract.expand import nominal_period
from timecontract.rrule import Rule, RuleError
from timecontract.rscale import RscaleRule, parse_rscale_rule
from timecontract.secrets import (
    quiet_credentials,
    quiet_parser_message,
    redact_at,
    secret_problems,
)
from timecontract.spacing import smallest_spacing

SCHEDULE_ID_PATTERN = r"^[a-z0-9](?:[a-z0-9-]{0,61}[a-z0-9])?$"
"""scheduleId: 1–63 characters of ``a-z``, ``0-9`` and ``-``, not starting or ending with ``-``
(a DNS label). It becomes part of workflow IDs, metric labels and file names."""

ACTION_NAME_PATTERN = r"^[a-z][a-z0-9_-]{0,62}$"
PATTERN_WORDING = {
    SCHEDULE_ID_PATTERN: "must be 1–63 characters of a-z, 0-9 and '-', not starting or ending "
    "with '-' (it becomes part of workflow IDs)",
    ACTION_NAME_PATTERN: "must be a registered adapter's name: a-z first, then up to 62 of a-z, "
    "0-9, '_' and '-'",
    zones.RELEASE_PATTERN.pattern: "must be an IANA tz database release: a year and a letter, "
    "e.g. 2026a",
    **CALENDAR_PATTERN_WORDING,
}
"""What a patterned field must be, in words: a problem says this instead of quoting the regex."""
DEFAULT_START = datetime(2001, 1, 1)
"""Default ``start`` (floating local): 2001-01-01 00:00, a Monday and the first day of a year and
month, so every BYxxx default the rule takes from DTSTART is the "first" one (00:00:00, Monday,
day 1, January) and INTERVAL phases are anchored there."""
DEFAULT_LATENESS = timedelta(minutes=5)
MAX_LATENESS = timedelta(days=366)
MAX_CATCH_UP = 1000
MAX_REVISION = 2**31 - 1
MIN_YEAR, MAX_YEAR = 1900, 9000
"""Years accepted in ``start`` and ``end`` (IDs carry four-digit years; the tz database's data
before 1900 is local mean time guesswork)."""
MAX_INTERVAL = timedelta(days=3660)
"""Longest ``interval`` (ten 366-day years)."""
MAX_JITTER = timedelta(days=1)
"""Longest ``jitter``."""
MAX_CATCH_UP_SPACING = timedelta(days=1)
"""Longest ``catchUpSpacing``."""
ADDITIVE_FIELDS: dict[str, Any] = {
    "interval": None,
    "phase": "PT0S",
    "jitter": "PT0S",
    "overlapPolicy": "ALLOW_ALL",
    "deadline": None,
    "catchUpSpacing": None,
    "failureStreak": None,
    **CALENDAR_ADDITIVE_FIELDS,
}
"""Fields added to scheduleSpec.v1 after its first release, with their defaults as stored JSON.

:meth:`ScheduleSpecV1.resolved` leaves one out while it holds this default, so a spec that does
not use them has the digest it had before they existed; the absent key means the default."""
MAX_SPEC_BYTES = 64 * 1024
"""The largest spec file read (a spec is a page of settings; its ``action.parameters.data`` too)."""
MAX_SPEC_DEPTH = 32
"""How deeply a spec file's lists and mappings may nest (a spec needs about 6)."""
MAX_YAML_ALIASES = 20
"""The most YAML alias uses (``*name``) in one spec file: enough to share a block, too few to
build an exponential "billion laughs" document."""
MAX_SPEC_VALUES = 10_000
"""The most values (mapping keys and items, list items, scalars) in spec data, counted after
alias expansion."""
MAX_SPEC_TEXT = 256 * 1024
"""The most characters of text (keys and strings) in spec data, counted after alias expansion."""


class GapPolicy(StrEnum):
    """What to do with a nominal local time that does not exist (a DST gap, "spring forward").

    ``SKIP`` records a ``SKIPPED_GAP`` fact (with ``gapAt``, the transition's instant) and runs
    nothing. ``SHIFT_FORWARD`` runs at the instant RFC 5545 §3.3.5 gives: the local time read with
    the offset in force before the gap, i.e. moved later by the gap's length (02:30 → 03:30 EDT).
    ``NEXT_VALID`` runs at the first instant after the gap, the transition itself (02:30 → 03:00
    EDT; what ISC cron, croniter and Dagster do); several gap times then share that instant, and
    the earliest nominal time keeps the slot (a natural 03:00 occurrence beats them all).
    """

    SKIP = "SKIP"
    SHIFT_FORWARD = "SHIFT_FORWARD"
    NEXT_VALID = "NEXT_VALID"


class FoldPolicy(StrEnum):
    """What to do with a nominal local time that occurs twice (a DST fold, "fall back").

    ``FIRST_ONLY`` runs at the earlier instant (fold ordinal 0, the pre-transition offset, as
    RFC 5545 and cron do); ``SECOND_ONLY`` at the later one (ordinal 1); ``BOTH`` runs twice,
    one occurrence per ordinal.
    """

    FIRST_ONLY = "FIRST_ONLY"
    SECOND_ONLY = "SECOND_ONLY"
    BOTH = "BOTH"


class MisfirePolicy(StrEnum):
    """What to do with occurrences found overdue by more than ``lateness`` (after downtime).

    ``SKIP`` records every missed occurrence as ``MISFIRE_EXPIRED``. ``CATCH_UP_BOUNDED`` runs the
    most recent ``maxCatchUp`` of them (oldest first) and expires the rest (seed: no seven summaries
    after a week-long outage). ``CATCH_UP_LATEST`` runs only the most recent missed occurrence
    (Quartz's "fire once now"; the same as ``CATCH_UP_BOUNDED`` with ``maxCatchUp: 1``).
    Occurrences overdue by at most ``lateness`` are on time and run under every policy.
    """

    SKIP = "SKIP"
    CATCH_UP_BOUNDED = "CATCH_UP_BOUNDED"
    CATCH_UP_LATEST = "CATCH_UP_LATEST"


class OverlapPolicy(StrEnum):
    """What happens when an occurrence comes due while the schedule's previous one still runs.

    The vocabulary is Temporal Schedules' ``ScheduleOverlapPolicy``. "Still runs" means the
    previous occurrence of the same schedule is ``DISPATCHING``, ``RUNNING`` or ``RETRY_WAIT``.

    ``ALLOW_ALL`` (the default) starts it anyway: occurrences are distinct (own IDs, own
    idempotency keys), so running them side by side never duplicates an effect; this is what
    every revision published before the field existed does. ``SKIP`` records the new one
    ``SKIPPED_OVERLAP`` (a terminal fact) and runs nothing. ``BUFFER_ONE`` keeps at most one
    waiting until the running one ends and skips (``SKIPPED_OVERLAP``) any further one;
    ``BUFFER_ALL`` keeps every one waiting, run in order. ``CANCEL_OTHER`` asks the running one to
    stop and then starts the new one — a dispatched occurrence is never treated as cancelled
    (DESIGN §4 invariant 5): only one still in ``RETRY_WAIT`` is cancelled outright.

    The time contract only records the choice; the orchestration enforces it.
    """

    SKIP = "SKIP"
    BUFFER_ONE = "BUFFER_ONE"
    BUFFER_ALL = "BUFFER_ALL"
    CANCEL_OTHER = "CANCEL_OTHER"
    ALLOW_ALL = "ALLOW_ALL"


class ActionSpec(BaseModel):
    """What an occurrence does: an action adapter registered in the worker, by name, with data.

    The parameters are plain JSON data; a spec never names code to import (DESIGN §7). Which names
    exist and what parameters they take is checked by the worker's adapter registry, not here.
    """

    model_config = ConfigDict(extra="forbid", frozen=True, defer_build=True)

    name: Annotated[str, Field(pattern=ACTION_NAME_PATTERN, description="Adapter name, e.g. http")]
    parameters: dict[str, JsonValue] = Field(
        default_factory=dict, description="Adapter parameters (JSON data)."
    )


MAX_STREAK = 1000
"""The largest ``failureStreak.notifyAfter`` and ``recoverAfter``."""


class FailureStreakPolicy(BaseModel):
    """``failureStreak``: notify after N consecutive failures; notify recovery after M successes.

    A streak is the run of occurrences ended ``FAILED``, ``UNKNOWN_EFFECT`` or ``MISFIRE_EXPIRED``
    since the schedule's latest ``SUCCEEDED`` one (``ledger.streaks``). When it reaches
    ``notifyAfter`` the ledger records a ``STREAK`` fact once, and ``action`` runs with a
    ``kind: streak`` payload; ``pause`` also disables the schedule through the gate in that
    transaction. ``recoverAfter`` consecutive successes after a notified streak record a
    ``RECOVERED`` fact once, and ``action`` runs with ``kind: recovery``. The action is checked
    and run exactly as the spec's own ``action`` (registry, egress policy, secret references).
    """

    model_config = ConfigDict(extra="forbid", frozen=True, defer_build=True)

    notify_after: StrictInt = Field(
        alias="notifyAfter",
        ge=1,
        le=MAX_STREAK,
        description="Consecutive FAILED/UNKNOWN_EFFECT/MISFIRE_EXPIRED occurrences that notify.",
    )
    recover_after: StrictInt = Field(
        default=1,
        alias="recoverAfter",
        ge=1,
        le=MAX_STREAK,
        description="Consecutive SUCCEEDED occurrences after a notified streak that notify.",
    )
    action: ActionSpec = Field(description="The registered action adapter that notifies.")
    pause: StrictBool = Field(
        default=False, description="Disable the schedule through the gate when a streak notifies."
    )


class ScheduleSpecV1(BaseModel):
    """One revision of a schedule's time contract (``schema: scheduleSpec.v1``).

    Instants (``cutoverAt``) are aware UTC ``datetime``s; ``start`` and ``end`` are naive (floating)
    local date-times in ``timeZone``. Construct it with :func:`parse_spec` or :func:`load_spec`,
    which turn every problem into a :class:`SpecError` naming the field and the value.
    """

    # Only the camelCase keys are accepted in data (validate_by_name stays off: `gap_policy`
    # in a spec file is an unknown key, not a synonym).
    model_config = ConfigDict(
        extra="forbid",
        frozen=True,
        json_schema_extra={
            "title": "scheduleSpec.v1",
            # One of rule and interval must be given (a string), or rdates alone; validation
            # also refuses rule and interval both.
            "anyOf": [
                {"required": ["rule"], "properties": {"rule": {"type": "string"}}},
                {"required": ["interval"], "properties": {"interval": {"type": "string"}}},
                {"required": ["rdates"], "properties": {"rdates": {"minItems": 1}}},
            ],
        },
        defer_build=True,  # built below, without pydantic plugins (see build_without_plugins)
    )

    schema_: Literal["scheduleSpec.v1"] = Field(
        alias="schema", description="Contract version; always scheduleSpec.v1."
    )
    schedule_id: Annotated[str, Field(pattern=SCHEDULE_ID_PATTERN)] = Field(
        alias="scheduleId",
        description="Slug: 1-63 of a-z, 0-9, '-', not starting or ending with '-'.",
    )
    revision: StrictInt = Field(
        ge=1, le=MAX_REVISION, description="Positive integer; each published revision increases."
    )
    time_zone: str = Field(
        alias="timeZone", min_length=1, description="IANA zone name, e.g. America/New_York."
    )
    tzdb_version: str = Field(
        alias="tzdbVersion",
        pattern=zones.RELEASE_PATTERN.pattern,
        description="IANA tz database release the zone is read from, e.g. 2026a.",
    )
    start: datetime = Field(
        default=DEFAULT_START,
        description="DTSTART: local date-time in timeZone, no offset. Default 2001-01-01T00:00:00.",
    )
    end: datetime | None = Field(
        default=None,
        description="Last nominal local date-time (inclusive), no offset. Default: no end.",
    )
    rule: str | None = Field(
        default=None,
        description=(
            "RFC 5545 RRULE value, e.g. FREQ=DAILY;BYHOUR=2;BYMINUTE=30 (RFC 7529 "
            "RSCALE=GREGORIAN;SKIP=… accepted). Give exactly one of rule and interval."
        ),
    )
    interval: timedelta | None = Field(
        default=None,
        description=(
            "Elapsed-time spacing instead of rule, an ISO 8601 duration (PT2H): occurrences at "
            "1970-01-01T00:00:00Z + phase + k × interval, through DST. Whole seconds, PT2S to "
            "P3660D; no years or months. Give exactly one of rule and interval."
        ),
    )
    phase: timedelta = Field(
        default=timedelta(0),
        description="Offset of an interval's grid from the Unix epoch, 0 <= phase < interval.",
    )
    jitter: timedelta = Field(
        default=timedelta(0),
        description=(
            "Largest dispatch delay, ISO 8601 duration (PT30S), whole milliseconds, at most P1D. "
            "Each occurrence waits a fixed delay in [0, jitter) derived from sha256(occurrenceId), "
            "capped at the gap to the next occurrence."
        ),
    )
    overlap_policy: OverlapPolicy = Field(
        default=OverlapPolicy.ALLOW_ALL,
        alias="overlapPolicy",
        description="SKIP, BUFFER_ONE, BUFFER_ALL, CANCEL_OTHER or ALLOW_ALL (default).",
    )
    gap_policy: GapPolicy = Field(
        default=GapPolicy.SHIFT_FORWARD,
        alias="gapPolicy",
        description="SKIP, SHIFT_FORWARD or NEXT_VALID.",
    )
    fold_policy: FoldPolicy = Field(
        default=FoldPolicy.FIRST_ONLY,
        alias="foldPolicy",
        description="FIRST_ONLY, SECOND_ONLY or BOTH.",
    )
    misfire_policy: MisfirePolicy = Field(
        default=MisfirePolicy.CATCH_UP_BOUNDED,
        alias="misfirePolicy",
        description="SKIP, CATCH_UP_BOUNDED or CATCH_UP_LATEST.",
    )
    max_catch_up: StrictInt = Field(
        default=1,
        ge=0,
        le=MAX_CATCH_UP,
        alias="maxCatchUp",
        description="Most missed occurrences run after downtime (CATCH_UP_BOUNDED).",
    )
    catch_up_spacing: timedelta | None = Field(
        default=None,
        alias="catchUpSpacing",
        description=(
            "ISO 8601 duration (PT10S): the occurrences one release hands out together (after "
            "downtime, an enable or a backfill) get start slots this far apart, oldest first. "
            "Whole seconds, PT1S to P1D. Optional (none: they start at once)."
        ),
    )
    lateness: timedelta = Field(
        default=DEFAULT_LATENESS,
        description="ISO 8601 duration an occurrence may start late and still be on time.",
    )
    deadline: timedelta | None = Field(
        default=None,
        description=(
            "ISO 8601 duration (PT30M) from an occurrence's resolved instant by which it must "
            "have SUCCEEDED; a miss is recorded once in the ledger. Whole seconds, longer than "
            "PT0S and at most the smallest spacing between two occurrences. Optional."
        ),
    )
    failure_streak: FailureStreakPolicy | None = Field(
        default=None,
        alias="failureStreak",
        description="{notifyAfter, recoverAfter, action, pause}: notify on failure streaks.",
    )
    cutover_at: datetime = Field(
        alias="cutoverAt",
        description="UTC instant from which this revision owns occurrences (half-open).",
    )
    action: ActionSpec | None = Field(
        default=None, description="The action adapter and its parameters; needed to apply."
    )
    # The calendar fields (timecontract.calendar_spec); the start and end they are checked
    # against are declared above them.
    rdates: list[datetime] = Field(
        default_factory=list,
        max_length=MAX_DATES,
        description="RFC 5545 RDATE: extra local date-times (no offset) within start..end.",
    )
    exdates: list[datetime | date] = Field(
        default_factory=list,
        max_length=MAX_DATES,
        description="RFC 5545 EXDATE: local date-times, or dates excluding a whole local day.",
    )
    calendar: CalendarSpec | None = Field(
        default=None, description="Holiday calendar {name, release, weekend} (pinned data)."
    )
    holiday_policy: HolidayPolicy | None = Field(
        default=None,
        alias="holidayPolicy",
        description="SKIP (default with a calendar), FOLLOWING, PRECEDING or MODIFIED_FOLLOWING.",
    )
    business_days_only: StrictBool = Field(
        default=False,
        alias="businessDaysOnly",
        description="Keep only the calendar's business days in the rule's set, before BYSETPOS.",
    )

    @field_validator("rule")
    @classmethod
    def _check_rule(cls, value: str | None, info: ValidationInfo) -> str | None:
        if value is None:
            return None
        rule = parse_rscale_rule(value)  # raises RuleError (a ValueError) naming the part
        if "start" in info.data:  # else start itself is invalid and reported
            rule.check_satisfiable(info.data["start"])
        return value

    @field_validator(
        "interval", "phase", "jitter", "deadline", "catch_up_spacing", "lateness", mode="before"
    )
    @classmethod
    def _fixed_length(cls, value: Any) -> Any:
        if isinstance(value, int | float):
            raise ValueError("must be an ISO 8601 duration (e.g. PT30S), not a bare number")
        if isinstance(value, str) and re.match(r"^-?P[^T]*[YM]", value.strip().upper()):
            raise ValueError(
                "years and months have no fixed length; give days (P30D) or use a rule"
            )
        return value

    @field_validator("interval")
    @classmethod
    def _interval_range(cls, value: timedelta | None) -> timedelta | None:
        if value is None:
            return None
        if value.microseconds:
            raise ValueError("must be whole seconds")
        if not timedelta(seconds=1) <= value <= MAX_INTERVAL:
            raise ValueError("must be a duration between PT1S and P3660D")
        return value

    @field_validator("phase")
    @classmethod
    def _phase_range(cls, value: timedelta, info: ValidationInfo) -> timedelta:
        if value.microseconds:
            raise ValueError("must be whole seconds")
        interval = info.data.get("interval")
        if value and interval is None and "interval" in info.data:
            raise ValueError("phase needs interval (a rule's phase is its start)")
        if value < timedelta(0) or (interval is not None and value >= interval):
            raise ValueError("must be at least PT0S and shorter than interval")
        return value

    @field_validator("jitter")
    @classmethod
    def _jitter_range(cls, value: timedelta) -> timedelta:
        if value.microseconds % 1000:
            raise ValueError("must be whole milliseconds")
        if not timedelta(0) <= value <= MAX_JITTER:
            raise ValueError("must be a duration between PT0S and P1D")
        return value

    @model_validator(mode="after")
    def _rule_or_interval(self) -> ScheduleSpecV1:
        # parse_spec reports these from the raw data together with every other problem; this
        # is the backstop for direct model construction.
        for problem in rule_or_interval_problems(
            {"rule": self.rule, "interval": self.interval, "rdates": self.rdates},
            present=lambda v: v is not None,
        ):
            raise _RuleOrInterval(problem)
        return self

    @field_validator("start", "end", mode="before")
    @classmethod
    def _local_date_time(cls, value: Any) -> Any:
        return _parse_local(value)

    @field_validator("rdates", mode="before")
    @classmethod
    def _local_date_times(cls, value: Any) -> Any:
        return [_parse_local(item) for item in value] if isinstance(value, list) else value

    @field_validator("exdates", mode="before")
    @classmethod
    def _dates_or_local_date_times(cls, value: Any) -> Any:
        return [parse_exdate(item) for item in value] if isinstance(value, list) else value

    @model_validator(mode="after")
    def _calendar_fields(self) -> ScheduleSpecV1:
        for problem in calendar_problems(dict(self)):
            raise _FieldProblem(problem)
        return self

    @field_validator("start", "end")
    @classmethod
    def _whole_seconds(cls, value: datetime | None, info: ValidationInfo) -> datetime | None:
        if value is None:
            return value
        if value.microsecond:
            raise ValueError("fractional seconds are not supported")
        if not MIN_YEAR <= value.year <= MAX_YEAR:
            raise ValueError(f"the year must be within {MIN_YEAR}..{MAX_YEAR}")
        start = info.data.get("start")
        if info.field_name == "end" and start is not None and value < start:
            raise ValueError(f"is before start {start.isoformat()}")
        return value

    @field_validator("cutover_at", mode="before")
    @classmethod
    def _instant(cls, value: Any) -> Any:
        return _parse_instant(value)

    @field_validator("deadline")
    @classmethod
    def _deadline_range(cls, value: timedelta | None) -> timedelta | None:
        if value is None:
            return None
        if value.microseconds:
            raise ValueError("must be whole seconds")
        if value <= timedelta(0):
            raise ValueError("must be longer than PT0S")
        return value

    @field_validator("catch_up_spacing")
    @classmethod
    def _catch_up_spacing_range(cls, value: timedelta | None) -> timedelta | None:
        if value is None:
            return None
        if value.microseconds:
            raise ValueError("must be whole seconds")
        if not timedelta(seconds=1) <= value <= MAX_CATCH_UP_SPACING:
            raise ValueError("must be a duration between PT1S and P1D")
        return value

    @field_validator("lateness")
    @classmethod
    def _lateness_range(cls, value: timedelta) -> timedelta:
        if value < timedelta(0) or value > MAX_LATENESS:
            raise ValueError("must be a duration between PT0S and P366D")
        return value

    @property
    def parsed_rule(self) -> Rule:
        """The parsed RRULE (RFC 5545 §3.3.10) without its RFC 7529 parts.

        Raises:
            ValueError: the spec has no rule (an ``interval``, or ``rdates`` only).

        """
        return self.rscale_rule.rule

    @property
    def rscale_rule(self) -> RscaleRule:
        """The parsed RRULE with its RFC 7529 ``RSCALE``/``SKIP`` (see ``timecontract.rscale``).

        Raises:
            ValueError: the spec has no rule (an ``interval``, or ``rdates`` only).

        """
        if self.rule is None:
            raise ValueError(f"{self.schedule_id} r{self.revision} has no rule")
        return parse_rscale_rule(self.rule)

    @property
    def nominal_period(self) -> timedelta:
        """One period: the ``interval``, or the rule's FREQ × INTERVAL (``expand.nominal_period``).

        Used to size look-ahead windows, never for instants.
        """
        if self.interval is not None:
            return self.interval
        if self.rule is None:
            return timedelta(days=1)  # dates only (rdates)
        return nominal_period(self.parsed_rule)

    @property
    def per_day_bound(self) -> int:
        """The most occurrences one day can hold (``timecontract.density``; an upper bound).

        Used to size windows by occurrences (horizon, preview, stream pieces), never for instants.
        """
        if self.interval is not None:
            return interval_per_day(self.interval)
        dates = 2 * _most_per_day(self.rdates)  # a date in a fold may run twice (BOTH)
        return dates if self.rule is None else per_day_bound(self.parsed_rule) + dates

    def resolved(self) -> dict[str, Any]:
        """Return the stored form: JSON data with camelCase keys and every default written out.

        Instants are ISO 8601 UTC ending in ``Z``; local date-times have no offset; durations
        (``lateness``, ``interval``, ``phase``, ``jitter``) are ISO 8601 durations. The
        :data:`ADDITIVE_FIELDS` are left out while they hold their default.
        """
        data: dict[str, Any] = self.model_dump(mode="json", by_alias=True)
        data["cutoverAt"] = format_instant(self.cutover_at)
        for key, default in ADDITIVE_FIELDS.items():
            if data[key] == default:
                del data[key]
        return data

    def actions(self) -> dict[str, ActionSpec]:
        """The spec's actions by field (``action``, ``failureStreak.action``), those given."""
        found = {"action": self.action}
        if self.failure_streak is not None:
            found["failureStreak.action"] = self.failure_streak.action
        return {field: action for field, action in found.items() if action is not None}

    def canonical_json(self) -> str:
        """The resolved form as canonical JSON (sorted keys, no spaces): what is stored."""
        return json.dumps(self.resolved(), sort_keys=True, separators=(",", ":"))

    def digest(self) -> str:
        """``sha256:<hex>`` of :meth:`canonical_json`; equal specs have equal digests."""
        return "sha256:" + hashlib.sha256(self.canonical_json().encode()).hexdigest()


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


def _unreadable_reason(exc: OSError) -> str:
    if isinstance(exc, FileNotFoundError):
        return "no such file"
    if isinstance(exc, IsADirectoryError):
        return "is a directory, not a spec file"
    if isinstance(exc, PermissionError):
        return "permission denied"
    return (exc.strerror or type(exc).__name__).lower()


class _FieldProblem(ValueError):
    """A problem between fields found after validation; carries the :class:`SpecError`."""

    def __init__(self, problem: SpecError) -> None:
        super().__init__(problem.problem)
        self.problem = problem


class _RuleOrInterval(ValueError):
    """``rule``/``interval`` are both given or both missing; carries the :class:`SpecError`."""

    def __init__(self, problem: SpecError) -> None:
        super().__init__(problem.problem)
        self.problem = problem


def rule_or_interval_problems(
    data: Mapping[str, Any], present: Callable[[Any], bool] | None = None
) -> list[SpecError]:
    """Zero or one problem: spec data gives both ``rule`` and ``interval``, or neither.

    Args:
        data: spec data (raw, or the model's fields).
        present: whether a value counts as given (default: the key is present and not null).

    """
    given = present or (lambda value: value is not None)
    has_rule, has_interval = given(data.get("rule")), given(data.get("interval"))
    if has_rule and has_interval:
        return [
            SpecError(
                "interval",
                data.get("interval"),
                "rule and interval are mutually exclusive: give one of them (rule for calendar "
                "times, interval for elapsed-time spacing)",
            )
        ]
    if not has_rule and not has_interval and not data.get("rdates"):
        return [SpecError("rule", None, "is required (or give interval or rdates instead)")]
    return []


def format_instant(instant_utc: datetime) -> str:
    """Format an aware instant as ISO 8601 UTC with a ``Z`` suffix (``2026-11-01T06:00:00Z``)."""
    text = instant_utc.astimezone(UTC).isoformat()
    return text.removesuffix("+00:00") + "Z"


def format_duration(duration: timedelta) -> str:
    """Format a duration as ISO 8601 (``PT5S``, ``PT1H30M``, ``P1DT2H``, ``PT0.5S``, ``-PT5S``).

    Days are whole days (``P1D`` is 24 hours here, as in the spec's ``lateness``); no months or
    years, which have no fixed length.
    """
    sign = "-" if duration < timedelta(0) else ""
    duration = abs(duration)
    days, seconds, micros = duration.days, duration.seconds, duration.microseconds
    hours, rest = divmod(seconds, 3600)
    minutes, secs = divmod(rest, 60)
    text = f"{sign}P" + (f"{days}D" if days else "")
    clock = (f"{hours}H" if hours else "") + (f"{minutes}M" if minutes else "")
    if secs or micros:
        clock += f"{secs}.{micros:06d}".rstrip("0") + "S" if micros else f"{secs}S"
    if clock:
        text += "T" + clock
    return text if text not in {"P", "-P"} else "PT0S"


def _parse_local(value: Any) -> Any:
    if value is None or isinstance(value, datetime):
        if isinstance(value, datetime) and value.tzinfo is not None:
            raise ValueError("must be a local date-time without a UTC offset or zone")
        return value
    if not isinstance(value, str):
        raise ValueError("must be a local date-time like 2026-11-01T02:30:00")
    try:
        parsed = datetime.fromisoformat(value)
    except ValueError as exc:
        raise ValueError("must be a local date-time like 2026-11-01T02:30:00") from exc
    if "T" not in value.upper():
        raise ValueError("must be a date-time, not a date (e.g. 2026-11-01T00:00:00)")
    if parsed.tzinfo is not None:
        raise ValueError("must be a local date-time without a UTC offset or zone")
    return parsed


def _parse_instant(value: Any) -> Any:
    if isinstance(value, str):
        try:
            value = datetime.fromisoformat(value)
        except ValueError as exc:
            raise ValueError("must be an ISO 8601 instant like 2026-11-01T06:00:00Z") from exc
    if not isinstance(value, datetime):
        raise ValueError("must be an ISO 8601 instant like 2026-11-01T06:00:00Z")
    if value.tzinfo is None or value.utcoffset() is None:
        raise ValueError("must carry a UTC offset (end it in Z), e.g. 2026-11-01T06:00:00Z")
    return value.astimezone(UTC)


class _NoTimestampLoader(yaml.SafeLoader):
    """YAML safe loader that keeps timestamps as text and allows few aliases.

    Timestamps stay text so the spec's own parsers see them. Each alias use (``*name``) is
    counted; more than :data:`MAX_YAML_ALIASES` stops the load at that alias.
    """

    def __init__(self, stream: str) -> None:
        super().__init__(stream)
        self.alias_uses = 0
        self.paths: dict[int, list[str]] = {}
        """Each node's path of keys from the document's top (by node id): a duplicate key's
        value is shown only as :func:`~timecontract.secrets.redact_at` allows at its path."""

    def compose_node(self, parent: Any, index: Any) -> Any:
        self.depth = getattr(self, "depth", 0) + 1
        try:
            if self.depth > MAX_SPEC_DEPTH:
                raise _TooDeep(self.peek_event().start_mark.line + 1)  # type: ignore[no-untyped-call]
            return self._compose_counted(parent, index)
        finally:
            self.depth -= 1

    def _compose_counted(self, parent: Any, index: Any) -> Any:
        if self.check_event(yaml.AliasEvent):
            self.alias_uses += 1
            if self.alias_uses > MAX_YAML_ALIASES:
                event = self.peek_event()  # type: ignore[no-untyped-call]
                raise _TooManyAliases(str(event.anchor), event.start_mark.line + 1)
        return super().compose_node(parent, index)

    def construct_object(self, node: Any, deep: bool = False) -> Any:
        try:
            return super().construct_object(node, deep)
        except yaml.YAMLError:
            raise
        except (ValueError, KeyError, TypeError, AttributeError, OverflowError):
            # A tagged scalar that is no such value (``!!int abc``, ``!!bool x``): the library's
            # own error quotes the value, or is a bare KeyError; say where, never what.
            raise yaml.constructor.ConstructorError(
                None, None, f"the value cannot be read as {node.tag}", node.start_mark
            ) from None

    def construct_mapping(self, node: Any, deep: bool = False) -> Any:
        # A key given twice is a mistake the reader cannot see (YAML keeps the last one silently).
        seen: set[Any] = set()
        path = self.paths.get(id(node), [])
        for key_node, value_node in node.value:
            key = self.construct_object(key_node, deep=True)
            if not isinstance(key, str):
                raise _NonStringKey(type(key).__name__, key_node.start_mark.line + 1)
            self.paths[id(value_node)] = [*path, key]
            if key in seen:
                value = self.construct_object(value_node, deep=True)
                shown = redact_at([*path, str(key)], value)
                raise _DuplicateKey(str(key), shown, key_node.start_mark.line + 1)
            seen.add(key)
        return super().construct_mapping(node, deep)

    def construct_sequence(self, node: Any, deep: bool = False) -> Any:
        path = self.paths.get(id(node), [])
        for index, item in enumerate(node.value):
            self.paths[id(item)] = [*path, str(index)]
        return super().construct_sequence(node, deep)


def _not_json(loader: yaml.SafeLoader, node: yaml.Node) -> Any:
    # A spec is JSON data: bytes, sets, ordered pairs and timestamps have no JSON form, and an
    # error about such a value would repeat it (a secret as !!binary).
    tag = node.tag.rpartition(":")[2]
    raise yaml.constructor.ConstructorError(
        None,
        None,
        f"a !!{tag} value is not JSON data (a spec holds JSON values only)",
        node.start_mark,
    )


for _tag in ("binary", "set", "omap", "pairs", "timestamp"):
    _NoTimestampLoader.add_constructor(f"tag:yaml.org,2002:{_tag}", _not_json)

_NoTimestampLoader.yaml_implicit_resolvers = {
    first: [(tag, rx) for tag, rx in resolvers if tag != "tag:yaml.org,2002:timestamp"]
    for first, resolvers in yaml.SafeLoader.yaml_implicit_resolvers.items()
}


class _DuplicateKey(Exception):
    def __init__(self, key: str, value: Any, line: int | None) -> None:
        super().__init__(key, value, line)
        self.key = key
        self.value = value
        self.line = line


class _Duplicated(dict[str, Any]):
    """A JSON object in which a key was given twice: the first such key and its later value."""

    duplicate: tuple[str, Any]


def _refuse_duplicate_keys(pairs: list[tuple[str, Any]]) -> dict[str, Any]:
    """``json.loads`` object hook: mark an object whose key is given twice (JSON keeps the last).

    Objects are built innermost first, so the path above is not known yet: the object is marked
    here and :func:`_first_duplicate` finds it, with its path, once the document is read.
    """
    data: dict[str, Any] = {}
    for key, value in pairs:
        if key in data and not isinstance(data, _Duplicated):
            data = _Duplicated(data)
            data.duplicate = (key, value)
        data[key] = value
    return data


def _first_duplicate(document: Any) -> None:
    """Raise :class:`_DuplicateKey` for the first marked object, its value redacted at its path."""
    stack: list[tuple[list[str], Any]] = [([], document)]
    while stack:
        path, value = stack.pop()
        if isinstance(value, _Duplicated):
            key, given = value.duplicate
            raise _DuplicateKey(key, redact_at([*path, key], given), None)
        if isinstance(value, dict):
            stack.extend(([*path, str(k)], v) for k, v in value.items())
        elif isinstance(value, list):
            stack.extend(([*path, str(i)], v) for i, v in enumerate(value))


class _NonStringKey(Exception):
    def __init__(self, kind: str, line: int) -> None:
        super().__init__(kind, line)
        self.kind = kind
        self.line = line


class _TooDeep(Exception):
    def __init__(self, line: int | None) -> None:
        super().__init__(line)
        self.line = line


def _depth(data: Any) -> int:
    """How deeply ``data``'s lists and mappings nest (a scalar: 0), without recursion."""
    deepest, pending = 0, [(data, 1)]
    while pending:
        value, level = pending.pop()
        children = value.values() if isinstance(value, dict) else value
        if isinstance(value, dict | list):
            deepest = max(deepest, level)
            pending.extend((child, level + 1) for child in children)
    return deepest


class _TooManyAliases(Exception):
    def __init__(self, anchor: str, line: int) -> None:
        super().__init__(anchor, line)
        self.anchor = anchor
        self.line = line


def read_spec_data(path: Path) -> Any:
    """Read a spec file (``.json``, else YAML) into plain data.

    Raises:
        SpecFileUnreadable: the file is missing, a directory or not readable (one line).
        InvalidSpec: the file is larger than :data:`MAX_SPEC_BYTES`, not valid YAML/JSON,
            nested deeper than :data:`MAX_SPEC_DEPTH`, has a YAML key that is not a string, or
            uses more than :data:`MAX_YAML_ALIASES` YAML aliases.

    """
    try:
        with path.open("rb") as file:
            raw = file.read(MAX_SPEC_BYTES + 1)
    except OSError as exc:
        raise SpecFileUnreadable(path, _unreadable_reason(exc)) from exc
    try:
        if len(raw) > MAX_SPEC_BYTES:
            problem = f"larger than {MAX_SPEC_BYTES} bytes, the most a spec file may hold"
            raise InvalidSpec([SpecError("file", str(path), problem)], str(path))
        text = raw.decode("utf-8")
        if path.suffix.lower() == ".json":
            try:
                document = json.loads(text, object_pairs_hook=_refuse_duplicate_keys)
            except RecursionError:
                raise _TooDeep(None) from None
            if _depth(document) > MAX_SPEC_DEPTH:
                raise _TooDeep(None)
            _first_duplicate(document)
            return document
        return yaml.load(text, Loader=_NoTimestampLoader)
    except InvalidSpec:
        raise
    except _TooDeep as exc:
        where = f" (line {exc.line})" if exc.line else ""
        problem = f"lists and mappings nested more than {MAX_SPEC_DEPTH} deep{where}"
        raise InvalidSpec([SpecError("file", str(path), problem)], str(path)) from None
    except _NonStringKey as exc:
        problem = f"a mapping key on line {exc.line} is not a string ({exc.kind}); keys are text"
        raise InvalidSpec([SpecError("yaml key", f"line {exc.line}", problem)], str(path)) from None
    except _DuplicateKey as exc:
        # The value is shown only as the secret rule allows at its path; so is the key.
        where = f" (again on line {exc.line})" if exc.line else ""
        problem = f"given more than once{where}; each key may appear once"
        key = redact_at([], exc.key)
        raise InvalidSpec([SpecError(key, exc.value, problem)], str(path)) from None
    except yaml.MarkedYAMLError as exc:
        mark = exc.problem_mark or exc.context_mark
        line = f"line {mark.line + 1}, column {mark.column + 1}: " if mark else ""
        said = quiet_parser_message(exc.problem or exc.context or "cannot be parsed")
        problem = f"not valid YAML: {line}{said}"
        raise InvalidSpec([SpecError("file", str(path), problem)], str(path)) from None
    except _TooManyAliases as exc:
        problem = (
            f"more than {MAX_YAML_ALIASES} YAML alias uses (this one on line {exc.line}); "
            "write the values out"
        )
        raise InvalidSpec([SpecError("yaml alias", f"*{exc.anchor}", problem)], str(path)) from None
    except (OSError, UnicodeDecodeError, ValueError, yaml.YAMLError) as exc:
        said = quiet_parser_message(str(exc).splitlines()[0])
        raise InvalidSpec([SpecError("file", str(path), said)], str(path)) from None


def size_problems(data: Any) -> list[SpecError]:
    """Zero or one problem: ``data`` exceeds :data:`MAX_SPEC_VALUES` or :data:`MAX_SPEC_TEXT`.

    Counted as expanded (a value shared through YAML aliases counts at each use); the walk stops
    at the limit, so a huge document costs no more than the limit. The problem names the field
    where the budget ran out.
    """
    budget = {"values": MAX_SPEC_VALUES, "text": MAX_SPEC_TEXT}
    stack: list[tuple[str, Any]] = [("spec", data)]
    while stack:
        where, value = stack.pop()
        budget["values"] -= 1
        if isinstance(value, str):
            budget["text"] -= len(value)
        elif isinstance(value, Mapping):
            for key, item in value.items():
                budget["text"] -= len(str(key))
                stack.append((f"{where}.{key}" if where != "spec" else str(key), item))
        elif isinstance(value, list):
            stack.extend((f"{where}.{i}", item) for i, item in enumerate(value))
        if budget["values"] < 0 or budget["text"] < 0:
            limit = (
                f"{MAX_SPEC_VALUES} values"
                if budget["values"] < 0
                else f"{MAX_SPEC_TEXT} characters of text"
            )
            return [SpecError(where, "<too large to show>", f"the spec holds more than {limit}")]
    return []


def parse_spec(data: Any, source: str | None = None) -> ScheduleSpecV1:
    """Validate spec data (already parsed from YAML/JSON) without touching the tz database.

    Raises:
        InvalidSpec: every problem found, each naming its camelCase field and value; with the
            data's ``scheduleId`` and ``revision`` when each is valid by itself.

    """
    if not isinstance(data, Mapping):
        raise InvalidSpec([SpecError("spec", data, "must be a mapping of fields")], source)
    exclusive = rule_or_interval_problems(data)
    try:
        spec = ScheduleSpecV1.model_validate(dict(data))
    except ValidationError as exc:
        schedule_id, revision = _valid_identity(exc, data)
        # Not chained: pydantic's error holds every input value, a literal secret included.
        raise InvalidSpec(
            _problems(exc, data) + exclusive, source, schedule_id=schedule_id, revision=revision
        ) from None
    assert not exclusive  # the model's own validator refuses the same
    return spec


def _valid_identity(exc: ValidationError, data: Mapping[str, Any]) -> tuple[str | None, int | None]:
    """``scheduleId`` and ``revision`` as given, each only if the model found nothing wrong with it.

    The model's own check of the two fields decides (no second copy of their rules): a field is
    valid when it is given and no error's location starts with it. Both are strict (a string
    matching :data:`SCHEDULE_ID_PATTERN`; an int, not a bool, in 1..:data:`MAX_REVISION`), so the
    given value is the validated one.
    """
    failed = {error["loc"][0] for error in exc.errors(include_url=False) if error["loc"]}
    schedule_id, revision = data.get("scheduleId"), data.get("revision")
    return (
        schedule_id if isinstance(schedule_id, str) and "scheduleId" not in failed else None,
        revision if type(revision) is int and "revision" not in failed else None,
    )


def zone_problems(data: Mapping[str, Any], tzdb_store: Path | None) -> list[SpecError]:
    """Check the data's ``timeZone`` in its ``tzdbVersion``.

    Fields that are not even well-formed strings are left to the model's own problems.

    Returns:
        Zero or one problem: the release is not available, or it has no such zone.
    """
    zone, release = data.get("timeZone"), data.get("tzdbVersion")
    if not isinstance(release, str) or not zones.RELEASE_PATTERN.fullmatch(release):
        return []
    try:
        zones.zone_names(release, tzdb_store)
        if isinstance(zone, str) and zone:
            zones.load(zone, release, tzdb_store)
    except SpecError as exc:
        return [exc]
    return []


def load_spec(source: Path | Mapping[str, Any], tzdb_store: Path | None = None) -> ScheduleSpecV1:
    """Load a spec from a file or data, validate every field and check its zone and release.

    Args:
        source: a ``.yaml``/``.yml``/``.json`` path, or already-parsed data.
        tzdb_store: the local tz release store (see ``timecontract.zones``); ``None`` means only
            the installed ``tzdata`` release.

    Raises:
        InvalidSpec: every problem at once, each a :class:`SpecError` naming the field and the
            value (the zone, release and calendar data problems together with the others); a
            literal secret in ``action.parameters`` (see ``timecontract.secrets``), data larger
            than :data:`MAX_SPEC_VALUES` / :data:`MAX_SPEC_TEXT`, and a schedule denser than
            ``density.MAX_PER_MINUTE`` (:func:`density_problems`), are problems too. Its
            ``schedule_id`` and ``revision`` are those of the data when each is valid by itself
            (``None`` for data too large to check).

    """
    name = str(source) if isinstance(source, Path) else None
    data = read_spec_data(source) if isinstance(source, Path) else source
    too_large = size_problems(data)
    if too_large:
        raise InvalidSpec(too_large, name)
    problems = (
        zone_problems(data, tzdb_store) + calendar_data_problems(data, tzdb_store)
        if isinstance(data, Mapping)
        else []
    )
    problems += secret_problems(data)
    try:
        spec = parse_spec(data, name)
    except InvalidSpec as exc:
        raise InvalidSpec(
            exc.problems + problems, name, schedule_id=exc.schedule_id, revision=exc.revision
        ) from exc
    problems += density_problems(spec) or deadline_problems(spec)
    problems += calendar_coverage_problems(spec.calendar, spec.cutover_at, tzdb_store)
    if problems:
        raise InvalidSpec(problems, name, schedule_id=spec.schedule_id, revision=spec.revision)
    return spec


def density_problems(spec: ScheduleSpecV1) -> list[SpecError]:
    """Zero or one problem: the spec is denser than Almanac supports (``timecontract.density``).

    Checked where a spec enters (:func:`load_spec`: ``validate``, ``apply``, the publish
    activity), in constant time from the rule's parts; not by :func:`parse_spec`, which also reads
    revisions already published, so one published before the bound still loads (and its work is
    bounded in occurrences all the same).
    """
    if spec.interval is not None:
        if spec.interval >= MIN_INTERVAL:
            return []
        problem = (
            f"is shorter than PT{MIN_INTERVAL.seconds}S, the densest supported schedule "
            f"({MAX_PER_MINUTE} occurrences a minute)"
        )
        return [SpecError("interval", format_duration(spec.interval), problem)]
    if spec.rule is not None:
        too_dense = density_problem(spec.parsed_rule)
        if too_dense is not None:
            return [SpecError("rule", spec.rule, too_dense)]
    crowded = _most_within(spec.rdates, timedelta(minutes=1))
    if crowded > MAX_PER_MINUTE:
        problem = (
            f"lists {crowded} date-times within one minute; the densest supported schedule has "
            f"{MAX_PER_MINUTE} occurrences a minute"
        )
        return [SpecError("rdates", f"{len(spec.rdates)} date-times", problem)]
    return []


def deadline_problems(spec: ScheduleSpecV1) -> list[SpecError]:
    """Zero or one problem: ``deadline`` is longer than the smallest spacing of two occurrences.

    Checked where a spec enters (:func:`load_spec`), after the density bound (so the sample it
    reads is bounded, ``timecontract.spacing``); a deadline longer than the spacing would make two
    occurrences' deadlines overlap.
    """
    if spec.deadline is None:
        return []
    spacing = smallest_spacing(
        interval=spec.interval,
        rule=spec.parsed_rule if spec.rule is not None else None,
        start=spec.start,
        rdates=spec.rdates,
    )
    if spacing is None or spec.deadline <= spacing:
        return []
    problem = (
        f"is longer than {format_duration(spacing)}, the smallest spacing between two "
        "occurrences of the schedule"
    )
    return [SpecError("deadline", format_duration(spec.deadline), problem)]


def _most_per_day(moments: list[datetime]) -> int:
    """The most of ``moments`` on one calendar date (0 for none)."""
    return max(Counter(m.date() for m in moments).values(), default=0)


def _most_within(moments: list[datetime], span: timedelta) -> int:
    """The most of ``moments`` inside any half-open window ``[t, t + span)`` (0 for none)."""
    ordered = sorted(moments)
    most, low = 0, 0
    for high, moment in enumerate(ordered):
        while ordered[low] + span <= moment:
            low += 1
        most = max(most, high - low + 1)
    return most


def _problems(exc: ValidationError, data: Mapping[str, Any]) -> list[SpecError]:
    problems: list[SpecError] = []
    for error in exc.errors(include_url=False):
        loc = [str(part) for part in error["loc"]]
        field = ".".join(loc) or "spec"
        value = error.get("input")
        message = re.sub(r"^(Value|Assertion) error, ", "", error["msg"])
        if error["type"] == "missing":
            value, message = None, "is required"
        elif error["type"] == "extra_forbidden":
            message = "unknown field (scheduleSpec.v1 has no such key)" + _did_you_mean(loc)
        elif error["type"] == "string_pattern_mismatch":
            pattern = error.get("ctx", {}).get("pattern")
            if isinstance(pattern, str):
                message = PATTERN_WORDING.get(pattern, message)
        elif isinstance(error.get("ctx", {}).get("error"), RuleError):
            message = f"invalid RRULE: {message}"
        elif isinstance(error.get("ctx", {}).get("error"), _RuleOrInterval):
            continue  # reported from the raw data by parse_spec
        elif isinstance(error.get("ctx", {}).get("error"), _FieldProblem):
            problems.append(error["ctx"]["error"].problem)
            continue
        if not loc and isinstance(value, Mapping):
            value = None
        problems.append(SpecError(field, redact_at(loc, value), quiet_credentials(message)))
    return problems


def _did_you_mean(loc: list[str]) -> str:
    """``; did you mean `timeZone`?`` for an unknown key close to one its object takes, else ``""``.

    The closest key by ``difflib`` (ratio at least 0.6, case folded, so ``timezone`` and
    ``time_zone`` both find ``timeZone``) among the keys of the object holding it: the spec's
    or its ``action``'s.
    """
    models: dict[tuple[str, ...], type[BaseModel]] = {
        (): ScheduleSpecV1,
        ("action",): ActionSpec,
        ("failureStreak",): FailureStreakPolicy,
        ("failureStreak", "action"): ActionSpec,
    }
    model = models.get(tuple(loc[:-1]))
    if model is None or not loc:
        return ""
    keys = {(f.alias or n).casefold(): f.alias or n for n, f in model.model_fields.items()}
    close = difflib.get_close_matches(loc[-1].casefold().replace("_", ""), keys, n=1)
    return f"; did you mean `{keys[close[0]]}`?" if close else ""


def build_without_plugins(*models: type[BaseModel]) -> None:
    """Build ``models``' validators now, in order, with pydantic's plugins switched off.

    Each model must be declared with ``defer_build=True``, or it is already built (with plugins)
    when its class is created. A model built with plugins on makes pydantic scan every installed
    distribution's entry points for plugins (observability hooks such as logfire's) — once per
    process, and on the command line that scan costs about half of ``python -c "import
    pydantic"`` again (``bench/cli_startup.py``). Pure validation (the time contract, an action's
    parameters) needs no hook; Typer builds its parameter adapters the same way. The variable is
    restored afterwards, so other models in the process still see the plugins.
    """
    previous = os.environ.get("PYDANTIC_DISABLE_PLUGINS")
    os.environ["PYDANTIC_DISABLE_PLUGINS"] = "__all__"
    try:
        for model in models:
            model.model_rebuild(force=True)
    finally:
        if previous is None:
            del os.environ["PYDANTIC_DISABLE_PLUGINS"]
        else:
            os.environ["PYDANTIC_DISABLE_PLUGINS"] = previous


build_without_plugins(ActionSpec, CalendarSpec, FailureStreakPolicy, ScheduleSpecV1)
