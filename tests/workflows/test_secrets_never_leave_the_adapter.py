"""A canary secret, named by reference, reaches the downstream and nowhere else (DESIGN §10).

The real dev server, the production worker (in this process, so its logs are captured), a SQLite
ledger and the sink (verifying signatures). A schedule's ``http`` action names three secrets: an
``Authorization`` header from an environment variable, an ``X-Api-Key`` header from a file in the
secrets directory, and the Standard Webhooks signing key. Each delivery is refused once (a 500), so
the failure path writes its details too. The schedule runs on a fixed simulated calendar
(2027-01-10 09:00Z): two occurrences three and eight seconds in, the next ones an hour later, so it
is still running when both have succeeded. While it runs, ``almanac status`` (human and
``--json``), ``upcoming`` and ``ledger list`` / ``ledger show`` of the retried occurrence must exit
0 with output about this schedule; then the schedule is terminated. The canaries appear in none
of: that output, the ledger's rows (every table), the workflow histories (inputs, results,
failures), the captured logs (which must hold the worker's records of the run) and output, and
``/metrics``.
"""

from __future__ import annotations

import base64
import json
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
START = datetime(2027, 1, 10, 9, 0, tzinfo=UTC)
"""The schedule's simulated clock reads this when it starts (fixed: no wall-clock date)."""
RULE = "FREQ=HOURLY;BYMINUTE=0;BYSECOND=3,8"
"""09:00:03 and 09:00:08, then 10:00:03 …: two runs, then an hour with the schedule idle."""
FIRST_RUNS = START + timedelta(minutes=1)


def leaks(text: str) -> list[str]:
    return [canary for canary in CANARIES if canary in text]


def ledger_dump(path: Path) -> str:
    with sqlite3.connect(path) as db:
        tables = [r[0] for r in db.execute("select name from sqlite_master where type='table'")]
        return "\n".join(repr(row) for t in tables for row in db.execute(f'select * from "{t}"'))


def run_cli(env: dict[str, str], *args: str) -> subprocess.CompletedProcess[str]:
    """``almanac ARGS`` as a user runs it, output captured."""
    return subprocess.run(
        [ALMANAC, *args], env=env, capture_output=True, text=True, timeout=60, check=False
    )


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
            "rule": RULE,
            "misfirePolicy": "SKIP",
            "cutoverAt": f"{START - timedelta(minutes=1):%Y-%m-%dT%H:%M:%SZ}",
            "action": action,
        }
        stack.sink.add_fault(failTimes=1, status=500)  # every key: one refusal, then accepted
        handle = await stack.start_schedule(
            spec,
            simulate_from=START,
            stop_after=START + timedelta(hours=6),  # never reached: terminated below
            horizon_seconds=120.0,
            refresh_seconds=30.0,
            occurrence_first_retry_delay_seconds=1.0,
        )
        rows = await eventually(
            lambda: anyio.to_thread.run_sync(
                lambda: stack.occurrences("canary", to_utc=FIRST_RUNS)
            ),
            lambda rs: len(rs) == 2 and all(r.state in FINAL for r in rs),
            timeout=60,
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

        # The command line, while the schedule runs: every command answers (exit 0), about it.
        ledger_file = tmp_path / "ledger.sqlite3"
        env = {
            **{k: v for k, v in os.environ.items() if not k.startswith("ALMANAC_")},
            "ALMANAC_DATA_DIR": str(tmp_path),  # its default ledger is the stack's file
            "ALMANAC_TEMPORAL_ADDRESS": dev_env.client.service_client.config.target_host,
            "ALMANAC_TEMPORAL_TASK_QUEUE": task_queue,
        }
        shown = rows[0].occurrence_id
        commands: list[tuple[str, ...]] = [
            ("status", "canary", "--json"),
            ("status", "canary"),
            ("upcoming", "canary", "--json"),
            ("ledger", "list", "canary"),
            ("ledger", "show", shown, "--json"),
            ("ledger", "show", shown),
        ]
        outputs: dict[tuple[str, ...], subprocess.CompletedProcess[str]] = {}

        async def run(command: tuple[str, ...]) -> None:
            outputs[command] = await anyio.to_thread.run_sync(
                run_cli, env, *command, limiter=cli_slots
            )

        cli_slots = anyio.CapacityLimiter(2)  # each is a Python start-up (~3 s on 2 cores)
        async with anyio.create_task_group() as group:
            for command in commands:
                group.start_soon(run, command)
        for command, done in outputs.items():
            assert done.returncode == 0, (command, done.stdout, done.stderr)
            assert leaks(done.stdout + done.stderr) == [], command
        # Non-vacuous: each answer is about this running schedule, read from the ledger and with
        # the workflow's own part (its status query was answered by the worker).
        status = json.loads(outputs[("status", "canary", "--json")].stdout)
        assert status["status"]["source"] == "ledger", status
        assert status["status"]["workerProblem"] == "", status
        assert status["status"]["countsByState"].get("SUCCEEDED") == 2, status
        assert status["upcoming"], status
        assert json.loads(outputs[("upcoming", "canary", "--json")].stdout), (
            "no upcoming occurrence"
        )
        shown_json = json.loads(outputs[("ledger", "show", shown, "--json")].stdout)
        assert len(shown_json["attempts"]) == 2, shown_json
        assert shown in outputs[("ledger", "list", "canary")].stdout
        await handle.terminate("the canary run is over")  # still running: status exited 0

        # Nowhere else.
        assert leaks(ledger_dump(ledger_file)) == []
        histories = [await handle.fetch_history()]
        for row in rows:
            occurrence = stack.client.get_workflow_handle(row.occurrence_id)
            histories.append(await occurrence.fetch_history())
        for history in histories:
            # Protobuf text shows each payload's bytes (``to_json`` would base64-encode them).
            text = "\n".join(str(event) for event in history.events)
            assert leaks(text) == [], history.workflow_id

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

    captured = capfd.readouterr()
    # The worker's own records of the run were captured (its activities, its 500s), and are clean.
    messages = [(r.name, r.getMessage()) for r in caplog.records]
    assert any("almanac.claim_and_execute" in m for n, m in messages if n == "temporalio.activity")
    assert any("500 Internal Server Error" in m for n, m in messages if n == "httpx")
    assert leaks(caplog.text) == []
    assert leaks(captured.out + captured.err) == []
