"""The network options of the command lines, and a token shared out of band."""

from __future__ import annotations

import argparse

import pytest
import trio
from hypothesis import given
from hypothesis import strategies as st

from mcpcore.http import DEFAULT_ALLOWED_HOSTS, OriginPolicy
from mcpcore_cli.listening import (
    MAX_PORT,
    allowed_hosts,
    host_name,
    host_pattern,
    listening_urls,
    machine_hosts,
    port_number,
    token_auth,
)
from tests.cli_helpers import route_address
from transports._net.auth import AuthFailure, BearerAuth, Principal


@given(st.integers(min_value=-(10**6), max_value=10**6))
def test_a_port_is_0_to_65535(port: int) -> None:
    if 0 <= port <= MAX_PORT:
        assert port_number(str(port)) == port
    else:
        with pytest.raises(argparse.ArgumentTypeError, match="not a port"):
            port_number(str(port))


@given(st.text(max_size=40))
def test_any_text_is_a_host_pattern_or_a_clear_refusal(text: str) -> None:
    try:
        entry = host_pattern(text)
    except argparse.ArgumentTypeError as refused:
        message = str(refused)
    else:  # what is accepted is a Host the policy then serves
        assert entry == "*" or OriginPolicy([entry]).host_allowed(entry)
        return
    assert message.startswith("not a host: ")


@pytest.mark.parametrize(
    ("text", "entry"),
    [
        ("Example.COM", "example.com"),
        ("example.com:8000", "example.com:8000"),
        ("192.0.2.7", "192.0.2.7"),
        ("2001:db8::7", "[2001:db8::7]"),
        ("[2001:db8::7]:80", "[2001:db8::7]:80"),
        ("*", "*"),
    ],
)
def test_host_patterns_are_written_as_the_host_header_writes_them(text: str, entry: str) -> None:
    assert host_pattern(text) == entry


@pytest.mark.parametrize("text", ["127.0.0.1", "::1", "[::1]", "localhost", "0.0.0.0", "::"])
def test_addresses_and_names_that_resolve_are_hosts(text: str) -> None:
    assert host_name(text) == text.strip("[]")


def test_loopback_serves_the_loopback_names_only() -> None:
    assert allowed_hosts("127.0.0.1") == DEFAULT_ALLOWED_HOSTS
    assert allowed_hosts("localhost", ["mcp.example"]) == (*DEFAULT_ALLOWED_HOSTS, "mcp.example")


def test_a_specific_address_is_served_under_its_own_name() -> None:
    assert allowed_hosts("192.0.2.7") == (*DEFAULT_ALLOWED_HOSTS, "192.0.2.7")
    assert allowed_hosts("2001:db8::7") == (*DEFAULT_ALLOWED_HOSTS, "[2001:db8::7]")


def test_every_url_printed_for_a_wildcard_is_allowed() -> None:
    address = route_address()
    urls = listening_urls("http://127.0.0.1:8000/mcp", "0.0.0.0")
    assert urls[0] == "http://127.0.0.1:8000/mcp"
    if address is not None:  # (a machine with a network beyond loopback)
        assert f"http://{address}:8000/mcp" in urls
        assert address in machine_hosts("0.0.0.0")
    policy = OriginPolicy(allowed_hosts("0.0.0.0"))
    for url in urls:
        assert policy.host_allowed(url.split("/")[2])
    assert not policy.host_allowed("mcp.example")


def test_a_shared_token_is_checked_and_names_no_authorization_server() -> None:
    auth = token_auth("s3cret")
    assert auth is not None
    assert token_auth(None) is None

    async def check(header: str | None) -> Principal | AuthFailure:
        return await auth.check(header, "127.0.0.1:8000", "/mcp")

    assert isinstance(trio.run(check, "Bearer s3cret"), Principal)
    refused = trio.run(check, "Bearer s3cret-not")
    assert isinstance(refused, AuthFailure)
    assert (refused.status, refused.challenge) == (401, 'Bearer error="invalid_token"')
    missing = trio.run(check, None)
    assert isinstance(missing, AuthFailure)
    assert missing.challenge == "Bearer"
    assert not auth.has_metadata


def test_with_authorization_servers_the_challenge_still_names_the_metadata() -> None:
    auth = BearerAuth(lambda token: None, ["https://auth.example"], required_scopes=["mcp"])

    async def check() -> Principal | AuthFailure:
        return await auth.check(None, "127.0.0.1:8000", "/mcp")

    failure = trio.run(check)
    assert isinstance(failure, AuthFailure)
    assert failure.challenge == (
        'Bearer resource_metadata="http://127.0.0.1:8000/.well-known/oauth-protected-resource'
        '/mcp", scope="mcp"'
    )
