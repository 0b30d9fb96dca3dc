"""A revision refused as "already published with digest …" says which fields differ.

The case a new user met: ``almanac dev --sink-port 9000`` applied ``examples/every-10-seconds``
aimed at its sink (port 9000); ``almanac apply`` of the unedited file (port 8765) is refused,
and the line must say why. The ledger is a SQLite file; no Temporal is needed for the reading.
"""

from __future__ import annotations

import asyncio
import copy
from datetime import UTC, datetime
from pathlib import Path
from types import SimpleNamespace
from typing import Any

import ledger
from almanac.apply_checks import spec_differences
from almanac.client import AlmanacClient
from almanac.settings import AlmanacSettings
from ledger.migrate import upgrade
from timecontract import parse_spec

FILE: dict[str, Any] = {
    "schema": "scheduleSpec.v1",
    "scheduleId": "every-10-seconds",
    "revision": 1,
    "timeZone": "UTC",
    "tzdbVersion": "2026a",
    "rule": "FREQ=SECONDLY;INTERVAL=10",
    "cutoverAt": "2026-01-01T00:00:00Z",
    "action": {"name": "http", "parameters": {"url": "http://127.0.0.1:8765/effects"}},
}


def test_the_refusal_names_the_fields_that_differ(tmp_path: Path) -> None:
    url = f"sqlite:///{tmp_path / 'ledger.sqlite3'}"
    upgrade(url)
    as_dev_applied = copy.deepcopy(FILE)
    as_dev_applied["action"]["parameters"]["url"] = "http://127.0.0.1:9000/effects"
    store = ledger.Ledger.from_url(url)
    ledger.publish_revision(
        store, parse_spec(as_dev_applied), datetime(2026, 1, 2, tzinfo=UTC), by="t"
    )
    store.dispose()
    settings = AlmanacSettings(ledger_url=url, data_dir=tmp_path)
    client = AlmanacClient(SimpleNamespace(namespace="default"), settings)  # type: ignore[arg-type]
    try:
        said = asyncio.run(client._published_differs(parse_spec(FILE)))
    finally:
        client.close()
    assert said == (
        "; the published r1 differs in action.parameters.url: published "
        "'http://127.0.0.1:9000/effects', here 'http://127.0.0.1:8765/effects'"
    )


def test_differences_are_leaves_in_key_order() -> None:
    old = {"a": 1, "b": {"c": 2, "d": 3}, "e": None}
    new = {"a": 1, "b": {"c": 5}, "f": 4}
    assert spec_differences(old, new) == [("b.c", 2, 5), ("b.d", 3, None), ("f", None, 4)]
