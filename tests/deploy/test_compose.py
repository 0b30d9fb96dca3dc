"""docker-compose.yml, deploy/ and the Dockerfile, checked without a Docker engine.

The stack is for users' machines; here we check what can go wrong on paper: unpinned images,
dangling depends_on, environment variables Almanac does not read, Prometheus targets that do not
exist, dashboard queries over metric names the workers never export, an image built from
unhashed dependencies — and the trust boundary: ports published on 127.0.0.1 only, passwords
from a git-ignored .env with no defaults, metrics inside the stack's network only.
"""

from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
from pathlib import Path
from typing import Any

import pytest
import yaml
from alertkit import PENDING_METRICS, alert_rules
from metricsupport import exposed_sample_names, populated_registry
from pydantic_settings import BaseSettings

from almanac.settings import AlmanacSettings

ROOT = Path(__file__).resolve().parents[2]
COMPOSE = ROOT / "docker-compose.yml"
DOCKERFILE = ROOT / "Dockerfile"
PROMETHEUS = ROOT / "deploy" / "prometheus" / "prometheus.yml"
GRAFANA = ROOT / "deploy" / "grafana"
DASHBOARD = GRAFANA / "dashboards" / "almanac.json"
SEARCH_ATTRIBUTES_SCRIPT = ROOT / "deploy" / "temporal" / "register-search-attributes.sh"

# Services built from the Dockerfile: they run Almanac and read AlmanacSettings.
ALMANAC_SERVICES = {"almanac-migrate", "almanac-worker", "almanac-sink"}
INTERPOLATION = re.compile(r"\$\{(\w+)(?::?([-?])([^}]*))?\}")
ENV_EXAMPLE = ROOT / ".env.example"
TEST_PASSWORDS = {
    "TEMPORAL_DB_PASSWORD": "test-temporal-pw",
    "LEDGER_DB_PASSWORD": "test-ledger-pw",
    "GRAFANA_ADMIN_PASSWORD": "test-grafana-pw",
}
"""What an operator's .env would set (the variables .env.example lists)."""


def load_yaml(path: Path) -> Any:
    return yaml.safe_load(path.read_text(encoding="utf-8"))


@pytest.fixture(scope="module")
def services() -> dict[str, dict[str, Any]]:
    compose = load_yaml(COMPOSE)
    assert isinstance(compose["services"], dict)
    return compose["services"]


def interpolate(value: str) -> str:
    """Compose's ``${VAR:-default}`` and ``${VAR:?error}``, as with an operator's .env.

    Variables come from :data:`TEST_PASSWORDS`; a ``:?`` variable missing there is an error, as
    in compose.
    """

    def one(match: re.Match[str]) -> str:
        name, kind, rest = match.group(1), match.group(2), match.group(3)
        value = TEST_PASSWORDS.get(name) or os.environ.get(name)
        if value:
            return value
        if kind == "?":
            raise AssertionError(f"${{{name}}} is required and unset: {rest}")
        return rest or ""

    return INTERPOLATION.sub(one, value)


def environment(service: dict[str, Any]) -> dict[str, str]:
    env = service.get("environment") or {}
    if isinstance(env, list):  # the KEY=value list form
        env = dict(item.split("=", 1) for item in env)
    return {key: interpolate(str(value)) for key, value in env.items()}


def container_ports(service: dict[str, Any]) -> set[int]:
    ports = {int(str(port).split("/")[0]) for port in service.get("expose", [])}
    for mapping in service.get("ports", []):
        target = mapping["target"] if isinstance(mapping, dict) else str(mapping).split(":")[-1]
        ports.add(int(str(target).split("/")[0]))
    return ports


def option(command: list[str], name: str) -> str:
    return command[command.index(name) + 1]


def settings_env_names() -> dict[str, str]:
    """Every ALMANAC_* variable AlmanacSettings reads, mapped to its field's description."""
    names: dict[str, str] = {}

    def walk(model: type[BaseSettings]) -> None:
        prefix = str(model.model_config.get("env_prefix", ""))
        for field_name, info in model.model_fields.items():
            annotation = info.annotation
            if isinstance(annotation, type) and issubclass(annotation, BaseSettings):
                walk(annotation)  # nested concern: its own prefix (ALMANAC_TEMPORAL_*)
            else:
                names[f"{prefix}{field_name}".upper()] = info.description or ""

    walk(AlmanacSettings)
    return names


