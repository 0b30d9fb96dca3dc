"""Shared fixtures: ``zone(name)`` from the pinned release and ``spec_factory(**overrides)``.

Also the session's stop on a timed-out test: pytest-timeout (``timeout`` in pyproject) fails a test
by raising inside it, which leaves that test's tasks (workers, pollers) on the session's one
asyncio loop; every later async test would run beside them. The first timeout therefore ends the
run (teardown still runs) instead of letting it cascade into the CI's own time limit.
"""

from collections.abc import Callable, Iterator
from typing import Any
from zoneinfo import ZoneInfo

import pytest
from _pytest.reports import TestReport
from specdata import PINNED_RELEASE, SEED_SPEC

from timecontract import ScheduleSpecV1, parse_spec, zones


@pytest.fixture
def zone() -> Callable[[str], ZoneInfo]:
    """Load a zone from the pinned tz database release (never the OS)."""
    return lambda name: zones.load(name, PINNED_RELEASE)


@pytest.fixture
def spec_factory() -> Callable[..., ScheduleSpecV1]:
    """The seed's spec with camelCase overrides; ``None`` removes a key."""

    def make(**overrides: Any) -> ScheduleSpecV1:
        data = {**SEED_SPEC, **overrides}
        return parse_spec({k: v for k, v in data.items() if v is not None})

    return make


@pytest.hookimpl(hookwrapper=True)
def pytest_runtest_makereport(item: pytest.Item, call: pytest.CallInfo[None]) -> Iterator[None]:
    """Stop the session after a test that pytest-timeout failed (its message ends so)."""
    outcome = yield
    report: TestReport = outcome.get_result()  # type: ignore[attr-defined]
    timed_out = call.excinfo is not None and "from pytest-timeout" in str(call.excinfo.value)
    if report.failed and timed_out:
        item.session.shouldstop = (
            f"{item.nodeid} timed out; its tasks may still run on the session's event loop"
        )
