"""Serve the console in a thread of this process (``almanac dev``, tests) with uvicorn."""

from __future__ import annotations

import threading
import time
from typing import Any

import uvicorn

START_TIMEOUT = 20.0
"""Seconds to wait for the server to listen before giving up."""


class ConsoleServer:
    """A uvicorn server for one app on ``host:port``, in a daemon thread."""

    def __init__(self, app: Any, host: str, port: int) -> None:
        """Prepare to serve ``app``; nothing listens until :meth:`start`."""
        config = uvicorn.Config(app, host=host, port=port, log_level="warning")
        self._server = uvicorn.Server(config)
        self._thread = threading.Thread(target=self._server.run, name="console", daemon=True)
        self.host, self.port = host, port

    @property
    def url(self) -> str:
        """The console's base URL (``localhost`` for loopback)."""
        shown = "localhost" if self.host in ("127.0.0.1", "0.0.0.0") else self.host
        return f"http://{shown}:{self.port}/"

    def start(self) -> ConsoleServer:
        """Start listening; return once the server accepts connections.

        Raises:
            RuntimeError: it did not start within :data:`START_TIMEOUT` seconds (port in use).
        """
        self._thread.start()
        deadline = time.monotonic() + START_TIMEOUT
        while not self._server.started:
            if not self._thread.is_alive() or time.monotonic() > deadline:
                raise RuntimeError(f"the console did not start on {self.host}:{self.port}")
            time.sleep(0.05)
        return self

    def stop(self) -> None:
        """Stop serving and wait (bounded) for the thread to end."""
        self._server.should_exit = True
        self._thread.join(START_TIMEOUT)
