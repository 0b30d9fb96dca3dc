"""``overlapPolicy`` enforced at release, in skipped time, one test per policy.

A minutely UTC schedule with four occurrences, A 09:01, B 09:02, C 09:03, D 09:04 (``end``
09:04). The sink fails A's first delivery with a 503 (a refused request: no effect), so A waits in
RETRY_WAIT for its 150-second backoff and retries at about 09:03:30 (the schedule's occurrence
input sets the first retry delay), while B and C come due. What each policy must do then is
Temporal's ``ScheduleOverlapPolicy`` as Almanac's docstring states it (timecontract.OverlapPolicy),
not a reading of ``ledger.overlap``:

- SKIP: B and C are SKIPPED_OVERLAP naming A; A and D succeed.
- BUFFER_ONE: B waits and runs after A; C is skipped (buffer full); D runs.
- BUFFER_ALL: B then C run after A, in order; D runs.
- CANCEL_OTHER: A (RETRY_WAIT) is cancelled by B; B, C, D run; A never reaches the sink.
- ALLOW_ALL: B and C run while A waits (the behaviour before the field existed).
"""

from __future__ import annotations

from datetime import UTC, datetime, timedelta
from pathlib import Path

import pytest
from stack import Stack, record_history, running_stack
from temporal_env import eventually, start_time_skipping

import ledger
from ledger import OccurrenceState

pytestmark = [pytest.mark.anyio, pytest.mark.temporal, pytest.mark.slow]

S = OccurrenceState
START = datetime(2027, 1, 10, 9, 0, 30, tzinfo=UTC)
STOP = datetime(2027, 1, 10, 9, 8, tzinfo=UTC)
NAMES = ("A", "B", "C", "D")


def _spec(stack: Stack, schedule_id: str, policy: str) -> dict[str, object]:
    return stack.spec(
        {
            "schema": "scheduleSpec.v1",
            "scheduleId": schedule_id,
            "revision": 1,
            "timeZone": "UTC",
            "tzdbVersion": "2026a",
            "rule": "FREQ=MINUTELY",
            "start": "2027-01-10T09:01:00",
            "end": "2027-01-10T09:04:00",
            "misfirePolicy": "SKIP",
            "overlapPolicy": policy,
            "cutoverAt": "2027-01-01T00:00:00Z",
        }
    )


def _ids(schedule_id: str) -> dict[str, str]:
    return {n: f"{schedule_id}.r1.20270110T090{i + 1}00.f0" for i, n in enumerate(NAMES)}


Run = tuple[Stack, dict[str, ledger.OccurrenceView], set[str]]


async def _run(tmp_path: Path, policy: str, *, history: str | None = None) -> Run:
    """Run to STOP under ``policy``: the four occurrences once settled, and the sink's keys.

    ``history``: record the schedule's run under this name (``histories/README.md``).
    """
    schedule_id = f"overlap-{policy.lower().replace('_', '-')}"
    ids = _ids(schedule_id)
    env = await start_time_skipping()
    try:
        async with running_stack(env, tmp_path, schedule_id) as stack:
            stack.sink.add_fault(match=ids["A"], failTimes=1, status=503)
            handle = await stack.start_schedule(
                _spec(stack, schedule_id, policy),
                simulate_from=START,
                stop_after=STOP,
                occurrence_first_retry_delay_seconds=150.0,
            )
            await handle.result()
            if history is not None:
                await record_history(env.client, handle.id, history)
            settled = {S.SUCCEEDED, S.SKIPPED_OVERLAP, S.CANCELLED, S.FAILED}
            rows = await eventually(
                lambda: _rows(stack, schedule_id),
                lambda r: len(r) == 4 and all(o.state in settled for o in r.values()),
                timeout=30,
            )
            effects = {e.idempotency_key for e in stack.sink.effects()}
            return stack, {n: rows[ids[n]] for n in NAMES}, effects
    finally:
        await env.shutdown()


async def _rows(stack: Stack, schedule_id: str) -> dict[str, ledger.OccurrenceView]:
    return {o.occurrence_id: o for o in stack.occurrences(schedule_id)}


