"""The production worker on the simulated calendar: in process, or as a process of its own.

The gates (:mod:`almanac.gates.harness`) and the fault tests run schedules on a fixed calendar:
the production worker (:mod:`almanac.worker`: same ledger, activities and logs) with the
simulated workflows of :mod:`almanac.gates.simulation` registered in place of the production
ones, and the activities' clock of work on their calendar (:mod:`almanac.gates.simulated_clock`,
also the interceptor that tells activities the simulated instant). One place builds it, so the
gates measure what the fault tests check.
"""

from __future__ import annotations

import dataclasses
from collections.abc import AsyncIterator
from concurrent.futures import ThreadPoolExecutor
from contextlib import asynccontextmanager
from typing import TYPE_CHECKING

from almanac import worker
from almanac.gates.simulated_clock import SimulatedClock
from almanac.gates.simulation import WORKFLOWS

if TYPE_CHECKING:
    from temporalio.client import Client

    import ledger
    from almanac.settings import AlmanacSettings


@asynccontextmanager
async def in_process(
    client: Client,
    settings: AlmanacSettings,
    store: ledger.Ledger,
    options: worker.WorkerOptions,
) -> AsyncIterator[None]:
    """Run the simulated worker on ``client`` while the block runs (``worker.build_worker``).

    Activities run on ``options.max_concurrent_activities`` threads. The caller owns ``store``.
    """
    with ThreadPoolExecutor(max_workers=options.max_concurrent_activities) as executor:
        clock = SimulatedClock()
        async with worker.build_worker(
            client,
            settings,
            store,
            options,
            executor,
            workflows=WORKFLOWS,
            clock=clock,
            interceptors=[clock],
        ):
            yield


async def run(settings: AlmanacSettings, options: worker.WorkerOptions) -> None:
    """Run the simulated worker until SIGTERM or SIGINT (``worker.run``), with no catch-up.

    No start-up catch-up: the simulated calendar has no "now" outside a workflow's call (the
    clock would read the host's and decide the simulated schedules' occurrences by it).
    """
    clock = SimulatedClock()
    await worker.run(
        settings,
        dataclasses.replace(options, catch_up=False),
        workflows=WORKFLOWS,
        clock=clock,
        interceptors=[clock],
    )
