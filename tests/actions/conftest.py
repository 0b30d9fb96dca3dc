"""Fixtures for action tests: a real sink, a real (tiny) SMTP server, the Temporal dev server."""

from __future__ import annotations

import shutil
import socket
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest

from almanac.stack.sink import Sink

sys.path.insert(0, str(Path(__file__).resolve().parent))
sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from smtp_server import FakeSmtpServer, ServerCertificate
from temporal_env import anyio_backend, dev_env, task_queue

__all__ = ["anyio_backend", "dev_env", "task_queue"]


@pytest.fixture
def sink() -> Iterator[Sink]:
    """A fresh in-memory sink on a free port of 127.0.0.1."""
    with Sink() as running:
        yield running


@pytest.fixture
def strict_sink() -> Iterator[Sink]:
    """A sink that refuses repeats like the Idempotency-Key draft (409 in flight, 422 changed)."""
    with Sink(strict=True) as running:
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


@pytest.fixture(scope="session")
def test_certificate(tmp_path_factory: pytest.TempPathFactory) -> ServerCertificate:
    """A fresh self-signed server certificate (made with the ``openssl`` command)."""
    openssl = shutil.which("openssl")
    if openssl is None:
        pytest.skip("needs the openssl command to make a test certificate")
    where = tmp_path_factory.mktemp("tls")
    cert, key = where / "cert.pem", where / "key.pem"
    subprocess.run(
        [
            *(openssl, "req", "-x509", "-newkey", "rsa:2048", "-nodes", "-days", "2"),
            *("-keyout", str(key), "-out", str(cert), "-subj", "/CN=localhost"),
            *("-addext", "subjectAltName=DNS:localhost,IP:127.0.0.1"),
        ],
        check=True,
        capture_output=True,
    )
    return ServerCertificate(cert, key)
