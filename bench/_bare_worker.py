"""The baseline's worker process: ``python -m bench._bare_worker``.

Environment: ``BENCH_TEMPORAL_ADDRESS``, ``BENCH_TASK_QUEUE``. SDK defaults, sandbox on, the same
activity concurrency as Almanac's worker (32).
"""

from __future__ import annotations

import asyncio
import os
import signal

from temporalio.client import Client
from temporalio.worker import Worker

from bench._bare import BareWorkflow, post


async def main() -> None:
    """Run the worker until SIGTERM."""
    client = await Client.connect(os.environ["BENCH_TEMPORAL_ADDRESS"])
    stop = asyncio.Event()
    loop = asyncio.get_running_loop()
    for signum in (signal.SIGTERM, signal.SIGINT):
        loop.add_signal_handler(signum, stop.set)
    async with Worker(
        client,
        task_queue=os.environ["BENCH_TASK_QUEUE"],
        workflows=[BareWorkflow],
        activities=[post],
        max_concurrent_activities=32,
    ):
        print("polling", flush=True)
        await stop.wait()


if __name__ == "__main__":
    asyncio.run(main())
    os._exit(0)
