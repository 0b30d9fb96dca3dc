"""Almanac's settings: environment variables with the ``ALMANAC_`` prefix, embedded defaults.

Every field documents its variable. Defaults run everything on one machine: a data directory
under the user's data home, a SQLite ledger file in it, a local Temporal dev server address.
Nothing here reads the clock.
"""

from __future__ import annotations

from pathlib import Path

from pydantic import Field
from pydantic_settings import BaseSettings, SettingsConfigDict

from almanac.paths import default_data_dir


class TemporalSettings(BaseSettings):
    """Where the Temporal frontend is (``ALMANAC_TEMPORAL_*``)."""

    model_config = SettingsConfigDict(env_prefix="ALMANAC_TEMPORAL_", extra="ignore")

    address: str = Field(default="localhost:7233", description="Frontend host:port.")
    namespace: str = Field(default="default", description="Temporal namespace.")
    task_queue: str = Field(default="almanac", description="Task queue of Almanac's workers.")
    tls: bool = Field(default=False, description="Connect with TLS (system roots).")
    api_key: str | None = Field(default=None, description="API key (Temporal Cloud), if any.")


class AlmanacSettings(BaseSettings):
    """Root settings (``ALMANAC_*``); nested concerns have their own prefix."""

    model_config = SettingsConfigDict(env_prefix="ALMANAC_", extra="ignore")

    data_dir: Path = Field(
        default_factory=default_data_dir,
        description="Data directory: SQLite ledger, tz release store, dev server state.",
    )
    ledger_url: str | None = Field(
        default=None,
        description="SQLAlchemy URL of the ledger (postgresql+psycopg://…); "
        "default: a SQLite file ledger.sqlite3 in the data directory.",
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
    temporal: TemporalSettings = Field(default_factory=TemporalSettings)

    @property
    def resolved_ledger_url(self) -> str:
        """The ledger URL, with the embedded SQLite default filled in."""
        return self.ledger_url or f"sqlite:///{self.data_dir / 'ledger.sqlite3'}"

    @property
    def tzdb_store(self) -> Path:
        """The tz release store directory."""
        return self.tzdb_dir or self.data_dir / "tzdb"
