"""The egress policy: what an action may connect to, decided after DNS, on the address connected."""

from __future__ import annotations

import ipaddress
import socket
import ssl
import threading
import urllib.parse
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, HTTPServer
from typing import Any

import pytest
from smtp_server import FakeSmtpServer, ServerCertificate

from activities.actions import (
    ActionContext,
    ActionRegistry,
    EgressPolicy,
    EgressRefused,
    HttpAction,
    OutcomeKind,
    QueryOutcomeKind,
    SmtpAction,
)
from almanac.stack.sink import Sink

pytestmark = pytest.mark.anyio


def ctx(parameters: dict[str, Any]) -> ActionContext:
    return ActionContext(
        occurrence_id="egress.r1.20261101T013000.f0",
        schedule_id="egress",
        revision=1,
        nominal_local="2026-11-01T01:30:00",
        instant_utc="2026-11-01T05:30:00Z",
        attempt=1,
        parameters=parameters,
    )


# Refused by default; the reason names the kind (RFC 6890 special-purpose ranges, cloud metadata).
REFUSED = {
    "127.0.0.1": "loopback",
    "127.8.9.10": "loopback",
    "::1": "loopback",
    "10.1.2.3": "private",
    "172.16.0.1": "private",
    "192.168.1.1": "private",
    "fd12:3456::1": "private",
    "169.254.169.254": "metadata",
    "169.254.10.10": "link-local",
    "fe80::1": "link-local",
    "fd00:ec2::254": "metadata",
    "100.100.100.200": "metadata",
    "100.64.0.1": "routable",
    "0.0.0.0": "unspecified",
    "224.0.0.1": "multicast",
    "240.0.0.1": "reserved",
    "::ffff:127.0.0.1": "loopback",
    "::ffff:169.254.169.254": "metadata",
    "64:ff9b::a9fe:a9fe": "metadata",  # NAT64 of 169.254.169.254
    "64:ff9b::7f00:1": "loopback",
    "2002:a00:1::1": "private",  # 6to4 of 10.0.0.1
}
ALLOWED = ["93.184.215.14", "1.1.1.1", "2606:4700:4700::1111", "8.8.8.8", "64:ff9b::808:808"]


@pytest.mark.parametrize(("address", "kind"), REFUSED.items())
def test_special_addresses_are_refused_by_default(address: str, kind: str) -> None:
    with pytest.raises(EgressRefused) as raised:
        EgressPolicy().check("h.example.test", ipaddress.ip_address(address))
    assert kind in str(raised.value)
    assert "ALMANAC_EGRESS_ALLOW" in str(raised.value)


@pytest.mark.parametrize("address", ALLOWED)
def test_global_addresses_are_allowed(address: str) -> None:
    EgressPolicy().check("h.example.test", ipaddress.ip_address(address))


def test_an_allowance_opens_exactly_its_networks_and_hosts() -> None:
    policy = EgressPolicy.allowing(["10.0.0.0/8", "127.0.0.1", " sink ", ""])
    policy.check("x", ipaddress.ip_address("10.9.9.9"))
    policy.check("x", ipaddress.ip_address("127.0.0.1"))
    policy.check("SINK", ipaddress.ip_address("172.18.0.5"))  # a named host, whatever it is
    for address in ("127.0.0.2", "192.168.0.1", "169.254.169.254"):
        with pytest.raises(EgressRefused):
            policy.check("x", ipaddress.ip_address(address))


def test_an_allowance_with_a_port_opens_only_that_port() -> None:
    policy = EgressPolicy.allowing(["127.0.0.1:8765", "[::1]:8765", "sink:80"])
    policy.check("127.0.0.1", ipaddress.ip_address("127.0.0.1"), 8765)
    policy.check("::1", ipaddress.ip_address("::1"), 8765)
    policy.check("sink", ipaddress.ip_address("10.0.0.9"), 80)
    for host, address, port in [
        ("127.0.0.1", "127.0.0.1", 7233),
        ("::1", "::1", 9464),
        ("sink", "10.0.0.9", 5432),
    ]:
        with pytest.raises(EgressRefused):
            policy.check(host, ipaddress.ip_address(address), port)


