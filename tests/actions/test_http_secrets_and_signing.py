"""The ``http`` action's trust boundary: secrets by reference, signed deliveries, headers only to
the webhook's origin, a literal ``{idempotencyKey}`` and nothing else, bounded replies."""

from __future__ import annotations

import base64
import hashlib
import hmac
import json
import os
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import httpx
import pytest
from standardwebhooks.webhooks import Webhook

from activities.actions import (
    ActionContext,
    EgressPolicy,
    HttpAction,
    InvalidActionParameters,
    OutcomeKind,
    QueryOutcomeKind,
    SecretResolver,
)
from almanac.stack.sink import Sink

pytestmark = pytest.mark.anyio

OCCURRENCE = "daily-ops-summary.r7.20261101T013000.f0"
LOCAL = EgressPolicy.allowing(["127.0.0.1"])
CANARY = "canary-9d1f0e7c5b3a"
KEY_BYTES = b"almanac-test-signing-key-32bytes"
SIGNING_KEY = "whsec_" + base64.b64encode(KEY_BYTES).decode()
SIGNED_AT = datetime(2026, 11, 1, 5, 30, 7, tzinfo=UTC)


def ctx(parameters: dict[str, Any]) -> ActionContext:
    return ActionContext(
        occurrence_id=OCCURRENCE,
        schedule_id="daily-ops-summary",
        revision=7,
        nominal_local="2026-11-01T01:30:00",
        instant_utc="2026-11-01T05:30:00Z",
        attempt=1,
        parameters=parameters,
    )


def env_ref(name: str) -> dict[str, Any]:
    return {"secretRef": {"env": name}}


class Recorder:
    """A MockTransport handler that answers ``status``/``body`` and keeps every request."""

    def __init__(self, status: int = 200, body: bytes = b"{}") -> None:
        self.status = status
        self.body = body
        self.requests: list[httpx.Request] = []

    def __call__(self, request: httpx.Request) -> httpx.Response:
        self.requests.append(request)
        return httpx.Response(self.status, content=self.body)


def mocked(recorder: Recorder, **kw: Any) -> HttpAction:
    return HttpAction(httpx.MockTransport(recorder), **kw)


# -- secrets by reference ----------------------------------------------------------------------
@pytest.mark.parametrize("header", ["Authorization", "X-Api-Key", "Cookie", "X-Auth-Token"])
def test_a_literal_secret_header_is_refused_without_repeating_it(header: str) -> None:
    with pytest.raises(InvalidActionParameters) as raised:
        HttpAction().validate({"url": "https://hooks.example.test", "headers": {header: CANARY}})
    assert raised.value.field == "action.parameters.headers"
    assert header in str(raised.value)
    assert "secretRef" in str(raised.value)
    assert CANARY not in str(raised.value)
    assert CANARY not in repr(raised.value.problems)


async def test_an_env_reference_is_sent_and_scrubbed_from_what_comes_back() -> None:
    # The downstream echoes the header into its answer and into its error: neither keeps it.
    recorder = Recorder(500, json.dumps({"error": f"bad token {CANARY}"}).encode())
    action = mocked(
        recorder, secrets=SecretResolver(environ={"ALMANAC_SECRET_HOOK": f"Bearer {CANARY}"})
    )
    params = {
        "url": "https://hooks.example.test/e",
        "headers": {"Authorization": env_ref("ALMANAC_SECRET_HOOK")},
    }
    outcome = await action.invoke(ctx(params))
    assert recorder.requests[0].headers["Authorization"] == f"Bearer {CANARY}"
    assert outcome.kind is OutcomeKind.RETRYABLE_FAILURE
    assert CANARY not in repr(outcome)


async def test_a_file_reference_reads_the_secrets_directory(tmp_path: Path) -> None:
    (tmp_path / "hook.key").write_text(CANARY + "\n")
    recorder = Recorder()
    action = mocked(recorder, secrets=SecretResolver(tmp_path, environ={}))
    params = {
        "url": "https://hooks.example.test/e",
        "headers": {"X-Api-Key": {"secretRef": {"file": "hook.key"}}},
    }
    outcome = await action.invoke(ctx(params))
    assert outcome.kind is OutcomeKind.CONFIRMED
    assert recorder.requests[0].headers["X-Api-Key"] == CANARY


