"""The ``http`` action: POST the occurrence to a webhook with ``Idempotency-Key: <occurrenceId>``.

Parameters (camelCase, as written in the spec)::

    url:            where to POST (http or https)                               required
    timeoutSeconds: connect, write and read timeout, each (default 10)
    resultUrl:      result-query URL template; ``{idempotencyKey}`` (= ``{occurrenceId}``) and
                    ``{scheduleId}`` are replaced, URL-quoted. For the sink:
                    ``http://127.0.0.1:8765/effects/{idempotencyKey}``. Without it the adapter
                    cannot be queried (``capabilities(...).can_query_result`` is false).
    headers:        extra request headers (an ``Idempotency-Key`` here is refused)
    data:           extra JSON sent as the body's ``data`` member

The body is ``{"occurrenceId", "idempotencyKey", "scheduleId", "revision", "nominalLocal",
"instantUtc", "attempt", "data"}``.

How errors are classified — by whether the request can have reached the server:

- 2xx → CONFIRMED (``result`` is the JSON object answered, else ``{"status", "text"}``).
- 408, 429, 5xx → RETRYABLE_FAILURE (the key makes the resend safe), with ``retry_after_seconds``
  from a ``Retry-After: <seconds>`` header.
- any other status (3xx, 4xx) → NON_RETRYABLE_FAILURE.
- ``ConnectError``, ``ConnectTimeout``, ``PoolTimeout`` → RETRYABLE_FAILURE: nothing was sent.
- ``UnsupportedProtocol``, ``LocalProtocolError`` → NON_RETRYABLE_FAILURE: nothing was sent, and
  nothing will be.
- every other transport error — ``ReadTimeout``, ``WriteTimeout``, ``ReadError``, ``WriteError``,
  ``RemoteProtocolError`` (the server closed without an answer) … → UNCONFIRMED.

Every call uses a fresh connection, so a stale keep-alive connection can never turn a request that
was not sent into an UNCONFIRMED one.
"""

from __future__ import annotations

import ssl
import string
from collections.abc import Mapping
from typing import Annotated, Any, ClassVar
from urllib.parse import quote

import httpx
from pydantic import AnyHttpUrl, BaseModel, ConfigDict, Field, JsonValue, field_validator

from activities.actions.base import (
    ActionAdapter,
    ActionCapabilities,
    ActionContext,
    Outcome,
    OutcomeKind,
    QueryOutcome,
    QueryOutcomeKind,
)

IDEMPOTENCY_HEADER = "Idempotency-Key"
RESULT_URL_FIELDS = frozenset({"idempotencyKey", "occurrenceId", "scheduleId"})
RETRYABLE_STATUSES = frozenset({408, 429})


class HttpParameters(BaseModel):
    """The ``http`` action's parameters (see the module docstring)."""

    model_config = ConfigDict(extra="forbid", frozen=True, populate_by_name=True)

    url: AnyHttpUrl = Field(description="Where to POST.")
    timeout_seconds: Annotated[float, Field(gt=0, le=600)] = Field(
        default=10.0, alias="timeoutSeconds", description="Connect/write/read timeout, each."
    )
    result_url: str | None = Field(
        default=None, alias="resultUrl", description="Result-query URL template."
    )
    headers: dict[str, str] = Field(default_factory=dict, description="Extra request headers.")
    data: JsonValue = Field(default=None, description="Extra JSON sent as the body's data.")

    @field_validator("result_url")
    @classmethod
    def _check_result_url(cls, value: str | None) -> str | None:
        if value is None:
            return None
        try:
            names = {name for _, name, _, _ in string.Formatter().parse(value) if name is not None}
        except ValueError as exc:
            raise ValueError(f"not a URL template: {exc}") from exc
        unknown = names - RESULT_URL_FIELDS
        if unknown:
            raise ValueError(
                f"unknown placeholder(s) {sorted(unknown)}; use {sorted(RESULT_URL_FIELDS)}"
            )
        AnyHttpUrl(value.format(**dict.fromkeys(RESULT_URL_FIELDS, "x")))
        return value

    @field_validator("headers")
    @classmethod
    def _check_headers(cls, value: dict[str, str]) -> dict[str, str]:
        if any(name.lower() == IDEMPOTENCY_HEADER.lower() for name in value):
            raise ValueError(f"{IDEMPOTENCY_HEADER} is set by Almanac (the occurrenceId)")
        return value


def occurrence_body(ctx: ActionContext, data: JsonValue) -> dict[str, Any]:
    """The JSON body describing ``ctx``'s occurrence."""
    return {
        "occurrenceId": ctx.occurrence_id,
        "idempotencyKey": ctx.idempotency_key,
        "scheduleId": ctx.schedule_id,
        "revision": ctx.revision,
        "nominalLocal": ctx.nominal_local,
        "instantUtc": ctx.instant_utc,
        "attempt": ctx.attempt,
        "data": data,
    }


def _json_object(response: httpx.Response) -> dict[str, Any]:
    try:
        payload = response.json()
    except ValueError:
        return {"status": response.status_code, "text": response.text[:2000]}
    if isinstance(payload, dict):
        return payload
    return {"status": response.status_code, "json": payload}


