"""Debug logging of requests and refusals: one line each, the same on every transport."""

from __future__ import annotations

import logging
import re
from collections.abc import AsyncIterator
from contextlib import AbstractAsyncContextManager, asynccontextmanager
from functools import partial
from typing import Any

import pytest
import trio

from mcpcore import CLIENT, Connection, RequestReceived, types
from mcpcore.client import McpError
from mcpcore.server import Context, Server
from tests.cli.folder_tree import MCPCORE, make_tree
from tests.transports.http_raw import RawConnection, modern_headers
from tests.transports.trio_helpers import trio_test
from transports import (
    Client,
    open_http_client,
    open_stdio_client,
    open_websocket_client,
    serve_http,
    serve_websocket,
)
from transports._runtime.requestlog import LOGGER_NAME, MAX_LOGGED_TEXT, answer

TIME = r"\d+\.\d ms"


class Lines(logging.Handler):
    """Collects the request log's lines, and wakes a test waiting for one."""

    def __init__(self) -> None:
        super().__init__(logging.DEBUG)
        self.lines: list[str] = []
        self._arrived = trio.Event()

    def emit(self, record: logging.LogRecord) -> None:
        self.lines.append(record.getMessage())
        self._arrived.set()
        self._arrived = trio.Event()

    async def wait_for(self, pattern: str) -> str:
        while True:
            for line in self.lines:
                if re.fullmatch(pattern, line):
                    return line
            await self._arrived.wait()


@pytest.fixture
def lines() -> Any:
    logger = logging.getLogger(LOGGER_NAME)
    handler = Lines()
    logger.addHandler(handler)
    level = logger.level
    logger.setLevel(logging.DEBUG)
    yield handler
    logger.setLevel(level)
    logger.removeHandler(handler)


def build() -> tuple[Server, trio.Event]:
    server = Server("log", "1.0")
    started = trio.Event()

    @server.resource("note://one")
    def note() -> str:
        return "one"

    @server.tool()
    def echo(text: str) -> str:
        """Says it back."""
        return text

    @server.tool()
    async def wait(ctx: Context) -> str:
        """Waits until cancelled."""
        started.set()
        await trio.sleep_forever()
        raise AssertionError("unreachable")

    return server, started


@asynccontextmanager
async def served(transport: str, server: Server) -> AsyncIterator[tuple[Client, int]]:
    """``server`` over ``transport`` on a free port, and a client of it."""
    serve: Any = serve_websocket if transport == "ws" else serve_http
    async with trio.open_nursery() as nursery:
        port = await nursery.start(partial(serve, server, port=0))
        opened: AbstractAsyncContextManager[Client]
        if transport == "ws":
            opened = open_websocket_client(f"ws://127.0.0.1:{port}/ws", timeout=10)
        else:
            url = f"http://127.0.0.1:{port}/mcp"
            legacy = transport == "http-legacy"
            opened = open_http_client(url, timeout=10, mode="legacy" if legacy else "auto")
        async with opened as client:
            yield client, port
        nursery.cancel_scope.cancel()


@pytest.mark.parametrize("transport", ["http-modern", "http-legacy", "ws"])
@trio_test
async def test_each_request_is_logged_with_its_name_outcome_and_time(
    transport: str, lines: Lines
) -> None:
    server, started = build()
    async with served(transport, server) as (client, _):
        await client.call_tool("echo", {"text": "hi"})
        with pytest.raises(McpError):
            await client.read_resource("note://nowhere")
        async with trio.open_nursery() as nursery:
            nursery.start_soon(client.call_tool, "wait")
            await started.wait()
            nursery.cancel_scope.cancel()
        await lines.wait_for(rf"request \S+ tools/call 'wait': cancelled after {TIME}")
    await lines.wait_for(rf"request \S+ tools/call 'echo': ok in {TIME}")
    # (Not found: -32002 in the legacy eras, -32602 in 2026-07-28.)
    await lines.wait_for(
        rf"request \S+ resources/read 'note://nowhere': error -32[06]02 \(.+\) in {TIME}"
    )


@trio_test
async def test_refusals_and_protocol_errors_are_logged(lines: Lines) -> None:
    server, _ = build()
    async with served("http-modern", server) as (_, port):
        async with await RawConnection.open(port) as http:
            misdirected = await http.request("POST", body=b"{}", host="evil.example")
            assert misdirected.status == 421
        async with await RawConnection.open(port) as http:
            garbage = await http.request("POST", headers=modern_headers("ping"), body=b"{bad")
            assert garbage.status == 400
    await lines.wait_for("refused with HTTP 421: Misdirected Request: unknown Host")
    await lines.wait_for(r"protocol error answered: -32700 \(.+\)")


@trio_test
async def test_a_name_sent_by_a_client_is_cut_short_in_the_log(lines: Lines) -> None:
    server, _ = build()
    async with served("ws", server) as (client, _):
        with pytest.raises(McpError):
            await client.read_resource("note://" + "x" * 10_000)
    line = await lines.wait_for(r"request \S+ resources/read '.+': error .+")
    assert len(line) < 2 * MAX_LOGGED_TEXT + 100


def test_with_debug_off_a_request_is_the_handler_s_own_coroutine() -> None:
    # No wrapper, no clock, no formatting: the hot path pays one isEnabledFor.
    logger = logging.getLogger(LOGGER_NAME)
    assert not logger.isEnabledFor(logging.DEBUG)
    server, _ = build()
    connection = server.connection()
    client = Connection(CLIENT)
    client.start_modern()
    _, data = client.send_request("tools/list", types.PaginatedRequestParams())
    [event] = connection.receive(data)
    assert isinstance(event, RequestReceived)

    class Nowhere:
        async def send(self, data: bytes) -> None:
            raise AssertionError("nothing to send")

        async def request(self, request_id: types.RequestId, data: bytes) -> Any:
            raise AssertionError("nothing to ask")

    pending: Any = answer(server, connection, event, Nowhere())
    try:
        assert pending.cr_code is Server.handle_request.__code__
    finally:
        pending.close()


def test_mcpcore_serve_v_logs_requests_over_stdio(tmp_path: Any) -> None:
    root = make_tree(tmp_path)

    async def session(*options: str) -> str:
        async with open_stdio_client(
            MCPCORE, ["serve", str(root), "--stdio", *options], stderr="capture", timeout=10
        ) as client:
            await client.call_tool("search_files", {"pattern": "*.md"})
            with pytest.raises(McpError):
                await client.read_resource(f"file://{root}/missing.md")
        return client.stderr.decode()

    logged = trio.run(session, "-v").splitlines()
    assert any(
        re.fullmatch(rf"mcpcore serve: request \S+ tools/call 'search_files': ok in {TIME}", line)
        for line in logged
    ), logged
    assert any(
        re.fullmatch(r"mcpcore serve: request \S+ resources/read '.+missing.md': error .+", line)
        for line in logged
    ), logged
    quiet = trio.run(session).splitlines()
    assert not [line for line in quiet if " request " in line], quiet
