"""Custom search attributes on occurrence workflows (DESIGN §5).

They let ``temporal workflow list --query 'ScheduleId="daily-ops-summary"'`` and the Temporal UI
filter a schedule's occurrences. They must be registered on the namespace before a workflow
upserts them (an unregistered upsert makes the workflow task retry forever): the dev stack passes
:data:`ALL` to the server at start, and ``almanac`` registers them on an existing cluster.
"""

from __future__ import annotations

from typing import Protocol

from temporalio.common import SearchAttributeKey, SearchAttributePair, TypedSearchAttributes

SCHEDULE_ID = SearchAttributeKey.for_keyword("ScheduleId")
REVISION = SearchAttributeKey.for_int("Revision")
NOMINAL_LOCAL = SearchAttributeKey.for_keyword("NominalLocal")
OCCURRENCE_STATE = SearchAttributeKey.for_keyword("OccurrenceState")

ALL = (SCHEDULE_ID, REVISION, NOMINAL_LOCAL, OCCURRENCE_STATE)


class _Occurrence(Protocol):
    """What the attributes are read from (``activities.io.UpcomingOccurrence``)."""

    @property
    def schedule_id(self) -> str: ...
    @property
    def revision(self) -> int: ...
    @property
    def nominal_local(self) -> str: ...
    @property
    def state(self) -> str: ...


def for_occurrence(occurrence: _Occurrence) -> TypedSearchAttributes:
    """The attributes an occurrence's workflow starts with: schedule, revision, local time, state.

    Calendar occurrences (the schedule's loop) and manual runs (``ManualRunWorkflow``) alike, so
    a query for ``ScheduleId="…"`` finds both.
    """
    return TypedSearchAttributes(
        [
            SearchAttributePair(SCHEDULE_ID, occurrence.schedule_id),
            SearchAttributePair(REVISION, occurrence.revision),
            SearchAttributePair(NOMINAL_LOCAL, occurrence.nominal_local),
            SearchAttributePair(OCCURRENCE_STATE, occurrence.state),
        ]
    )