@pytest.mark.parametrize(
    ("allow", "url", "said"),
    [
        # Allowed on another port: the list is the cause, not the address's kind.
        (
            ["127.0.0.1:9000"],
            "http://127.0.0.1:8765/effects",
            "127.0.0.1:8765 is not in the egress allow list (allowed: 127.0.0.1:9000)",
        ),
        (
            ["sink:80", "10.0.0.0/8"],
            "http://sink:81/",
            "sink:81 (127.0.0.1) is not in the egress allow list (allowed: sink:80, 10.0.0.0/8)",
        ),
        # Not in the list at all: both causes.
        (
            ["10.0.0.0/8"],
            "http://[::1]:8/e",
            "[::1]:8 is a loopback address and not in the egress allow list (allowed: 10.0.0.0/8)",
        ),
        # No list: the address's kind, and where to allow it.
        ([], "http://127.0.0.1:1/", "127.0.0.1:1 is a loopback address; an operator may allow"),
    ],
)
def test_a_refusal_names_its_real_cause(allow: list[str], url: str, said: str) -> None:
    policy = EgressPolicy.allowing(allow)
    parts = urllib.parse.urlsplit(url)
    assert parts.hostname is not None and parts.port is not None
    address = "127.0.0.1" if parts.hostname == "sink" else parts.hostname
    with pytest.raises(EgressRefused) as refused:
        policy.check(parts.hostname, ipaddress.ip_address(address), parts.port)
    assert str(refused.value).startswith(f"egress refused: {said}"), refused.value


@pytest.mark.parametrize(
    ("url", "refused"),
    [
        ("http://127.0.0.1:1/", "127.0.0.1:1 is a loopback address"),
        ("https://localhost/e", "localhost:443 (127.0.0.1) is a loopback address"),
        ("http://[fd00:ec2::254]/", "[fd00:ec2::254]:80 is a cloud metadata address"),
        ("http://10.1.2.3:8765/e", None),  # allowed below
        ("http://example.com/e", None),  # a name: decided at connect time, after DNS
        ("not a url", None),
    ],
)
def test_a_url_whose_host_alone_is_refused_is_found_without_connecting(
    url: str, refused: str | None
) -> None:
    found = EgressPolicy.allowing(["10.0.0.0/8"]).refusal_of_url(url)
    if refused is None:
        assert found is None
    else:
        assert found is not None and f"egress refused: {refused}" in str(found)


def test_the_worker_refuses_to_publish_an_http_action_its_policy_refuses() -> None:
    parameters = {"url": "http://127.0.0.1:1/", "resultUrl": "http://127.0.0.1:2/{idempotencyKey}"}
    problems = ActionRegistry.default().problems("http", parameters)
    assert [(p.field, p.value) for p in problems] == [
        ("action.parameters.url", "http://127.0.0.1:1/"),
        ("action.parameters.resultUrl", "http://127.0.0.1:2/{idempotencyKey}"),
    ]
    assert "the worker's egress policy refuses it: 127.0.0.1:1 is a loopback" in str(problems[0])
    allowing = ActionRegistry.default(egress=EgressPolicy.allowing(["127.0.0.1"]))
    assert allowing.problems("http", parameters) == []
    assert ActionRegistry.default().problems("http", {"url": "https://example.com/"}) == []


@pytest.mark.parametrize("entry", ["10.0.0.0/33", "not a host", "http://x/", "h:70000"])
def test_a_malformed_allowance_is_an_error_naming_it(entry: str) -> None:
    with pytest.raises(ValueError, match="egress allowance"):
        EgressPolicy.allowing([entry])


def test_a_name_is_checked_on_every_address_it_resolves_to() -> None:
    with pytest.raises(EgressRefused, match=r"localhost:80 \(.*\) is a loopback address"):
        EgressPolicy().resolve("localhost", 80)


async def test_the_http_action_never_reaches_a_refused_address(sink: Sink) -> None:
    params = {"url": f"{sink.url}/effects", "resultUrl": f"{sink.url}/effects/{{idempotencyKey}}"}
    outcome = await HttpAction().invoke(ctx(params))
    answer = await HttpAction().query_result(ctx(params))
    assert outcome.kind is OutcomeKind.NON_RETRYABLE_FAILURE
    assert "egress refused" in outcome.detail
    assert answer.kind is QueryOutcomeKind.QUERY_FAILED
    assert "egress refused" in answer.detail
    assert sink.server.last_headers == {}  # nothing reached the sink