@pytest.mark.parametrize(
    "ref",
    [
        {"env": "HOME"},  # not set aside for specs
        {"env": "ALMANAC_TEMPORAL_API_KEY"},  # the worker's own credentials
        {"file": "../etc/passwd"},
        {"file": "/etc/passwd"},
        {"file": "sub/dir.key"},
        {"env": "ALMANAC_SECRET_A", "file": "a.key"},
        {},
    ],
)
def test_references_outside_what_the_operator_set_aside_are_refused(ref: dict[str, Any]) -> None:
    with pytest.raises(InvalidActionParameters) as raised:
        HttpAction().validate(
            {"url": "https://h.example.test", "headers": {"Authorization": {"secretRef": ref}}}
        )
    assert raised.value.field.startswith("action.parameters.headers.Authorization")


async def test_a_symlink_out_of_the_secrets_directory_is_refused(tmp_path: Path) -> None:
    secrets, outside = tmp_path / "secrets", tmp_path / "outside.txt"
    secrets.mkdir()
    outside.write_text(CANARY)
    os.symlink(outside, secrets / "escape.key")
    recorder = Recorder()
    action = mocked(recorder, secrets=SecretResolver(secrets, environ={}))
    params = {
        "url": "https://hooks.example.test/e",
        "headers": {"Authorization": {"secretRef": {"file": "escape.key"}}},
    }
    outcome = await action.invoke(ctx(params))
    assert outcome.kind is OutcomeKind.NON_RETRYABLE_FAILURE
    assert "outside the secrets directory" in outcome.detail
    assert recorder.requests == []


async def test_an_unset_secret_fails_the_attempt_without_sending() -> None:
    recorder = Recorder()
    action = mocked(recorder, secrets=SecretResolver(environ={}))
    params = {
        "url": "https://hooks.example.test/e",
        "headers": {"Authorization": env_ref("ALMANAC_SECRET_MISSING")},
    }
    outcome = await action.invoke(ctx(params))
    assert outcome.kind is OutcomeKind.NON_RETRYABLE_FAILURE
    assert "ALMANAC_SECRET_MISSING" in outcome.detail
    assert recorder.requests == []


# -- signed deliveries (Standard Webhooks) -----------------------------------------------------
async def test_a_delivery_is_signed_per_standard_webhooks() -> None:
    recorder = Recorder()
    action = mocked(
        recorder,
        secrets=SecretResolver(environ={"ALMANAC_SECRET_SIGNING": SIGNING_KEY}),
        clock=lambda: SIGNED_AT,
    )
    params = {
        "url": "https://hooks.example.test/e",
        "signingSecret": env_ref("ALMANAC_SECRET_SIGNING"),
    }
    outcome = await action.invoke(ctx(params))
    assert outcome.kind is OutcomeKind.CONFIRMED
    [request] = recorder.requests
    body = request.content.decode()
    headers = request.headers
    assert headers["webhook-id"] == OCCURRENCE
    assert headers["webhook-timestamp"] == str(int(SIGNED_AT.timestamp()))
    # The spec's construction, by hand: v1,base64(HMAC-SHA256(key, "id.timestamp.body")).
    signed = f"{OCCURRENCE}.{int(SIGNED_AT.timestamp())}.{body}".encode()
    expected = base64.b64encode(hmac.new(KEY_BYTES, signed, hashlib.sha256).digest()).decode()
    assert headers["webhook-signature"] == f"v1,{expected}"
    assert json.loads(body)["occurrenceId"] == OCCURRENCE
    assert SIGNING_KEY not in repr(outcome)


async def test_the_sink_accepts_signed_deliveries_and_rejects_bad_ones_with_401() -> None:
    secrets = SecretResolver(
        environ={
            "ALMANAC_SECRET_SIGNING": SIGNING_KEY,
            "ALMANAC_SECRET_OTHER": "whsec_" + base64.b64encode(b"x" * 32).decode(),
        }
    )
    with Sink(signing_secret=SIGNING_KEY) as sink:
        action = HttpAction(egress=LOCAL, secrets=secrets)
        url = f"{sink.url}/effects"
        wrong = await action.invoke(
            ctx({"url": url, "signingSecret": env_ref("ALMANAC_SECRET_OTHER")})
        )
        unsigned = await action.invoke(ctx({"url": url}))
        right = await action.invoke(
            ctx({"url": url, "signingSecret": env_ref("ALMANAC_SECRET_SIGNING")})
        )
        effects = sink.effects()
        received = sink.server.last_headers
    assert (wrong.status_code, unsigned.status_code, right.status_code) == (401, 401, 201)
    assert wrong.kind is OutcomeKind.NON_RETRYABLE_FAILURE
    assert len(effects) == 1
    # An independent check of what the sink received, with the library's own verifier.
    body = json.dumps(effects[0].body, separators=(",", ":"))
    assert Webhook(SIGNING_KEY).verify(body, received) == effects[0].body


