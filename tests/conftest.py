"""Shared fixtures: ``zone(name)`` from the pinned release and ``spec_factory(**overrides)``."""

from collections.abc import Callable
from typing import Any
from zoneinfo import ZoneInfo

import pytest
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
