"""Where `OAuth`'s fetches may go: the address policy against SSRF.

Every URL the OAuth flow fetches (protected-resource and authorization-server metadata,
registration, token and identity-provider endpoints) comes from a server, and "MCP
clients ... SHOULD" guard OAuth metadata discovery against server-side request forgery
(2025-11-25 basic/security_best_practices, Server-Side Request Forgery): a hostile MCP
server naming ``https://169.254.169.254/`` as its authorization server would make us
fetch a cloud's metadata service, or an intranet host, on its behalf.

So the host is resolved here (the only IO of this module), and refused when an address
is in a network of `FORBIDDEN_NETWORKS` (link-local, unspecified, multicast, reserved:
never a legitimate authorization server), or private or loopback (`PRIVATE_NETWORKS`,
`LOOPBACK_NETWORKS`) while the MCP server is not in the same trust zone: a loopback MCP
server (the user's own, or the conformance suite's) may name loopback and private
endpoints, a private one private endpoints, a public one neither — unless the user
opted in (``OAuth(allow_private_networks=True)``). IPv4 addresses inside IPv6 ones
(mapped, NAT64, 6to4) are judged as the IPv4 address they reach.

The caller connects to the addresses `AddressGuard.check` returned, never resolving the
name again: a second answer could differ from the first (DNS rebinding). For the same
reason the MCP server's zone is that of the address its connection reached (the client
tells it with each refusal, `AddressGuard.connected_to`); its name is looked up only
when no connection told it.
"""

from __future__ import annotations

import enum
from collections.abc import Iterable
from ipaddress import IPv4Address, IPv6Address, IPv6Network, ip_address, ip_network
from typing import Final

import trio

from mcpcore.auth import OAuthError
from transports._net.url import HttpUrl

__all__ = [
    "FORBIDDEN_NETWORKS",
    "LOOPBACK_NETWORKS",
    "PRIVATE_NETWORKS",
    "AddressGuard",
    "Zone",
    "allowed",
    "server_zone",
    "zone_of",
]

#: Loopback: the client's own host (RFC 1122 §3.2.1.3; RFC 4291 §2.5.3).
LOOPBACK_NETWORKS: Final = (ip_network("127.0.0.0/8"), ip_network("::1/128"))
#: Networks never fetched, whatever the MCP server's address or the user's setting:
#: none holds an authorization server, and some hold what SSRF is after.
FORBIDDEN_NETWORKS: Final = (
    ip_network("0.0.0.0/8"),  # "this network" (RFC 1122 §3.2.1.3); 0.0.0.0 reaches us
    ip_network("169.254.0.0/16"),  # link-local (RFC 3927): cloud metadata services
    ip_network("100.100.100.200/32"),  # Alibaba Cloud's metadata service (in 100.64/10)
    ip_network("192.0.0.0/24"),  # IETF protocol assignments (RFC 6890 §2.2.2)
    ip_network("192.0.2.0/24"),  # documentation (RFC 5737)
    ip_network("198.51.100.0/24"),  # documentation (RFC 5737)
    ip_network("203.0.113.0/24"),  # documentation (RFC 5737)
    ip_network("198.18.0.0/15"),  # benchmarking (RFC 2544)
    ip_network("224.0.0.0/4"),  # multicast (RFC 5771)
    ip_network("240.0.0.0/4"),  # reserved (RFC 1112 §4), and broadcast (RFC 919)
    ip_network("::/96"),  # unspecified, IPv4-compatible (deprecated: RFC 4291 §2.5.5.1)
    ip_network("100::/64"),  # discard-only (RFC 6666)
    ip_network("2001::/32"),  # Teredo (RFC 4380): an IPv4 address we cannot judge
    ip_network("2001:db8::/32"),  # documentation (RFC 3849)
    ip_network("fd00:ec2::254/128"),  # AWS's metadata service over IPv6 (in fc00::/7)
    ip_network("fe80::/10"),  # link-local (RFC 4291 §2.5.6)
    ip_network("fec0::/10"),  # site-local (deprecated: RFC 3879)
    ip_network("ff00::/8"),  # multicast (RFC 4291 §2.7)
)
#: Private networks: an intranet, fetched only from a private or loopback MCP server's
#: flow, or with the user's opt-in.
PRIVATE_NETWORKS: Final = (
    ip_network("10.0.0.0/8"),  # RFC 1918
    ip_network("172.16.0.0/12"),  # RFC 1918
    ip_network("192.168.0.0/16"),  # RFC 1918
    ip_network("100.64.0.0/10"),  # shared address space, carrier-grade NAT (RFC 6598)
    ip_network("fc00::/7"),  # unique local (RFC 4193)
    ip_network("64:ff9b:1::/48"),  # local-use IPv4/IPv6 translation (RFC 8215)
)
# The well-known NAT64 prefix: its last 32 bits are an IPv4 address (RFC 6052 §2.1).
_NAT64: Final = IPv6Network("64:ff9b::/96")
_IPV4_BITS: Final = 0xFFFFFFFF


class Zone(enum.IntEnum):
    """How far inside the client's network an address is (a larger value: further)."""

    PUBLIC = 0
    PRIVATE = 1
    LOOPBACK = 2
    FORBIDDEN = 3


