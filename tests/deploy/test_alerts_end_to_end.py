"""An alert, end to end: a ledger fact → a real Prometheus → a real Alertmanager → a webhook.

On 127.0.0.1, all started here: the Temporal dev server; a worker (``python -m worker`` with its
metrics endpoints, the production command); Debian's Prometheus scraping it every second and
evaluating Almanac's shipped rules every second; Debian's Alertmanager (``group_wait`` and
``group_interval`` 1 s) routing to a webhook receiver, a small HTTP server in this test.

The fact: one occurrence whose attempt ends UNKNOWN_EFFECT (the sink records the effect and holds
its answer past the action's timeout; no result query), so the ledger opens a reconciliation case.
The rule is the shipped ``AlmanacUnknownEffectOpenTooLong`` with one change only, its threshold:
30 minutes become :data:`THRESHOLD` seconds (the test variant is derived from the shipped file,
:data:`VARIANT` lists every change, so labels, annotations and expressions are the shipped
ones). Then:

- the firing notification reaches the webhook no sooner than the case's ``opened_at`` plus the
  threshold and within :data:`BOUND` seconds after that, naming the schedule, the severity and the
  runbook section;
- the case is resolved in the ledger (the sink has the effect: ``SUCCEEDED``), and the resolved
  notification reaches the webhook within :data:`BOUND` seconds;
- ``AlmanacNoWorkerPolling`` (its ``for`` shortened to 2 s) stays quiet while the worker polls,
  and fires within :data:`BOUND` seconds of the worker's stop — the rule reads the Temporal SDK's
  real ``temporal_num_pollers``.

The bound covers one scrape (1 s), one evaluation (1 s), Alertmanager's group wait (1 s) and the
webhook call, with room for a busy two-core machine.
"""

from __future__ import annotations

import json
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

import pytest
import yaml
from alertkit import RULES, alert_rules
from promkit import Alertmanager, Prometheus, alertmanager_binary, free_port, tool
from temporal_env import eventually, start_dev_server
from workerkit import WorkerProcess, worker_env

from almanac.stack.sink import Sink
from ledger import Ledger, ReconciliationResolution, open_cases, resolve_reconciliation
from workflows import ScheduleInput, ScheduleWorkflow, schedule_workflow_id

ALERT = "AlmanacUnknownEffectOpenTooLong"
POLLING = "AlmanacNoWorkerPolling"
THRESHOLD = 5
"""Seconds an UNKNOWN_EFFECT case stays open before the test variant of the rule fires."""
VARIANT = {
    ALERT: ("expr", "> 1800", f"> {THRESHOLD}"),
    POLLING: ("for", "5m", "2s"),
}
"""The test variant's only changes to the shipped rules: (field, shipped text, test text)."""
BOUND = 30.0
"""Seconds within which a notification must reach the webhook after its condition holds."""
SCHEDULE = "alert-lost-ack"


@dataclass(frozen=True)
class Notification:
    """One alert of one webhook call, as Alertmanager sent it, and when it arrived (UTC)."""

    status: str
    labels: dict[str, str]
    annotations: dict[str, str]
    received_at_utc: datetime


class _Receiver(ThreadingHTTPServer):
    notifications: list[Notification]
    lock: threading.Lock


class _Hook(BaseHTTPRequestHandler):
    server: _Receiver

    def do_POST(self) -> None:
        body = json.loads(self.rfile.read(int(self.headers["Content-Length"])))
        arrived = datetime.now(UTC)
        with self.server.lock:
            self.server.notifications += [
                Notification(a["status"], a["labels"], a["annotations"], arrived)
                for a in body["alerts"]
            ]
        self.send_response(200)
        self.end_headers()

    def log_message(self, format: str, *args: Any) -> None:
        """Quiet: the test reads the notifications, not the access log."""


@contextmanager
def webhook_receiver() -> Iterator[_Receiver]:
    """An HTTP server on 127.0.0.1 that keeps every alert Alertmanager posts to it."""
    server = _Receiver(("127.0.0.1", 0), _Hook)
    server.notifications = []
    server.lock = threading.Lock()
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield server
    finally:
        server.shutdown()
        server.server_close()
        thread.join(timeout=10)


def variant_rules(path: Path) -> Path:
    """The shipped rules with only the :data:`VARIANT` changes, written to ``path``."""
    document = yaml.safe_load(RULES.read_text(encoding="utf-8"))
    for rule in (r for g in document["groups"] for r in g["rules"] if r.get("alert") in VARIANT):
        field, shipped, ours = VARIANT[rule["alert"]]
        assert str(rule[field]).count(shipped) == 1, (rule["alert"], rule[field])
        rule[field] = str(rule[field]).replace(shipped, ours)
    path.write_text(yaml.safe_dump(document, sort_keys=False), encoding="utf-8")
    return path


