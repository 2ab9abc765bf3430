"""`serve_http(sockets=...)` and `serve_websocket(sockets=...)`: serving sockets bound elsewhere.

A supervisor binds once and hands the listening socket to its workers; the servers then
accept on it instead of binding ``host`` and ``port``, report its port, and close it when
they stop. Two servers given the same key accept each other's cursors (what lets the
workers of ``mcpcore serve --workers`` share one).
"""

from __future__ import annotations

import secrets
import socket
import time
from collections.abc import Iterator
from contextlib import contextmanager
from functools import partial

import pytest
import trio

from examples.everything import build_server
from tests.transports.trio_helpers import trio_test
from transports import open_http_client, open_websocket_client, serve_http, serve_websocket

#: An address no test machine has (TEST-NET-3, RFC 5737): binding it fails, so a server
#: given it and a socket shows that it never tried.
UNBINDABLE = "203.0.113.7"


@contextmanager
def listening() -> Iterator[socket.socket]:
    """A TCP socket on a free loopback port, listening (closed on exit if still open)."""
    with socket.create_server(("127.0.0.1", 0)) as listener:
        yield listener


@trio_test
async def test_serve_http_serves_the_socket_it_is_given_and_reports_its_port() -> None:
    with listening() as listener:
        port = listener.getsockname()[1]
        async with trio.open_nursery() as nursery:
            served = await nursery.start(
                partial(serve_http, build_server(trio.sleep), host=UNBINDABLE, sockets=[listener])
            )
            assert served == port
            async with open_http_client(f"http://127.0.0.1:{port}/mcp") as client:
                result = await client.call_tool("test_simple_text")
            assert "test" in str(result.content[0].text)  # type: ignore[union-attr]
            nursery.cancel_scope.cancel()
        assert listener.fileno() == -1  # (the server's now: closed when it stopped)


@trio_test
async def test_serve_websocket_serves_the_socket_it_is_given() -> None:
    with listening() as listener:
        port = listener.getsockname()[1]
        async with trio.open_nursery() as nursery:
            served = await nursery.start(
                partial(serve_websocket, build_server(trio.sleep), sockets=[listener])
            )
            assert served == port
            async with open_websocket_client(f"ws://127.0.0.1:{port}/ws") as client:
                result = await client.call_tool("test_simple_text")
            assert "test" in str(result.content[0].text)  # type: ignore[union-attr]
            nursery.cancel_scope.cancel()


@trio_test
async def test_two_servers_with_one_key_accept_each_others_cursors() -> None:
    key = secrets.token_bytes(32)
    with listening() as first, listening() as second:
        urls = [f"http://127.0.0.1:{each.getsockname()[1]}/mcp" for each in (first, second)]
        async with trio.open_nursery() as nursery:
            for each in (first, second):
                server = build_server(trio.sleep, page_size=1)
                server.configure(secret=key, clock=time.time)  # (serve_http keeps it)
                await nursery.start(partial(serve_http, server, sockets=[each]))
            async with open_http_client(urls[0]) as one, open_http_client(urls[1]) as other:
                page = await one.list_tools()
                assert page.next_cursor
                following = await other.list_tools(page.next_cursor)
                assert following.tools[0].name != page.tools[0].name
            nursery.cancel_scope.cancel()


@pytest.mark.parametrize("serve", [serve_http, serve_websocket])
@trio_test
async def test_without_a_port_or_sockets_it_is_a_clear_error(serve: object) -> None:
    with pytest.raises(ValueError, match="port"):
        await serve(build_server(trio.sleep))  # type: ignore[operator]


@trio_test
async def test_a_socket_that_is_not_listening_is_refused() -> None:
    with socket.socket() as unbound, pytest.raises(ValueError, match="listening"):
        await serve_http(build_server(trio.sleep), sockets=[unbound])
