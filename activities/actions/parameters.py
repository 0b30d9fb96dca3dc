"""What a spec's ``action.parameters`` may say, per adapter: the parameter models (DESIGN §7).

One model per built-in adapter — :class:`HttpParameters`, :class:`SmtpParameters`,
:class:`TemporalParameters`, :class:`NoopParameters` — and the secret reference they share
(:class:`SecretRef`). The adapters validate with these very models (each adapter module imports
its model from here and documents its parameters), and so does the edge (``almanac validate``,
``apply``'s check: :mod:`activities.actions.catalog`) without loading the adapters.

Why a module of its own: it imports only pydantic, the standard library and ``timecontract``.
The adapters import httpx, httpcore, anyio, smtplib, ``email`` and asyncio, which the edge's
check must not pay for at start-up (``bench/cli_startup.py`` measures it). For the same reason the
models are built here with pydantic's plugins switched off
(:func:`timecontract.action_spec.build_without_plugins`): a parameter check is pure and needs no
hook, and the plugin scan only slows the command line.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from typing import Annotated, Any

from pydantic import (
    AnyHttpUrl,
    BaseModel,
    BeforeValidator,
    ConfigDict,
    Discriminator,
    Field,
    JsonValue,
    field_validator,
    model_validator,
)
from pydantic_core import PydanticCustomError

from activities.actions.base import branch_tag
from timecontract.action_spec import build_without_plugins
from timecontract.credentials import credential_shape, is_secret_name
from timecontract.secrets import REFERENCE_HINT, could_be_secret

SECRET_ENV_PATTERN = r"^ALMANAC_SECRET_[A-Z0-9_]{1,100}$"
SECRET_FILE_PATTERN = r"^[A-Za-z0-9][A-Za-z0-9._-]{0,127}$"
IDEMPOTENCY_HEADER = "Idempotency-Key"
ATTEMPT_HEADER = "Almanac-Attempt"
"""The attempt's number travels here, outside the keyed body: a redelivery's body is the same."""
RESULT_URL_PLACEHOLDER = "{idempotencyKey}"
_HEADER_NAME = re.compile(r"^[!#$%&'*+.^_`|~0-9A-Za-z-]{1,128}$")
ADDRESS_PATTERN = r"^[^@\s<>]+@[^@\s<>]+$"
Address = Annotated[str, Field(pattern=ADDRESS_PATTERN)]


def _no_bool(kind: str) -> BeforeValidator:
    """Refuse a boolean where a number is due, as pydantic's own ``kind`` error.

    Pydantic reads ``true`` as 1 in a number field (lax mode); a spec's ``timeoutSeconds: true``
    is a mistake, not one second. Only the boolean is refused: a parameter a published revision
    gave as ``"10"`` still validates before each call.
    """

    def check(value: Any) -> Any:
        if isinstance(value, bool):
            raise PydanticCustomError(kind, "a boolean is not a number")
        return value

    return BeforeValidator(check)


Number = Annotated[float, _no_bool("float_type")]
"""A number parameter (an int is one): ``true``/``false`` are refused ("must be a number")."""
WholeNumber = Annotated[int, _no_bool("int_type")]
"""A whole-number parameter: ``true``/``false`` are refused ("must be a whole number")."""


class SecretLocation(BaseModel):
    """Where a secret is: exactly one of ``env`` and ``file``."""

    model_config = ConfigDict(extra="forbid", frozen=True, defer_build=True)

    env: str | None = Field(
        default=None,
        pattern=SECRET_ENV_PATTERN,
        description="An environment variable of the worker, named ALMANAC_SECRET_*.",
    )
    file: str | None = Field(
        default=None,
        pattern=SECRET_FILE_PATTERN,
        description="A file name in the worker's secrets directory (no path).",
    )

    @model_validator(mode="after")
    def _exactly_one(self) -> SecretLocation:
        if (self.env is None) == (self.file is None):
            raise ValueError("give exactly one of env and file")
        return self

    def describe(self) -> str:
        """``env ALMANAC_SECRET_X`` or ``file x.key``: how errors and logs name it."""
        return f"env {self.env}" if self.env is not None else f"file {self.file}"


class SecretRef(BaseModel):
    """A parameter value naming a secret: ``{secretRef: {env: …}}`` / ``{secretRef: {file: …}}``."""

    model_config = ConfigDict(extra="forbid", frozen=True, populate_by_name=True, defer_build=True)

    secret_ref: SecretLocation = Field(alias="secretRef", description="Where the secret is.")

    def describe(self) -> str:
        """How errors name this reference (never the value)."""
        return f"secretRef({self.secret_ref.describe()})"


_TEXT, _REFERENCE = branch_tag("string"), branch_tag("secretRef")


def _header_value_kind(value: Any) -> str:
    """Which branch of :data:`HeaderValue` checks ``value``: a mapping is a reference."""
    return _REFERENCE.tag if isinstance(value, Mapping | SecretRef) else _TEXT.tag


HeaderValue = Annotated[
    Annotated[str, _TEXT] | Annotated[SecretRef, _REFERENCE],
    Discriminator(_header_value_kind),
]
"""A header's value: a string, or a mapping checked as a :class:`SecretRef` — only that branch,
so a bad reference is told what is wrong with it, not also that it is not a string."""


def _no_credentials(url: AnyHttpUrl) -> AnyHttpUrl:
    """Refuse ``user:password@``, a secret-bearing query or fragment parameter, any credential.

    A URL has no place for a reference: a credential in it is a literal secret in the spec (and
    in every access log); send it in a header with a secretRef instead.
    """
    if url.username or url.password:
        raise ValueError(
            "holds credentials (user:password@); send them in a header with a secretRef instead"
        )
    if (shape := credential_shape(str(url))) is not None:
        raise ValueError(
            f"holds a literal secret ({shape}); send it in a header with a secretRef instead"
        )
    return url


class HttpParameters(BaseModel):
    """The ``http`` action's parameters (see the module docstring)."""

    model_config = ConfigDict(extra="forbid", frozen=True, populate_by_name=True, defer_build=True)

    url: AnyHttpUrl = Field(description="Where to POST.")
    timeout_seconds: Annotated[Number, Field(gt=0, le=600)] = Field(
        default=10.0, alias="timeoutSeconds", description="Connect/write/read timeout, each."
    )
    result_url: str | None = Field(
        default=None, alias="resultUrl", description="Result-query URL ({idempotencyKey})."
    )
    headers: dict[str, HeaderValue] = Field(
        default_factory=dict, description="Extra request headers (secrets by reference)."
    )
    signing_secret: SecretRef | None = Field(
        default=None,
        alias="signingSecret",
        description="Standard Webhooks signing key (whsec_…), by reference.",
    )
    data: JsonValue = Field(default=None, description="Extra JSON sent as the body's data.")

    @field_validator("result_url")
    @classmethod
    def _check_result_url(cls, value: str | None) -> str | None:
        if value is None:
            return None
        rest = value.replace(RESULT_URL_PLACEHOLDER, "")
        if "{" in rest or "}" in rest:
            raise ValueError(
                f"the only placeholder allowed is the literal {RESULT_URL_PLACEHOLDER}"
            )
        _no_credentials(AnyHttpUrl(value.replace(RESULT_URL_PLACEHOLDER, "x")))
        return value

    @field_validator("url")
    @classmethod
    def _check_url(cls, value: AnyHttpUrl) -> AnyHttpUrl:
        return _no_credentials(value)

    @field_validator("headers", mode="before")
    @classmethod
    def _check_headers(cls, value: Any) -> Any:
        if not isinstance(value, Mapping):
            return value
        for name, item in value.items():
            if not isinstance(name, str) or not _HEADER_NAME.fullmatch(name):
                shown = "a header name" if credential_shape(str(name)) else repr(name)
                raise ValueError(f"{shown} is not an HTTP header name (an RFC 9110 token)")
            lowered = name.lower()
            if lowered == IDEMPOTENCY_HEADER.lower():
                raise ValueError(f"{IDEMPOTENCY_HEADER} is set by Almanac (the occurrenceId)")
            if lowered == ATTEMPT_HEADER.lower():
                raise ValueError(f"{ATTEMPT_HEADER} is set by Almanac (the attempt's number)")
            if lowered.startswith("webhook-"):
                raise ValueError(f"{name} is set by Almanac (use signingSecret to sign)")
            # A credential may travel in any header: a secret-bearing name, or a value shaped
            # like one under any name (``X-Forwarded: Bearer …``), must be a reference.
            shaped = isinstance(item, str) and credential_shape(item) is not None
            if shaped or (is_secret_name(name) and could_be_secret(name, item)):
                raise ValueError(f"header {name} holds a literal secret; {REFERENCE_HINT}")
            if isinstance(item, str) and any(c in item for c in "\r\n\0"):
                # RFC 9110 §5.5: a field value never holds CR, LF or NUL (header injection).
                raise ValueError(f"header {name}: a value may not hold CR, LF or NUL")
        return value


