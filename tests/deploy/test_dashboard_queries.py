"""The Grafana dashboard, proven: a real Prometheus answers every panel's PromQL with series.

``deploy/grafana/dashboards/almanac.json`` is only worth shipping if its queries find data. Here a
real Prometheus (Debian's ``prometheus``; see ``promkit``) scrapes, every second, on 127.0.0.1:

- a running worker (``python -m worker --metrics-port … --sdk-metrics-port …``: the production
  command and workflows) — Almanac's metrics (job ``almanac-worker``) and the Temporal SDK's
  (``almanac-worker-sdk``);
- the Temporal dev server's own metrics (``temporal``).

The job names are ``deploy/prometheus/prometheus.yml``'s. Two schedules then run in real time
against the sink, so that occurrences ran, were retried, misfired and went UNKNOWN_EFFECT:

- ``dash-steady`` (every 5 s, cutover 30 s ago, lateness 2 s, CATCH_UP_BOUNDED of 1): the overdue
  occurrences misfire (one caught up, the rest expired); the sink answers its first delivery 500
  (a retry), then every occurrence succeeds; it has a ``failureStreak`` policy (N = 3, noop);
- ``dash-lost-ack`` (one occurrence, no result query): the sink records the effect and holds its
  answer past the action's timeout, so the attempt ends UNKNOWN_EFFECT and a case stays open.

Once the ledger shows all of that, every panel target (read from the dashboard JSON, Grafana
variables substituted as "All" would) and the schedule variable's ``label_values`` must return at
least one series with a number (not NaN) from ``/api/v1/query``. A panel that names a metric
nobody exports, or a label nobody sets, fails here.
"""

from __future__ import annotations

import json
import math
import subprocess
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import pytest
import yaml
from alertkit import PENDING_METRICS
from promkit import REQUIRE_ENV, Prometheus, expand, free_port, panel_queries, scrape_config, tool
from temporal_env import binary, eventually, start_dev_server
from workerkit import WorkerProcess, worker_env

from almanac.stack.sink import Sink
from ledger import (
    Ledger,
    OccurrenceState,
    counts_by_state,
    list_occurrences,
    open_cases,
    show_occurrence,
)
from ledger.shadow import shadow_materialize
from workflows import ScheduleInput, ScheduleWorkflow, schedule_workflow_id

ROOT = Path(__file__).resolve().parents[2]
DEPLOY_PROMETHEUS = ROOT / "deploy" / "prometheus"
DASHBOARD = ROOT / "deploy" / "grafana" / "dashboards" / "almanac.json"
JOBS = ("almanac-worker", "almanac-worker-sdk", "temporal")
STEADY = "dash-steady"
LOST_ACK = "dash-lost-ack"
# Grafana's values with the schedule variable on "All" (its allValue) and a recent time range. The
# rate window spans a minute of one-second scrapes; the schedules run for longer than that.
VARIABLES = {
    "schedule_id": ".*",
    "__rate_interval": "1m",
    "__interval": "15s",
    "__range": "10m",
}
# The same with both schedules picked (Grafana joins a multi-value as a regex alternation): ".*"
# also matches a missing label, so only a real selection proves the panels' label names.
SELECTED = {**VARIABLES, "schedule_id": f"({STEADY}|{LOST_ACK})"}


def _promtool(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [tool("promtool"), *args], capture_output=True, text=True, timeout=60, check=False
    )


def test_the_deploy_prometheus_config_and_its_rules_pass_promtool() -> None:
    config = DEPLOY_PROMETHEUS / "prometheus.yml"
    checked = _promtool("check", "config", str(config))
    assert checked.returncode == 0, checked.stdout + checked.stderr
    # Rules: those the config names (globs, relative to it; each must match) and any rule file
    # beside it.
    named = yaml.safe_load(config.read_text(encoding="utf-8")).get("rule_files") or []
    rules = {path for name in named for path in DEPLOY_PROMETHEUS.glob(name)}
    for name in named:
        assert list(DEPLOY_PROMETHEUS.glob(name)), f"rule_files: {name} matches no file"
    rules |= {p for p in DEPLOY_PROMETHEUS.rglob("*.yml") if p.name != "prometheus.yml"}
    rules |= set(DEPLOY_PROMETHEUS.rglob("*.yaml"))
    for path in sorted(rules):
        checked = _promtool("check", "rules", str(path))
        assert checked.returncode == 0, f"{path}: {checked.stdout}{checked.stderr}"


def test_promtool_rejects_a_broken_config(tmp_path: Path) -> None:
    # The check above can fail: an unknown field and a bad interval are refused.
    broken = tmp_path / "prometheus.yml"
    broken.write_text("global:\n  scrape_interval: soon\nscrape_configs: []\n")
    assert _promtool("check", "config", str(broken)).returncode != 0


