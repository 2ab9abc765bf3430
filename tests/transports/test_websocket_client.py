"""`open_websocket_client`: the `Client` API over a WebSocket, and how the connection ends.

Against `serve_websocket` (the everything server) in every mode, and against servers
written by hand (`tests.transports.ws_raw.raw_ws_server`) for what ours never does:
selecting no subprotocol, going silent, refusing the handshake.
"""

from __future__ import annotations

import ssl
from pathlib import Path
from typing import Any

import pytest
import trio
from wsproto.frame_protocol import CloseReason

from mcpcore import types
from mcpcore.client import ClientCallbacks, ConnectMode
from mcpcore.versions import Era
from tests.transports.http_raw import build_test_server
from tests.transports.test_http_client_tls import make_certificates
from tests.transports.trio_helpers import trio_test
from tests.transports.ws_raw import RawWebSocket, StoppableServer, raw_ws_server, running_ws
from transports import (
    BearerAuth,
    ConnectionClosedError,
    HttpStatusError,
    Principal,
    WebSocketLimits,
    open_websocket_client,
)

SIMPLE_TEXT = "This is a simple text response for testing."
HANDSHAKE_RESULT = {
    "protocolVersion": "2025-11-25",
    "capabilities": {"tools": {}},
    "serverInfo": {"name": "raw", "version": "1"},
}


def text_of(result: types.CallToolResult) -> str:
    """The text of a result's only block."""
    [block] = result.content
    assert isinstance(block, types.TextContent), block
    return block.text


async def answer_handshake(ws: RawWebSocket) -> None:
    """Play a legacy server's part of the handshake (the client runs in ``legacy`` mode)."""
    request = await ws.receive_json()
    assert request["method"] == "initialize", request
    await ws.send_json({"jsonrpc": "2.0", "id": request["id"], "result": HANDSHAKE_RESULT})
    assert (await ws.receive_json())["method"] == "notifications/initialized"


# ------------------------------------------------------------------ against our server


@pytest.mark.parametrize(
    ("mode", "era"), [("legacy", Era.LEGACY), ("auto", Era.MODERN), ("modern", Era.MODERN)]
)
@trio_test
async def test_the_client_api_over_a_websocket(mode: ConnectMode, era: Era) -> None:
    server, _ = build_test_server()
    logged: list[Any] = []
    got_log = trio.Event()
    progress: list[float] = []

    def on_notification(event: Any) -> None:
        if event.method == "notifications/message":
            logged.append(event)
            got_log.set()

    async def sample(params: types.CreateMessageRequestParams) -> types.CreateMessageResult:
        return types.CreateMessageResult(
            role="assistant", content=types.TextContent(text="sampled"), model="test"
        )

    async def on_progress(value: float, total: float | None, message: str | None) -> None:
        progress.append(value)

    callbacks = ClientCallbacks(sampling=sample)
    async with running_ws(server) as port:
        url = f"ws://127.0.0.1:{port}/ws"
        async with open_websocket_client(
            url, mode=mode, callbacks=callbacks, on_notification=on_notification
        ) as client:
            assert client.era is era
            assert client.subprotocol == "mcp"
            assert client.url == url
            tools = [tool.name async for tool in client.iter_tools()]
            assert "test_simple_text" in tools
            assert text_of(await client.call_tool("test_simple_text")) == SIMPLE_TEXT
            called = await client.call_tool("test_tool_with_progress", progress=on_progress)
            assert progress == [0, 50, 100]
            assert not called.is_error
            read = await client.read_resource("test://static-text")
            [contents] = read.contents
            assert isinstance(contents, types.TextResourceContents)
            assert contents.text == "This is the content of the static text resource."
            prompt = await client.get_prompt("test_simple_prompt")
            assert len(prompt.messages) == 1
            sampled = await client.call_tool("test_sampling", {"prompt": "Hi"})
            assert "sampled" in text_of(sampled)
            if era is Era.LEGACY:
                await client.set_logging_level("info")
                await client.call_tool("test_tool_with_logging")
                with trio.fail_after(5):
                    await got_log.wait()  # (the dispatcher runs in a task of its own)
                assert logged[0].params.data == "Tool execution started"
        assert client.closed_reason is not None
        assert client.close_code == CloseReason.NORMAL_CLOSURE  # its echo of our Close


