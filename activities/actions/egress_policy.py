"""The egress policy: which addresses an action may connect to (DESIGN §10).

The policy alone (no HTTP client), so the command line can judge an action's URL without loading
httpx: :mod:`activities.actions.egress` enforces it on every connection and describes it.
"""

from __future__ import annotations

import ipaddress
import re
import socket
import urllib.parse
from collections.abc import Iterable
from dataclasses import dataclass, field
from typing import Any

from activities.actions.base import ActionError

IPAddress = ipaddress.IPv4Address | ipaddress.IPv6Address
IPNetwork = ipaddress.IPv4Network | ipaddress.IPv6Network
METADATA_ADDRESSES = frozenset(
    ipaddress.ip_address(a)
    for a in ("169.254.169.254", "169.254.170.2", "fd00:ec2::254", "100.100.100.200")
)


class EgressRefused(ActionError):
    """The policy refuses a destination (never retried: the address will not change its kind)."""


_NAT64 = ipaddress.ip_network("64:ff9b::/96")


def _kind(address: IPAddress) -> str | None:
    """Why ``address`` is refused by default, or ``None`` for a globally routable one.

    An IPv4 address carried inside IPv6 (mapped ``::ffff:a.b.c.d``, NAT64 ``64:ff9b::a.b.c.d``,
    6to4 ``2002:aabb:ccdd::``) is judged as that IPv4 address.
    """
    if isinstance(address, ipaddress.IPv6Address):
        inner = address.ipv4_mapped or address.sixtofour
        if inner is None and address in _NAT64:
            inner = ipaddress.IPv4Address(int(address) & 0xFFFFFFFF)
        if inner is not None:
            return _kind(inner)
    if address in METADATA_ADDRESSES:
        return "a cloud metadata address"
    for kind, flag in (
        ("unspecified", address.is_unspecified),
        ("loopback", address.is_loopback),
        ("link-local", address.is_link_local),
        ("multicast", address.is_multicast),
        ("reserved", address.is_reserved),
        ("private", address.is_private),
    ):
        if flag:
            return f"a {kind} address"
    if not address.is_global:
        return "not a globally routable address"
    return None


_HOST_NAME = re.compile(
    r"^(?=.{1,253}\.?$)[A-Za-z0-9](?:[A-Za-z0-9-]{0,61}[A-Za-z0-9])?"
    r"(?:\.[A-Za-z0-9](?:[A-Za-z0-9-]{0,61}[A-Za-z0-9])?)*\.?$"
)
_WITH_PORT = re.compile(r"^(?:\[(?P<v6>[^\]]+)\]|(?P<name>[^:\[\]]+)):(?P<port>\d{1,5})$")


