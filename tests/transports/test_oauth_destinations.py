"""`transports.OAuth` against SSRF: the address policy, and the flow refusing to go there.

The policy is pure (`zone_of`, `allowed`, `server_zone`); the driver tests use a real
local server for the MCP side and trio's custom hostname resolver for names, so that a
name can point anywhere without a DNS server (a numeric host never reaches it).
"""

from __future__ import annotations

from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from dataclasses import dataclass
from typing import Any

import pytest
import trio

from mcpcore.auth import OAuthError
from tests.transports.http_scripted_server import Received, Reply, scripted_server
from tests.transports.test_http_client_oauth import AuthServer
from tests.transports.trio_helpers import trio_test
from transports import OAuth, open_http_client
from transports._http.client.destinations import Zone, allowed, server_zone, zone_of
from transports._net.pool import ConnectionPool
from transports._net.url import parse_url

# An address of the public internet: named, never connected to (the flow stops first).
PUBLIC_ADDRESS = "93.184.215.14"
PRM_PATH = "/.well-known/oauth-protected-resource/mcp"


@pytest.mark.parametrize(
    ("address", "zone"),
    [
        ("169.254.169.254", Zone.FORBIDDEN),  # the cloud metadata service
        ("::ffff:169.254.169.254", Zone.FORBIDDEN),  # the same, IPv4-mapped
        ("::ffff:a9fe:a9fe", Zone.FORBIDDEN),  # the same, written in hex
        ("64:ff9b::169.254.169.254", Zone.FORBIDDEN),  # the same, through NAT64
        ("2002:a9fe:a9fe::1", Zone.FORBIDDEN),  # the same, through 6to4
        ("fd00:ec2::254", Zone.FORBIDDEN),  # AWS's, over IPv6
        ("100.100.100.200", Zone.FORBIDDEN),  # Alibaba Cloud's
        ("fe80::1", Zone.FORBIDDEN),
        ("fe80::1%eth0", Zone.FORBIDDEN),
        ("0.0.0.0", Zone.FORBIDDEN),
        ("::", Zone.FORBIDDEN),
        ("::10.0.0.1", Zone.FORBIDDEN),  # IPv4-compatible (deprecated)
        ("224.0.0.251", Zone.FORBIDDEN),
        ("ff02::1", Zone.FORBIDDEN),
        ("240.0.0.1", Zone.FORBIDDEN),
        ("255.255.255.255", Zone.FORBIDDEN),
        ("192.0.2.1", Zone.FORBIDDEN),
        ("2001:db8::1", Zone.FORBIDDEN),
        ("not an address", Zone.FORBIDDEN),
        ("127.0.0.1", Zone.LOOPBACK),
        ("127.8.9.10", Zone.LOOPBACK),
        ("::1", Zone.LOOPBACK),
        ("::ffff:127.0.0.1", Zone.LOOPBACK),
        ("10.1.2.3", Zone.PRIVATE),
        ("172.16.0.1", Zone.PRIVATE),
        ("172.31.255.255", Zone.PRIVATE),
        ("192.168.1.1", Zone.PRIVATE),
        ("100.64.0.1", Zone.PRIVATE),
        ("fd12:3456::1", Zone.PRIVATE),
        ("::ffff:10.0.0.1", Zone.PRIVATE),
        ("64:ff9b::10.0.0.1", Zone.PRIVATE),
        ("172.32.0.1", Zone.PUBLIC),
        ("100.128.0.1", Zone.PUBLIC),
        ("8.8.8.8", Zone.PUBLIC),
        ("::ffff:8.8.8.8", Zone.PUBLIC),
        ("2606:4700:4700::1111", Zone.PUBLIC),
    ],
)
def test_each_address_is_in_its_zone(address: str, zone: Zone) -> None:
    assert zone_of(address) == zone


