"""Custom search attributes on occurrence workflows (DESIGN §5).

They let ``temporal workflow list --query 'ScheduleId="daily-ops-summary"'`` and the Temporal UI
filter a schedule's occurrences. They must be registered on the namespace before a workflow
upserts them (an unregistered upsert makes the workflow task retry forever): the dev stack passes
:data:`ALL` to the server at start, and ``almanac`` registers them on an existing cluster.
"""

from __future__ import annotations

from temporalio.common import SearchAttributeKey

SCHEDULE_ID = SearchAttributeKey.for_keyword("ScheduleId")
REVISION = SearchAttributeKey.for_int("Revision")
NOMINAL_LOCAL = SearchAttributeKey.for_keyword("NominalLocal")
OCCURRENCE_STATE = SearchAttributeKey.for_keyword("OccurrenceState")

ALL = (SCHEDULE_ID, REVISION, NOMINAL_LOCAL, OCCURRENCE_STATE)
