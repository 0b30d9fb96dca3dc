"""The worker polls a task queue's normal side with several workflow-task polls, not the SDK's one.

Every new workflow's first task (each schedule's after a restart, each occurrence's) waits on the
queue's normal side, which the SDK polls with a fifth of the worker's workflow-task polls; with
the SDK's default of 5 that is one poll, and a recovery's first runs wait behind it
(``docs/operating/cluster.md``, after downtime).
"""

from __future__ import annotations

from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any

import pytest

from almanac import worker
from almanac.settings import AlmanacSettings
from ledger import Ledger
from ledger.migrate import upgrade


def test_the_worker_asks_for_at_least_four_normal_side_workflow_polls(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    built: dict[str, Any] = {}

    def record(client: Any, **kwargs: Any) -> str:
        built.update(kwargs)
        return "worker"

    monkeypatch.setattr(worker, "Worker", record)
    url = f"sqlite:///{tmp_path / 'ledger.sqlite3'}"
    upgrade(url)
    ledger_ = Ledger.from_url(url)
    settings = AlmanacSettings(ledger_url=url, data_dir=tmp_path)
    with ThreadPoolExecutor(1) as executor:
        worker.build_worker(
            object(),  # type: ignore[arg-type]
            settings,
            ledger_,
            worker.WorkerOptions(identity="test"),
            executor,
            clock=None,
        )
    ledger_.dispose()
    polls = built.get("max_concurrent_workflow_task_polls", 5)  # the SDK's default
    ratio = built.get("nonsticky_to_sticky_poll_ratio", 0.2)
    assert int(polls * ratio) >= 4, (polls, ratio)