async def test_a_host_name_resolving_to_loopback_is_refused(sink: Sink) -> None:
    port = sink.url.rsplit(":", 1)[1]
    outcome = await HttpAction().invoke(ctx({"url": f"http://localhost:{port}/effects"}))
    assert outcome.kind is OutcomeKind.NON_RETRYABLE_FAILURE
    assert "loopback" in outcome.detail
    assert sink.effects() == []


async def test_the_metadata_address_is_refused_before_any_connection() -> None:
    outcome = await HttpAction().invoke(ctx({"url": "http://169.254.169.254/latest/meta-data/"}))
    assert outcome.kind is OutcomeKind.NON_RETRYABLE_FAILURE
    assert "metadata" in outcome.detail


@pytest.fixture
def redirector() -> Iterator[tuple[str, list[str]]]:
    """A local server answering 302 to the metadata address; yields its URL and the paths hit."""
    hits: list[str] = []

    class Handler(BaseHTTPRequestHandler):
        def do_POST(self) -> None:
            hits.append(self.path)
            self.send_response(302)
            self.send_header("Location", "http://169.254.169.254/latest/meta-data/")
            self.send_header("Content-Length", "0")
            self.end_headers()

        def log_message(self, *args: Any) -> None:
            pass

    server = HTTPServer(("127.0.0.1", 0), Handler)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield f"http://127.0.0.1:{server.server_address[1]}", hits
    finally:
        server.shutdown()
        server.server_close()


async def test_redirects_are_not_followed(redirector: tuple[str, list[str]]) -> None:
    url, hits = redirector
    action = HttpAction(egress=EgressPolicy.allowing(["127.0.0.1"]))
    outcome = await action.invoke(ctx({"url": f"{url}/hook"}))
    assert (outcome.kind, outcome.status_code) == (OutcomeKind.NON_RETRYABLE_FAILURE, 302)
    assert hits == ["/hook"]


async def test_the_smtp_action_passes_the_same_policy(smtp_server: FakeSmtpServer) -> None:
    params = {
        "host": "127.0.0.1",
        "port": smtp_server.port,
        "from": "a@example.test",
        "to": "b@example.test",
        "subject": "s",
    }
    refused = await SmtpAction().invoke(ctx(params))
    allowed = await SmtpAction(egress=EgressPolicy.allowing(["127.0.0.1"])).invoke(ctx(params))
    assert refused.kind is OutcomeKind.NON_RETRYABLE_FAILURE
    assert "egress refused" in refused.detail
    assert allowed.kind is OutcomeKind.CONFIRMED
    assert len(smtp_server.messages) == 1


def test_resolution_uses_the_system_resolver() -> None:
    # Guard for the test above: localhost must resolve here, or the name test proves nothing.
    assert socket.getaddrinfo("localhost", 80, type=socket.SOCK_STREAM)


@pytest.fixture
def tls_hook(test_certificate: ServerCertificate) -> Iterator[int]:
    """An HTTPS server on 127.0.0.1 (certificate for localhost and 127.0.0.1) answering 200."""

    class Handler(BaseHTTPRequestHandler):
        def do_POST(self) -> None:
            self.rfile.read(int(self.headers.get("Content-Length") or 0))
            self.send_response(200)
            self.send_header("Content-Length", "2")
            self.end_headers()
            self.wfile.write(b"{}")

        def log_message(self, *args: Any) -> None:
            pass

    server = HTTPServer(("127.0.0.1", 0), Handler)
    context = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
    context.load_cert_chain(test_certificate.cert, test_certificate.key)
    server.socket = context.wrap_socket(server.socket, server_side=True)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield int(server.server_address[1])
    finally:
        server.shutdown()
        server.server_close()


async def test_tls_is_verified_by_host_name_though_the_checked_address_is_dialled(
    tls_hook: int, test_certificate: ServerCertificate
) -> None:
    trusting = ssl.create_default_context(cafile=str(test_certificate.cert))
    allowed = EgressPolicy.allowing(["localhost", "127.0.0.1"])
    url = f"https://localhost:{tls_hook}/hook"
    verified = await HttpAction(egress=allowed, tls_context=trusting).invoke(ctx({"url": url}))
    untrusted = await HttpAction(egress=allowed).invoke(ctx({"url": url}))
    assert verified.kind is OutcomeKind.CONFIRMED, verified.detail
    assert untrusted.kind is OutcomeKind.RETRYABLE_FAILURE
    assert "CERTIFICATE_VERIFY_FAILED" in untrusted.detail