class SmtpParameters(BaseModel):
    """The ``smtp`` action's parameters (see the module docstring)."""

    model_config = ConfigDict(extra="forbid", frozen=True, populate_by_name=True, defer_build=True)

    host: str = Field(min_length=1, description="SMTP server host.")
    port: WholeNumber = Field(default=25, ge=1, le=65535, description="SMTP server port.")
    from_address: Address = Field(alias="from", description="Sender address.")
    to: list[Address] = Field(min_length=1, description="Recipient address(es).")
    subject: str = Field(min_length=1, max_length=998, description="Subject line.")
    body: str | None = Field(default=None, description="Plain-text body.")
    timeout_seconds: Number = Field(
        default=30.0, gt=0, le=600, alias="timeoutSeconds", description="Socket timeout."
    )
    starttls: bool = Field(default=False, description="Use STARTTLS before sending.")
    implicit_tls: bool = Field(
        default=False, alias="implicitTls", description="Connect with TLS (SMTPS)."
    )
    username: str | None = Field(default=None, min_length=1, description="AUTH user name.")
    password: SecretRef | None = Field(default=None, description="AUTH password, by reference.")

    @field_validator("to", mode="before")
    @classmethod
    def _one_or_many(cls, value: object) -> object:
        return [value] if isinstance(value, str) else value

    @field_validator("subject")
    @classmethod
    def _one_line(cls, value: str) -> str:
        if "\n" in value or "\r" in value:
            raise ValueError("the subject must be one line")
        return value

    @model_validator(mode="after")
    def _coherent_tls_and_auth(self) -> SmtpParameters:
        if self.starttls and self.implicit_tls:
            raise ValueError("starttls and implicitTls: choose one")
        if (self.username is None) != (self.password is None):
            raise ValueError("username and password: give both or neither")
        if self.password is not None and not (self.starttls or self.implicit_tls):
            raise ValueError("password: never sent without TLS (set starttls or implicitTls)")
        return self