# --- compose --------------------------------------------------------------------------------


def test_every_service_has_a_pinned_image_tag_or_a_build(
    services: dict[str, dict[str, Any]],
) -> None:
    for name, service in services.items():
        if "build" in service:
            build = service["build"]
            context = ROOT / (build["context"] if isinstance(build, dict) else build)
            dockerfile = build.get("dockerfile", "Dockerfile") if isinstance(build, dict) else ""
            assert (context / (dockerfile or "Dockerfile")).is_file(), name
            continue
        image = service.get("image", "")
        assert image, f"{name}: neither image nor build"
        if "@sha256:" in image:
            continue
        repository, _, tag = image.rpartition(":")
        assert repository and "/" not in tag, f"{name}: {image} has no tag"
        assert tag != "latest" and re.search(r"\d", tag), f"{name}: {image} is not pinned"


def test_every_depends_on_target_exists_and_its_condition_can_be_met(
    services: dict[str, dict[str, Any]],
) -> None:
    for name, service in services.items():
        depends = service.get("depends_on") or {}
        if isinstance(depends, list):
            depends = {target: {"condition": "service_started"} for target in depends}
        for target, spec in depends.items():
            assert target in services, f"{name} depends on missing service {target}"
            assert target != name
            condition = spec.get("condition", "service_started")
            if condition == "service_healthy":
                assert "healthcheck" in services[target], f"{name}: {target} has no healthcheck"
            elif condition == "service_completed_successfully":
                assert services[target].get("restart", "no") == "no", f"{target} is not one-shot"
            else:
                assert condition == "service_started", f"{name}: condition {condition}"


def test_the_stack_has_the_services_design_section_8_names(
    services: dict[str, dict[str, Any]],
) -> None:
    images = {name: service.get("image", "") for name, service in services.items()}
    assert images["temporal"].startswith("temporalio/auto-setup:")
    assert images["temporal-ui"].startswith("temporalio/ui:")
    assert images["prometheus"].startswith("prom/prometheus:")
    assert images["grafana"].startswith("grafana/grafana:")
    assert images["alertmanager"].startswith("prom/alertmanager:")
    # Temporal's own database and the ledger's are separate services.
    assert environment(services["temporal"])["POSTGRES_SEEDS"] == "temporal-db"
    assert services["temporal-db"]["image"].startswith("postgres:")
    assert services["ledger-db"]["image"].startswith("postgres:")
    assert services["almanac-migrate"]["command"] == ["almanac", "db", "upgrade"]
    assert services["almanac-worker"]["deploy"]["replicas"] == 2
    sink = services["almanac-sink"]["command"]
    assert sink[:2] == ["almanac", "sink"]
    assert option(sink, "--host") == "0.0.0.0" and int(option(sink, "--port")) in container_ports(
        services["almanac-sink"]
    )


def test_workers_start_after_the_migration_and_the_search_attributes(
    services: dict[str, dict[str, Any]],
) -> None:
    depends = services["almanac-worker"]["depends_on"]
    assert depends["almanac-migrate"]["condition"] == "service_completed_successfully"
    assert depends["temporal-search-attributes"]["condition"] == "service_completed_successfully"
    assert depends["temporal"]["condition"] == "service_healthy"
    assert services["almanac-migrate"]["depends_on"]["ledger-db"]["condition"] == "service_healthy"


def test_almanac_services_set_only_documented_settings_variables(
    services: dict[str, dict[str, Any]],
) -> None:
    documented = settings_env_names()
    assert "ALMANAC_TEMPORAL_ADDRESS" in documented  # nested settings are walked
    for name in ALMANAC_SERVICES:
        env = environment(services[name])
        assert env, f"{name} sets no environment"
        for key in env:
            assert key in documented, f"{name}: {key} is not an AlmanacSettings field"
            assert documented[key], f"{name}: {key} has no description"


