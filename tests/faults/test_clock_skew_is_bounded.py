"""A worker whose clock is off is measured, exported, warned about and held (activities.clock_skew).

A worker 90 s behind recorded claim, run and success before the occurrence's instant, with no
warning. Here the worker's clock is the host's shifted by an injected offset; the references are
the real ones (the ledger database's clock, Temporal's scheduled time from the activity's info).
The claim must be held (a retryable ``ClockSkew`` error, nothing written) and the skew exported
as ``almanac_clock_skew_seconds{against=…}``; a worker in step claims as before, and its claim is
never recorded before the occurrence's instant. Both ledger backends.
"""

from __future__ import annotations

import dataclasses
import logging
from datetime import UTC, datetime, timedelta

import pytest
from faultkit import gate_view, local_actions, publish, spec_data
from prometheus_client import CollectorRegistry
from temporalio.exceptions import ApplicationError
from temporalio.testing import ActivityEnvironment

import ledger
from activities import io
from activities.clock_skew import CLOCK_SKEW_ERROR, ClockGuard
from activities.ledger_activities import AlmanacActivities
from activities.metrics import AlmanacMetrics
from ledger import Ledger

pytestmark = [pytest.mark.fault]

BEHIND = timedelta(seconds=-90)


@dataclasses.dataclass
class OffsetClock:
    """The host's clock plus ``offset`` (an injected skew)."""

    offset: timedelta

    def now(self) -> datetime:
        return datetime.now(UTC) + self.offset


def _manual_due(store: Ledger, sid: str, instant: datetime) -> str:
    """A manual occurrence of a new schedule, DUE at ``instant`` (aware UTC)."""
    publish(store, spec_data(sid, cutoverAt="2020-01-01T00:00:00Z"), instant)
    trigger = ledger.record_trigger(store, sid, "r1", instant, by="test", reason="skew test")
    return trigger.occurrence.occurrence_id


def _activities(store: Ledger, offset: timedelta) -> tuple[AlmanacActivities, AlmanacMetrics]:
    metrics = AlmanacMetrics(CollectorRegistry())
    clock = OffsetClock(offset)
    guard = ClockGuard(store, clock, metrics.observe_clock_skew)
    acts = AlmanacActivities(
        store, local_actions(), identity="w", clock=clock, metrics=metrics, clock_guard=guard
    )
    return acts, metrics


def _skew(metrics: AlmanacMetrics, against: str) -> float | None:
    return metrics.registry.get_sample_value("almanac_clock_skew_seconds", {"against": against})


def test_a_worker_90_s_behind_the_ledger_is_held_and_says_so(
    store: Ledger, caplog: pytest.LogCaptureFixture
) -> None:
    instant = datetime.now(UTC).replace(microsecond=0) - timedelta(seconds=30)
    oid = _manual_due(store, "skew-behind", instant)
    acts, metrics = _activities(store, BEHIND)
    request = io.ClaimOccurrenceInput(oid, gate_view(store, "skew-behind"), instant)
    with caplog.at_level(logging.WARNING), pytest.raises(ApplicationError) as held:
        acts.claim(request)
    assert held.value.type == CLOCK_SKEW_ERROR and not held.value.non_retryable
    assert "off the ledger's" in str(held.value)
    skew = _skew(metrics, "ledger")
    assert skew is not None and -92 < skew < -88
    assert any("worker clock" in r.getMessage() for r in caplog.records)
    detail = ledger.show_occurrence(store, oid)
    assert detail.occurrence.state is ledger.OccurrenceState.DUE and not detail.attempts


@pytest.mark.anyio
async def test_claim_and_execute_held_for_skew_asks_the_workflow_to_claim_again(
    store: Ledger,
) -> None:
    instant = datetime.now(UTC).replace(microsecond=0) - timedelta(seconds=30)
    oid = _manual_due(store, "skew-both", instant)
    acts, _ = _activities(store, BEHIND)
    request = io.ClaimAndExecuteInput(oid, gate_view(store, "skew-both"), 1, 3, instant)
    result = await ActivityEnvironment().run(acts.claim_and_execute, request)
    assert result.ledger_unavailable and not result.claimed and result.state == "DUE"
    assert "off the ledger's" in (result.refusal or "")
    assert not ledger.show_occurrence(store, oid).attempts


