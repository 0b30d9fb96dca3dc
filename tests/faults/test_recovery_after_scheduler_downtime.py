"""Matrix 6: the scheduler is down across many periods; on recovery the misfire policy decides.

Time-skipping server, the production worker in this process: the schedule runs its first
occurrence, then the worker and the schedule workflow are gone; a new worker and a new run of the
schedule workflow (same ID, same spec) come back with a clock that reads the end of the downtime,
on the same ledger and sink. The new run finds every missed occurrence at once (``release_due``
computes the overdue set first).

Why not stop only the worker and ``env.sleep`` over the downtime: the time-skipping server stops
skipping at the schedule workflow's next timer while no worker can run the workflow task, so the
sleep never reaches the end of the downtime (the RPC times out after 30 s). On the ledger's side
the two recoveries are the same calls: materialize from the high-water mark, then
``release_due(now)``. Expected, from the policy's
definition and plain date arithmetic:

- overdue by at most ``lateness`` (default 5 minutes) → on time, runs under every policy;
- ``CATCH_UP_BOUNDED`` runs the most recent ``maxCatchUp`` of the missed, expires the rest;
- ``SKIP`` expires every missed one.

The worker comes back one minute before the latest missed instant's lateness runs out, so that
occurrence is on time: lateness is respected.
"""

from __future__ import annotations

from datetime import datetime, timedelta
from pathlib import Path

import pytest
from faultkit import (
    await_until,
    day,
    in_process_worker,
    running_sink,
    spec_data,
    sqlite_ledger,
    start_schedule,
    states,
)
from temporal_env import start_time_skipping

import ledger
from ledger import OccurrenceState

pytestmark = [pytest.mark.anyio, pytest.mark.temporal, pytest.mark.fault, pytest.mark.slow]

SETTLED = {
    OccurrenceState.SUCCEEDED,
    OccurrenceState.MISFIRE_EXPIRED,
    OccurrenceState.FAILED,
    OccurrenceState.CANCELLED,
    OccurrenceState.UNKNOWN_EFFECT,
}


async def run_downtime(
    tmp_path: Path,
    *,
    rule: str,
    period: timedelta,
    policy: str,
    max_catch_up: int,
    downtime: timedelta,
) -> tuple[dict[datetime, OccurrenceState], list[str], datetime, datetime]:
    """Run one occurrence at 2027-01-10 09:00, be down ``downtime``, recover; return the facts.

    Returns:
        instant → state for every occurrence up to the recovery, the sink's keys, the instant of
        the occurrence that ran before the downtime, and the simulated recovery instant.
    """
    schedule_id = f"down-{policy.lower().replace('_', '-')}-{int(period.total_seconds())}"
    first = day(10, 9)
    # Back one minute after the last missed instant: inside its lateness (default 5 minutes).
    recovered = first + downtime + timedelta(minutes=1)
    url, ledger_ = sqlite_ledger(tmp_path)
    env = await start_time_skipping()
    try:
        with running_sink() as sink:
            data = spec_data(
                schedule_id, sink, rule=rule, misfirePolicy=policy, maxCatchUp=max_catch_up
            )
            async with in_process_worker(env.client, "downtime", url, tmp_path, "worker-1"):
                handle = await start_schedule(
                    env.client,
                    "downtime",
                    data,
                    simulated_now_utc=first - timedelta(minutes=1),
                    server_now_utc=await env.get_current_time(),
                    stop_after_utc=first + timedelta(minutes=1),
                )
                await handle.result()
                await await_until(
                    lambda: states(ledger_, schedule_id),
                    lambda s: OccurrenceState.SUCCEEDED in s.values(),
                    timeout=30,
                    what="the first occurrence succeeds",
                )
            # Down: no worker and no schedule workflow. The next run's clock reads `recovered`.
            async with in_process_worker(env.client, "downtime", url, tmp_path, "worker-2"):
                handle = await start_schedule(
                    env.client,
                    "downtime",
                    data,
                    simulated_now_utc=recovered,
                    server_now_utc=await env.get_current_time(),
                    stop_after_utc=recovered + timedelta(minutes=1),
                )
                await handle.result()
                await await_until(
                    lambda: ledger.list_occurrences(ledger_, schedule_id, to_utc=recovered),
                    lambda rows: all(r.state in SETTLED for r in rows),
                    timeout=60,
                    what="every overdue occurrence is settled",
                )
            rows = ledger.list_occurrences(ledger_, schedule_id, to_utc=recovered)
            keys = [e.idempotency_key for e in sink.effects()]
    finally:
        await env.shutdown()
        ledger_.dispose()
    by_instant = {r.instant_utc: r.state for r in rows if r.instant_utc is not None}
    return by_instant, keys, first, recovered


def expected(
    first: datetime, period: timedelta, downtime: timedelta, policy: str, bound: int
) -> dict[datetime, OccurrenceState]:
    """What the policy's definition says, for instants ``first, first + period, …``."""
    instants = []
    t = first + period
    while t <= first + downtime:
        instants.append(t)
        t += period
    *missed, on_time = instants  # the last one is inside the lateness at recovery
    caught = 0 if policy == "SKIP" else bound
    result = {first: OccurrenceState.SUCCEEDED, on_time: OccurrenceState.SUCCEEDED}
    for i, instant in enumerate(missed):
        ran = i >= len(missed) - caught
        result[instant] = OccurrenceState.SUCCEEDED if ran else OccurrenceState.MISFIRE_EXPIRED
    return result


@pytest.mark.parametrize(
    ("rule", "period", "downtime", "policy", "bound"),
    [
        (
            "FREQ=DAILY;BYHOUR=9;BYMINUTE=0",
            timedelta(days=1),
            timedelta(days=7),
            "CATCH_UP_BOUNDED",
            2,
        ),
        ("FREQ=DAILY;BYHOUR=9;BYMINUTE=0", timedelta(days=1), timedelta(days=7), "SKIP", 2),
        (
            "FREQ=MINUTELY;INTERVAL=10",
            timedelta(minutes=10),
            timedelta(hours=3),
            "CATCH_UP_BOUNDED",
            2,
        ),
        ("FREQ=MINUTELY;INTERVAL=10", timedelta(minutes=10), timedelta(hours=3), "SKIP", 2),
    ],
    ids=["daily-7d-catch-up", "daily-7d-skip", "10min-3h-catch-up", "10min-3h-skip"],
)
async def test_missed_occurrences_run_at_most_the_catch_up_bound_and_expire_the_rest(
    tmp_path: Path, rule: str, period: timedelta, downtime: timedelta, policy: str, bound: int
) -> None:
    facts, keys, first, _ = await run_downtime(
        tmp_path, rule=rule, period=period, policy=policy, max_catch_up=bound, downtime=downtime
    )
    want = expected(first, period, downtime, policy, bound)
    assert facts == want
    ran = sum(1 for s in facts.values() if s is OccurrenceState.SUCCEEDED)
    # Zero executions beyond the bound: one effect per occurrence that ran, none for the others.
    assert len(keys) == len(set(keys)) == ran
    missed = len(want) - 2
    caught_up = ran - 2
    assert caught_up == (0 if policy == "SKIP" else min(bound, missed))
