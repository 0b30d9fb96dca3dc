"""The egress policy: which addresses an action may connect to (DESIGN §10).

Whoever may apply a spec may make the workers call out, so the worker, not the spec, decides
where "out" is. By default only globally routable addresses are allowed: loopback, private
(RFC 1918, unique-local IPv6), link-local (cloud metadata services live at 169.254.169.254 and
fd00:ec2::254), shared (100.64.0.0/10, where one cloud's metadata lives), reserved, multicast and
unspecified addresses are refused — also when an IPv4 address hides inside IPv6 (``::ffff:…``,
NAT64 ``64:ff9b::…``, 6to4 ``2002:…``).

The check runs on the addresses the host name resolves to, at connect time, and the connection
goes to the very address that was checked, so a DNS answer that changes between check and connect
(rebinding) cannot slip through. Redirects are never followed and environment proxies are not
used (either would connect somewhere the policy did not see).

An operator opens what they choose with ``ALMANAC_EGRESS_ALLOW``: a comma-separated list of CIDRs
(``10.0.0.0/8``, ``127.0.0.1``, ``fd00::/8``) and host names (``sink``, ``mail.internal``), each
optionally with a port (``127.0.0.1:8765``, ``[::1]:8765``, ``sink:8765``) that narrows it to that
port; a listed host name is allowed whatever it resolves to. ``almanac dev`` allows its own sink's
address and port, nothing else.
"""

from __future__ import annotations

import ssl
import typing

import anyio
import httpcore
import httpx

from activities.actions.egress_policy import EgressPolicy, EgressRefused


class EgressConnectError(httpcore.ConnectError):
    """httpcore's connect error carrying the policy's refusal (httpx maps it to ConnectError)."""

    def __init__(self, refusal: EgressRefused) -> None:
        super().__init__(str(refusal))
        self.refusal = refusal


class _GuardedBackend(httpcore.AsyncNetworkBackend):
    """Resolves, checks and connects to the checked address (the TLS name stays the host's)."""

    def __init__(self, policy: EgressPolicy) -> None:
        self._policy = policy
        self._inner = httpcore.AnyIOBackend()

    async def connect_tcp(
        self,
        host: str,
        port: int,
        timeout: float | None = None,
        local_address: str | None = None,
        socket_options: typing.Iterable[httpcore.SOCKET_OPTION] | None = None,
    ) -> httpcore.AsyncNetworkStream:
        try:
            with anyio.fail_after(timeout):
                addresses = await self._policy.resolve_async(host, port)
        except EgressRefused as refusal:
            raise EgressConnectError(refusal) from refusal
        except TimeoutError as exc:
            raise httpcore.ConnectTimeout(f"resolving {host} timed out") from exc
        last: Exception | None = None
        for address in addresses:
            try:
                return await self._inner.connect_tcp(
                    str(address), port, timeout, local_address, socket_options
                )
            except (httpcore.ConnectError, httpcore.ConnectTimeout) as exc:
                last = exc
        assert last is not None
        raise last

    async def connect_unix_socket(
        self,
        path: str,
        timeout: float | None = None,
        socket_options: typing.Iterable[httpcore.SOCKET_OPTION] | None = None,
    ) -> httpcore.AsyncNetworkStream:
        raise httpcore.ConnectError("egress refused: unix sockets are not an egress")

    async def sleep(self, seconds: float) -> None:
        await self._inner.sleep(seconds)


class EgressTransport(httpx.AsyncHTTPTransport):
    """httpx's transport with every connection checked by an :class:`EgressPolicy`.

    No environment proxies, no connection reuse (each call gets a fresh connection), TLS verified
    with ``verify``.
    """

    def __init__(self, policy: EgressPolicy, verify: ssl.SSLContext) -> None:
        """Build the transport; ``verify`` is the TLS context (system roots)."""
        super().__init__(verify=verify, trust_env=False)
        # httpx takes no network backend; its pool is the documented httpcore one, rebuilt with
        # the guarded backend (tests/actions/test_egress.py fails if this stops applying).
        self._pool = httpcore.AsyncConnectionPool(
            ssl_context=verify,
            max_keepalive_connections=0,
            network_backend=_GuardedBackend(policy),
        )


def refusal_of(exc: BaseException) -> EgressRefused | None:
    """The policy's refusal behind an httpx error, if that is what it is."""
    seen: BaseException | None = exc
    while seen is not None:
        if isinstance(seen, EgressConnectError):
            return seen.refusal
        if isinstance(seen, EgressRefused):
            return seen
        seen = seen.__cause__ or seen.__context__
    return None


__all__ = [
    "EgressConnectError",
    "EgressPolicy",
    "EgressRefused",
    "EgressTransport",
    "refusal_of",
]
