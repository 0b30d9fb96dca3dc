"""Temporal fixtures for workflow tests: ``time_skipping_env``, ``dev_env``, ``task_queue``.

Defined in ``tests/temporal_env.py`` (shared with ``tests/actions``). Tests using them are async,
marked ``@pytest.mark.anyio`` and ``@pytest.mark.temporal``.
"""

import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
sys.path.insert(0, str(Path(__file__).resolve().parent))

from temporal_env import anyio_backend, dev_env, task_queue, time_skipping_env

__all__ = ["anyio_backend", "dev_env", "task_queue", "time_skipping_env"]