def test_almanac_services_environment_reaches_the_settings(
    services: dict[str, dict[str, Any]], monkeypatch: pytest.MonkeyPatch
) -> None:
    for key in list(os.environ):
        if key.startswith("ALMANAC_"):
            monkeypatch.delenv(key)
    for key, value in environment(services["almanac-worker"]).items():
        monkeypatch.setenv(key, value)

    settings = AlmanacSettings()
    assert settings.temporal.address == "temporal:7233"
    url = settings.resolved_ledger_url
    assert url.startswith("postgresql+psycopg://")
    assert "@ledger-db:5432/" in url  # the ledger's own database service
    assert TEST_PASSWORDS["LEDGER_DB_PASSWORD"] in url
    assert TEST_PASSWORDS["LEDGER_DB_PASSWORD"] not in repr(settings)
    assert str(settings.data_dir) == "/var/lib/almanac"
    assert environment(services["almanac-migrate"]) == environment(services["almanac-worker"])


def test_the_dockerfile_sets_only_documented_settings_variables() -> None:
    documented = settings_env_names()
    env_lines = [
        line
        for line in DOCKERFILE.read_text(encoding="utf-8").splitlines()
        if line.startswith("ENV")
    ]
    for key in re.findall(r"\b(ALMANAC_\w+)=", "\n".join(env_lines)):
        assert key in documented, key


def test_bind_mounted_files_exist(services: dict[str, dict[str, Any]]) -> None:
    for name, service in services.items():
        for volume in service.get("volumes", []):
            source = str(volume).split(":")[0]
            if source.startswith("./"):
                assert (ROOT / source).exists(), f"{name}: {source} is missing"


def test_worker_ports_match_exposure_healthcheck_and_prometheus(
    services: dict[str, dict[str, Any]],
) -> None:
    worker = services["almanac-worker"]
    metrics_port = int(option(worker["command"], "--metrics-port"))
    sdk_port = int(option(worker["command"], "--sdk-metrics-port"))
    assert metrics_port != sdk_port
    assert {metrics_port, sdk_port} <= container_ports(worker)
    assert f":{metrics_port}/metrics" in " ".join(worker["healthcheck"]["test"])
    assert "ports" not in worker  # replicas cannot share a published host port

    jobs = {job["job_name"]: job for job in load_yaml(PROMETHEUS)["scrape_configs"]}
    assert jobs["almanac-worker"]["dns_sd_configs"][0]["port"] == metrics_port
    assert jobs["almanac-worker-sdk"]["dns_sd_configs"][0]["port"] == sdk_port


def test_search_attributes_registered_are_the_workflows_own() -> None:
    from workflows.search_attributes import ALL

    script = SEARCH_ATTRIBUTES_SCRIPT.read_text(encoding="utf-8")
    registered = dict(re.findall(r"\b(\w+)=(Keyword|Int|Text|Bool|Double|Datetime)\b", script))
    expected = {
        key.name: key.indexed_value_type.name.removeprefix("INDEXED_VALUE_TYPE_").title()
        for key in ALL
    }
    assert registered == expected


@pytest.mark.skipif(shutil.which("docker") is None, reason="no docker client binary")
def test_docker_compose_config_is_valid() -> None:
    docker = shutil.which("docker")
    assert docker is not None
    probe = subprocess.run(
        [docker, "compose", "version"], capture_output=True, text=True, timeout=60, check=False
    )
    if probe.returncode != 0:
        pytest.skip("docker client has no compose plugin")
    env = {k: v for k, v in os.environ.items() if k not in TEST_PASSWORDS}
    without = subprocess.run(
        [docker, "compose", "-f", str(COMPOSE), "--env-file", str(ENV_EXAMPLE), "config", "-q"],
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
        cwd=ROOT,
        env=env,
    )
    assert without.returncode != 0  # the example .env has no passwords: compose refuses
    assert "PASSWORD" in without.stderr
    result = subprocess.run(
        [docker, "compose", "-f", str(COMPOSE), "config", "-q"],
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
        cwd=ROOT,
        env={**env, **TEST_PASSWORDS},
    )
    assert result.returncode == 0, result.stderr


