"""A canary secret, named by reference, reaches the downstream and nowhere else (DESIGN §10).

The real dev server, the production worker, a SQLite ledger and the sink (verifying signatures).
A schedule's ``http`` action names three secrets: an ``Authorization`` header from an environment
variable, an ``X-Api-Key`` header from a file in the secrets directory, and the Standard Webhooks
signing key. Its first delivery is refused once (a 500), so the failure path writes its details
too. Afterwards the sink holds the headers and a verified signature, and the canaries appear in
none of: the ledger's rows (every table), the workflow histories (inputs, results, failures), the
captured logs and output, ``almanac status`` / ``ledger list`` / ``ledger show``, and ``/metrics``.
"""

from __future__ import annotations

import base64
import logging
import os
import sqlite3
import subprocess
import sys
import urllib.request
from datetime import UTC, datetime, timedelta
from pathlib import Path

import anyio
import pytest
from prometheus_client import CollectorRegistry
from stack import running_stack
from temporal_env import eventually
from temporalio.testing import WorkflowEnvironment

from activities.metrics import DEFAULT_REGISTRY, LedgerCollector, start_metrics_server
from activities.snapshot import ledger_snapshot
from ledger import OccurrenceState, show_occurrence

pytestmark = [pytest.mark.anyio, pytest.mark.temporal, pytest.mark.slow]

ENV_CANARY = "canary-env-3f9a1c7e"
FILE_CANARY = "canary-file-b82d44e0"
SIGNING_KEY = "whsec_" + base64.b64encode(b"canary-signing-key-0123456789abc").decode()
CANARIES = [ENV_CANARY, FILE_CANARY, SIGNING_KEY, SIGNING_KEY.removeprefix("whsec_")]
ALMANAC = str(Path(sys.executable).parent / "almanac")
FINAL = {OccurrenceState.SUCCEEDED, OccurrenceState.FAILED, OccurrenceState.UNKNOWN_EFFECT}


def leaks(text: str) -> list[str]:
    return [canary for canary in CANARIES if canary in text]


def ledger_dump(path: Path) -> str:
    with sqlite3.connect(path) as db:
        tables = [r[0] for r in db.execute("select name from sqlite_master where type='table'")]
        return "\n".join(repr(row) for t in tables for row in db.execute(f'select * from "{t}"'))


def fetch(url: str) -> str:
    with urllib.request.urlopen(url, timeout=10) as answer:
        return str(answer.read().decode())


