"""The occurrence activities take the scheduleId from their payload, not from the occurrence ID.

``execute_attempt``, ``query_effect`` and ``escalate`` record a deterministic error on the
schedule their input names (``schedule_id``); an input recorded before the field existed carries
``None`` and the scheduleId is parsed from the occurrence ID, as it always was. To tell the two
apart, each test names a schedule other than the one the occurrence ID spells.
"""

from __future__ import annotations

import asyncio
from collections.abc import Iterator
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import pytest
from prometheus_client import CollectorRegistry
from temporalio.exceptions import ApplicationError

import ledger
from activities import io
from activities.actions import ActionRegistry
from activities.clock import SystemClock
from activities.ledger_activities import AlmanacActivities
from activities.metrics import AlmanacMetrics
from ledger.migrate import upgrade

pytestmark = pytest.mark.anyio

DAY = datetime(2026, 12, 1, tzinfo=UTC)
MISSING = "spelled.r1.20261201T010000.f0"
"""An occurrence the ledger does not hold, whose ID spells the schedule ``spelled``."""


def _inputs(schedule_id: str | None) -> dict[str, Any]:
    return {
        "execute_attempt": io.ExecuteAttemptInput(MISSING, 1, 1, 3, DAY, schedule_id=schedule_id),
        "query_effect": io.QueryEffectInput(MISSING, DAY, schedule_id=schedule_id),
        "escalate": io.EscalateInput(MISSING, "deadline", DAY, schedule_id=schedule_id),
    }


@pytest.fixture
def store(tmp_path: Path) -> Iterator[ledger.Ledger]:
    url = f"sqlite:///{tmp_path / 'ledger.sqlite3'}"
    upgrade(url)
    handle = ledger.Ledger.from_url(url)
    yield handle
    handle.dispose()


async def _refused(store: ledger.Ledger, call: str, params: Any) -> str | None:
    """Call one activity directly; return the error type it was refused with."""
    acts = AlmanacActivities(
        store,
        ActionRegistry.default(),
        identity="w",
        metrics=AlmanacMetrics(CollectorRegistry()),
        clock=SystemClock(),
    )
    with pytest.raises(ApplicationError) as refused:
        result = getattr(acts, call)(params)
        if asyncio.iscoroutine(result):
            await result
    assert refused.value.non_retryable
    return refused.value.type


def _rejections(store: ledger.Ledger, schedule_id: str) -> list[str]:
    return [
        e.detail
        for e in ledger.schedule_events(store, schedule_id)
        if e.kind == "ACTIVITY_REJECTED"
    ]


@pytest.mark.parametrize("call", ["execute_attempt", "query_effect", "escalate"])
async def test_an_error_is_recorded_on_the_schedule_the_payload_carries(
    store: ledger.Ledger, call: str
) -> None:
    kind = await _refused(store, call, _inputs("carried")[call])
    [detail] = _rejections(store, "carried")
    assert kind is not None and kind in detail
    assert _rejections(store, "spelled") == []


@pytest.mark.parametrize("call", ["execute_attempt", "query_effect", "escalate"])
async def test_a_payload_recorded_before_the_field_falls_back_to_the_id(
    store: ledger.Ledger, call: str
) -> None:
    kind = await _refused(store, call, _inputs(None)[call])
    [detail] = _rejections(store, "spelled")
    assert kind is not None and kind in detail
