"""The console's settings (``ALMANAC_CONSOLE_*``) and who may write: operators and a proxy header.

An operator's token is a secret like an action's: the settings name where it is (``file:NAME`` in
the secrets directory, or ``env:ALMANAC_SECRET_*``), never the value, and it is read only when
someone signs in. Reading needs no sign-in; every write does (DESIGN §13).
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Annotated, Any

from pydantic import Field, SecretStr, field_validator
from pydantic_settings import BaseSettings, NoDecode, SettingsConfigDict

OPERATOR_NAME = re.compile(r"^[A-Za-z0-9][A-Za-z0-9._@-]{0,63}$")
"""An operator's name: what the ledger records as who resolved a case (after ``console:``)."""
DEFAULT_PORT = 8240


@dataclass(frozen=True, slots=True)
class TokenRef:
    """Where an operator's token is: an ``env`` variable or a ``file`` in the secrets directory."""

    env: str | None = None
    file: str | None = None

    def as_secret_ref(self) -> dict[str, Any]:
        """The ``{secretRef: …}`` form the action secret resolver reads."""
        location = {"env": self.env} if self.env is not None else {"file": self.file}
        return {"secretRef": location}


def parse_operators(value: str) -> dict[str, TokenRef]:
    """Parse ``name=file:NAME`` / ``name=env:ALMANAC_SECRET_X`` pairs, comma separated.

    Raises:
        ValueError: naming the malformed entry by its operator name, or by its place when the
            name is not one; never what follows ``=``, which may be a token pasted by mistake.
    """
    operators: dict[str, TokenRef] = {}
    entries = (part.strip() for part in value.split(","))
    for place, entry in enumerate((e for e in entries if e), start=1):
        name, _, where = entry.partition("=")
        kind, _, ref = where.partition(":")
        label = f"for {name!r}" if OPERATOR_NAME.match(name) else f"number {place}"
        if not OPERATOR_NAME.match(name) or kind not in ("env", "file") or not ref:
            raise ValueError(
                f"ALMANAC_CONSOLE_OPERATORS entry {label}: expected name=file:NAME or "
                "name=env:ALMANAC_SECRET_NAME (what follows '=' is not shown: it may be a token)"
            )
        if kind == "env" and not re.match(r"^ALMANAC_SECRET_[A-Z0-9_]{1,100}$", ref):
            raise ValueError(
                f"ALMANAC_CONSOLE_OPERATORS entry {label}: an env token is named ALMANAC_SECRET_*"
            )
        operators[name] = TokenRef(env=ref) if kind == "env" else TokenRef(file=ref)
    return operators


class ConsoleSettings(BaseSettings):
    """The console's settings; the ledger, Temporal and secrets come from ``AlmanacSettings``."""

    model_config = SettingsConfigDict(env_prefix="ALMANAC_CONSOLE_", extra="ignore")

    host: str = Field(default="127.0.0.1", description="Interface the console listens on.")
    port: int = Field(default=DEFAULT_PORT, ge=1, le=65535, description="The console's port.")
    operators: Annotated[Mapping[str, TokenRef], NoDecode] = Field(
        default_factory=dict,
        description="Operators who may write, comma separated: name=file:NAME (a file in the "
        "secrets directory) or name=env:ALMANAC_SECRET_NAME, holding the operator's token.",
    )
    user_header: str | None = Field(
        default=None,
        description="A trusted reverse proxy's header naming the signed-in user (e.g. "
        "X-Forwarded-User); set it only when every request comes through that proxy.",
    )
    session_key: SecretStr | None = Field(
        default=None,
        description="Key that signs session cookies (default: a random key per process, so "
        "sessions end when the console restarts).",
    )
    temporal_ui_url: str | None = Field(
        default=None,
        description="The Temporal Web UI's base URL (http://localhost:8233): occurrence pages "
        "link to their workflow there.",
    )
    session_hours: float = Field(
        default=12.0, gt=0, le=24 * 7, description="How long a sign-in lasts, in hours."
    )

    @field_validator("operators", mode="before")
    @classmethod
    def _parse_operators(cls, value: Any) -> Any:
        return parse_operators(value) if isinstance(value, str) else value