@dataclass(frozen=True)
class EgressPolicy:
    """Global addresses, plus the networks and host names an operator allowed.

    Each allowance carries a port, or ``None`` for every port.
    """

    allowed_networks: tuple[tuple[IPNetwork, int | None], ...] = ()
    allowed_hosts: frozenset[tuple[str, int | None]] = frozenset()
    entries: tuple[str, ...] = field(default=(), compare=False)
    """The allowances as the operator wrote them (stripped), for a refusal to quote."""

    @classmethod
    def allowing(cls, entries: Iterable[str]) -> EgressPolicy:
        """A policy also allowing ``entries``: CIDRs, addresses or host names, ``:port`` optional.

        Raises:
            ValueError: naming an entry that is neither a network nor a host name.
        """
        networks: list[tuple[IPNetwork, int | None]] = []
        hosts: set[tuple[str, int | None]] = set()
        written: list[str] = []
        for raw in entries:
            entry = raw.strip()
            if not entry:
                continue
            written.append(entry)
            target, port = entry, None
            found = _WITH_PORT.fullmatch(entry)
            if found is not None:
                target = found.group("v6") or found.group("name")
                port = int(found.group("port"))
                if not 0 < port < 65536:
                    raise ValueError(f"egress allowance {entry!r}: no such port")
            try:
                networks.append((ipaddress.ip_network(target, strict=False), port))
                continue
            except ValueError:
                pass
            if not _HOST_NAME.fullmatch(target):
                raise ValueError(f"egress allowance {entry!r} is neither a CIDR nor a host name")
            hosts.add((target.lower().rstrip("."), port))
        return cls(tuple(networks), frozenset(hosts), tuple(written))

    def check(self, host: str, address: IPAddress, port: int | None = None) -> None:
        """Refuse ``address`` (which ``host`` resolved to) unless the policy allows it.

        Raises:
            EgressRefused: naming the host, the address (and port) and the real cause: the
                address's kind when nothing is allowed; with an allow list, that the
                destination is not in it and what it holds — when the host or address is
                allowed on other ports only, that alone, since its kind is then no cause.
        """
        name = host.lower().rstrip(".")
        if (name, None) in self.allowed_hosts or (name, port) in self.allowed_hosts:
            return
        if any(
            address in network and allowed in (None, port)
            for network, allowed in self.allowed_networks
        ):
            return
        kind = _kind(address)
        if kind is None:
            return
        target = host if port is None else (f"[{host}]:{port}" if ":" in host else f"{host}:{port}")
        shown = target if host == str(address) else f"{target} ({address})"
        if not self.entries:
            raise EgressRefused(
                f"egress refused: {shown} is {kind}; an operator may allow it with "
                "ALMANAC_EGRESS_ALLOW"
            )
        allowed = f"not in the egress allow list (allowed: {', '.join(self.entries)})"
        other_ports = any(h == name for h, _ in self.allowed_hosts) or any(
            address in network for network, _ in self.allowed_networks
        )
        cause = allowed if other_ports else f"{kind} and {allowed}"
        raise EgressRefused(
            f"egress refused: {shown} is {cause}; add it to ALMANAC_EGRESS_ALLOW to allow it"
        )

    def refusal_of_url(self, url: str) -> EgressRefused | None:
        """The refusal a connection to ``url`` would meet, when its host alone decides it.

        Decided without DNS for an IP literal and for ``localhost`` (RFC 6761: loopback, judged
        as 127.0.0.1); a host name's addresses are checked at connect time (:meth:`resolve`), so
        this returns ``None`` for one, as for an allowed destination or a URL without a host.
        The port is the URL's, else its scheme's (80, 443).
        """
        try:
            parts = urllib.parse.urlsplit(url)
            host, port = parts.hostname, parts.port
        except ValueError:
            return None
        if host is None:
            return None
        port = port or {"http": 80, "https": 443}.get(parts.scheme.lower())
        address: IPAddress
        try:
            address = ipaddress.ip_address(host)
        except ValueError:
            name = host.lower().rstrip(".")
            if name != "localhost" and not name.endswith(".localhost"):
                return None
            address = ipaddress.IPv4Address("127.0.0.1")
        try:
            self.check(host, address, port)
        except EgressRefused as refusal:
            return refusal
        return None

    def resolve(self, host: str, port: int) -> list[IPAddress]:
        """Resolve ``host`` (blocking) and check every address it has; refuse if any is refused.

        Raises:
            EgressRefused: an address is refused, or the name does not resolve.
        """
        try:
            infos = socket.getaddrinfo(host, port, type=socket.SOCK_STREAM)
        except OSError as exc:
            raise EgressRefused(f"egress refused: {host} does not resolve ({exc})") from None
        return self._checked(host, port, infos)

    async def resolve_async(self, host: str, port: int) -> list[IPAddress]:
        """:meth:`resolve` without blocking the event loop."""
        import anyio  # only a worker resolves asynchronously: the policy itself stays light

        try:
            infos = await anyio.getaddrinfo(host, port, type=socket.SOCK_STREAM)
        except OSError as exc:
            raise EgressRefused(f"egress refused: {host} does not resolve ({exc})") from None
        return self._checked(host, port, infos)

    def _checked(self, host: str, port: int, infos: Iterable[tuple[Any, ...]]) -> list[IPAddress]:
        addresses: list[IPAddress] = []
        for info in infos:
            address = ipaddress.ip_address(str(info[4][0]).split("%")[0])
            if address not in addresses:
                addresses.append(address)
        for address in addresses:
            self.check(host, address, port)
        if not addresses:
            raise EgressRefused(f"egress refused: {host} has no address")
        return addresses