def _alertmanager_config(hook_url: str) -> str:
    config = {
        "route": {
            "receiver": "hook",
            "group_by": ["alertname", "schedule_id"],
            "group_wait": "1s",
            "group_interval": "1s",
            "repeat_interval": "1h",
        },
        "receivers": [
            {"name": "hook", "webhook_configs": [{"url": hook_url, "send_resolved": True}]}
        ],
    }
    return json.dumps(config, indent=2)


def _prometheus_config(rules: Path, targets: dict[str, int], alertmanager: str) -> str:
    config = {
        "global": {"scrape_interval": "1s", "evaluation_interval": "1s"},
        "rule_files": [str(rules)],
        "alerting": {"alertmanagers": [{"static_configs": [{"targets": [alertmanager]}]}]},
        "scrape_configs": [
            {
                "job_name": job,
                "scrape_timeout": "1s",
                "static_configs": [{"targets": [f"127.0.0.1:{port}"]}],
            }
            for job, port in targets.items()
        ],
    }
    return json.dumps(config, indent=2)


def _lost_ack_spec(sink: Sink, now: datetime) -> dict[str, Any]:
    """One occurrence, a few seconds ahead, whose http action has no result query."""
    mark = (now + timedelta(seconds=12)).replace(microsecond=0)
    mark -= timedelta(seconds=mark.second % 5)
    return {
        "schema": "scheduleSpec.v1",
        "scheduleId": SCHEDULE,
        "revision": 1,
        "timeZone": "Etc/UTC",
        "tzdbVersion": "2026a",
        "rule": "FREQ=SECONDLY;INTERVAL=5",
        "start": f"{mark:%Y-%m-%dT%H:%M:%S}",
        "end": f"{mark:%Y-%m-%dT%H:%M:%S}",
        "cutoverAt": f"{now - timedelta(seconds=30):%Y-%m-%dT%H:%M:%SZ}",
        "action": {
            "name": "http",
            "parameters": {"url": f"{sink.url}/effects", "timeoutSeconds": 1},
        },
    }


def test_the_variant_changes_only_a_threshold_and_a_for(tmp_path: Path) -> None:
    variant = alert_rules(variant_rules(tmp_path / "rules.yml"))
    shipped = alert_rules()
    assert [r["alert"] for r in variant] == [r["alert"] for r in shipped]
    for ours, theirs in zip(variant, shipped, strict=True):
        if ours["alert"] in VARIANT:
            field, old, new = VARIANT[ours["alert"]]
            assert ours[field] == theirs[field].replace(old, new)
            ours = {**ours, field: theirs[field]}
        assert ours == theirs


