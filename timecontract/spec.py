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

The model's neighbours: the policy vocabularies (``timecontract.policies``), the nested models
(``action_spec``, ``calendar_spec``), each field's own rules (``spec_fields``), reading a spec
file (``spec_file``), pydantic's errors as problems (``spec_problems``) and the checks
:func:`load_spec` adds (``spec_checks``).
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Mapping
from datetime import date, datetime, timedelta
from pathlib import Path
from typing import Annotated, Any, Literal

from pydantic import (
    BaseModel,
    ConfigDict,
    Field,
    StrictBool,
    StrictInt,
    ValidationError,
    ValidationInfo,
    field_validator,
    model_validator,
)

from timecontract import zones
from timecontract.action_spec import ActionSpec, FailureStreakPolicy, build_without_plugins
from timecontract.calendar_spec import (
    CALENDAR_ADDITIVE_FIELDS,
    MAX_DATES,
    CalendarSpec,
    calendar_coverage_problems,
    calendar_data_problems,
    calendar_problems,
)
from timecontract.calendars import HolidayPolicy
from timecontract.density import interval_per_day, most_per_day, per_day_bound
from timecontract.errors import InvalidSpec, SpecError
from timecontract.expand import nominal_period
from timecontract.ids import SCHEDULE_ID_PATTERN
from timecontract.iso8601 import format_instant
from timecontract.policies import FoldPolicy, GapPolicy, MisfirePolicy, OverlapPolicy
from timecontract.rrule import Rule
from timecontract.rscale import RscaleRule, parse_rscale_rule
from timecontract.secrets import secret_problems
from timecontract.spec_checks import deadline_problems, density_problems, zone_problems
from timecontract.spec_fields import (
    DATE_FIELDS,
    DURATION_FIELDS,
    duration_range,
    fixed_length,
    local_date_time_range,
    read_date_text,
    satisfiable_rule,
)
from timecontract.spec_file import KeyGivenTwice, read_spec_data, size_problems
from timecontract.spec_problems import (
    FieldProblem,
    ModelsByPath,
    RuleOrIntervalProblem,
    rule_or_interval_problems,
    valid_identity,
    validation_problems,
)

DEFAULT_START = datetime(2001, 1, 1)
"""Default ``start`` (floating local): 2001-01-01 00:00, a Monday and the first day of a year and
month, so every BYxxx default the rule takes from DTSTART is the "first" one (00:00:00, Monday,
day 1, January) and INTERVAL phases are anchored there."""
DEFAULT_LATENESS = timedelta(minutes=5)
MAX_CATCH_UP = 1000
MAX_REVISION = 2**31 - 1
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
        return satisfiable_rule(value, info.data)

    @field_validator(*DURATION_FIELDS, mode="before")
    @classmethod
    def _fixed_length(cls, value: Any) -> Any:
        return fixed_length(value)

    @field_validator(*DURATION_FIELDS)
    @classmethod
    def _duration_range(cls, value: timedelta | None, info: ValidationInfo) -> timedelta | None:
        return duration_range(info.field_name, value, info.data)

    @model_validator(mode="after")
    def _rule_or_interval(self) -> ScheduleSpecV1:
        # parse_spec reports these from the raw data together with every other problem; this
        # is the backstop for direct model construction.
        for problem in rule_or_interval_problems(
            {"rule": self.rule, "interval": self.interval, "rdates": self.rdates},
            present=lambda v: v is not None,
        ):
            raise RuleOrIntervalProblem(problem)
        return self

    @field_validator(*DATE_FIELDS, mode="before")
    @classmethod
    def _date_text(cls, value: Any, info: ValidationInfo) -> Any:
        return read_date_text(info.field_name, value)

    @model_validator(mode="after")
    def _calendar_fields(self) -> ScheduleSpecV1:
        for problem in calendar_problems(dict(self)):
            raise FieldProblem(problem)
        return self

    @field_validator("start", "end")
    @classmethod
    def _whole_seconds(cls, value: datetime | None, info: ValidationInfo) -> datetime | None:
        return local_date_time_range(info.field_name, value, info.data)

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
        dates = 2 * most_per_day(self.rdates)  # a date in a fold may run twice (BOTH)
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


MODELS_BY_PATH: ModelsByPath = {
    (): ScheduleSpecV1,
    ("action",): ActionSpec,
    ("calendar",): CalendarSpec,
    ("failureStreak",): FailureStreakPolicy,
    ("failureStreak", "action"): ActionSpec,
}
"""The models whose keys an unknown key is compared with: the spec's, its actions', its
calendar's and its ``failureStreak``'s (``spec_problems``: ``did you mean``)."""


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
        schedule_id, revision = valid_identity(exc, data)
        # Not chained: pydantic's error holds every input value, a literal secret included.
        problems = validation_problems(exc, MODELS_BY_PATH) + exclusive
        raise InvalidSpec(problems, source, schedule_id=schedule_id, revision=revision) from None
    assert not exclusive  # the model's own validator refuses the same
    return spec


def read_spec_file(path: Path) -> Any:
    """Read a spec file into plain data (``spec_file.read_spec_data``), naming the schedule.

    Raises:
        InvalidSpec: as ``read_spec_data`` says; a file refused for a key given twice has the
            ``scheduleId`` and ``revision`` it gives, each when given once and valid by itself
            (the model decides, as :func:`parse_spec` does).

    """
    try:
        return read_spec_data(path)
    except KeyGivenTwice as exc:
        given = exc.data if isinstance(exc.data, Mapping) else {}
        identity = {
            key: given[key]
            for key in ("scheduleId", "revision")
            if key in given and key not in exc.given_twice
        }
        try:
            ScheduleSpecV1.model_validate(identity)
        except ValidationError as invalid:  # always: a spec has more required fields
            schedule_id, revision = valid_identity(invalid, identity)
        raise InvalidSpec(
            exc.problems, exc.source, schedule_id=schedule_id, revision=revision
        ) from None


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
            ``density.MAX_PER_MINUTE`` (``spec_checks.density_problems``), are problems too. Its
            ``schedule_id`` and ``revision`` are those of the data when each is valid by itself
            (``None`` for data too large to check).

    """
    name = str(source) if isinstance(source, Path) else None
    data = read_spec_file(source) if isinstance(source, Path) else source
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
    problems += density_problems(spec.interval, spec.rule, spec.rdates) or deadline_problems(
        spec.deadline, spec.interval, spec.rule, spec.start, spec.rdates
    )
    problems += calendar_coverage_problems(spec.calendar, spec.cutover_at, tzdb_store)
    if problems:
        raise InvalidSpec(problems, name, schedule_id=spec.schedule_id, revision=spec.revision)
    return spec


build_without_plugins(ActionSpec, CalendarSpec, FailureStreakPolicy, ScheduleSpecV1)