# --- trust boundary ---------------------------------------------------------------------------


def published(service: dict[str, Any]) -> list[tuple[str | None, str]]:
    """Each published port as (host IP or None for every interface, the mapping as written)."""
    found: list[tuple[str | None, str]] = []
    for mapping in service.get("ports", []):
        if isinstance(mapping, dict):
            found.append((mapping.get("host_ip"), str(mapping)))
            continue
        text = str(mapping)
        parts = text.rsplit(":", 2)
        found.append((parts[0].strip("[]") if len(parts) == 3 else None, text))
    return found


def test_every_published_port_is_on_loopback_only(services: dict[str, dict[str, Any]]) -> None:
    mappings = [(name, p) for name, service in services.items() for p in published(service)]
    # Temporal, its UI, the ledger, the sink, Prometheus, Alertmanager, Grafana
    assert len(mappings) >= 7
    for name, (host_ip, text) in mappings:
        assert host_ip == "127.0.0.1", f"{name}: {text} is published on every interface"


PASSWORD_SETTINGS = {
    "temporal-db": ["POSTGRES_PASSWORD"],
    "temporal": ["POSTGRES_PWD"],
    "ledger-db": ["POSTGRES_PASSWORD"],
    "grafana": ["GF_SECURITY_ADMIN_PASSWORD"],
    "almanac-worker": ["ALMANAC_LEDGER_URL"],
    "almanac-migrate": ["ALMANAC_LEDGER_URL"],
}


def test_passwords_come_from_the_env_file_with_no_default(
    services: dict[str, dict[str, Any]],
) -> None:
    listed = dict(
        line.split("=", 1)
        for line in ENV_EXAMPLE.read_text(encoding="utf-8").splitlines()
        if line.strip() and not line.startswith("#")
    )
    assert set(listed) == set(TEST_PASSWORDS)
    assert all(value == "" for value in listed.values()), ".env.example must hold no password"
    for name, keys in PASSWORD_SETTINGS.items():
        raw = services[name].get("environment") or {}
        for key in keys:
            found = INTERPOLATION.findall(str(raw[key]))
            assert found, f"{name}: {key} is not taken from the environment"
            for variable, kind, _ in found:
                assert kind == "?", f"{name}: {key} has a default for ${{{variable}}}"
                assert variable in listed, f"{name}: {variable} is not in .env.example"
    compose_text = COMPOSE.read_text(encoding="utf-8")
    assert ":-admin}" not in compose_text and "admin / admin" not in compose_text


def test_the_env_file_is_ignored_by_git_and_by_the_image() -> None:
    for ignore in (ROOT / ".gitignore", ROOT / ".dockerignore"):
        lines = {line.strip() for line in ignore.read_text(encoding="utf-8").splitlines()}
        assert ".env" in lines, ignore.name
    assert ".env.example" not in (ROOT / ".gitignore").read_text(encoding="utf-8").split()


def test_workers_reach_only_the_stacks_sink_and_serve_metrics_inside_the_network(
    services: dict[str, dict[str, Any]],
) -> None:
    worker = services["almanac-worker"]
    assert environment(worker)["ALMANAC_EGRESS_ALLOW"] == "almanac-sink:8765"
    assert option(worker["command"], "--metrics-host") == "0.0.0.0"
    assert "ports" not in worker  # the metrics are for Prometheus inside the stack only
    settings_policy = AlmanacSettings(egress_allow="almanac-sink:8765").egress_policy
    assert ("almanac-sink", 8765) in settings_policy.allowed_hosts


# --- Prometheus -----------------------------------------------------------------------------


