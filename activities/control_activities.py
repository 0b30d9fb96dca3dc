"""The schedule workflow's control activities: publish a revision, disable/enable, delete, backfill.

Adapters over the ledger's gate and backfill operations, which decide; each returns the ledger's
verdict as a result (a refusal is an answer to the caller of an update, not an error).
"""

from __future__ import annotations

import dataclasses
from datetime import timedelta
from typing import Any

from temporalio import activity

import ledger
from activities import io
from activities.common import ActivitiesBase, bounded, plain
from ledger import OccurrenceState, ScheduleEventKind
from timecontract import InvalidSpec, MisfirePolicy, ScheduleSpecV1, SpecError, load_spec


class ControlActivities(ActivitiesBase):
    """``publish_revision``, ``set_gate``, ``change_gate``, ``delete_schedule``, ``backfill``."""

    @activity.defn(name=io.PUBLISH_REVISION)
    def publish_revision(self, params: io.PublishRevisionInput) -> io.PublishRevisionResult:
        """Validate spec data, check its action, publish it: the ledger's verdict, never raised.

        A rejection (invalid spec, another scheduleId, no action, an unknown adapter or bad
        parameters, a revision or cutover the ledger refuses) names the field and the value, is
        appended to the schedule's events (``REVISION_REJECTED``) and counted.
        """
        sid = params.schedule_id
        try:
            spec = load_spec(params.spec, self._tzdb_store)
            if spec.schedule_id != sid:
                raise SpecError("scheduleId", spec.schedule_id, f"this schedule is {sid!r}")
            if spec.action is None:
                raise SpecError("action", None, "required to apply (a spec without one previews)")
            self._actions.check_spec(spec)
            # A new schedule's gate starts on this worker's alias (the alias serving schedules).
            result = ledger.publish_revision(
                self._ledger,
                spec,
                self._clock.now(),
                by=self._identity,
                implementation_alias=self._alias,
            )
        except (InvalidSpec, SpecError, ledger.RevisionRejected) as exc:
            return self._rejected_revision(params, exc)
        note = "published" if result.created else "already published (same digest)"
        return io.PublishRevisionResult(
            True,
            spec.revision,
            note,
            cutover_at_utc=spec.cutover_at,
            created=result.created,
            created_schedule=result.created_schedule,
            superseded=len(result.superseded),
            gate=result.gate,
        )

    def _rejected_revision(
        self, params: io.PublishRevisionInput, exc: Exception
    ) -> io.PublishRevisionResult:
        problem = exc.problems[0] if isinstance(exc, InvalidSpec) and exc.problems else exc
        field_ = str(getattr(problem, "field", ""))
        value = plain(getattr(problem, "value", None))
        revision = params.spec.get("revision")
        revision = (
            revision if isinstance(revision, int) and not isinstance(revision, bool) else None
        )
        reason = bounded(str(exc))
        self._record_rejection(
            params.schedule_id,
            ScheduleEventKind.REVISION_REJECTED,
            type(exc).__name__,
            reason,
            revision=revision,
        )
        gate = self._gate_or_none(params.schedule_id)
        return io.PublishRevisionResult(
            False,
            revision,
            reason,
            field=field_,
            value=value,
            gate=gate,
            schedule_live=gate is not None and gate.deleted_at_utc is None,
        )

    @activity.defn(name=io.SET_GATE)
    def set_gate(self, params: io.SetGateInput) -> io.GateSnapshot:
        """Disable (with a reason) or enable the schedule's gate (the signals' path)."""
        with self._domain_errors(params.schedule_id, io.SET_GATE):
            if params.disabled:
                return ledger.disable(
                    self._ledger,
                    params.schedule_id,
                    self._clock.now(),
                    by=params.by,
                    reason=params.reason,
                )
            return ledger.enable(self._ledger, params.schedule_id, self._clock.now(), by=params.by)

    @activity.defn(name=io.CHANGE_GATE)
    def change_gate(self, params: io.ChangeGateInput) -> io.ChangeGateResult:
        """Disable or enable the gate and report what it did (the updates' path).

        On an enable that changed the gate, the occurrences that came due while disabled are
        decided at once by the misfire policy (``ledger.release_due`` at ``now``): the result
        counts how many run and how many expire. Enabling a deleted schedule is refused, as a
        result. Other errors as ``ActivitiesBase._domain_errors`` says.
        """
        sid = params.schedule_id
        with self._domain_errors(sid, io.CHANGE_GATE):
            earlier = frozenset() if params.disabled else self._due_before_disable(sid)
            try:
                change = ledger.change_gate(
                    self._ledger,
                    sid,
                    self._clock.now(),
                    disabled=params.disabled,
                    by=params.by,
                    reason=params.reason if params.disabled else None,
                )
            except ledger.ScheduleDeleted as exc:
                return io.ChangeGateResult(
                    sid, params.disabled, False, self._gate_or_none(sid), rejected=str(exc)
                )
            result = io.ChangeGateResult(
                sid, params.disabled, change.changed, change.gate, cancelled=len(change.cancelled)
            )
            if params.disabled or not change.changed:
                return result
            # Decided at the workflow's instant, recorded at the clock's (as release_due is).
            released = ledger.release_due(
                self._ledger,
                sid,
                params.now_utc,
                by=self._identity,
                recorded_at_utc=self._clock.now(),
            )
            specs = ledger.published_specs(self._ledger, sid)
        self._observe_schedule(sid, expired=len(released.expired), caught_up=len(released.released))
        decided = {*released.released, *released.expired}
        return dataclasses.replace(
            result,
            came_due=len(decided - earlier),
            due_before_disable=len(decided & earlier),
            released=len(released.released),
            expired=len(released.expired),
            misfire_policy=_misfire_text(specs[-1]) if specs else "",
        )

    def _due_before_disable(self, schedule_id: str) -> frozenset[str]:
        """PLANNED occurrences of a disabled schedule whose instant passed before its disable.

        Empty when the schedule is not disabled (or not known: ``change_gate`` says so).
        """
        gate = self._gate_or_none(schedule_id)
        if gate is None or not gate.disabled:
            return frozenset()
        last = ledger.schedule_events(
            self._ledger, schedule_id, kind=ScheduleEventKind.DISABLED, limit=1
        )
        if not last:
            return frozenset()
        overdue = ledger.list_occurrences(
            self._ledger, schedule_id, to_utc=last[0].at_utc, states=[OccurrenceState.PLANNED]
        )
        return frozenset(o.occurrence_id for o in overdue)

    @activity.defn(name=io.DELETE_SCHEDULE)
    def delete_schedule(self, params: io.DeleteScheduleInput) -> io.DeleteScheduleResult:
        """Delete the schedule in the ledger (``ledger.delete_schedule``); a verdict, not raised."""
        sid = params.schedule_id
        with self._domain_errors(sid, io.DELETE_SCHEDULE):
            try:
                change = ledger.delete_schedule(
                    self._ledger, sid, self._clock.now(), by=params.by, reason=params.reason
                )
            except ledger.ScheduleNotFound as exc:
                return io.DeleteScheduleResult(sid, False, None, rejected=str(exc))
        return io.DeleteScheduleResult(
            sid, change.changed, change.gate, cancelled=len(change.cancelled)
        )

    @activity.defn(name=io.BACKFILL)
    def backfill(self, params: io.BackfillInput) -> io.BackfillResult:
        """Plan (and unless a dry run, apply) a backfill as of the schedule's instant.

        A refusal (a window not before ``now_utc`` or not owned by the revision in force, a plan
        over the bound, a disabled schedule) is the verdict, not an error: nothing was written.
        """
        base = io.BackfillResult(
            params.schedule_id,
            params.from_utc,
            params.to_utc,
            params.now_utc,
            params.dry_run,
            max_occurrences=params.max_occurrences,
        )
        with self._domain_errors(params.schedule_id, io.BACKFILL):
            try:
                plan = ledger.backfill_window(
                    self._ledger,
                    params.schedule_id,
                    params.from_utc,
                    params.to_utc,
                    params.now_utc,
                    by=params.by,
                    reason=params.reason,
                    include_expired=params.include_expired,
                    max_occurrences=params.max_occurrences,
                    dry_run=params.dry_run,
                    recorded_at_utc=self._clock.now(),
                    tzdb_store=self._tzdb_store,
                )
            except ledger.BackfillRefused as exc:
                value: Any = plain(exc.value)
                return dataclasses.replace(base, rejected=str(exc), field=exc.field, value=value)
        entries = [
            io.BackfillEntryPayload(
                e.occurrence_id,
                e.nominal_local.isoformat(),
                e.fold,
                e.placed_at_utc,
                e.action.value,
                e.state,
                e.note,
            )
            for e in plan.entries
        ]
        return dataclasses.replace(
            base, revision=plan.revision, entries=entries, released=list(plan.released)
        )


def _misfire_text(spec: ScheduleSpecV1) -> str:
    """``SKIP`` or ``CATCH_UP_BOUNDED (maxCatchUp 2)``, with the lateness."""
    policy = spec.misfire_policy.value
    if spec.misfire_policy is MisfirePolicy.CATCH_UP_BOUNDED:
        policy += f" (maxCatchUp {spec.max_catch_up})"
    return f"{policy}, lateness {iso_duration(spec.lateness)}"


def iso_duration(duration: timedelta) -> str:
    """``duration`` as an ISO 8601 duration (``PT5M``, ``P1DT2H``, ``PT0S``); whole seconds."""
    seconds = int(duration.total_seconds())
    days, rest = divmod(seconds, 86400)
    hours, rest = divmod(rest, 3600)
    minutes, secs = divmod(rest, 60)
    time_part = "".join(
        f"{n}{unit}" for n, unit in ((hours, "H"), (minutes, "M"), (secs, "S")) if n
    )
    text = "P" + (f"{days}D" if days else "") + (f"T{time_part}" if time_part else "")
    return text if text != "P" else "PT0S"