def test_expand_substitutes_grafana_variables_in_both_spellings() -> None:
    expr = 'rate(x{a=~"$schedule_id"}[$__rate_interval]) + y{b="${schedule_id}"}'
    assert expand(expr, VARIABLES) == 'rate(x{a=~".*"}[1m]) + y{b=".*"}'
    with pytest.raises(KeyError, match="unknown"):
        expand("z[$unknown]", VARIABLES)


def test_every_dashboard_variable_has_a_substitute() -> None:
    dashboard = json.loads(DASHBOARD.read_text(encoding="utf-8"))
    names = {variable["name"] for variable in dashboard["templating"]["list"]}
    assert names <= set(VARIABLES), names - set(VARIABLES)
    for query in panel_queries(dashboard):
        expand(query.expr, VARIABLES)  # raises on a variable without a value


def _spec(schedule_id: str, sink: Sink, now: datetime, **extra: Any) -> dict[str, Any]:
    return {
        "schema": "scheduleSpec.v1",
        "scheduleId": schedule_id,
        "revision": 1,
        "timeZone": "Etc/UTC",
        "tzdbVersion": "2026a",
        "rule": "FREQ=SECONDLY;INTERVAL=5",
        "lateness": "PT2S",
        "misfirePolicy": "CATCH_UP_BOUNDED",
        "maxCatchUp": 1,
        "cutoverAt": f"{now - timedelta(seconds=30):%Y-%m-%dT%H:%M:%SZ}",
        "action": {
            "name": "http",
            "parameters": {
                "url": f"{sink.url}/effects",
                "resultUrl": f"{sink.url}/effects/{{idempotencyKey}}",
                "timeoutSeconds": 5,
            },
        },
        **extra,
    }


@pytest.mark.anyio
@pytest.mark.temporal
@pytest.mark.slow
@pytest.mark.timeout(240)
async def test_every_panel_query_returns_series_from_a_running_worker_and_server(
    tmp_path: Path,
) -> None:
    tool("prometheus")
    tool("promtool")
    ports = {job: free_port() for job in JOBS}
    env = await start_dev_server(dev_server_extra_args=["--metrics-port", str(ports["temporal"])])
    ledger_url = f"sqlite:///{tmp_path / 'ledger.sqlite3'}"
    task_queue = "dashboard-proof"
    temporal_address = env.client.service_client.config.target_host
    config = tmp_path / "prometheus.yml"
    config.write_text(
        scrape_config({job: [f"127.0.0.1:{port}"] for job, port in ports.items()}),
        encoding="utf-8",
    )
    checked = _promtool("check", "config", str(config))
    assert checked.returncode == 0, checked.stdout + checked.stderr
    assert binary("temporal")  # the dev server above ran from the venv's binary, never a download

    worker: WorkerProcess | None = None
    prometheus: Prometheus | None = None
    ledger_ = None
    try:
        with Sink() as sink:
            worker = await WorkerProcess.start(
                "dashboard-proof-worker",
                worker_env(tmp_path, ledger_url, temporal_address, task_queue),
                tmp_path / "worker.log",
                ports["almanac-worker"],
                ports["almanac-worker-sdk"],
            )
            prometheus = Prometheus.start(config, tmp_path / "tsdb", tmp_path / "prometheus.log")
            await eventually(
                lambda: _targets_up(prometheus), lambda up: up == set(JOBS), timeout=30
            )

            now = datetime.now(UTC)
            # The first delivery of the steady schedule fails: one RETRY_WAIT, then success.
            sink.add_fault(match=STEADY, failTimes=1, status=500)
            mark = (now + timedelta(seconds=12)).replace(microsecond=0)
            mark -= timedelta(seconds=mark.second % 5)
            lost = _spec(LOST_ACK, sink, now, start=f"{mark:%Y-%m-%dT%H:%M:%S}")
            lost["end"] = lost["start"]
            lost["action"]["parameters"] = {"url": f"{sink.url}/effects", "timeoutSeconds": 1}
            # Recorded, then answered only after the caller gave up: an unknown effect.
            sink.add_fault(match=LOST_ACK, delay=20, delayTimes=1)
            # A failure-streak policy: the threshold panel reads its N (notified through noop).
            streak = {"notifyAfter": 3, "action": {"name": "noop"}}
            for spec in (_spec(STEADY, sink, now, failureStreak=streak), lost):
                await env.client.start_workflow(
                    ScheduleWorkflow.run,
                    ScheduleInput(
                        schedule_id=spec["scheduleId"],
                        initial_spec=spec,
                        horizon_seconds=60.0,
                        refresh_seconds=5.0,
                        occurrence_first_retry_delay_seconds=1.0,
                    ),
                    id=schedule_workflow_id(spec["scheduleId"]),
                    task_queue=task_queue,
                )

            ledger_ = Ledger.from_url(ledger_url)
            await eventually(
                lambda: _scenario(ledger_),
                lambda seen: seen["ran"] and seen["retried"],
                timeout=60,
                interval=0.5,
            )
            # Misfire: disabled while two marks pass by more than the lateness, then enabled.
            steady = env.client.get_workflow_handle(schedule_workflow_id(STEADY))
            await steady.signal("disable", {"reason": "prove the misfire panel"})
            await eventually(
                lambda: _overdue(ledger_, STEADY), lambda n: n >= 2, timeout=60, interval=0.5
            )
            await steady.signal("enable", {})
            await eventually(
                lambda: _scenario(ledger_),
                lambda seen: all(seen.values()),
                timeout=60,
                interval=0.5,
            )

            # Rollout row: a candidate implementation's shadow run of the steady schedule.
            shadow_materialize(
                ledger_, "candidate", STEADY, now, now + timedelta(minutes=5), now, by="dashboard"
            )

            dashboard = json.loads(DASHBOARD.read_text(encoding="utf-8"))
            queries = panel_queries(dashboard)
            assert queries, "the dashboard has no queries"
            # Prometheus sees the ledger's state one scrape later; rates need a second sample.
            empty = await eventually(
                lambda: _empty_queries(prometheus, queries),
                lambda missing: not missing,
                timeout=30,
                interval=1.0,
            )
            assert not empty
            schedules = prometheus.api(
                "label/schedule_id/values", **{"match[]": "almanac_occurrences"}
            )
            assert {STEADY, LOST_ACK} <= set(schedules)
    except BaseException:
        for name in ("worker.log", "prometheus.log"):  # shown with the failure (captured stdout)
            if (tmp_path / name).exists():
                print(f"--- {name} (last 4000 characters)")
                print((tmp_path / name).read_text(errors="replace")[-4000:])
        raise
    finally:
        if prometheus is not None:
            prometheus.stop()
        if worker is not None:
            worker.stop()
        if ledger_ is not None:
            ledger_.dispose()
        await env.shutdown()


