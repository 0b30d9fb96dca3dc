"""``ALMANAC_MAX_ACTIVITY_STARTS_PER_SECOND`` reaches Temporal's worker as its task-queue rate.

The worker built from the settings (``almanac.worker.build_worker``, what ``almanac worker``
runs) carries ``max_task_queue_activities_per_second`` (Temporal's server-side limit per task
queue) and, with it, no eager activity execution (an eager start bypasses the server's limit).
Without the setting neither is set. A zero or negative rate is refused, naming the setting.
"""

from __future__ import annotations

from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import pytest
from pydantic import ValidationError
from temporal_env import start_time_skipping

from almanac import worker
from almanac.settings import AlmanacSettings
from ledger import Ledger
from ledger.migrate import upgrade

pytestmark = [pytest.mark.anyio, pytest.mark.temporal]


@pytest.mark.parametrize(("value", "rate"), [("2.5", 2.5), (None, None)])
async def test_the_rate_setting_is_the_workers_task_queue_rate(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, value: str | None, rate: float | None
) -> None:
    if value is not None:
        monkeypatch.setenv("ALMANAC_MAX_ACTIVITY_STARTS_PER_SECOND", value)
    url = f"sqlite:///{tmp_path / 'ledger.sqlite3'}"
    upgrade(url)
    settings = AlmanacSettings(data_dir=tmp_path, ledger_url=url)
    env = await start_time_skipping()
    ledger_ = Ledger.from_url(url)
    try:
        with ThreadPoolExecutor(max_workers=2) as executor:
            built = worker.build_worker(
                env.client,
                settings,
                ledger_,
                worker.WorkerOptions(identity="rate-test", max_concurrent_activities=2),
                executor,
                task_queue="rate",
            )
            config = built.config()
            assert config.get("max_task_queue_activities_per_second") == rate
            assert config.get("disable_eager_activity_execution") is (rate is not None)
    finally:
        ledger_.dispose()
        await env.shutdown()


@pytest.mark.parametrize("value", ["0", "-1"])
def test_a_rate_that_is_not_positive_is_refused_naming_it(
    monkeypatch: pytest.MonkeyPatch, value: str
) -> None:
    monkeypatch.setenv("ALMANAC_MAX_ACTIVITY_STARTS_PER_SECOND", value)
    with pytest.raises(ValidationError, match="max_activity_starts_per_second"):
        AlmanacSettings()
