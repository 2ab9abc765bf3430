"""`serve_http` takes WebSocket upgrades on its endpoint: one port, both transports.

The handshake is checked as any HTTP request is, before it is upgraded: ``Host`` and
``Origin`` (421, 403), the bearer token (401). Bytes the client sent right after its
handshake, before the 101 (read by the HTTP connection already), reach the WebSocket.
"""

from __future__ import annotations

import json

import pytest
import trio
import trio.testing
from wsproto import ConnectionType, WSConnection
from wsproto.events import AcceptConnection, Request, TextMessage
from wsproto.frame_protocol import CloseReason

from tests.transports.http_raw import (
    RawConnection,
    build_test_server,
    http_test,
    jump,
    modern_body,
    modern_headers,
    running_server,
)
from tests.transports.trio_helpers import trio_test
from tests.transports.ws_raw import RawWebSocket, RefusedError, modern_request
from transports import (
    BearerAuth,
    Principal,
    WebSocketLimits,
    open_http_client,
    open_websocket_client,
)
from transports._websocket.frames import ClientFrames

SIMPLE_TEXT = "This is a simple text response for testing."


@trio_test
async def test_one_port_serves_streamable_http_and_websocket() -> None:
    server, _ = build_test_server()
    async with running_server(server) as running:
        async with await RawConnection.open(running.port) as http:
            posted = await http.request(
                headers=modern_headers("tools/list"), body=modern_body("tools/list")
            )
            assert posted.status == 200
        async with await RawWebSocket.connect(running.port, "/mcp") as ws:
            assert ws.subprotocol == "mcp"
            await ws.send_json(modern_request(1, "tools/call", {"name": "test_simple_text"}))
            answer = await ws.receive_answer(1)
            assert answer["result"]["content"][0]["text"] == SIMPLE_TEXT
        # Our two clients, side by side on the one port.
        base = f"127.0.0.1:{running.port}/mcp"
        async with (
            open_websocket_client(f"ws://{base}", mode="legacy") as over_ws,
            open_http_client(f"http://{base}", mode="modern") as over_http,
        ):
            for client in (over_ws, over_http):
                result = await client.call_tool("test_simple_text")
                assert result.content[0].text == SIMPLE_TEXT  # type: ignore[union-attr]


@trio_test
async def test_host_origin_and_token_are_checked_before_the_upgrade() -> None:
    server, _ = build_test_server()

    def verify(token: str) -> Principal | None:
        return Principal("alice") if token == "s3cret" else None

    auth = BearerAuth(verify, ["https://auth.example.com"])
    async with running_server(server, auth=auth) as running:
        port = running.port
        token = ("Authorization", "Bearer s3cret")
        with pytest.raises(RefusedError) as refused:
            await RawWebSocket.connect(port, "/mcp", headers=[token], host="evil.example.com")
        assert refused.value.status == 421
        origin = ("Origin", "http://evil.example.com")
        with pytest.raises(RefusedError) as refused:
            await RawWebSocket.connect(port, "/mcp", headers=[token, origin])
        assert refused.value.status == 403
        with pytest.raises(RefusedError) as refused:
            await RawWebSocket.connect(port, "/mcp")
        assert refused.value.status == 401
        assert "resource_metadata=" in refused.value.headers["www-authenticate"]
        async with await RawWebSocket.connect(port, "/mcp", headers=[token]) as ws:
            await ws.send_json(modern_request(1, "tools/list"))
            assert "result" in await ws.receive_answer(1)


@trio_test
async def test_upgrades_can_be_switched_off_or_limited() -> None:
    server, _ = build_test_server()
    async with running_server(server, websocket=False) as running:
        with pytest.raises(RefusedError) as refused:
            await RawWebSocket.connect(running.port, "/mcp")
        assert refused.value.status == 400
    limits = WebSocketLimits(max_message_size=100)
    async with (
        running_server(server, websocket=limits) as running,
        await RawWebSocket.connect(running.port, "/mcp") as ws,
    ):
        await ws.send_json(modern_request(1, "tools/list", {"padding": "x" * 100}))
        assert (await ws.expect_close()).code == CloseReason.MESSAGE_TOO_BIG


def _opening(port: int, headers: list[tuple[bytes, bytes]]) -> tuple[WSConnection, bytes, bytes]:
    """A client's handshake and a first message framed as our client frames it.

    (wsproto won't frame anything before the 101.)
    """
    ws = WSConnection(ConnectionType.CLIENT)
    request = Request(
        host=f"127.0.0.1:{port}", target="/mcp", subprotocols=["mcp"], extra_headers=headers
    )
    message = json.dumps(modern_request(1, "tools/call", {"name": "test_simple_text"}))
    return ws, ws.send(request), ClientFrames()(message.encode())


async def _expect_the_answer(stream: trio.SocketStream, ws: WSConnection) -> None:
    with trio.fail_after(10):
        while True:
            data = await stream.receive_some(65536)
            assert data, "the server hung up"
            ws.receive_data(data)
            for event in ws.events():
                if isinstance(event, AcceptConnection):
                    continue
                assert isinstance(event, TextMessage), event
                answer = json.loads(event.data)
                assert answer["result"]["content"][0]["text"] == SIMPLE_TEXT
                return


@trio_test
async def test_a_message_sent_with_the_handshake_reaches_the_websocket() -> None:
    server, _ = build_test_server()
    async with running_server(server) as running:
        stream = await trio.open_tcp_stream("127.0.0.1", running.port)
        async with stream:
            ws, opening, frame = _opening(running.port, [])
            await stream.send_all(opening + frame)  # one write: both in HTTP's buffer
            await _expect_the_answer(stream, ws)


@http_test
async def test_bytes_read_by_the_http_watcher_during_a_slow_check_reach_the_websocket() -> None:
    server, _ = build_test_server()
    checking, release = trio.Event(), trio.Event()

    async def slow_verify(token: str) -> Principal | None:
        checking.set()
        await release.wait()
        return Principal("alice")

    auth = BearerAuth(slow_verify, ["https://auth.example.com"])
    async with running_server(server, auth=auth) as running:
        stream = await trio.open_tcp_stream("127.0.0.1", running.port)
        async with stream:
            ws, opening, frame = _opening(running.port, [(b"Authorization", b"Bearer x")])
            await stream.send_all(opening)
            await checking.wait()
            # Past the watch delay the HTTP connection's watcher reads the socket for
            # the request in progress: the frame lands in its buffer, and must be
            # handed over with the socket.
            await jump(1.0)
            await stream.send_all(frame)
            await trio.testing.wait_all_tasks_blocked(0.05)
            release.set()
            await _expect_the_answer(stream, ws)
