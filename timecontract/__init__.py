"""The time contract: scheduleSpec.v1 → unique, resolved occurrences (pure: no I/O but zone files).

Public surface; everything else is an implementation detail of this package.
"""

from timecontract.action_spec import ActionSpec, FailureStreakPolicy
from timecontract.advisories import SpecWarning, WarningCode, spec_warnings
from timecontract.cutover import Cutover, owned_interval, owning_revision, owns
from timecontract.density import span_for
from timecontract.errors import (
    AlmanacError,
    InvalidSpec,
    SpecError,
    SpecFileUnreadable,
    TzdbReleaseNotFound,
    ZoneNotFound,
    shown_value,
)
from timecontract.expand import nominal_period
from timecontract.ids import (
    LogicalSlotId,
    OccurrenceId,
    interval_occurrence_id,
    logical_slot_id,
    occurrence_id,
    occurrence_schedule_id,
    parse_occurrence_id,
)
from timecontract.interval import INTERVAL_EPOCH_UTC, interval_instants
from timecontract.iso8601 import format_duration, format_instant, format_recorded
from timecontract.jitter import jitter_delay
from timecontract.misfire import MisfirePlan, Overdue, plan_misfires
from timecontract.nearest import nearest
from timecontract.policies import FoldPolicy, GapPolicy, MisfirePolicy, OverlapPolicy
from timecontract.records import (
    Disposition,
    OccurrenceRecord,
    Reason,
    Resolution,
    format_offset,
)
from timecontract.recurrence import iter_occurrences, occurrences
from timecontract.resolve import LAST_WINDOW_END, resolve_local
from timecontract.rrule import Rule, RuleError, parse_rule
from timecontract.rscale import RscaleRule, Skip, parse_rscale_rule
from timecontract.series_end import ended_before, starts_after, window_outside
from timecontract.spec import ScheduleSpecV1, load_spec, parse_spec

__all__ = [
    "INTERVAL_EPOCH_UTC",
    "LAST_WINDOW_END",
    "ActionSpec",
    "AlmanacError",
    "Cutover",
    "Disposition",
    "FailureStreakPolicy",
    "FoldPolicy",
    "GapPolicy",
    "InvalidSpec",
    "LogicalSlotId",
    "MisfirePlan",
    "MisfirePolicy",
    "OccurrenceId",
    "OccurrenceRecord",
    "Overdue",
    "OverlapPolicy",
    "Reason",
    "Resolution",
    "RscaleRule",
    "Rule",
    "RuleError",
    "ScheduleSpecV1",
    "Skip",
    "SpecError",
    "SpecFileUnreadable",
    "SpecWarning",
    "TzdbReleaseNotFound",
    "WarningCode",
    "ZoneNotFound",
    "ended_before",
    "format_duration",
    "format_instant",
    "format_offset",
    "format_recorded",
    "interval_instants",
    "interval_occurrence_id",
    "iter_occurrences",
    "jitter_delay",
    "load_spec",
    "logical_slot_id",
    "nearest",
    "nominal_period",
    "occurrence_id",
    "occurrence_schedule_id",
    "occurrences",
    "owned_interval",
    "owning_revision",
    "owns",
    "parse_occurrence_id",
    "parse_rscale_rule",
    "parse_rule",
    "parse_spec",
    "plan_misfires",
    "resolve_local",
    "shown_value",
    "span_for",
    "spec_warnings",
    "starts_after",
    "window_outside",
]