def test_prometheus_config_is_mounted_and_targets_services_on_exposed_ports(
    services: dict[str, dict[str, Any]],
) -> None:
    mounts = [str(volume) for volume in services["prometheus"]["volumes"]]
    assert any(
        mount.startswith("./deploy/prometheus/prometheus.yml:/etc/prometheus/prometheus.yml")
        for mount in mounts
    )
    config = load_yaml(PROMETHEUS)
    assert config["scrape_configs"]
    targets: list[tuple[str, str, int]] = []
    for job in config["scrape_configs"]:
        for static in job.get("static_configs", []):
            for target in static["targets"]:
                host, port = target.rsplit(":", 1)
                targets.append((job["job_name"], host, int(port)))
        for dns in job.get("dns_sd_configs", []):
            assert dns.get("type", "SRV") == "A", "Docker's DNS answers A records"
            targets += [(job["job_name"], host, int(dns["port"])) for host in dns["names"]]
        assert set(job) <= {"job_name", "static_configs", "dns_sd_configs", "metrics_path"}
    assert targets
    for job_name, host, port in targets:
        assert host in services, f"{job_name}: no service {host}"
        assert port in container_ports(services[host]), f"{job_name}: {host}:{port} not exposed"
    scraped = {host for _, host, _ in targets}
    assert {"almanac-worker", "temporal"} <= scraped


def test_prometheus_has_the_rules_mounted_and_alerts_the_stacks_alertmanager(
    services: dict[str, dict[str, Any]],
) -> None:
    config = load_yaml(PROMETHEUS)
    mounts = dict(
        str(volume).split(":")[:2]
        for volume in services["prometheus"]["volumes"]
        if str(volume).startswith("./")
    )
    config_dir = Path(mounts["./deploy/prometheus/prometheus.yml"]).parent
    rules_dir = Path(mounts["./deploy/prometheus/rules"])
    for pattern in config["rule_files"]:  # relative to the config file, as Prometheus reads it
        assert (config_dir / pattern).parent == rules_dir, pattern
        assert list((PROMETHEUS.parent / pattern).parent.glob(Path(pattern).name)), pattern
    (alertmanagers,) = config["alerting"]["alertmanagers"]
    (target,) = alertmanagers["static_configs"][0]["targets"]
    host, port = target.rsplit(":", 1)
    assert host in services and int(port) in container_ports(services[host])
    alertmanager = services[host]
    assert alertmanager["image"].startswith("prom/alertmanager:")
    command = alertmanager["command"]
    config_file = next(arg for arg in command if arg.startswith("--config.file="))
    assert (
        f"./deploy/alertmanager/alertmanager.yml:{config_file.split('=', 1)[1]}:ro"
        in alertmanager["volumes"]
    )
    assert "--cluster.listen-address=" in command  # one replica: no gossip port on any interface
    assert services["prometheus"]["depends_on"][host]["condition"] == "service_started"


def test_the_alertmanager_config_groups_by_schedule_and_holds_no_secret() -> None:
    config = load_yaml(ROOT / "deploy" / "alertmanager" / "alertmanager.yml")
    assert {"alertname", "schedule_id"} <= set(config["route"]["group_by"])
    names = {receiver["name"] for receiver in config["receivers"]}
    assert config["route"]["receiver"] in names
    assert {route["receiver"] for route in config["route"].get("routes", [])} <= names
    text = (ROOT / "deploy" / "alertmanager" / "alertmanager.yml").read_text(encoding="utf-8")
    assert not re.search(r"^\s*(url|api_key|password|auth_token|api_url):", text, re.M)


def test_temporal_server_exposes_its_metrics_where_prometheus_scrapes(
    services: dict[str, dict[str, Any]],
) -> None:
    endpoint = environment(services["temporal"])["PROMETHEUS_ENDPOINT"]
    port = int(endpoint.rsplit(":", 1)[1])
    jobs = {job["job_name"]: job for job in load_yaml(PROMETHEUS)["scrape_configs"]}
    assert jobs["temporal"]["static_configs"][0]["targets"] == [f"temporal:{port}"]


# --- Grafana --------------------------------------------------------------------------------

PROMQL_WORDS = {
    "by",
    "without",
    "on",
    "ignoring",
    "group_left",
    "group_right",
    "offset",
    "bool",
    "and",
    "or",
    "unless",
    "inf",
    "nan",
}


