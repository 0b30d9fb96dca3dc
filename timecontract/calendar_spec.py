"""The calendar fields of ``scheduleSpec.v1`` (DESIGN §12).

The fields are ``rdates``, ``exdates``, ``calendar``, ``holidayPolicy`` and ``businessDaysOnly``:

- ``rdates`` (RFC 5545 §3.8.5.2 RDATE): extra nominal local date-times, each resolved through the
  gap and fold policies like a rule's. With ``rdates`` the ``rule`` is optional: a spec with
  dates only runs once, or a few times. Each must lie within ``start``..``end``.
- ``exdates`` (RFC 5545 §3.8.5.1 EXDATE): a local date-time excludes exactly that nominal time; a
  date excludes every nominal time on that local day. An excluded time is recorded as an
  ``EXCLUDED`` fact (reason ``EXDATE_EXCLUDED``), never a missing row. As in RFC 5545, COUNT
  counts the rule's instances before exclusions.
- ``calendar``: ``{name, release, weekend}``, see ``timecontract.calendars``.
- ``holidayPolicy`` (needs ``calendar``; default ``SKIP`` when a calendar is given): what happens
  to a nominal time whose local date is not a business day (``calendars.HolidayPolicy``).
- ``businessDaysOnly`` (needs ``calendar``): the rule's set keeps only the business days of the
  calendar *before* ``BYSETPOS`` selects from each period's set. So
  ``FREQ=MONTHLY;BYDAY=MO,TU,WE,TH,FR;BYSETPOS=-1`` is "the last business day of the month" and
  ``BYSETPOS=3`` "the third business day"; without ``BYSETPOS`` it simply drops non-business
  days from the set (they are not nominal times of the schedule, so nothing is recorded for
  them). Without ``businessDaysOnly``, ``BYSETPOS`` counts weekdays as RFC 5545 says, and the
  holiday policy then applies to the day it picked: in May 2027 ``BYSETPOS=-1`` over weekdays
  picks Monday the 31st (Memorial Day, an NYSE holiday); with ``businessDaysOnly`` it picks
  Friday the 28th.
"""

from __future__ import annotations

from collections.abc import Mapping
from datetime import date, datetime
from pathlib import Path
from typing import Annotated, Any

from pydantic import BaseModel, BeforeValidator, ConfigDict, Field, field_validator

from timecontract.calendars import NAME_PATTERN, RELEASE_PATTERN, WEEKDAYS, load_calendar
from timecontract.errors import SpecError

MAX_DATES = 1000
"""The most entries ``rdates`` and ``exdates`` may each list."""

CALENDAR_ADDITIVE_FIELDS: dict[str, Any] = {
    "rdates": [],
    "exdates": [],
    "calendar": None,
    "holidayPolicy": None,
    "businessDaysOnly": False,
}
"""The calendar fields with their stored defaults: left out of the stored form while default, so
every revision published before them keeps its digest (``spec.ADDITIVE_FIELDS``)."""

CALENDAR_PATTERN_WORDING = {
    NAME_PATTERN.pattern: "must be a calendar name: a market (NYSE, XECB), a country with an "
    "optional subdivision (US, US-NY) or a calendar file's name",
    RELEASE_PATTERN.pattern: "must be a calendar release: holidays-<library version> (e.g. "
    "holidays-0.108) or a calendar file's sha256-<hex>",
}


def _weekday_text(value: Any) -> Any:
    """A ``weekend`` entry before pydantic reads it: text, or a problem naming the codes.

    A number is no code (ISO 8601 and cron number the days differently), so none is guessed.
    """
    if not isinstance(value, str):
        raise ValueError("must be a weekday code: MO, TU, WE, TH, FR, SA or SU")
    return value


WeekdayCode = Annotated[str, BeforeValidator(_weekday_text)]
"""One ``weekend`` entry: an RFC 5545 weekday code (checked against :data:`WEEKDAYS` by the
list's own validator, which also refuses a repeat)."""


class CalendarSpec(BaseModel):
    """``calendar``: which holiday calendar, at which pinned data release, with which weekend."""

    model_config = ConfigDict(extra="forbid", frozen=True, defer_build=True)

    name: Annotated[str, Field(pattern=NAME_PATTERN.pattern)] = Field(
        description="Market (NYSE, XECB), country[-subdivision] (US, US-NY) or a file's name."
    )
    release: Annotated[str, Field(pattern=RELEASE_PATTERN.pattern)] = Field(
        description="Pinned data: holidays-<version> of the library, or a file's sha256-<hex>."
    )
    weekend: tuple[WeekdayCode, ...] = Field(
        default=("SA", "SU"), description="Weekend days as RFC 5545 codes; default SA, SU."
    )

    @field_validator("weekend")
    @classmethod
    def _weekday_codes(cls, weekend: tuple[str, ...]) -> tuple[str, ...]:
        """Refuse unknown or repeated weekday codes (a problem at ``calendar.weekend``).

        Codes in other case are told the list they spell (``[sa]``: ``did you mean [SA]?``).
        """
        unknown = [code for code in weekend if code not in WEEKDAYS]
        if unknown or len(set(weekend)) != len(weekend) or len(weekend) > 6:
            meant = [code.strip().upper() for code in weekend]
            hint = ""
            if unknown and set(meant) <= set(WEEKDAYS) and len(set(meant)) == len(meant) <= 6:
                hint = f"; did you mean [{', '.join(meant)}]?"
            raise ValueError(
                "must list distinct weekday codes (MO, TU, WE, TH, FR, SA, SU), at most six" + hint
            )
        return weekend


