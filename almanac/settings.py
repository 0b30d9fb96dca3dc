"""Almanac's settings: environment variables with the ``ALMANAC_`` prefix, embedded defaults.

Every field documents its variable. Defaults run everything on one machine: a data directory
under the user's data home, a SQLite ledger file in it, a local Temporal dev server address.
Nothing here reads the clock.
"""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING, Annotated, Any

from pydantic import Field, SecretStr, field_validator
from pydantic_settings import BaseSettings, NoDecode, SettingsConfigDict

if TYPE_CHECKING:
    # Imported where used: settings load on every command, and these pull in temporalio/httpx.
    from temporalio.service import TLSConfig

    from activities.actions import EgressPolicy, SecretResolver

from almanac.paths import default_data_dir


class TemporalSettings(BaseSettings):
    """Where the Temporal frontend is (``ALMANAC_TEMPORAL_*``)."""

    model_config = SettingsConfigDict(env_prefix="ALMANAC_TEMPORAL_", extra="ignore")

    address: str = Field(default="localhost:7233", description="Frontend host:port.")
    namespace: str = Field(default="default", description="Temporal namespace.")
    task_queue: str = Field(default="almanac", description="Task queue of Almanac's workers.")
    tls: bool = Field(default=False, description="Connect with TLS (system roots).")
    api_key: SecretStr | None = Field(
        default=None, description="API key (Temporal Cloud), if any; never printed."
    )
    tls_client_cert_path: Path | None = Field(
        default=None, description="mTLS: the client certificate (PEM); implies TLS."
    )
    tls_client_key_path: Path | None = Field(
        default=None, description="mTLS: the client certificate's private key (PEM)."
    )
    tls_server_ca_cert_path: Path | None = Field(
        default=None, description="TLS: CA certificate(s) to verify the server (default: roots)."
    )
    tls_server_name: str | None = Field(
        default=None, description="TLS: the name to verify on the server's certificate."
    )

    def tls_config(self) -> TLSConfig | bool:
        """What ``Client.connect(tls=...)`` takes: ``False``, ``True`` or a :class:`TLSConfig`.

        Raises:
            ValueError: a certificate without its key (or a key without its certificate), or a
                file that cannot be read; the message names the setting, never the contents.
        """
        cert, key = self.tls_client_cert_path, self.tls_client_key_path
        if (cert is None) != (key is None):
            raise ValueError(
                "ALMANAC_TEMPORAL_TLS_CLIENT_CERT_PATH and ALMANAC_TEMPORAL_TLS_CLIENT_KEY_PATH: "
                "give both or neither"
            )
        ca = self.tls_server_ca_cert_path
        if cert is None and ca is None and self.tls_server_name is None:
            return self.tls

        from temporalio.service import TLSConfig

        def read(path: Path | None, setting: str) -> bytes | None:
            if path is None:
                return None
            try:
                return path.read_bytes()
            except OSError as exc:
                raise ValueError(f"{setting}={path}: {exc.strerror or 'cannot read'}") from None

        return TLSConfig(
            server_root_ca_cert=read(ca, "ALMANAC_TEMPORAL_TLS_SERVER_CA_CERT_PATH"),
            domain=self.tls_server_name,
            client_cert=read(cert, "ALMANAC_TEMPORAL_TLS_CLIENT_CERT_PATH"),
            client_private_key=read(key, "ALMANAC_TEMPORAL_TLS_CLIENT_KEY_PATH"),
        )

    def api_key_value(self) -> str | None:
        """The API key in the clear, for ``Client.connect`` only."""
        return self.api_key.get_secret_value() if self.api_key is not None else None


class AlmanacSettings(BaseSettings):
    """Root settings (``ALMANAC_*``); nested concerns have their own prefix."""

    model_config = SettingsConfigDict(env_prefix="ALMANAC_", extra="ignore")

    data_dir: Path = Field(
        default_factory=default_data_dir,
        description="Data directory: SQLite ledger, tz release store, dev server state.",
    )
    ledger_url: SecretStr | None = Field(
        default=None,
        description="SQLAlchemy URL of the ledger (postgresql+psycopg://…), which may hold a "
        "password, so it is never printed; default: a SQLite file ledger.sqlite3 in the data "
        "directory.",
    )
    tzdb_dir: Path | None = Field(
        default=None,
        description="tz release store (see `almanac tzdb`); default: <data dir>/tzdb.",
    )
    implementation_alias: str = Field(
        default="default",
        description="The implementation this worker runs; claims succeed only while the "
        "schedule gate shows the same alias (rollback flips it).",
    )
    secrets_dir: Path | None = Field(
        default=None,
        description="Where `{secretRef: {file: NAME}}` in specs is read; default: "
        "<data dir>/secrets. (`{env: NAME}` reads the worker's ALMANAC_SECRET_* variables.)",
    )
    egress_allow: Annotated[tuple[str, ...], NoDecode] = Field(
        default=(),
        description="Comma-separated CIDRs and host names actions may reach besides globally "
        "routable addresses (loopback, private, link-local and metadata addresses are refused "
        "otherwise), e.g. `127.0.0.1,10.0.0.0/8,sink`.",
    )
    metrics_host: str = Field(
        default="127.0.0.1",
        description="Interface the worker's metrics endpoints listen on (0.0.0.0 to widen).",
    )
    max_clock_skew_seconds: float = Field(
        default=5.0,
        gt=0,
        le=3600,
        description="The most the worker's clock may differ from the ledger database's and "
        "Temporal's before it holds claims (retried later); skew is exported as "
        "almanac_clock_skew_seconds.",
    )
    max_activity_starts_per_second: float | None = Field(
        default=None,
        gt=0,
        le=100_000,
        description="The most activity tasks Temporal hands out a second on each task queue this "
        "worker polls, across every worker on it (Temporal's server-side task-queue rate "
        "limit): paces a catch-up's attempts against the downstream. Default: no limit.",
    )
    temporal: TemporalSettings = Field(default_factory=TemporalSettings)

    @field_validator("egress_allow", mode="before")
    @classmethod
    def _split_allowances(cls, value: Any) -> Any:
        if isinstance(value, str):
            value = [part for part in value.replace(" ", ",").split(",") if part]
        if value:
            from activities.actions.egress_policy import EgressPolicy

            EgressPolicy.allowing(value)  # a malformed entry is an error naming it
        return value

    @property
    def resolved_ledger_url(self) -> str:
        """The ledger URL in the clear, with the embedded SQLite default filled in."""
        if self.ledger_url is not None:
            return self.ledger_url.get_secret_value()
        return f"sqlite:///{self.data_dir / 'ledger.sqlite3'}"

    @property
    def egress_policy(self) -> EgressPolicy:
        """The egress policy ``ALMANAC_EGRESS_ALLOW`` describes."""
        from activities.actions.egress_policy import EgressPolicy

        return EgressPolicy.allowing(self.egress_allow)

    @property
    def secret_resolver(self) -> SecretResolver:
        """Resolves the secret references in specs (``ALMANAC_SECRET_*``, the secrets dir)."""
        from activities.actions.secrets import SecretResolver

        return SecretResolver(self.secrets_dir or self.data_dir / "secrets")

    @property
    def tzdb_store(self) -> Path:
        """The tz release store directory."""
        return self.tzdb_dir or self.data_dir / "tzdb"