def promql_metric_names(expr: str) -> set[str]:
    """Metric names in a PromQL expression (Grafana variables allowed; not a full parser)."""
    label_values = re.fullmatch(r"\s*label_values\(\s*([\w:]+)\s*,\s*\w+\s*\)\s*", expr)
    if label_values:
        return {label_values.group(1)}
    text = re.sub(r'"(?:[^"\\]|\\.)*"', '""', expr)  # strings
    text = re.sub(r"\{[^}]*\}", "", text)  # label matchers
    text = re.sub(r"\[[^\]]*\]", "", text)  # range selectors
    text = re.sub(r"\b(?:by|without|on|ignoring|group_left|group_right)\s*\([^)]*\)", "", text)
    text = re.sub(r"\$\{?\w+\}?", "", text)  # $__rate_interval, $schedule_id
    names: set[str] = set()
    for match in re.finditer(r"(?<![\w.])[A-Za-z_:][\w:]*", text):
        if text[match.end() :].lstrip().startswith("("):
            continue  # a function
        if match.group().lower() not in PROMQL_WORDS:
            names.add(match.group())
    return names


def test_promql_metric_names_reads_the_dashboards_kind_of_query() -> None:
    expr = (
        "histogram_quantile(0.95, sum by (le, schedule_id) "
        '(rate(a_seconds_bucket{schedule_id=~"$s"}[$__rate_interval]))) '
        "/ on (x) group_left sum(b_total offset 5m) > bool 1e3"
    )
    assert promql_metric_names(expr) == {"a_seconds_bucket", "b_total"}
    assert promql_metric_names("label_values(almanac_occurrences, schedule_id)") == {
        "almanac_occurrences"
    }


def dashboard_queries(dashboard: dict[str, Any]) -> list[str]:
    queries: list[str] = []
    panels = list(dashboard["panels"])
    while panels:
        panel = panels.pop()
        panels += panel.get("panels", [])
        queries += [target["expr"] for target in panel.get("targets", [])]
    for variable in dashboard.get("templating", {}).get("list", []):
        query = variable.get("query")
        if variable.get("type") == "query":
            queries.append(query["query"] if isinstance(query, dict) else query)
    return queries


def test_every_almanac_metric_the_dashboard_queries_is_exported_by_activities_metrics() -> None:
    # The other names are the Temporal SDK's and server's: test_dashboard_queries.py finds them
    # (and these) in a real Prometheus scraping a running worker and dev server.
    exported = exposed_sample_names(populated_registry())
    dashboard = json.loads(DASHBOARD.read_text(encoding="utf-8"))
    used = set().union(*(promql_metric_names(query) for query in dashboard_queries(dashboard)))
    almanac = {name for name in used if name.startswith("almanac_")}
    assert almanac, "the dashboard queries no Almanac metric"
    # Pending: the deadline and streak metrics the alert rules read too (alertkit).
    missing = almanac - exported - set(PENDING_METRICS)
    assert not missing, f"not exported: {sorted(missing)}"


def test_the_dashboard_shows_every_metric_an_alert_rule_reads() -> None:
    dashboard = json.loads(DASHBOARD.read_text(encoding="utf-8"))
    shown = set().union(*(promql_metric_names(query) for query in dashboard_queries(dashboard)))
    for rule in alert_rules():
        read = promql_metric_names(rule["expr"])
        assert read, rule["alert"]
        assert read <= shown, f"{rule['alert']}: no panel shows {sorted(read - shown)}"


def test_the_dashboard_shows_every_metric_design_section_8_asks_for() -> None:
    dashboard = json.loads(DASHBOARD.read_text(encoding="utf-8"))
    used = set().union(*(promql_metric_names(query) for query in dashboard_queries(dashboard)))
    for name in (
        "almanac_materialization_duration_seconds_bucket",
        "almanac_materialized_rows_total",
        "almanac_misfires_total",
        "almanac_attempts_total",
        "almanac_dispatch_lag_seconds_bucket",
        "almanac_unknown_effects_open",
        "almanac_unknown_effects_oldest_age_seconds",
        "almanac_occurrences",
    ):
        assert name in used, name


def test_ledger_gauges_are_never_summed_across_workers() -> None:
    # Every worker exports the same ledger numbers: summing them would multiply by the replicas.
    dashboard = json.loads(DASHBOARD.read_text(encoding="utf-8"))
    for query in dashboard_queries(dashboard):
        for gauge in ("almanac_occurrences", "almanac_unknown_effects_open"):
            if gauge in query and not query.startswith("label_values"):
                assert re.search(rf"(max|min)( by \([^)]*\))? \({gauge}\b", query), query