# Looked up in this order: loopback first (::1 is inside the forbidden ::/96), then the
# forbidden networks (some, metadata services, are inside private ones).
_ZONES: Final = (
    (LOOPBACK_NETWORKS, Zone.LOOPBACK),
    (FORBIDDEN_NETWORKS, Zone.FORBIDDEN),
    (PRIVATE_NETWORKS, Zone.PRIVATE),
)


def zone_of(address: str) -> Zone:
    """The zone of an IP address (as `getaddrinfo` writes it; anything else is FORBIDDEN)."""
    try:
        parsed = _unwrapped(ip_address(address))
    except ValueError:
        return Zone.FORBIDDEN
    for networks, zone in _ZONES:
        if any(parsed in network for network in networks):
            return zone
    return Zone.PUBLIC


def _unwrapped(address: IPv4Address | IPv6Address) -> IPv4Address | IPv6Address:
    # An IPv6 address that carries an IPv4 one reaches that IPv4 address: judged as it.
    if isinstance(address, IPv4Address):
        return address
    if address.ipv4_mapped is not None:  # ::ffff:a.b.c.d (RFC 4291 §2.5.5.2)
        return address.ipv4_mapped
    if address in _NAT64:
        return IPv4Address(int(address) & _IPV4_BITS)
    if address.sixtofour is not None:  # 2002:aabb:ccdd::/48 (RFC 3056 §2)
        return address.sixtofour
    return address


def allowed(target: Zone, server: Zone, *, allow_private_networks: bool) -> bool:
    """Whether an OAuth fetch may go to ``target`` in a flow for an MCP server in ``server``.

    Public: always. Forbidden: never. Private and loopback: with the user's opt-in, or
    when the MCP server is at least as far inside (the same trust zone: a loopback
    server may name private endpoints, a private one may not name our loopback).
    """
    if target == Zone.FORBIDDEN:
        return False
    return target == Zone.PUBLIC or allow_private_networks or target <= server


def server_zone(addresses: Iterable[str]) -> Zone:
    """The trust an MCP server's addresses earn: the least inside of them.

    A server on a forbidden address earns none (PUBLIC): it opens nothing.
    """
    zones = [zone_of(address) for address in addresses]
    least = min(zones, default=Zone.PUBLIC)
    return Zone.PUBLIC if least == Zone.FORBIDDEN else least


class AddressGuard:
    """The SSRF check of the OAuth fetches made for one MCP server.

    Args:
        server_host: The MCP server's host (resolved once, when a fetch first needs its
            zone); None: no server vouches (private and loopback refused).
        allow_private_networks: The user's opt-in (see `OAuth`).
    """

    def __init__(self, server_host: str | None, *, allow_private_networks: bool) -> None:
        self._server_host = server_host
        self._allow_private = allow_private_networks
        self._server_zone: Zone | None = None

    async def check(self, url: HttpUrl) -> list[str]:
        """The addresses of ``url``'s host, every one allowed: connect only to these.

        Raises:
            OAuthError: The host does not resolve, or an address is refused (the
                message names the host, never the address: that is the intranet's).
        """
        addresses = await _resolve(url.host, url.port)
        target = max(zone_of(address) for address in addresses)
        if target == Zone.FORBIDDEN:
            raise OAuthError(
                f"refused to fetch from {url.host}: it is on a link-local, multicast or"
                " reserved address (server-side request forgery protection)"
            )
        if target == Zone.PUBLIC or self._allow_private:
            return addresses  # (the MCP server's address is not needed: not resolved)
        if not allowed(target, await self._zone_of_server(), allow_private_networks=False):
            raise OAuthError(
                f"refused to fetch from {url.host}: it is on a private or loopback address"
                " and the MCP server is not (pass allow_private_networks=True to allow it)"
            )
        return addresses

    def connected_to(self, address: str) -> None:
        """The MCP server's connection reached ``address``: its zone is the server's.

        Told by the client with each refusal, so no lookup of the server's name is
        made: a lookup of our own could answer otherwise than the connection's did.
        """
        self._server_zone = server_zone([address])

    async def _zone_of_server(self) -> Zone:
        # Only when no connection told its address (`connected_to`): a lookup of our
        # own, which a server controlling its name's DNS could answer with a private
        # address (and its public one to the connection) to earn the private zone.
        if self._server_zone is None:
            host = self._server_host
            try:
                found = await _resolve(host, 0) if host is not None else []
            except OAuthError:
                found = []  # (unresolvable now: it vouches for nothing)
            self._server_zone = server_zone(found)
        return self._server_zone


async def _resolve(host: str, port: int) -> list[str]:
    # trio's getaddrinfo: a numeric host is not looked up; a name goes to the system's
    # resolver in a thread (or to a custom resolver a test installs).
    try:
        infos = await trio.socket.getaddrinfo(host, port, type=trio.socket.SOCK_STREAM)
    except OSError as exc:
        raise OAuthError(f"can't resolve {host}: {exc.strerror or exc}") from None
    addresses = list(dict.fromkeys(str(info[4][0]) for info in infos))
    if not addresses:
        raise OAuthError(f"can't resolve {host}: no address")
    return addresses