@pytest.mark.anyio
@pytest.mark.temporal
@pytest.mark.slow
@pytest.mark.timeout(240)
async def test_an_unknown_effect_alert_reaches_the_webhook_and_resolves(tmp_path: Path) -> None:
    tool("prometheus")
    alertmanager_binary()
    ports = {"almanac-worker": free_port(), "almanac-worker-sdk": free_port()}
    env = await start_dev_server()
    ledger_url = f"sqlite:///{tmp_path / 'ledger.sqlite3'}"
    task_queue = "alerts-end-to-end"
    shipped = {r["alert"]: r for r in alert_rules()}[ALERT]

    servers: list[Prometheus | Alertmanager] = []
    worker: WorkerProcess | None = None
    ledger_: Ledger | None = None
    try:
        with Sink() as sink, webhook_receiver() as receiver:
            hook = f"http://127.0.0.1:{receiver.server_address[1]}/alerts"
            am_config = tmp_path / "alertmanager.yml"
            am_config.write_text(_alertmanager_config(hook), encoding="utf-8")
            alertmanager = Alertmanager.start(
                am_config, tmp_path / "am-data", tmp_path / "alertmanager.log"
            )
            servers.append(alertmanager)
            worker = await WorkerProcess.start(
                "alerts-end-to-end-worker",
                worker_env(tmp_path, ledger_url, env.client.service_client.config.target_host,
                           task_queue),
                tmp_path / "worker.log",
                ports["almanac-worker"],
                ports["almanac-worker-sdk"],
            )  # fmt: skip
            config = tmp_path / "prometheus.yml"
            config.write_text(
                _prometheus_config(variant_rules(tmp_path / "rules.yml"), ports,
                                   alertmanager.address),
                encoding="utf-8",
            )  # fmt: skip
            prometheus = Prometheus.start(config, tmp_path / "tsdb", tmp_path / "prometheus.log")
            servers.append(prometheus)
            await eventually(
                lambda: _rules_healthy(prometheus), lambda ok: ok, timeout=30, interval=0.5
            )
            # The polling rule reads the SDK's real metric: a live worker reports its pollers.
            await eventually(
                lambda: _pollers(prometheus), lambda n: n > 0, timeout=30, interval=0.5
            )

            sink.add_fault(match=SCHEDULE, delay=20, delayTimes=1)
            spec = _lost_ack_spec(sink, datetime.now(UTC))
            await env.client.start_workflow(
                ScheduleWorkflow.run,
                ScheduleInput(schedule_id=SCHEDULE, initial_spec=spec, refresh_seconds=5.0),
                id=schedule_workflow_id(SCHEDULE),
                task_queue=task_queue,
            )
            ledger_ = Ledger.from_url(ledger_url)
            (case,) = await eventually(
                lambda: _open_cases(ledger_), lambda cases: len(cases) == 1, timeout=60
            )
            due = case.opened_at_utc + timedelta(seconds=THRESHOLD)

            fired = (
                await eventually(
                    lambda: _notified(receiver, "firing"), bool, timeout=THRESHOLD + BOUND + 5
                )
            )[0]
            assert due <= fired.received_at_utc <= due + timedelta(seconds=BOUND), (due, fired)
            assert fired.labels == {
                "alertname": ALERT,
                "schedule_id": SCHEDULE,
                "severity": "critical",
            }
            assert fired.annotations["runbook_url"] == shipped["annotations"]["runbook_url"]
            assert fired.annotations["summary"].startswith(f"Schedule {SCHEDULE} has an")

            # The fix: the sink has the effect, so the case is reconciled as SUCCEEDED.
            assert sink.effect(case.occurrence_id) is not None
            resolved_at = datetime.now(UTC)
            resolve_reconciliation(
                ledger_,
                case.occurrence_id,
                ReconciliationResolution.SUCCEEDED,
                resolved_at,
                by="alerts-end-to-end",
                note="the sink recorded the effect",
            )
            resolved = (
                await eventually(lambda: _notified(receiver, "resolved"), bool, timeout=BOUND + 5)
            )[0]
            assert resolved.received_at_utc <= resolved_at + timedelta(seconds=BOUND)
            assert resolved.labels == fired.labels

            # Polling: quiet while the worker polls (its variant waits 2 s, and the worker has
            # polled far longer), then firing once it is gone.
            assert not prometheus.query(f'ALERTS{{alertname="{POLLING}"}}')
            assert not await _notified(receiver, "firing", POLLING)
            worker.stop()
            stopped_at = datetime.now(UTC)
            gone = (
                await eventually(
                    lambda: _notified(receiver, "firing", POLLING), bool, timeout=BOUND + 5
                )
            )[0]
            assert gone.received_at_utc <= stopped_at + timedelta(seconds=BOUND)
            assert gone.labels["severity"] == "critical"
            # Its pollers drop to 0 as it stops (task_queue), or its series go (absent: job).
            assert gone.labels.get("task_queue") == task_queue or gone.labels == {
                "alertname": POLLING,
                "job": "almanac-worker-sdk",
                "severity": "critical",
            }
    except BaseException:
        for name in ("worker.log", "prometheus.log", "alertmanager.log"):
            if (tmp_path / name).exists():
                print(f"--- {name} (last 4000 characters)")
                print((tmp_path / name).read_text(errors="replace")[-4000:])
        raise
    finally:
        for server in reversed(servers):
            server.stop()
        if worker is not None:
            worker.stop()
        if ledger_ is not None:
            ledger_.dispose()
        await env.shutdown()


async def _rules_healthy(prometheus: Prometheus) -> bool:
    """Every target up and every rule of the variant loaded and evaluated without error."""
    targets = prometheus.api("targets")["activeTargets"]
    groups = prometheus.api("rules")["groups"]
    rules = [rule for group in groups for rule in group["rules"]]
    return (
        len(targets) == 2
        and all(t["health"] == "up" for t in targets)
        and len(rules) == len(alert_rules())
        and all(rule["health"] == "ok" for rule in rules)
    )


async def _pollers(prometheus: Prometheus) -> float:
    series = prometheus.query('sum(temporal_num_pollers{job="almanac-worker-sdk"})')
    return float(series[0]["value"][1]) if series else 0.0


async def _open_cases(ledger_: Ledger | None) -> list[Any]:
    assert ledger_ is not None
    return open_cases(ledger_, SCHEDULE)


async def _notified(receiver: _Receiver, status: str, alert: str = ALERT) -> list[Notification]:
    """The webhook's notifications of ``alert`` with ``status`` (firing or resolved)."""
    with receiver.lock:
        return [
            n
            for n in receiver.notifications
            if n.status == status and n.labels.get("alertname") == alert
        ]
