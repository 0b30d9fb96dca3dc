"""A real Almanac worker process for the deployment tests: ``python -m worker``, the production
command, with its metrics endpoints on 127.0.0.1 and its settings from the environment only."""

from __future__ import annotations

import os
import subprocess
import sys
from dataclasses import dataclass
from pathlib import Path

import pytest
from temporal_env import eventually

ROOT = Path(__file__).resolve().parents[2]


def worker_env(
    data_dir: Path, ledger_url: str, temporal_address: str, task_queue: str
) -> dict[str, str]:
    """The environment of a worker: this process's, minus any ``ALMANAC_*``, plus these."""
    return {
        **{k: v for k, v in os.environ.items() if not k.startswith("ALMANAC_")},
        "ALMANAC_DATA_DIR": str(data_dir),
        "ALMANAC_LEDGER_URL": ledger_url,
        "ALMANAC_TEMPORAL_ADDRESS": temporal_address,
        "ALMANAC_TEMPORAL_NAMESPACE": "default",
        "ALMANAC_TEMPORAL_TASK_QUEUE": task_queue,
        "ALMANAC_EGRESS_ALLOW": "127.0.0.1",  # the sink listens on loopback
        "PYTHONUNBUFFERED": "1",
    }


@dataclass
class WorkerProcess:
    """A running ``python -m worker`` (its own session) and its log."""

    process: subprocess.Popen[bytes]
    identity: str
    log: Path

    @classmethod
    async def start(
        cls, identity: str, env: dict[str, str], log: Path, metrics_port: int, sdk_port: int
    ) -> WorkerProcess:
        """Start a worker; wait (60 s at most) until its log says it runs.

        Raises:
            pytest.fail.Exception: it exited, or did not start in time (its log attached).
        """
        with log.open("ab") as handle:
            process = subprocess.Popen(
                [
                    sys.executable,
                    "-m",
                    "worker",
                    "--identity",
                    identity,
                    "--metrics-port",
                    str(metrics_port),
                    "--sdk-metrics-port",
                    str(sdk_port),
                ],
                cwd=ROOT,
                env=env,
                stdout=handle,
                stderr=subprocess.STDOUT,
                start_new_session=True,
            )
        worker = cls(process, identity, log)
        try:
            await eventually(worker._started, bool, timeout=60)
        except BaseException:
            worker.stop()
            raise
        return worker

    async def _started(self) -> bool:
        text = self.log.read_text(errors="replace")
        if self.process.poll() is not None:
            pytest.fail(f"the worker exited {self.process.returncode}:\n{text}")
        return f"worker {self.identity} " in text

    def stop(self) -> None:
        """SIGTERM (the worker's graceful stop), SIGKILL if it has not exited within 30 s."""
        if self.process.poll() is not None:
            return
        self.process.terminate()
        try:
            self.process.wait(timeout=30)
        except subprocess.TimeoutExpired:
            self.process.kill()
            self.process.wait(timeout=30)
