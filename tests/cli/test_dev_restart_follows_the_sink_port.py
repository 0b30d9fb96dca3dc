"""``almanac dev`` restarted with another sink port publishes a revision that follows the sink.

A stack started with ``ALMANAC_DEV_SINK_PORT=18765`` publishes the examples aimed at that port.
Started again on the same data directory with the default sink port, its worker allows only
``127.0.0.1:8765`` (the egress policy), so leaving the running revision as it is would fail every
run. The restart publishes the next revision, aimed at its own sink, with a cutover a few seconds
ahead (a later revision's cutover may not be past, DESIGN §3). A running revision aimed anywhere
else is the user's and is left as it is.

The ledger is a SQLite file; the client is a stand-in that publishes into that ledger with the
ledger's own rules (the worker's part of ``apply``), so a revision the ledger would refuse fails.
"""

from __future__ import annotations

import asyncio
import dataclasses
import shutil
from collections.abc import Iterator
from datetime import UTC, datetime, timedelta
from pathlib import Path
from types import SimpleNamespace
from typing import Any

import pytest

import ledger
from activities.clock import FixedClock
from almanac.stack.dev import DevOptions, apply_examples, for_dev_sink
from ledger.migrate import upgrade
from timecontract import ScheduleSpecV1, load_spec, parse_spec

ROOT = Path(__file__).resolve().parents[2]
NOW = datetime(2026, 12, 4, 15, 37, 40, 250_000, tzinfo=UTC)


class PublishingClient:
    """``is_running``/``status``/``apply`` as ``AlmanacClient`` answers them, on the ledger."""

    def __init__(self, store: ledger.Ledger, clock: FixedClock) -> None:
        self.store, self.clock = store, clock
        self.applied: list[ScheduleSpecV1] = []

    async def is_running(self, schedule_id: str) -> bool:
        return True

    async def status(self, schedule_id: str) -> Any:
        return SimpleNamespace(gate=ledger.get_gate(self.store, schedule_id))

    async def apply(self, spec: ScheduleSpecV1) -> Any:
        self.applied.append(spec)
        self.clock.advance(timedelta(seconds=1))  # the update's round trip
        ledger.publish_revision(self.store, spec, self.clock.now(), by="test")
        return SimpleNamespace(action="published")


@pytest.fixture
def store(tmp_path: Path) -> Iterator[ledger.Ledger]:
    url = f"sqlite:///{tmp_path / 'ledger.sqlite3'}"
    upgrade(url)
    opened = ledger.Ledger.from_url(url)
    yield opened
    opened.dispose()


@pytest.fixture
def examples(tmp_path: Path) -> Path:
    folder = tmp_path / "examples"
    folder.mkdir()
    shutil.copy(ROOT / "examples" / "every-10-seconds.yaml", folder)
    return folder


def example(examples: Path, options: DevOptions) -> ScheduleSpecV1:
    return load_spec(examples / "every-10-seconds.yaml", options.worker_settings().tzdb_store)


def with_url(spec: ScheduleSpecV1, url: str) -> ScheduleSpecV1:
    data = spec.resolved()
    data["action"] = {"name": "http", "parameters": {"url": url}}
    return parse_spec(data)


def restart(store: ledger.Ledger, options: DevOptions) -> tuple[PublishingClient, list[str]]:
    clock = FixedClock(NOW)
    client = PublishingClient(store, clock)
    said: list[str] = []
    asyncio.run(apply_examples(client, options, said.append, store, clock))  # type: ignore[arg-type]
    return client, said


def test_a_restart_on_the_default_sink_port_follows_the_sink(
    store: ledger.Ledger, examples: Path, tmp_path: Path
) -> None:
    first = DevOptions(data_dir=tmp_path, examples=examples, sink_port=18765)
    running, _ = for_dev_sink(example(examples, first), first.sink_url)
    ledger.publish_revision(store, running, NOW - timedelta(hours=1), by="test")

    client, said = restart(store, dataclasses.replace(first, sink_port=8765))

    (published,) = client.applied
    assert published.revision == 2
    assert published.action is not None
    assert published.action.parameters == {"url": "http://127.0.0.1:8765/effects"}
    # 15:37:40.25 + 5 s, up to the whole second; the ledger took it 1 s after (not past).
    assert published.cutover_at == datetime(2026, 12, 4, 15, 37, 46, tzinfo=UTC)
    assert ledger.get_gate(store, "every-10-seconds").active_revision == 2
    rest = {**published.resolved(), "revision": 1, "cutoverAt": "2026-11-01T00:00:00Z"}
    assert {**rest, "action": running.resolved()["action"]} == running.resolved()
    (line,) = said
    assert line.startswith("every-10-seconds r2: published (every-10-seconds.yaml)")
    assert "r1 posts to another sink" in line and "2026-12-04T15:37:46Z" in line


def test_a_restart_on_another_sink_port_follows_that_sink(
    store: ledger.Ledger, examples: Path, tmp_path: Path
) -> None:
    options = DevOptions(data_dir=tmp_path, examples=examples)
    ledger.publish_revision(store, example(examples, options), NOW, by="test")  # at 8765

    client, _ = restart(store, dataclasses.replace(options, sink_port=18765))

    (published,) = client.applied
    assert published.revision == 2
    assert published.action is not None
    assert published.action.parameters == {"url": "http://127.0.0.1:18765/effects"}


@pytest.mark.parametrize(
    "url",
    [
        "http://127.0.0.1:8765/effects",  # this stack's sink: nothing to follow
        "https://downstream.example/effects",  # the user's own target
        "http://127.0.0.1:18765/elsewhere",  # another path: not the example's effect
    ],
)
def test_a_running_revision_aimed_anywhere_else_is_left_as_it_is(
    store: ledger.Ledger, examples: Path, tmp_path: Path, url: str
) -> None:
    options = DevOptions(data_dir=tmp_path, examples=examples)
    running = with_url(example(examples, options), url)
    ledger.publish_revision(store, running, NOW, by="test")

    client, said = restart(store, options)

    assert client.applied == []
    assert said == ["every-10-seconds r1: already running, left as it is"]