@pytest.mark.parametrize(
    ("target", "server", "opted_in", "expected"),
    [
        (Zone.PUBLIC, Zone.PUBLIC, False, True),
        (Zone.FORBIDDEN, Zone.LOOPBACK, True, False),  # never, whoever asks
        (Zone.PRIVATE, Zone.PUBLIC, False, False),
        (Zone.LOOPBACK, Zone.PUBLIC, False, False),
        (Zone.PRIVATE, Zone.PUBLIC, True, True),
        (Zone.LOOPBACK, Zone.PUBLIC, True, True),
        (Zone.PRIVATE, Zone.PRIVATE, False, True),
        (Zone.LOOPBACK, Zone.PRIVATE, False, False),  # an intranet server: not our host
        (Zone.PRIVATE, Zone.LOOPBACK, False, True),
        (Zone.LOOPBACK, Zone.LOOPBACK, False, True),
    ],
)
def test_a_fetch_goes_inside_only_as_far_as_the_server_is_or_with_the_opt_in(
    target: Zone, server: Zone, opted_in: bool, expected: bool
) -> None:
    assert allowed(target, server, allow_private_networks=opted_in) is expected


def test_a_server_earns_the_trust_of_its_least_inside_address() -> None:
    assert server_zone(["127.0.0.1", "::1"]) == Zone.LOOPBACK
    assert server_zone(["127.0.0.1", "10.0.0.1"]) == Zone.PRIVATE
    assert server_zone(["10.0.0.1", PUBLIC_ADDRESS]) == Zone.PUBLIC
    assert server_zone(["169.254.169.254"]) == Zone.PUBLIC
    assert server_zone([]) == Zone.PUBLIC


class Resolver(trio.abc.HostnameResolver):
    """Names to addresses from a table, and every name it was asked."""

    def __init__(self, table: dict[str, str]) -> None:
        self.table = table
        self.asked: list[str] = []

    async def getaddrinfo(  # noqa: PLR0917 (trio's signature)
        self,
        host: bytes | None,
        port: bytes | str | int | None,
        family: int = 0,
        type: int = 0,
        proto: int = 0,
        flags: int = 0,
    ) -> list[Any]:
        name = host.decode() if isinstance(host, bytes) else str(host)
        self.asked.append(name)
        if name not in self.table:
            raise trio.socket.gaierror(trio.socket.EAI_NONAME, "unknown name")
        address = self.table[name]
        family = trio.socket.AF_INET6 if ":" in address else trio.socket.AF_INET
        sockaddr = (address, int(port or 0))
        return [(family, trio.socket.SOCK_STREAM, 6, "", sockaddr)]

    async def getnameinfo(self, sockaddr: tuple[Any, ...], flags: int) -> tuple[str, str]:
        raise NotImplementedError


@asynccontextmanager
async def resolving(table: dict[str, str]) -> AsyncIterator[Resolver]:
    resolver = Resolver(table)
    before = trio.socket.set_custom_hostname_resolver(resolver)
    try:
        yield resolver
    finally:
        trio.socket.set_custom_hostname_resolver(before)


@dataclass
class Hostile:
    """An MCP server whose protected resource metadata names ``issuer``."""

    issuer: str
    url: str = ""

    async def __call__(self, request: Received, reply: Reply) -> None:
        origin = self.url.removesuffix("/mcp")
        if request.target == "/mcp":
            challenge = f'Bearer resource_metadata="{origin}{PRM_PATH}"'
            await reply.json({}, 401, [("www-authenticate", challenge)])
        elif request.target == PRM_PATH:
            await reply.json({"resource": self.url, "authorization_servers": [self.issuer]})
        else:
            await reply.status(404)


@pytest.mark.parametrize(
    "issuer",
    ["https://169.254.169.254", "https://[::ffff:169.254.169.254]", "https://metadata.test"],
)
@trio_test
async def test_an_authorization_server_on_a_link_local_address_is_never_fetched(
    issuer: str,
) -> None:
    hostile = Hostile(issuer)
    async with (
        scripted_server(hostile) as server,
        resolving({"metadata.test": "169.254.169.254"}),
    ):
        hostile.url = server.url
        host = parse_url(issuer).host
        # Opted in, and the MCP server on loopback: link-local is refused all the same.
        oauth = OAuth(on_redirect=lambda url: url, allow_private_networks=True)
        with pytest.raises(OAuthError, match="link-local") as caught:
            async with open_http_client(server.url, auth=oauth, mode="legacy"):
                pass
        assert f"fetch from {host}:" in str(caught.value)
        assert "169.254" not in str(caught.value).replace(host, "")
        assert [r.target for r in server.requests] == ["/mcp", PRM_PATH]


