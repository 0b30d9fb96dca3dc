"""Fixtures for the deployment proofs: their async tests run on asyncio only, like every other
directory's (``temporal_env.anyio_backend``), whichever directories a run collects."""

from __future__ import annotations

import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from temporal_env import anyio_backend

__all__ = ["anyio_backend"]
