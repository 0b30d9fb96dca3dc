"""Spec data shared by tests (import it: ``from specdata import SEED_SPEC``).

A plain module, not a conftest: several conftest.py files exist, and ``from conftest import``
would pick whichever was imported last.
"""

from typing import Any

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