@trio_test
async def test_a_refused_handshake_raises_http_status_error() -> None:
    server, _ = build_test_server()

    def verify(token: str) -> Principal | None:
        return Principal("alice") if token == "s3cret" else None

    auth = BearerAuth(verify, ["https://auth.example.com"])
    async with running_ws(server, auth=auth) as port:
        url = f"ws://127.0.0.1:{port}/ws"
        with pytest.raises(HttpStatusError) as refused:
            async with open_websocket_client(url):
                pass
        assert refused.value.status == 401
        assert refused.value.www_authenticate is not None
        assert "resource_metadata=" in refused.value.www_authenticate
        headers = {"Authorization": "Bearer s3cret"}
        async with open_websocket_client(url, headers=headers, mode="modern") as client:
            assert text_of(await client.call_tool("test_simple_text")) == SIMPLE_TEXT
        with pytest.raises(HttpStatusError) as refused:
            async with open_websocket_client(f"ws://127.0.0.1:{port}/elsewhere", headers=headers):
                pass
        assert refused.value.status == 404


@trio_test
async def test_bad_urls_and_headers_the_handshake_sets_are_refused() -> None:
    for url in ("http://127.0.0.1/ws", "ws:///ws", "ws://user:pw@127.0.0.1/ws", "ws://h/ws#x"):
        with pytest.raises(ValueError, match="URL"):
            async with open_websocket_client(url):
                pass
    for name in ("Host", "sec-websocket-protocol", "Upgrade"):
        with pytest.raises(ValueError, match="set by the WebSocket handshake"):
            async with open_websocket_client("ws://127.0.0.1:1/ws", headers={name: "x"}):
                pass


@trio_test
async def test_an_unreachable_server_raises_connection_closed_error() -> None:
    with trio.socket.socket() as probe:
        await probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]  # bound, not listening: the connection is refused
        with pytest.raises(ConnectionClosedError, match="can't connect"):
            async with open_websocket_client(f"ws://127.0.0.1:{port}/ws"):
                pass


@trio_test
async def test_the_servers_close_code_ends_pending_calls() -> None:
    server, _ = build_test_server()
    limits = WebSocketLimits(max_message_size=1024)
    async with (
        running_ws(server, limits=limits) as port,
        open_websocket_client(f"ws://127.0.0.1:{port}/ws", mode="modern") as client,
    ):
        with pytest.raises(ConnectionClosedError, match="1009") as closed:
            await client.call_tool("test_simple_text", {"padding": "x" * 2000})
        assert client.close_code == CloseReason.MESSAGE_TOO_BIG
        assert client.closed_reason is closed.value
        with pytest.raises(ConnectionClosedError):
            await client.call_tool("test_simple_text")


@trio_test
async def test_a_server_shutting_down_ends_pending_calls_with_1001() -> None:
    server, record = build_test_server()
    stoppable = StoppableServer(server)
    async with trio.open_nursery() as nursery:
        port = await nursery.start(stoppable.run)
        async with open_websocket_client(f"ws://127.0.0.1:{port}/ws", mode="modern") as client:

            async def stop_when_started() -> None:
                await record["started"].wait()
                stoppable.stop()

            nursery.start_soon(stop_when_started)
            with pytest.raises(ConnectionClosedError, match="1001"):
                await client.call_tool("wait_forever")
            assert client.close_code == CloseReason.GOING_AWAY


# ------------------------------------------------------------------ against servers by hand


@trio_test
async def test_a_server_that_selects_no_subprotocol_is_accepted() -> None:
    async def serve(ws: RawWebSocket) -> None:
        await answer_handshake(ws)
        request = await ws.receive_json()
        assert request["method"] == "tools/list"
        await ws.send_json({"jsonrpc": "2.0", "id": request["id"], "result": {"tools": []}})
        await ws.expect_close()

    async with (
        raw_ws_server(serve, subprotocol=None) as port,
        open_websocket_client(f"ws://127.0.0.1:{port}/", mode="legacy") as client,
    ):
        assert client.subprotocol is None
        assert (await client.list_tools()).tools == []


