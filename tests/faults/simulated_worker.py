"""``python -m tests.faults.simulated_worker [--identity NAME]``: a worker on a simulated clock.

The production worker (``almanac.worker.run``: same environment, ledger, activities and logs) with
the simulated workflows of :mod:`almanac.gates.simulation` registered in place of the production
ones, and the activities' clock of work on their calendar (:mod:`almanac.gates.simulated_clock`).
Fault tests run it as a subprocess they can SIGKILL while schedules run on a fixed calendar.
"""

from __future__ import annotations

import argparse
import asyncio
import logging
import os
import sys

from almanac import worker
from almanac.gates.simulated_clock import SimulatedClock
from almanac.gates.simulation import WORKFLOWS
from almanac.settings import AlmanacSettings


def main(argv: list[str] | None = None) -> None:
    """Run the simulated worker until SIGTERM or SIGINT."""
    parser = argparse.ArgumentParser(prog="tests.faults.simulated_worker", description=__doc__)
    parser.add_argument("--identity", default=None, help="Worker identity (default: host:pid).")
    args = parser.parse_args(argv)
    logging.basicConfig(level=logging.INFO, format="%(asctime)s %(levelname)s %(name)s %(message)s")
    # No start-up catch-up: the simulated calendar has no "now" outside a workflow's call (the
    # clock would read the host's and decide the simulated schedules' occurrences by it).
    options = worker.WorkerOptions(
        identity=args.identity or worker.default_identity(), catch_up=False
    )
    clock = SimulatedClock()
    asyncio.run(
        worker.run(
            AlmanacSettings(), options, workflows=WORKFLOWS, clock=clock, interceptors=[clock]
        )
    )
    sys.stdout.flush()
    # temporalio may abort at interpreter exit (sdk-python#300); the exit code must stay ours.
    os._exit(0)


if __name__ == "__main__":
    main()