DEFAULT_EFFECT_EXECUTION_TIMEOUT_SECONDS = 86_400
"""The ``temporal`` action's default ``executionTimeoutSeconds``: one day."""
MAX_EFFECT_EXECUTION_TIMEOUT_SECONDS = 366 * 86_400
"""The longest ``executionTimeoutSeconds`` a spec may ask for: a year."""


class TemporalParameters(BaseModel):
    """The ``temporal`` action's parameters (see the module docstring)."""

    model_config = ConfigDict(extra="forbid", frozen=True, populate_by_name=True, defer_build=True)

    workflow_type: str = Field(alias="workflowType", min_length=1, description="Workflow type.")
    task_queue: str = Field(alias="taskQueue", min_length=1, description="Task queue.")
    input: JsonValue = Field(default=None, description="One JSON argument, if not null.")
    execution_timeout_seconds: WholeNumber = Field(
        default=DEFAULT_EFFECT_EXECUTION_TIMEOUT_SECONDS,
        alias="executionTimeoutSeconds",
        ge=1,
        le=MAX_EFFECT_EXECUTION_TIMEOUT_SECONDS,
        description="Seconds the started workflow may run before Temporal times it out "
        "(default one day), so one nothing polls never runs forever.",
    )


class NoopParameters(BaseModel):
    """The ``noop`` action's parameters (see the module docstring)."""

    model_config = ConfigDict(extra="forbid", frozen=True, defer_build=True)

    note: str = Field(default="", max_length=200, description="Free text for the record.")


build_without_plugins(
    SecretLocation,
    SecretRef,
    HttpParameters,
    SmtpParameters,
    TemporalParameters,
    NoopParameters,
)