def test_grafana_provisioning_points_at_the_dashboard_and_prometheus(
    services: dict[str, dict[str, Any]],
) -> None:
    mounts = dict(
        str(volume).split(":")[:2]
        for volume in services["grafana"]["volumes"]
        if str(volume).startswith("./")
    )
    provisioning = GRAFANA / "provisioning"
    assert mounts["./deploy/grafana/provisioning"] == "/etc/grafana/provisioning"

    (datasource,) = load_yaml(provisioning / "datasources" / "prometheus.yml")["datasources"]
    assert datasource["type"] == "prometheus"
    host, port = datasource["url"].removeprefix("http://").split(":")
    assert host in services and int(port) in container_ports(services[host])

    (provider,) = load_yaml(provisioning / "dashboards" / "almanac.yml")["providers"]
    assert mounts["./deploy/grafana/dashboards"] == provider["options"]["path"]

    dashboard = json.loads(DASHBOARD.read_text(encoding="utf-8"))
    panels = [panel for panel in dashboard["panels"] if panel["type"] != "row"]
    assert panels
    for panel in panels:
        assert panel["datasource"]["uid"] == datasource["uid"], panel["title"]


# --- Dockerfile -----------------------------------------------------------------------------


def dockerfile_instructions() -> list[str]:
    text = DOCKERFILE.read_text(encoding="utf-8").replace("\\\n", " ")
    return [
        " ".join(line.split()) for line in text.splitlines() if line and not line.startswith("#")
    ]


def test_dockerfile_installs_the_hash_locked_dependencies_then_the_project_without_deps() -> None:
    instructions = dockerfile_instructions()
    assert instructions[0].startswith("FROM python:3.11-slim")
    runs = [line for line in instructions if line.startswith("RUN ")]
    text = "\n".join(runs)
    lock_at = text.index("pip install --require-hashes -r requirements.lock")
    project = re.search(r"pip install --no-deps [^&\n]*\s\.(?:\s|$)", text)
    assert project is not None, "the project is not installed with --no-deps"
    assert lock_at < project.start()
    for line in runs:
        for install in re.findall(r"pip install[^&]*", line):
            if " -r " in install:
                assert "--require-hashes" in install, install
    copied = [line for line in instructions if line.startswith("COPY ")]
    assert "requirements.lock" in copied[0], "the lock is copied (and installed) first"


@pytest.mark.parametrize("lock", ["requirements.lock", "deploy/build-backend.lock"])
def test_every_locked_requirement_carries_a_hash(lock: str) -> None:
    text = (ROOT / lock).read_text(encoding="utf-8")
    requirements = re.split(r"\n(?=[A-Za-z0-9])", re.sub(r"(?m)^\s*#.*\n", "", text).strip())
    assert requirements
    for requirement in requirements:
        assert re.match(r"[\w.-]+(\[[\w,]+\])?==\S+", requirement), requirement
        assert "--hash=sha256:" in requirement, requirement.splitlines()[0]


def test_the_build_backend_lock_pins_pyproject_build_system() -> None:
    import tomllib

    pyproject = tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))
    backend_lock = (ROOT / "deploy" / "build-backend.lock").read_text(encoding="utf-8")
    for requirement in pyproject["build-system"]["requires"]:
        assert requirement in backend_lock, requirement


def test_dockerignore_keeps_the_lock_files_and_sources_in_the_context() -> None:
    ignored = {
        line.strip()
        for line in (ROOT / ".dockerignore").read_text(encoding="utf-8").splitlines()
        if line.strip() and not line.startswith("#")
    }
    for needed in (
        "requirements.lock",
        "pyproject.toml",
        "README.md",
        "deploy",
        "deploy/build-backend.lock",
        "timecontract",
        "ledger",
        "activities",
        "workflows",
        "almanac",
        "worker.py",
    ):
        assert needed not in ignored, needed
    assert ".venv" in ignored and ".git" in ignored
