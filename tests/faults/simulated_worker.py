"""``python -m tests.faults.simulated_worker [--identity NAME]``: a worker on a simulated clock.

The gates' simulated worker (:func:`almanac.gates.simulated_worker.run`: the production worker,
same environment, ledger, activities and logs, on the simulated calendar) as a process of its own:
fault tests run it as a subprocess they can SIGKILL while schedules run on a fixed calendar.
"""

from __future__ import annotations

import argparse
import asyncio
import logging
import os
import sys

from almanac import worker
from almanac.gates import simulated_worker
from almanac.settings import AlmanacSettings


def main(argv: list[str] | None = None) -> None:
    """Run the simulated worker until SIGTERM or SIGINT."""
    parser = argparse.ArgumentParser(prog="tests.faults.simulated_worker", description=__doc__)
    parser.add_argument("--identity", default=None, help="Worker identity (default: host:pid).")
    args = parser.parse_args(argv)
    logging.basicConfig(level=logging.INFO, format="%(asctime)s %(levelname)s %(name)s %(message)s")
    options = worker.WorkerOptions(identity=args.identity or worker.default_identity())
    asyncio.run(simulated_worker.run(AlmanacSettings(), options))
    sys.stdout.flush()
    # temporalio may abort at interpreter exit (sdk-python#300); the exit code must stay ours.
    os._exit(0)


if __name__ == "__main__":
    main()
