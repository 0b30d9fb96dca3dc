"""Shared fixtures: ``zone(name)`` from the pinned release and ``spec_factory(**overrides)``."""

from collections.abc import Callable
from typing import Any
from zoneinfo import ZoneInfo

import pytest

from timecontract import ScheduleSpecV1, parse_spec, zones

PINNED_RELEASE = "2026a"

SEED_SPEC: dict[str, Any] = {
    "schema": "scheduleSpec.v1",
    "scheduleId": "daily-ops-summary",
    "revision": 7,
    "timeZone": "America/New_York",
    "tzdbVersion": PINNED_RELEASE,
    "rule": "FREQ=DAILY;BYHOUR=2;BYMINUTE=30",
    "gapPolicy": "SKIP",
    "foldPolicy": "FIRST_ONLY",
    "misfirePolicy": "CATCH_UP_BOUNDED",
    "maxCatchUp": 2,
    "cutoverAt": "2026-11-01T06:00:00Z",
}


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