@trio_test
async def test_a_server_that_stops_answering_pings_fails_pending_calls() -> None:
    async def serve(ws: RawWebSocket) -> None:
        await answer_handshake(ws)
        await trio.sleep_forever()  # reads nothing more: no pong, no answer

    limits = WebSocketLimits(ping_interval=0.05, pong_timeout=0.2)
    async with raw_ws_server(serve) as port:
        url = f"ws://127.0.0.1:{port}/"
        async with open_websocket_client(url, mode="legacy", limits=limits) as client:
            with pytest.raises(ConnectionClosedError, match="ping"):
                await client.list_tools()


@trio_test
async def test_closing_the_client_sends_a_close_frame_and_waits_for_the_answer() -> None:
    codes: list[int] = []
    answered = trio.Event()

    async def serve(ws: RawWebSocket) -> None:
        await answer_handshake(ws)
        close = await ws.expect_close()  # (answered inside)
        codes.append(close.code)
        answered.set()
        await ws.expect_eof()

    async with raw_ws_server(serve) as port:
        async with open_websocket_client(f"ws://127.0.0.1:{port}/", mode="legacy") as client:
            assert client.era is Era.LEGACY
        assert answered.is_set()  # the client waited for the server's Close
    assert codes == [CloseReason.NORMAL_CLOSURE]


@trio_test
async def test_a_server_breaking_the_protocol_gets_a_close_frame_1008() -> None:
    codes: list[int] = []

    async def serve(ws: RawWebSocket) -> None:
        request = await ws.receive_json()
        result = {**HANDSHAKE_RESULT, "protocolVersion": "1999-01-01"}  # never offered
        await ws.send_json({"jsonrpc": "2.0", "id": request["id"], "result": result})
        codes.append((await ws.expect_close()).code)

    async with raw_ws_server(serve) as port:
        with pytest.raises(ConnectionClosedError, match="broke the protocol"):
            async with open_websocket_client(f"ws://127.0.0.1:{port}/", mode="legacy"):
                pass
    assert codes == [CloseReason.POLICY_VIOLATION]


@trio_test
async def test_a_client_cancelled_from_outside_still_closes_cleanly_and_promptly() -> None:
    codes: list[int] = []

    async def serve(ws: RawWebSocket) -> None:
        await answer_handshake(ws)
        codes.append((await ws.expect_close()).code)

    # A close timeout longer than the test's own bound: the client must not wait it
    # out although its reader task was cancelled with everything else.
    limits = WebSocketLimits(close_timeout=600)
    async with raw_ws_server(serve) as port:
        with trio.CancelScope() as scope:
            url = f"ws://127.0.0.1:{port}/"
            async with open_websocket_client(url, mode="legacy", limits=limits):
                scope.cancel()
                await trio.sleep_forever()
    assert codes == [CloseReason.NORMAL_CLOSURE]


@pytest.fixture(scope="module")
def certificates(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, Path, Path]:
    return make_certificates(tmp_path_factory.mktemp("wss"))


@trio_test
async def test_wss_verifies_the_servers_certificate(certificates: tuple[Path, Path, Path]) -> None:
    ca_file, certificate_file, key_file = certificates
    server_context = ssl.create_default_context(ssl.Purpose.CLIENT_AUTH)
    server_context.load_cert_chain(certificate_file, key_file)

    async def serve(ws: RawWebSocket) -> None:
        await answer_handshake(ws)
        await ws.expect_close()

    async with raw_ws_server(serve, ssl_context=server_context) as port:
        url = f"wss://127.0.0.1:{port}/"
        trusting = ssl.create_default_context(cafile=str(ca_file))
        async with open_websocket_client(url, mode="legacy", ssl_context=trusting) as client:
            assert client.era is Era.LEGACY
        # The system's trust store does not know the test authority.
        with pytest.raises(ConnectionClosedError, match="TLS"):
            async with open_websocket_client(url, mode="legacy"):
                pass
