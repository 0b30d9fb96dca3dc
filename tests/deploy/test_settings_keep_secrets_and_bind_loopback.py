"""Settings never print their secrets; Temporal takes mTLS beside the API key; every endpoint the
worker opens listens on loopback unless an operator widens it."""

from __future__ import annotations

import asyncio
import os
import sys
from pathlib import Path
from typing import Any

import pytest
from prometheus_client import CollectorRegistry
from temporalio.service import TLSConfig

from activities.metrics import start_metrics_server
from almanac import schedule_reader, worker
from almanac.settings import AlmanacSettings, TemporalSettings

API_KEY = "canary-api-key-77d0"
PASSWORD = "canary-db-password-5e2a"
LEDGER_URL = f"postgresql+psycopg://almanac:{PASSWORD}@db.example.test:5432/almanac"


@pytest.fixture
def clean_env(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> pytest.MonkeyPatch:
    for key in [k for k in os.environ if k.startswith("ALMANAC_")]:
        monkeypatch.delenv(key)
    monkeypatch.setenv("ALMANAC_DATA_DIR", str(tmp_path))
    return monkeypatch


def test_repr_and_json_of_the_settings_hold_neither_the_api_key_nor_the_db_password(
    clean_env: pytest.MonkeyPatch,
) -> None:
    clean_env.setenv("ALMANAC_TEMPORAL_API_KEY", API_KEY)
    clean_env.setenv("ALMANAC_LEDGER_URL", LEDGER_URL)
    settings = AlmanacSettings()
    for text in (repr(settings), str(settings), settings.model_dump_json()):
        assert API_KEY not in text
        assert PASSWORD not in text
    assert settings.resolved_ledger_url == LEDGER_URL
    assert settings.temporal.api_key_value() == API_KEY


def _pem_files(tmp_path: Path) -> dict[str, Path]:
    files = {}
    for name in ("client.pem", "client.key", "ca.pem"):
        files[name] = tmp_path / name
        files[name].write_bytes(f"-----{name}-----\n".encode())
    return files


def test_mtls_paths_become_a_tls_config_with_the_files_contents(tmp_path: Path) -> None:
    files = _pem_files(tmp_path)
    temporal = TemporalSettings(
        tls_client_cert_path=files["client.pem"],
        tls_client_key_path=files["client.key"],
        tls_server_ca_cert_path=files["ca.pem"],
        tls_server_name="temporal.internal",
    )
    config = temporal.tls_config()
    assert isinstance(config, TLSConfig)
    assert config.client_cert == b"-----client.pem-----\n"
    assert config.client_private_key == b"-----client.key-----\n"
    assert config.server_root_ca_cert == b"-----ca.pem-----\n"
    assert config.domain == "temporal.internal"
    assert TemporalSettings().tls_config() is False
    assert TemporalSettings(tls=True).tls_config() is True


def test_a_client_certificate_without_its_key_is_an_error_naming_the_settings(
    tmp_path: Path,
) -> None:
    files = _pem_files(tmp_path)
    with pytest.raises(ValueError, match="ALMANAC_TEMPORAL_TLS_CLIENT_KEY_PATH"):
        TemporalSettings(tls_client_cert_path=files["client.pem"]).tls_config()
    with pytest.raises(ValueError, match="ALMANAC_TEMPORAL_TLS_SERVER_CA_CERT_PATH"):
        TemporalSettings(tls_server_ca_cert_path=tmp_path / "missing.pem").tls_config()


@pytest.mark.parametrize("connect", ["worker", "client"])
def test_both_connections_pass_mtls_and_the_api_key_to_temporal(
    connect: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    files = _pem_files(tmp_path)
    settings = AlmanacSettings(
        data_dir=tmp_path,
        temporal=TemporalSettings(
            api_key=API_KEY,
            tls_client_cert_path=files["client.pem"],
            tls_client_key_path=files["client.key"],
        ),
    )
    seen: dict[str, Any] = {}

    async def fake_connect(address: str, **kw: Any) -> str:
        seen.update(kw, address=address)
        return "client"

    monkeypatch.setattr("temporalio.client.Client.connect", fake_connect)
    if connect == "worker":
        asyncio.run(worker.connect(settings))
    else:
        asyncio.run(schedule_reader.connect_temporal(settings))
    assert seen["api_key"] == API_KEY
    assert isinstance(seen["tls"], TLSConfig)
    assert seen["tls"].client_cert == b"-----client.pem-----\n"


def test_metrics_listen_on_loopback_by_default(clean_env: pytest.MonkeyPatch) -> None:
    assert AlmanacSettings().metrics_host == "127.0.0.1"
    server, thread = start_metrics_server(0, CollectorRegistry())
    try:
        assert server.server_address[0] == "127.0.0.1"
    finally:
        server.shutdown()
        thread.join(timeout=10)


class _Stop(Exception):
    pass


@pytest.mark.parametrize(("flag", "bound"), [(None, "127.0.0.1"), ("0.0.0.0", "0.0.0.0")])
def test_the_worker_binds_both_metrics_endpoints_to_loopback_unless_told(
    clean_env: pytest.MonkeyPatch, flag: str | None, bound: str
) -> None:
    seen: dict[str, Any] = {}

    def fake_server(port: int, registry: Any, addr: str = "?") -> None:
        seen["almanac"] = addr

    async def fake_connect(address: str, **kw: Any) -> Any:
        raise _Stop

    clean_env.setattr(worker, "DEFAULT_REGISTRY", CollectorRegistry())
    clean_env.setattr(worker, "start_metrics_server", fake_server)
    clean_env.setattr(
        worker, "PrometheusConfig", lambda bind_address: seen.setdefault("sdk", bind_address)
    )
    clean_env.setattr(worker, "TelemetryConfig", lambda metrics: None)
    clean_env.setattr(worker, "Runtime", lambda telemetry: None)
    clean_env.setattr("temporalio.client.Client.connect", fake_connect)
    options = worker.WorkerOptions(
        identity="t", metrics_port=9464, sdk_metrics_port=9465, metrics_host=flag
    )
    with pytest.raises(_Stop):
        asyncio.run(worker.run(AlmanacSettings(), options, asyncio.Event()))
    assert seen == {"almanac": bound, "sdk": f"{bound}:9465"}


def test_the_sink_and_dev_server_default_to_loopback() -> None:
    from almanac.stack.dev import DevOptions, server_command
    from almanac.stack.sink import Sink

    with Sink() as sink:
        assert sink.server.server_address[0] == "127.0.0.1"
    command = server_command(Path(sys.executable), DevOptions(Path("/tmp/x"), Path("examples")))
    assert command[command.index("--ip") + 1] == "127.0.0.1"
    assert command[command.index("--ui-ip") + 1] == "127.0.0.1"


def test_the_dev_stack_allows_its_own_sink_port_and_nothing_else_on_loopback(
    clean_env: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    import ipaddress

    from activities.actions import EgressRefused
    from almanac.stack.dev import DevOptions

    options = DevOptions(tmp_path, Path("examples"), sink_port=18765, port=17233)
    policy = options.worker_settings().egress_policy
    loopback = ipaddress.ip_address("127.0.0.1")
    policy.check("127.0.0.1", loopback, 18765)
    for port in (17233, 9464, 5432):
        with pytest.raises(EgressRefused):
            policy.check("127.0.0.1", loopback, port)


def test_dev_host_widens_every_service_and_the_stack_still_connects_through_loopback(
    clean_env: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    from almanac.stack.dev import DevOptions, server_command

    options = DevOptions(tmp_path, Path("examples"), host="0.0.0.0", port=17233, sink_port=18765)
    command = server_command(Path(sys.executable), options)
    assert command[command.index("--ip") + 1] == "0.0.0.0"
    assert command[command.index("--ui-ip") + 1] == "0.0.0.0"
    assert options.worker_settings().temporal.address == "127.0.0.1:17233"
    assert options.sink_url == "http://127.0.0.1:18765"
    one = DevOptions(tmp_path, Path("examples"), host="127.0.0.2", port=17233)
    assert one.worker_settings().temporal.address == "127.0.0.2:17233"
    assert one.metrics_url == "http://127.0.0.2:9464/metrics"


def test_dev_host_must_be_an_ipv4_address() -> None:
    from typer.testing import CliRunner

    from almanac.cli import app

    result = CliRunner().invoke(app, ["dev", "--host", "example.org"])
    assert result.exit_code == 2
    assert "--host (ALMANAC_DEV_HOST)='example.org': not an IPv4 address" in result.output