async def _targets_up(prometheus: Prometheus) -> set[str]:
    targets = prometheus.api("targets")["activeTargets"]
    return {t["labels"]["job"] for t in targets if t["health"] == "up"}


async def _scenario(ledger_: Ledger) -> dict[str, bool]:
    """What the ledger shows happened so far (each must become true)."""
    steady = counts_by_state(ledger_, STEADY)
    lost = counts_by_state(ledger_, LOST_ACK)
    return {
        "ran": steady.get(OccurrenceState.SUCCEEDED, 0) >= 2,
        "misfired": steady.get(OccurrenceState.MISFIRE_EXPIRED, 0) >= 1,
        "retried": _retried(ledger_),
        "unknown effect": lost.get(OccurrenceState.UNKNOWN_EFFECT, 0) == 1
        and len(open_cases(ledger_, LOST_ACK)) == 1,
    }


async def _overdue(ledger_: Ledger, schedule_id: str) -> int:
    """Occurrences not yet released whose instant is past by more than the 2 s lateness."""
    before = datetime.now(UTC) - timedelta(seconds=3)
    waiting = [OccurrenceState.PLANNED, OccurrenceState.DUE]
    return len(list_occurrences(ledger_, schedule_id, to_utc=before, states=waiting))


def _retried(ledger_: Ledger) -> bool:
    rows = list_occurrences(ledger_, STEADY)
    return any(len(show_occurrence(ledger_, row.occurrence_id).attempts) > 1 for row in rows)


async def _empty_queries(prometheus: Prometheus, queries: list[Any]) -> list[str]:
    """The panel targets whose query returns no series with a number (not NaN).

    Targets on a metric no worker exports yet (``alertkit.PENDING_METRICS``) are left out.
    """
    missing = []
    for variables in (VARIABLES, SELECTED):
        for query in queries:
            if any(name in query.expr for name in PENDING_METRICS):
                continue
            series = prometheus.query(expand(query.expr, variables))
            if not [s for s in series if not math.isnan(float(s["value"][1]))]:
                missing.append(f"{query} (schedule_id={variables['schedule_id']}) -> {series}")
    return missing


def test_require_env_is_the_one_ci_sets() -> None:
    ci = (ROOT / ".ci" / "run").read_text(encoding="utf-8")
    assert f"export {REQUIRE_ENV}=1" in ci