def test_a_worker_in_step_claims_and_never_before_the_instant(store: Ledger) -> None:
    instant = datetime.now(UTC).replace(microsecond=0) - timedelta(seconds=1)
    oid = _manual_due(store, "skew-in-step", instant)
    acts, metrics = _activities(store, timedelta(0))
    result = acts.claim(io.ClaimOccurrenceInput(oid, gate_view(store, "skew-in-step"), instant))
    assert result.claimed, result
    skew = _skew(metrics, "ledger")
    assert skew is not None and abs(skew) < 2
    (attempt,) = ledger.show_occurrence(store, oid).attempts
    assert attempt.started_at_utc >= instant


def test_a_worker_behind_temporal_is_held(store: Ledger) -> None:
    instant = datetime.now(UTC).replace(microsecond=0) - timedelta(seconds=1)
    oid = _manual_due(store, "skew-temporal", instant)
    acts, metrics = _activities(store, timedelta(0))
    env = ActivityEnvironment()
    # Temporal scheduled this attempt a minute after the worker's "now": the worker is behind.
    scheduled = datetime.now(UTC) + timedelta(seconds=60)
    env.info = dataclasses.replace(env.info, current_attempt_scheduled_time=scheduled)
    request = io.ClaimOccurrenceInput(oid, gate_view(store, "skew-temporal"), instant)
    with pytest.raises(ApplicationError, match="off the temporal's") as held:
        env.run(acts.claim, request)
    assert held.value.type == CLOCK_SKEW_ERROR
    skew = _skew(metrics, "temporal")
    assert skew is not None and -61 < skew < -58
    assert not ledger.show_occurrence(store, oid).attempts


def test_an_occurrence_whose_instant_is_ahead_of_the_worker_is_held(store: Ledger) -> None:
    # Released on Temporal's time, yet in the future on this worker's clock: the clock is behind
    # by less than the bound, and the claim still waits rather than record a time before it.
    instant = datetime.now(UTC).replace(microsecond=0) + timedelta(minutes=10)
    oid = _manual_due(store, "skew-ahead", instant)
    acts, _ = _activities(store, timedelta(0))
    with pytest.raises(ApplicationError, match="ahead of the worker's clock"):
        acts.claim(io.ClaimOccurrenceInput(oid, gate_view(store, "skew-ahead"), instant))
    assert not ledger.show_occurrence(store, oid).attempts


def test_an_instant_ahead_by_less_than_the_bound_is_waited_for_not_held(store: Ledger) -> None:
    # A worker a little behind (less than the bound): the claim waits out the difference on the
    # worker's clock and then records its time, never before the instant.
    instant = datetime.now(UTC).replace(microsecond=0) + timedelta(seconds=2)
    oid = _manual_due(store, "skew-wait", instant)
    assert ledger.show_occurrence(store, oid).occurrence.instant_utc == instant
    acts, _ = _activities(store, timedelta(0))
    result = acts.claim(io.ClaimOccurrenceInput(oid, gate_view(store, "skew-wait"), instant))
    assert result.claimed
    [attempt] = ledger.show_occurrence(store, oid).attempts
    assert attempt.started_at_utc >= instant


def test_the_ledger_reading_is_reused_within_its_interval(store: Ledger) -> None:
    ticks = iter([0.0, 0.0, 0.01, 10.0, 40.0, 40.0, 40.01])
    readings: list[float] = []
    guard = ClockGuard(
        store,
        OffsetClock(BEHIND),
        lambda against, seconds: readings.append(seconds),
        monotonic=lambda: next(ticks),
    )
    first = guard.against_ledger()
    assert guard.against_ledger() is first  # 10 s later: cached
    assert guard.against_ledger() is not first  # 40 s later: measured again
    assert len(readings) == 2