async def test_referenced_secrets_reach_the_sink_and_nothing_else(
    dev_env: WorkflowEnvironment,
    tmp_path: Path,
    task_queue: str,
    monkeypatch: pytest.MonkeyPatch,
    caplog: pytest.LogCaptureFixture,
    capfd: pytest.CaptureFixture[str],
) -> None:
    caplog.set_level(logging.DEBUG)
    monkeypatch.setenv("ALMANAC_SECRET_CANARY_TOKEN", f"Bearer {ENV_CANARY}")
    monkeypatch.setenv("ALMANAC_SECRET_CANARY_SIGNING", SIGNING_KEY)
    (tmp_path / "secrets").mkdir()
    (tmp_path / "secrets" / "canary.key").write_text(FILE_CANARY + "\n")
    async with running_stack(
        dev_env, tmp_path, task_queue, sink_signing_secret=SIGNING_KEY
    ) as stack:
        now = datetime.now(UTC)
        stop = now + timedelta(seconds=12)
        action = {
            "name": "http",
            "parameters": {
                "url": f"{stack.sink.url}/effects",
                "resultUrl": f"{stack.sink.url}/effects/{{idempotencyKey}}",
                "timeoutSeconds": 5,
                "headers": {
                    "Authorization": {"secretRef": {"env": "ALMANAC_SECRET_CANARY_TOKEN"}},
                    "X-Api-Key": {"secretRef": {"file": "canary.key"}},
                },
                "signingSecret": {"secretRef": {"env": "ALMANAC_SECRET_CANARY_SIGNING"}},
            },
        }
        spec = {
            "schema": "scheduleSpec.v1",
            "scheduleId": "canary",
            "revision": 1,
            "timeZone": "Etc/UTC",
            "tzdbVersion": "2026a",
            "rule": "FREQ=SECONDLY;INTERVAL=5",
            "misfirePolicy": "SKIP",
            "cutoverAt": f"{now - timedelta(minutes=1):%Y-%m-%dT%H:%M:%SZ}",
            "action": action,
        }
        stack.sink.add_fault(failTimes=1, status=500)  # every key: one refusal, then accepted
        handle = await stack.start_schedule(
            spec,
            simulate_from=now,
            stop_after=stop,
            horizon_seconds=120.0,
            refresh_seconds=30.0,
            occurrence_first_retry_delay_seconds=1.0,
        )
        await handle.result()
        rows = await eventually(
            lambda: anyio.to_thread.run_sync(lambda: stack.occurrences("canary", to_utc=stop)),
            lambda rs: bool(rs) and all(r.state in FINAL for r in rs),
            timeout=30,
        )
        assert {r.state for r in rows} == {OccurrenceState.SUCCEEDED}

        # The downstream got every secret, and the signature verified (else 401, no effect).
        assert len(stack.sink.effects()) == len(rows)
        received = {k.lower(): v for k, v in stack.sink.server.last_headers.items()}
        assert received["authorization"] == f"Bearer {ENV_CANARY}"
        assert received["x-api-key"] == FILE_CANARY
        assert received["webhook-id"] in {r.occurrence_id for r in rows}
        retried = show_occurrence(stack.ledger, rows[0].occurrence_id)
        assert len(retried.attempts) == 2  # the failure path wrote its detail too

        # Nowhere else.
        ledger_file = tmp_path / "ledger.sqlite3"
        assert leaks(ledger_dump(ledger_file)) == []
        histories = [await handle.fetch_history()]
        for row in rows:
            occurrence = stack.client.get_workflow_handle(row.occurrence_id)
            histories.append(await occurrence.fetch_history())
        for history in histories:
            assert leaks(history.to_json()) == [], history.workflow_id

        registry = CollectorRegistry()
        registry.register(LedgerCollector(lambda: ledger_snapshot(stack.ledger, datetime.now(UTC))))
        servers = [start_metrics_server(0, r) for r in (registry, DEFAULT_REGISTRY)]
        try:
            for server, _ in servers:
                text = await anyio.to_thread.run_sync(
                    fetch, f"http://127.0.0.1:{server.server_port}/metrics"
                )
                assert "almanac_" in text
                assert leaks(text) == []
        finally:
            for server, thread in servers:
                server.shutdown()
                thread.join(timeout=10)

        address = dev_env.client.service_client.config.target_host
        env = {
            **{k: v for k, v in os.environ.items() if not k.startswith("ALMANAC_")},
            "ALMANAC_DATA_DIR": str(tmp_path),
            "ALMANAC_TEMPORAL_ADDRESS": address,
            "ALMANAC_TEMPORAL_TASK_QUEUE": task_queue,
        }
        url = f"sqlite:///{ledger_file}"
        commands: list[list[str]] = [
            ["ledger", "list", "canary", "--url", url],
            ["ledger", "show", rows[0].occurrence_id, "--url", url, "--json"],
            ["ledger", "show", rows[0].occurrence_id, "--url", url],
            ["status", "canary", "--json"],
        ]
        for command in commands:
            done = await anyio.to_thread.run_sync(
                lambda c=command: subprocess.run(
                    [ALMANAC, *c], env=env, capture_output=True, text=True, timeout=60
                )
            )
            # status: the schedule ended, so it is not running (a lookup error, exit 2).
            assert done.returncode in (0, 2), (command, done.stderr)
            assert leaks(done.stdout + done.stderr) == [], command

    captured = capfd.readouterr()
    assert leaks(caplog.text) == []
    assert leaks(captured.out + captured.err) == []