@trio_test
async def test_a_public_servers_flow_may_not_reach_loopback_unless_opted_in() -> None:
    auth = AuthServer()
    async with (
        scripted_server(auth) as server,
        resolving({"mcp.example": PUBLIC_ADDRESS, "localhost": "127.0.0.1"}) as resolver,
    ):
        port = parse_url(server.url).port
        auth.base = f"http://localhost:{port}"
        auth.resource = f"http://mcp.example:{port}/mcp"
        challenge = (
            f'Bearer resource_metadata="{auth.base}/.well-known/oauth-protected-resource/mcp"'
        )
        refused = OAuth(on_redirect=auth.user).session(auth.resource)
        with pytest.raises(OAuthError, match="private or loopback") as caught:
            await refused.challenged(401, challenge, refused.generation, 0, None)
        assert "localhost" in str(caught.value)
        assert "127.0.0.1" not in str(caught.value)
        assert not server.requests  # (refused before connecting)

        resolver.asked.clear()
        opted_in = OAuth(on_redirect=auth.user, allow_private_networks=True)
        session = opted_in.session(auth.resource)
        assert await session.challenged(401, challenge, session.generation, 0, None)
        assert auth.issued == ["at-1"]
        # One lookup per request, and the connection went to the address it gave:
        # the name is never resolved a second time (DNS rebinding).
        assert resolver.asked == ["localhost"] * len(server.requests)


@trio_test
async def test_a_pool_given_an_address_connects_there_and_names_the_host() -> None:
    auth = AuthServer()
    async with scripted_server(auth) as server, resolving({}) as resolver:
        port = parse_url(server.url).port
        url = parse_url(f"http://nowhere.invalid:{port}/mcp")
        pool = ConnectionPool(url, address="127.0.0.1", max_idle=0)
        connection = await pool.acquire()
        assert connection.peer_address == "127.0.0.1"
        host = [(b"host", url.authority.encode())]
        head = await connection.round_trip(b"GET", b"/elsewhere", host)
        assert head.status == 404
        pool.discard(connection)
        await pool.aclose()
        assert server.requests[0].headers["host"] == f"nowhere.invalid:{port}"
        assert not resolver.asked


@trio_test
async def test_the_servers_zone_is_the_address_its_connection_reached_not_a_lookup() -> None:
    auth = AuthServer()
    # The MCP server's name resolves to loopback for us, but its refused connection
    # reached a public address: the connection's word counts, and no lookup is made.
    async with (
        scripted_server(auth) as server,
        resolving({"mcp.example": "127.0.0.1", "localhost": "127.0.0.1"}) as resolver,
    ):
        port = parse_url(server.url).port
        auth.base = f"http://localhost:{port}"
        auth.resource = f"http://mcp.example:{port}/mcp"
        challenge = f'Bearer resource_metadata="{auth.base}{PRM_PATH}"'
        refused = OAuth(on_redirect=auth.user).session(auth.resource)
        with pytest.raises(OAuthError, match="private or loopback"):
            await refused.challenged(
                401, challenge, refused.generation, 0, None, peer=PUBLIC_ADDRESS
            )
        assert resolver.asked == ["localhost"]
        assert not server.requests
        # Told nothing, the session looks the name up: loopback, so loopback is allowed.
        session = OAuth(on_redirect=auth.user).session(auth.resource)
        assert await session.challenged(401, challenge, session.generation, 0, None)
        assert "mcp.example" in resolver.asked
        assert auth.issued == ["at-1"]