def _states(rows: dict[str, ledger.OccurrenceView]) -> dict[str, OccurrenceState]:
    return {n: o.state for n, o in rows.items()}


def _first_claim(stack: Stack, occurrence_id: str) -> datetime:
    attempts = ledger.show_occurrence(stack.ledger, occurrence_id).attempts
    return min(a.started_at_utc for a in attempts)


def _succeeded_at(stack: Stack, occurrence_id: str) -> datetime:
    events = ledger.show_occurrence(stack.ledger, occurrence_id).events
    return next(e.at_utc for e in events if e.to_state == S.SUCCEEDED)


async def test_skip_records_skipped_overlap_naming_the_running_one(tmp_path: Path) -> None:
    stack, rows, effects = await _run(tmp_path, "SKIP")
    assert _states(rows) == {"A": S.SUCCEEDED, "B": S.SKIPPED_OVERLAP, "C": S.SKIPPED_OVERLAP,
                             "D": S.SUCCEEDED}  # fmt: skip
    for name in ("B", "C"):
        reason = rows[name].state_reason or ""
        assert rows["A"].occurrence_id in reason and "SKIP" in reason
        assert ledger.show_occurrence(stack.ledger, rows[name].occurrence_id).attempts == ()
    assert effects == {rows["A"].occurrence_id, rows["D"].occurrence_id}


async def test_buffer_one_runs_one_after_the_running_one_and_skips_the_rest(
    tmp_path: Path,
) -> None:
    stack, rows, _effects = await _run(tmp_path, "BUFFER_ONE", history="schedule-overlap-buffer")
    assert _states(rows) == {"A": S.SUCCEEDED, "B": S.SUCCEEDED, "C": S.SKIPPED_OVERLAP,
                             "D": S.SUCCEEDED}  # fmt: skip
    assert "buffer full" in (rows["C"].state_reason or "")
    # B waited for A: its first claim comes after A's success, not at its own instant 09:02,
    # and at once (A's end wakes the schedule), not at D's instant 09:04.
    a_done = _succeeded_at(stack, rows["A"].occurrence_id)
    b_claim = _first_claim(stack, rows["B"].occurrence_id)
    assert a_done <= b_claim < datetime(2027, 1, 10, 9, 4, tzinfo=UTC)


async def test_buffer_all_runs_every_one_in_order_after_the_running_one(tmp_path: Path) -> None:
    stack, rows, _effects = await _run(tmp_path, "BUFFER_ALL")
    assert set(_states(rows).values()) == {S.SUCCEEDED}
    a_done = _succeeded_at(stack, rows["A"].occurrence_id)
    b_claim = _first_claim(stack, rows["B"].occurrence_id)
    c_claim = _first_claim(stack, rows["C"].occurrence_id)
    assert a_done <= b_claim
    assert _succeeded_at(stack, rows["B"].occurrence_id) <= c_claim
    assert a_done > datetime(2027, 1, 10, 9, 3, tzinfo=UTC)  # A really ran past B's and C's time


async def test_cancel_other_cancels_the_retry_waiting_one(tmp_path: Path) -> None:
    _stack, rows, effects = await _run(tmp_path, "CANCEL_OTHER")
    assert _states(rows) == {"A": S.CANCELLED, "B": S.SUCCEEDED, "C": S.SUCCEEDED,
                             "D": S.SUCCEEDED}  # fmt: skip
    reason = rows["A"].state_reason or ""
    assert rows["B"].occurrence_id in reason and "CANCEL_OTHER" in reason
    # A's only delivery was refused (503): no effect, and none after its cancellation.
    assert rows["A"].occurrence_id not in effects


async def test_allow_all_runs_them_side_by_side(tmp_path: Path) -> None:
    stack, rows, _effects = await _run(tmp_path, "ALLOW_ALL")
    assert set(_states(rows).values()) == {S.SUCCEEDED}
    # B ran at its own minute, while A was still waiting for its retry.
    assert _first_claim(stack, rows["B"].occurrence_id) < _succeeded_at(
        stack, rows["A"].occurrence_id
    )
    assert timedelta(0) < _succeeded_at(stack, rows["A"].occurrence_id) - rows["A"].instant_utc