def test_a_literal_signing_secret_is_refused() -> None:
    with pytest.raises(InvalidActionParameters) as raised:
        HttpAction().validate({"url": "https://h.example.test", "signingSecret": SIGNING_KEY})
    assert raised.value.field == "action.parameters.signingSecret"
    assert SIGNING_KEY not in str(raised.value)


# -- headers only to the webhook's origin; the result URL template -----------------------------
@pytest.mark.parametrize(
    ("result_url", "gets_headers"),
    [
        ("https://hooks.example.test/r/{idempotencyKey}", True),
        ("https://hooks.example.test:443/r/{idempotencyKey}", True),
        ("https://elsewhere.example.test/r/{idempotencyKey}", False),
        ("http://hooks.example.test/r/{idempotencyKey}", False),
        ("https://hooks.example.test:8443/r/{idempotencyKey}", False),
    ],
)
async def test_headers_go_to_the_result_url_only_on_the_webhooks_origin(
    result_url: str, gets_headers: bool
) -> None:
    recorder = Recorder(404)
    action = mocked(recorder, secrets=SecretResolver(environ={"ALMANAC_SECRET_HOOK": CANARY}))
    params = {
        "url": "https://hooks.example.test/e",
        "resultUrl": result_url,
        "headers": {"Authorization": env_ref("ALMANAC_SECRET_HOOK"), "X-Team": "ops"},
    }
    answer = await action.query_result(ctx(params))
    assert answer.kind is QueryOutcomeKind.NOT_FOUND
    [request] = recorder.requests
    assert request.url.path == f"/r/{OCCURRENCE}"
    assert ("Authorization" in request.headers) is gets_headers
    assert ("X-Team" in request.headers) is gets_headers


@pytest.mark.parametrize(
    "template",
    [
        "https://h.example.test/{idempotencyKey:>50000000}",
        "https://h.example.test/{idempotencyKey!r}",
        "https://h.example.test/{occurrenceId}",
        "https://h.example.test/{scheduleId}/{idempotencyKey}",
        "https://h.example.test/{0}",
        "https://h.example.test/{{idempotencyKey}}",
    ],
)
def test_the_result_url_accepts_only_the_literal_placeholder(template: str) -> None:
    with pytest.raises(InvalidActionParameters) as raised:
        HttpAction().validate({"url": "https://h.example.test", "resultUrl": template})
    assert raised.value.field == "action.parameters.resultUrl"
    assert "{idempotencyKey}" in str(raised.value)


# -- bounded replies ---------------------------------------------------------------------------
async def test_a_failure_keeps_only_a_short_redacted_excerpt_of_the_reply() -> None:
    body = '{"password": "hunter2-secret", "trace": "Bearer abcdef123456", "x": "' + "y" * 5000
    recorder = Recorder(400, body.encode())
    outcome = await mocked(recorder).invoke(ctx({"url": "https://hooks.example.test/e"}))
    assert outcome.kind is OutcomeKind.NON_RETRYABLE_FAILURE
    assert outcome.detail.startswith("HTTP 400: ")
    assert len(outcome.detail) <= 200
    assert "hunter2" not in outcome.detail
    assert "abcdef123456" not in outcome.detail


async def test_a_huge_success_reply_is_recorded_as_truncated_not_kept() -> None:
    huge = json.dumps({"blob": "z" * (1 << 20)}).encode()
    outcome = await mocked(Recorder(200, huge)).invoke(ctx({"url": "https://hooks.example.test/e"}))
    assert outcome.kind is OutcomeKind.CONFIRMED
    assert outcome.result == {"status": 200, "truncated": True}


async def test_the_security_guides_receiver_verifies_a_real_delivery(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    guide = Path(__file__).resolve().parents[2] / "docs" / "operating" / "security.md"
    section = guide.read_text(encoding="utf-8")
    code = section[
        section.index("```python\n") + 10 : section.index("```", section.index("```python") + 9)
    ]
    namespace: dict[str, Any] = {}
    exec(compile(code, "docs/operating/security.md", "exec"), namespace)
    monkeypatch.setenv("OPS_WEBHOOK_KEY", SIGNING_KEY)
    recorder = Recorder()
    action = mocked(
        recorder,
        secrets=SecretResolver(environ={"ALMANAC_SECRET_SIGNING": SIGNING_KEY}),
    )
    params = {
        "url": "https://hooks.example.test/e",
        "signingSecret": env_ref("ALMANAC_SECRET_SIGNING"),
    }
    await action.invoke(ctx(params))
    [request] = recorder.requests
    headers = dict(request.headers.items())
    assert namespace["verified"](request.content, headers)["occurrenceId"] == OCCURRENCE
    tampered = request.content.replace(b"daily-ops-summary", b"daily-ops-summarx")
    assert namespace["verified"](tampered, headers) is None
