"""The manual-run workflow's activity: record a manual occurrence once per request ID."""

from __future__ import annotations

from temporalio import activity
from temporalio.exceptions import ApplicationError

import ledger
from activities import io
from activities.common import ActivitiesBase


class ManualActivities(ActivitiesBase):
    """``record_trigger``."""

    @activity.defn(name=io.RECORD_TRIGGER)
    def record_trigger(self, params: io.RecordTriggerInput) -> io.RecordTriggerResult:
        """Record a manual occurrence now (the clock's instant), once per request ID."""
        with self._domain_errors(params.schedule_id, io.RECORD_TRIGGER):
            try:
                result = ledger.record_trigger(
                    self._ledger,
                    params.schedule_id,
                    params.request_id,
                    self._clock.now(),
                    by=params.by,
                    reason=params.reason,
                    tzdb_store=self._tzdb_store,
                )
            except ValueError as exc:
                raise ApplicationError(str(exc), type="InvalidRequest", non_retryable=True) from exc
            gate = ledger.get_gate(self._ledger, params.schedule_id)
        return io.RecordTriggerResult(result.occurrence.upcoming(), gate, result.created)
