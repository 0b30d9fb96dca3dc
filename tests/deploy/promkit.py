"""A real Prometheus (and Alertmanager) for the deployment tests: Debian's binaries.

The tests start their own server (a config of their own, loopback only, a temporary data
directory, a one-second scrape interval) and read it through the HTTP API, as Grafana does.
Without the binaries the tests skip — unless ``ALMANAC_REQUIRE_PROMETHEUS=1`` (CI, ``.ci/run``),
then they fail, as ``ALMANAC_REQUIRE_POSTGRES`` does for the PostgreSQL suite.
"""

from __future__ import annotations

import json
import os
import re
import shutil
import signal
import socket
import subprocess
import time
import urllib.parse
import urllib.request
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest

REQUIRE_ENV = "ALMANAC_REQUIRE_PROMETHEUS"


def tool(name: str) -> str:
    """The path of ``prometheus`` or ``promtool``; skip without it (fail when required)."""
    found = shutil.which(name)
    if found:
        return found
    message = f"{name} not found (Debian: apt-get install prometheus)"
    if os.environ.get(REQUIRE_ENV) == "1":
        pytest.fail(f"{message} ({REQUIRE_ENV}=1)", pytrace=False)
    pytest.skip(message)


def free_port() -> int:
    """A TCP port free on 127.0.0.1 right now."""
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return int(probe.getsockname()[1])


def scrape_config(jobs: dict[str, list[str]], interval: str = "1s") -> str:
    """A Prometheus config scraping ``{job: [host:port, ...]}`` every ``interval``."""
    config: dict[str, Any] = {
        "global": {"scrape_interval": interval, "evaluation_interval": interval},
        "scrape_configs": [
            {"job_name": job, "scrape_timeout": interval, "static_configs": [{"targets": targets}]}
            for job, targets in jobs.items()
        ],
    }
    return json.dumps(config, indent=2)  # YAML is a superset of JSON


@dataclass
class _Server:
    """A running server process (started here) and its HTTP endpoints on 127.0.0.1."""

    process: subprocess.Popen[bytes]
    port: int
    log: Path

    @classmethod
    def _launch(cls, argv: list[str], port: int, log: Path) -> Any:
        """Start ``argv`` (its output to ``log``); wait (60 s at most) until it answers ready."""
        with log.open("ab") as handle:
            process = subprocess.Popen(
                argv, stdout=handle, stderr=subprocess.STDOUT, start_new_session=True
            )
        server = cls(process, port, log)
        deadline = time.monotonic() + 60
        while not server.ready():
            if process.poll() is not None or time.monotonic() > deadline:
                server.stop()
                name = Path(argv[0]).name
                pytest.fail(f"{name} did not become ready:\n{log.read_text(errors='replace')}")
            time.sleep(0.1)
        return server

    def ready(self) -> bool:
        """Whether ``/-/ready`` answers 200."""
        try:
            with urllib.request.urlopen(self._url("/-/ready"), timeout=2) as response:
                return bool(response.status == 200)
        except OSError:
            return False

    def stop(self) -> None:
        """SIGTERM this process (by its pid), SIGKILL if it has not exited within 30 s."""
        if self.process.poll() is not None:
            return
        self.process.send_signal(signal.SIGTERM)
        try:
            self.process.wait(timeout=30)
        except subprocess.TimeoutExpired:
            self.process.kill()
            self.process.wait(timeout=30)

    def _url(self, path: str) -> str:
        return f"http://127.0.0.1:{self.port}{path}"


@dataclass
class Prometheus(_Server):
    """A running ``prometheus`` process and its HTTP API on 127.0.0.1."""

    @classmethod
    def start(cls, config: Path, data_dir: Path, log: Path) -> Prometheus:
        """Start ``prometheus`` on ``config``; wait (60 s at most) until it answers ready."""
        port = free_port()
        argv = [
            tool("prometheus"),
            f"--config.file={config}",
            f"--storage.tsdb.path={data_dir}",
            f"--web.listen-address=127.0.0.1:{port}",
            "--log.level=warn",
        ]
        server: Prometheus = cls._launch(argv, port, log)
        return server

    def api(self, path: str, **params: str) -> Any:
        """``GET /api/v1/<path>?params``: the ``data`` of a successful answer."""
        query = urllib.parse.urlencode(params)
        with urllib.request.urlopen(self._url(f"/api/v1/{path}?{query}"), timeout=10) as response:
            body = json.load(response)
        if body.get("status") != "success":
            raise AssertionError(f"{path} {params}: {body}")
        return body["data"]

    def query(self, expr: str) -> list[dict[str, Any]]:
        """An instant query (``/api/v1/query``): the series of its vector result."""
        data = self.api("query", query=expr)
        if data["resultType"] != "vector":
            raise AssertionError(f"{expr}: a {data['resultType']}, not a vector")
        return list(data["result"])


ALERTMANAGER_NAMES = ("prometheus-alertmanager", "alertmanager")
"""Alertmanager's binary: Debian's name (``prometheus-alertmanager``), then upstream's."""


def alertmanager_binary() -> str:
    """The Alertmanager binary; skip without it (fail when ``ALMANAC_REQUIRE_PROMETHEUS=1``)."""
    for name in ALERTMANAGER_NAMES:
        if found := shutil.which(name):
            return found
    message = "alertmanager not found (Debian: apt-get install prometheus-alertmanager)"
    if os.environ.get(REQUIRE_ENV) == "1":
        pytest.fail(f"{message} ({REQUIRE_ENV}=1)", pytrace=False)
    pytest.skip(message)


@dataclass
class Alertmanager(_Server):
    """A running Alertmanager on 127.0.0.1: one replica, no cluster port."""

    @classmethod
    def start(cls, config: Path, data_dir: Path, log: Path) -> Alertmanager:
        """Start Alertmanager on ``config``; wait (60 s at most) until it answers ready."""
        port = free_port()
        argv = [
            alertmanager_binary(),
            f"--config.file={config}",
            f"--storage.path={data_dir}",
            f"--web.listen-address=127.0.0.1:{port}",
            "--cluster.listen-address=",
            "--log.level=warn",
        ]
        server: Alertmanager = cls._launch(argv, port, log)
        return server

    @property
    def address(self) -> str:
        """``127.0.0.1:<port>``, as Prometheus's ``alerting`` section names it."""
        return f"127.0.0.1:{self.port}"


@dataclass(frozen=True)
class PanelQuery:
    """One PromQL target of one dashboard panel."""

    panel: str
    """The panel's title."""
    ref_id: str
    """The target's ``refId`` (A, B, …)."""
    expr: str
    """The PromQL as written in the dashboard (Grafana variables unexpanded)."""

    def __str__(self) -> str:
        return f"{self.panel} [{self.ref_id}]: {self.expr}"


def panel_queries(dashboard: dict[str, Any]) -> list[PanelQuery]:
    """Every PromQL target of every panel (rows' nested panels included), in dashboard order."""
    found: list[PanelQuery] = []
    for panel in dashboard["panels"]:
        for inner in [panel, *panel.get("panels", [])]:
            for target in inner.get("targets", []):
                found.append(PanelQuery(inner["title"], target["refId"], target["expr"]))
    return found


def expand(expr: str, variables: dict[str, str]) -> str:
    """Substitute Grafana variables (``$name`` and ``${name}``) the way Grafana would."""

    def value(match: re.Match[str]) -> str:
        name = match.group(1) or match.group(2)
        if name not in variables:
            raise KeyError(f"no value for ${name} in {expr!r}")
        return variables[name]

    return re.sub(r"\$\{(\w+)\}|\$(\w+)", value, expr)
