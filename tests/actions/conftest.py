"""Fixtures for action tests: a real sink, a real (tiny) SMTP server, the Temporal dev server."""

from __future__ import annotations

import socket
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest

from devtools.sink import Sink

sys.path.insert(0, str(Path(__file__).resolve().parent))
sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from smtp_server import FakeSmtpServer
from temporal_env import anyio_backend, dev_env, task_queue

__all__ = ["anyio_backend", "dev_env", "task_queue"]


@pytest.fixture
def sink() -> Iterator[Sink]:
    """A fresh in-memory sink on a free port of 127.0.0.1."""
    with Sink() as running:
        yield running


@pytest.fixture
def smtp_server() -> Iterator[FakeSmtpServer]:
    """A minimal SMTP server on a free port; set ``.mode`` to make it misbehave."""
    server = FakeSmtpServer()
    server.start()
    try:
        yield server
    finally:
        server.stop()


@pytest.fixture
def closed_port() -> int:
    """A local port nothing listens on (bound, then released)."""
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port: int = s.getsockname()[1]
    return port