def parse_exdate(value: Any) -> Any:
    """One ``exdates`` entry: ``2026-12-24`` (a date) or ``2026-12-24T09:00:00`` (local)."""
    if isinstance(value, date):
        return value
    if not isinstance(value, str):
        raise ValueError("each entry must be a date (2026-12-24) or a local date-time")
    try:
        if "T" in value.upper():
            parsed = datetime.fromisoformat(value)
            if parsed.tzinfo is not None:
                raise ValueError("offset")
            return parsed
        return date.fromisoformat(value)
    except ValueError:
        raise ValueError(
            f"{value!r} is not a date (2026-12-24) or a local date-time (2026-12-24T09:00:00)"
        ) from None


def calendar_problems(data: Mapping[str, Any]) -> list[SpecError]:
    """Problems between the calendar fields and the rest, from the validated fields' values.

    ``data`` holds the model's field values by their Python names.
    """
    problems: list[SpecError] = []
    calendar = data.get("calendar")
    for field, key, given in (
        ("holidayPolicy", "holiday_policy", data.get("holiday_policy") is not None),
        ("businessDaysOnly", "business_days_only", bool(data.get("business_days_only"))),
    ):
        if given and calendar is None:
            value = data.get(key)
            problems.append(
                SpecError(
                    field,
                    getattr(value, "value", value),
                    "needs a calendar (give calendar: {name, release})",
                )
            )
    if data.get("interval") is not None:
        for field, key in (("rdates", "rdates"), ("exdates", "exdates"), ("calendar", "calendar")):
            if data.get(key):
                problems.append(
                    SpecError(field, "…", "applies to local times; an interval has none")
                )
    rule = data.get("rule")
    if data.get("business_days_only") and isinstance(rule, str) and "SKIP=" in rule.upper():
        problems.append(
            SpecError("businessDaysOnly", True, "cannot be combined with an RSCALE SKIP rule")
        )
    start, end = data.get("start"), data.get("end")
    for value in data.get("rdates") or ():
        if (start is not None and value < start) or (end is not None and value > end):
            bounds = f"{start.isoformat() if start else '…'}..{end.isoformat() if end else '…'}"
            problems.append(
                SpecError("rdates", value.isoformat(), f"lies outside the revision's {bounds}")
            )
    return problems


def calendar_data_problems(data: Mapping[str, Any], store: Path | None) -> list[SpecError]:
    """Zero or one problem: the data's ``calendar`` names a calendar or release not available.

    Fields that are not even well-formed are left to the model's own problems.
    """
    calendar = data.get("calendar")
    if not isinstance(calendar, Mapping):
        return []
    name, release = calendar.get("name"), calendar.get("release")
    if not (isinstance(name, str) and NAME_PATTERN.fullmatch(name)):
        return []
    if not (isinstance(release, str) and RELEASE_PATTERN.fullmatch(release)):
        return []
    try:
        load_calendar(name, release, (), store)
    except SpecError as exc:
        return [exc]
    return []


def calendar_coverage_problems(
    calendar: CalendarSpec | None, cutover_at: datetime, store: Path | None
) -> list[SpecError]:
    """Zero or one problem: the pinned calendar's years do not cover the cutover's year.

    Checked where a spec enters (``load_spec``), so a revision whose first days the calendar
    cannot decide is refused at validate and apply rather than failing to plan after its cutover.
    Years later than the data are a recorded rejection when the schedule reaches them.

    Args:
        calendar: the spec's ``calendar`` (``None``: no problem).
        cutover_at: the revision's cutover, an aware UTC instant; its UTC year is checked.
        store: the tz store holding the calendar releases.

    """
    if calendar is None:
        return []
    try:
        loaded = load_calendar(calendar.name, calendar.release, (), store)
    except SpecError:
        return []  # a missing release or unknown name: calendar_data_problems reports it
    year = cutover_at.year
    if loaded.first_year <= year <= loaded.last_year:
        return []
    covered = f"{loaded.first_year}–{loaded.last_year}"
    return [
        SpecError(
            "calendar.release",
            calendar.release,
            f"calendar {calendar.name} covers {covered}, not {year}, the year of cutoverAt "
            f"{cutover_at:%Y-%m-%dT%H:%M:%SZ}: pin a release that covers it",
        )
    ]