def _retry_after_seconds(response: httpx.Response) -> float | None:
    # Only the delta-seconds form: the HTTP-date form would need the clock.
    value = response.headers.get("Retry-After", "").strip()
    return float(value) if value.isdigit() else None


def _describe(exc: Exception) -> str:
    return f"{type(exc).__name__}: {exc}" if str(exc) else type(exc).__name__


class HttpAction(ActionAdapter[HttpParameters]):
    """POST to a webhook with the occurrenceId as ``Idempotency-Key``; optional result query."""

    name: ClassVar[str] = "http"
    parameters_model: ClassVar[type[BaseModel]] = HttpParameters
    accepts_idempotency_key: ClassVar[bool] = True
    can_query_result: ClassVar[bool] = True
    """True when ``resultUrl`` is given; see :meth:`capabilities`."""

    def __init__(self, transport: httpx.AsyncBaseTransport | None = None) -> None:
        """Build the adapter; ``transport`` replaces httpx's network transport (tests)."""
        self._transport = transport
        self._ssl_context: ssl.SSLContext | None = None

    def _verify(self) -> ssl.SSLContext:
        # Loading the CA bundle takes a noticeable fraction of a second: do it once per adapter.
        if self._ssl_context is None:
            self._ssl_context = httpx.create_ssl_context()
        return self._ssl_context

    def capabilities(self, parameters: Mapping[str, Any]) -> ActionCapabilities:
        """Idempotent always; queryable only with a ``resultUrl``."""
        params = self.validate(parameters)
        return ActionCapabilities(
            accepts_idempotency_key=True, can_query_result=params.result_url is not None
        )

    def _client(self, params: HttpParameters) -> httpx.AsyncClient:
        return httpx.AsyncClient(
            timeout=httpx.Timeout(params.timeout_seconds),
            transport=self._transport,
            verify=self._verify(),
            follow_redirects=False,
            limits=httpx.Limits(max_keepalive_connections=0),
        )

    async def invoke(self, ctx: ActionContext) -> Outcome:
        """POST the occurrence once and classify the answer (see the module docstring)."""
        params = self.validate(ctx.parameters)
        headers = {**params.headers, IDEMPOTENCY_HEADER: ctx.idempotency_key}
        body = occurrence_body(ctx, params.data)
        async with self._client(params) as client:
            try:
                response = await client.post(str(params.url), json=body, headers=headers)
            except (httpx.ConnectError, httpx.ConnectTimeout, httpx.PoolTimeout) as exc:
                return Outcome(OutcomeKind.RETRYABLE_FAILURE, detail=f"not sent: {_describe(exc)}")
            except (httpx.UnsupportedProtocol, httpx.LocalProtocolError) as exc:
                return Outcome(OutcomeKind.NON_RETRYABLE_FAILURE, detail=_describe(exc))
            except httpx.HTTPError as exc:
                return Outcome(OutcomeKind.UNCONFIRMED, detail=f"sent, no answer: {_describe(exc)}")
        code = response.status_code
        if response.is_success:
            return Outcome(
                OutcomeKind.CONFIRMED,
                result=_json_object(response),
                detail=f"HTTP {code}",
                status_code=code,
            )
        detail = f"HTTP {code}: {response.text[:500]}"
        if code in RETRYABLE_STATUSES or code >= 500:
            return Outcome(
                OutcomeKind.RETRYABLE_FAILURE,
                detail=detail,
                status_code=code,
                retry_after_seconds=_retry_after_seconds(response),
            )
        return Outcome(OutcomeKind.NON_RETRYABLE_FAILURE, detail=detail, status_code=code)

    async def query_result(self, ctx: ActionContext) -> QueryOutcome:
        """GET the ``resultUrl``: 200 → FOUND, 404/410 → NOT_FOUND, anything else QUERY_FAILED."""
        params = self.validate(ctx.parameters)
        if params.result_url is None:
            return QueryOutcome(QueryOutcomeKind.UNSUPPORTED, detail="no resultUrl parameter")
        url = params.result_url.format(
            idempotencyKey=quote(ctx.idempotency_key, safe=""),
            occurrenceId=quote(ctx.occurrence_id, safe=""),
            scheduleId=quote(ctx.schedule_id, safe=""),
        )
        async with self._client(params) as client:
            try:
                response = await client.get(url, headers=params.headers)
            except httpx.HTTPError as exc:
                return QueryOutcome(QueryOutcomeKind.QUERY_FAILED, detail=_describe(exc))
        code = response.status_code
        if code == 200:
            return QueryOutcome(
                QueryOutcomeKind.FOUND, result=_json_object(response), detail="HTTP 200"
            )
        if code in (404, 410):
            return QueryOutcome(QueryOutcomeKind.NOT_FOUND, detail=f"HTTP {code}")
        return QueryOutcome(
            QueryOutcomeKind.QUERY_FAILED, detail=f"HTTP {code}: {response.text[:500]}"
        )
