"""The ``smtp`` action against a real (tiny) SMTP server: non-idempotent and not queryable, so
doubt after DATA began is UNCONFIRMED — never a failure that would invite a resend."""

from __future__ import annotations

from typing import Any

import pytest
from smtp_server import FakeSmtpServer

from activities.actions import (
    ActionContext,
    ActionRegistry,
    EgressPolicy,
    InvalidActionParameters,
    OutcomeKind,
    QueryOutcomeKind,
    SmtpAction,
)

pytestmark = pytest.mark.anyio

OCCURRENCE = "daily-ops-summary.r7.20261101T013000.f0"
LOCAL = EgressPolicy.allowing(["127.0.0.1"])
"""The test SMTP server listens on loopback, which the default egress policy refuses."""


def ctx(port: int, timeout: float = 5.0, **extra: Any) -> ActionContext:
    return ActionContext(
        occurrence_id=OCCURRENCE,
        schedule_id="daily-ops-summary",
        revision=7,
        nominal_local="2026-11-01T01:30:00",
        instant_utc="2026-11-01T05:30:00Z",
        attempt=1,
        parameters={
            "host": "127.0.0.1",
            "port": port,
            "from": "almanac@example.test",
            "to": ["ops@example.test", "lead@example.test"],
            "subject": "Daily ops summary",
            "timeoutSeconds": timeout,
            **extra,
        },
    )


def test_declares_no_idempotency_key_and_no_result_query() -> None:
    caps = ActionRegistry.default().validate("smtp", ctx(25).parameters)
    assert (caps.accepts_idempotency_key, caps.can_query_result) == (False, False)
    assert (SmtpAction.accepts_idempotency_key, SmtpAction.can_query_result) == (False, False)


async def test_accepted_message_is_confirmed_and_carries_the_occurrence_id(
    smtp_server: FakeSmtpServer,
) -> None:
    outcome = await SmtpAction(egress=LOCAL).invoke(ctx(smtp_server.port))

    assert outcome.kind is OutcomeKind.CONFIRMED
    assert outcome.status_code == 250
    [message] = smtp_server.messages
    assert message["X-Almanac-Occurrence-Id"] == OCCURRENCE
    assert message["Message-ID"] == f"<{OCCURRENCE}@almanac.invalid>"
    assert message["Subject"] == "Daily ops summary"
    assert message["To"] == "ops@example.test, lead@example.test"
    assert OCCURRENCE in message.get_payload()


async def test_timeout_after_data_is_unconfirmed_though_the_server_has_the_message(
    smtp_server: FakeSmtpServer,
) -> None:
    smtp_server.mode = "hang_after_data"
    outcome = await SmtpAction(egress=LOCAL).invoke(ctx(smtp_server.port, timeout=0.5))
    assert outcome.kind is OutcomeKind.UNCONFIRMED
    assert len(smtp_server.messages) == 1  # the effect may well have happened


async def test_connection_lost_after_data_is_unconfirmed(smtp_server: FakeSmtpServer) -> None:
    smtp_server.mode = "close_after_data"
    outcome = await SmtpAction(egress=LOCAL).invoke(ctx(smtp_server.port))
    assert outcome.kind is OutcomeKind.UNCONFIRMED
    assert len(smtp_server.messages) == 1


async def test_timeout_before_data_is_retryable(smtp_server: FakeSmtpServer) -> None:
    smtp_server.mode = "hang_before_data"
    outcome = await SmtpAction(egress=LOCAL).invoke(ctx(smtp_server.port, timeout=0.5))
    assert outcome.kind is OutcomeKind.RETRYABLE_FAILURE
    assert smtp_server.messages == []


async def test_connection_refused_is_retryable(closed_port: int) -> None:
    outcome = await SmtpAction(egress=LOCAL).invoke(ctx(closed_port))
    assert outcome.kind is OutcomeKind.RETRYABLE_FAILURE
    assert "not sent" in outcome.detail


@pytest.mark.parametrize(
    ("mode", "kind", "code"),
    [
        ("reject_rcpt", OutcomeKind.NON_RETRYABLE_FAILURE, 550),
        ("busy_rcpt", OutcomeKind.RETRYABLE_FAILURE, 451),
        ("reject_message", OutcomeKind.NON_RETRYABLE_FAILURE, 554),
    ],
)
async def test_explicit_refusals_are_failures_not_doubt(
    smtp_server: FakeSmtpServer, mode: str, kind: OutcomeKind, code: int
) -> None:
    smtp_server.mode = mode
    outcome = await SmtpAction(egress=LOCAL).invoke(ctx(smtp_server.port))
    assert (outcome.kind, outcome.status_code) == (kind, code)


async def test_result_query_is_unsupported(smtp_server: FakeSmtpServer) -> None:
    answer = await SmtpAction().query_result(ctx(smtp_server.port))
    assert answer.kind is QueryOutcomeKind.UNSUPPORTED


@pytest.mark.parametrize(
    ("override", "field"),
    [
        ({"host": ""}, "action.parameters.host"),
        ({"port": 70000}, "action.parameters.port"),
        ({"from": "not an address"}, "action.parameters.from"),
        ({"to": []}, "action.parameters.to"),
        ({"to": ["ok@example.test", "nope"]}, "action.parameters.to.1"),
        ({"subject": "two\nlines"}, "action.parameters.subject"),
    ],
)
def test_invalid_parameters_name_the_parameter(override: dict[str, Any], field: str) -> None:
    params = {**ctx(25).parameters, **override}
    with pytest.raises(InvalidActionParameters) as raised:
        SmtpAction().validate(params)
    assert raised.value.field == field


def test_a_single_recipient_may_be_a_string() -> None:
    params = SmtpAction().validate({**ctx(25).parameters, "to": "ops@example.test"})
    assert params.to == ["ops@example.test"]
