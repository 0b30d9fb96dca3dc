"""The ``smtp`` action's TLS is verified (STARTTLS and implicit TLS), and AUTH takes its password
from a secret reference — never from the spec, never without TLS."""

from __future__ import annotations

import ssl
from collections.abc import Iterator
from typing import Any

import pytest
from smtp_server import FakeSmtpServer, ServerCertificate

from activities.actions import (
    ActionContext,
    EgressPolicy,
    InvalidActionParameters,
    OutcomeKind,
    SecretResolver,
    SmtpAction,
)

pytestmark = pytest.mark.anyio

LOCAL = EgressPolicy.allowing(["127.0.0.1"])
PASSWORD = "canary-smtp-password-9f2c41"


def ctx(port: int, **extra: Any) -> ActionContext:
    return ActionContext(
        occurrence_id="mail.r1.20261101T013000.f0",
        schedule_id="mail",
        revision=1,
        nominal_local="2026-11-01T01:30:00",
        instant_utc="2026-11-01T05:30:00Z",
        attempt=1,
        parameters={
            "host": "127.0.0.1",
            "port": port,
            "from": "almanac@example.test",
            "to": "ops@example.test",
            "subject": "TLS",
            "timeoutSeconds": 5,
            **extra,
        },
    )


def server_context(cert: ServerCertificate) -> ssl.SSLContext:
    context = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
    context.load_cert_chain(cert.cert, cert.key)
    return context


def trusting(cert: ServerCertificate) -> ssl.SSLContext:
    """A client context like ssl.create_default_context(), trusting only the test certificate."""
    return ssl.create_default_context(cafile=str(cert.cert))


@pytest.fixture(params=["starttls", "implicitTls"])
def tls_server(
    request: pytest.FixtureRequest, test_certificate: ServerCertificate
) -> Iterator[tuple[FakeSmtpServer, str]]:
    server = FakeSmtpServer(
        tls=server_context(test_certificate), implicit_tls=request.param == "implicitTls"
    )
    server.start()
    try:
        yield server, request.param
    finally:
        server.stop()


async def test_an_untrusted_certificate_is_refused_and_nothing_is_sent(
    tls_server: tuple[FakeSmtpServer, str],
) -> None:
    server, mode = tls_server
    # The default context (system roots) does not trust the self-signed test certificate.
    outcome = await SmtpAction(egress=LOCAL).invoke(ctx(server.port, **{mode: True}))
    assert outcome.kind is OutcomeKind.NON_RETRYABLE_FAILURE
    assert "certificate verify failed" in outcome.detail
    assert server.messages == []


async def test_a_trusted_certificate_carries_the_message_and_the_login(
    tls_server: tuple[FakeSmtpServer, str], test_certificate: ServerCertificate
) -> None:
    server, mode = tls_server
    action = SmtpAction(
        egress=LOCAL,
        secrets=SecretResolver(environ={"ALMANAC_SECRET_SMTP": PASSWORD}),
        tls_context=trusting(test_certificate),
    )
    params = {
        mode: True,
        "username": "almanac",
        "password": {"secretRef": {"env": "ALMANAC_SECRET_SMTP"}},
    }
    outcome = await action.invoke(ctx(server.port, **params))
    assert outcome.kind is OutcomeKind.CONFIRMED, outcome.detail
    assert server.logins == [("almanac", PASSWORD)]
    assert len(server.messages) == 1
    assert PASSWORD not in repr(outcome)


async def test_the_host_name_is_verified_not_just_the_chain(
    test_certificate: ServerCertificate,
) -> None:
    # The certificate names localhost and 127.0.0.1; reached as 127.0.0.2 it does not match.
    server = FakeSmtpServer(
        tls=server_context(test_certificate), implicit_tls=True, host="127.0.0.2"
    )
    server.start()
    try:
        action = SmtpAction(
            egress=EgressPolicy.allowing(["127.0.0.0/8"]), tls_context=trusting(test_certificate)
        )
        outcome = await action.invoke(ctx(server.port, implicitTls=True, host="127.0.0.2"))
    finally:
        server.stop()
    assert outcome.kind is OutcomeKind.NON_RETRYABLE_FAILURE
    assert "certificate verify failed" in outcome.detail
    assert server.messages == []


@pytest.mark.parametrize(
    ("params", "problem"),
    [
        ({"username": "u", "password": "literal"}, "action.parameters.password"),
        (
            {"username": "u", "password": {"secretRef": {"env": "ALMANAC_SECRET_X"}}},
            "never sent without TLS",
        ),
        ({"starttls": True, "implicitTls": True}, "choose one"),
        ({"password": {"secretRef": {"env": "HOME"}}, "starttls": True}, "ALMANAC_SECRET_"),
    ],
)
def test_unsafe_auth_parameters_are_refused(params: dict[str, Any], problem: str) -> None:
    with pytest.raises(InvalidActionParameters) as raised:
        SmtpAction().validate(ctx(25, **params).parameters)
    assert problem in str(raised.value)
    assert "'literal'" not in str(raised.value)  # a literal password is never repeated


async def test_an_unset_password_variable_fails_without_sending(
    tls_server: tuple[FakeSmtpServer, str], test_certificate: ServerCertificate
) -> None:
    server, mode = tls_server
    action = SmtpAction(
        egress=LOCAL, secrets=SecretResolver(environ={}), tls_context=trusting(test_certificate)
    )
    params = {
        mode: True,
        "username": "almanac",
        "password": {"secretRef": {"env": "ALMANAC_SECRET_SMTP"}},
    }
    outcome = await action.invoke(ctx(server.port, **params))
    assert outcome.kind is OutcomeKind.NON_RETRYABLE_FAILURE
    assert "ALMANAC_SECRET_SMTP" in outcome.detail
    assert server.messages == []
