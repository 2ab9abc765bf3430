"""Deeply nested JSON on every transport, both ways: an answer, never a dead connection.

Issue 15, defect 1: a ~2 KB line of 1,000 nested brackets raised `RecursionError` out of
`Connection.receive`, so a stdio server exited and an HTTP or WebSocket connection was
dropped unanswered. Servers (the everything server as a subprocess over stdio,
`serve_http` in both eras, `serve_websocket`) must answer -32700 and serve the next
request on the same connection; clients (stdio, HTTP, WebSocket) facing a server that
sends such messages fail the call concerned cleanly, or drop the message, and go on.
"""

from __future__ import annotations

import json
from typing import Any

import pytest
import trio
from wsproto.events import Message, TextMessage

from mcpcore import MAX_JSON_DEPTH, jsonrpc, types
from mcpcore.client import ConnectMode, InvalidServerResponseError
from tests.transports.http_mcp_script import McpScript, result
from tests.transports.http_raw import (
    RawConnection,
    build_test_server,
    http_test,
    message,
    modern_headers,
    running_server,
)
from tests.transports.http_scripted_server import Received, Reply, scripted_server
from tests.transports.test_http_server_legacy import Session
from tests.transports.test_stdio_server import EVERYTHING, RawPeer, call, running, stop
from tests.transports.test_websocket_client import answer_handshake
from tests.transports.trio_helpers import PYTHON, REPOSITORY, trio_test
from tests.transports.ws_raw import (
    INITIALIZE,
    RawWebSocket,
    legacy_request,
    modern_request,
    raw_ws_server,
    running_ws,
)
from transports import (
    HttpStatusError,
    open_http_client,
    open_stdio_client,
    open_websocket_client,
)

LEVELS = 1000
DEEP = b"[" * LEVELS + b"]" * LEVELS  # the ~2 KB line of the report
MODERN_META = (
    b'"_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28",'
    b'"io.modelcontextprotocol/clientCapabilities":{}}'
)
FIXTURE = str(REPOSITORY / "tests" / "transports" / "client_fixture_server.py")
SIMPLE_TEXT = "This is a simple text response for testing."


def deep_call(request_id: int, *, modern: bool = False, value: bytes = DEEP) -> bytes:
    """A tools/call whose arguments nest ``value``, in the usual key order."""
    meta = b"," + MODERN_META if modern else b""
    return (
        b'{"jsonrpc":"2.0","id":%d,"method":"tools/call","params":{"name":"test_simple_text",'
        b'"arguments":{"a":%b}%b}}' % (request_id, value, meta)
    )


def deep_lines(*, modern: bool = False) -> list[tuple[bytes, int | None]]:
    """Deep lines of every shape, and the id their -32700 echoes (None: none readable)."""
    return [
        (DEEP, None),  # valid JSON, 1,000 arrays deep
        (b'{"a":' * LEVELS + b"1" + b"}" * LEVELS, None),  # objects
        (b"[" * LEVELS, None),  # cut short
        (deep_call(41, modern=modern), 41),  # a request with deep arguments
        (b'{"method":"ping","id":42,"jsonrpc":"2.0","params":' + DEEP + b"}", None),
    ]


def is_refusal(answer: Any, request_id: int | None) -> bool:
    """-32700, or -32600 for what is refused before it is read (a batch where there are
    none), echoing the id that could be read."""
    if isinstance(answer, list):  # the HTTP server answers a batch-looking body as one
        [answer] = answer
    codes = (jsonrpc.PARSE_ERROR, jsonrpc.INVALID_REQUEST)
    return answer.get("id") == request_id and answer["error"]["code"] in codes


def text_of(result: types.CallToolResult) -> str:
    [block] = result.content
    assert isinstance(block, types.TextContent), block
    return block.text


# ------------------------------------------------------------------ stdio server


@pytest.mark.parametrize("era", ["legacy", "modern"])
@trio_test(timeout=30)
async def test_the_stdio_server_answers_deep_lines_and_serves_on(era: str) -> None:
    modern = era == "modern"
    async with running(EVERYTHING, "--transport", "stdio") as peer:
        if not modern:
            await peer.handshake()
        for line, request_id in deep_lines(modern=modern):
            await peer.send_line(line)
            answer = await peer.receive()
            assert is_refusal(answer, request_id), answer
        request = call(7, "test_simple_text")
        if modern:
            request["params"]["_meta"] = json.loads(b"{" + MODERN_META + b"}")["_meta"]
        await peer.send(request)
        answer = await peer.receive()
        assert answer["id"] == 7
        assert answer["result"]["content"][0]["text"] == SIMPLE_TEXT
        code, stderr = await stop(peer)
    assert code == 0
    assert "Traceback" not in stderr


async def echo_at(peer: RawPeer, request_id: int, depth: int) -> dict[str, Any]:
    # envelope, params, arguments, address: 4 levels, then the value nests the rest.
    value = b"[" * (depth - 4) + b"]" * (depth - 4)
    await peer.send_line(
        b'{"jsonrpc":"2.0","id":%d,"method":"tools/call","params":{'
        b'"name":"json_schema_2020_12_tool","arguments":{"email":"e","phone":"p",'
        b'"address":{"street":"s","x":%b}}}}' % (request_id, value)
    )
    return await peer.receive()


@trio_test(timeout=30)
async def test_a_handler_echoes_arguments_nested_to_the_limit_and_no_deeper() -> None:
    # The everything server's JSON Schema tool validates, then echoes, its arguments:
    # a value that nests as deep as a request may (512 levels) goes there and back.
    async with running(EVERYTHING, "--transport", "stdio") as peer:
        await peer.handshake()
        echoed = await echo_at(peer, 1, MAX_JSON_DEPTH)
        text = echoed["result"]["content"][0]["text"]
        assert text.startswith("Received: ")
        assert "[" * (MAX_JSON_DEPTH - 4) in text
        refused = await echo_at(peer, 2, MAX_JSON_DEPTH + 1)
        assert refused["id"] == 2
        assert refused["error"] == {"code": -32700, "message": jsonrpc.TOO_DEEP.message}
        code, stderr = await stop(peer)
    assert code == 0
    assert "Traceback" not in stderr


# ------------------------------------------------------------------ HTTP server


@http_test
async def test_the_http_server_answers_a_deep_2026_post_and_serves_the_next() -> None:
    server, _ = build_test_server()
    async with running_server(server) as running, await RawConnection.open(running.port) as http:
        headers = modern_headers("tools/call", "test_simple_text")
        for line, request_id in deep_lines(modern=True):
            refused = await http.request(headers=headers, body=line)
            assert refused.status == 400
            assert is_refusal(refused.json(), request_id), refused.json()
        body = deep_call(7, modern=True, value=b"1")
        answer = await http.request(headers=headers, body=body)  # the same connection
        assert answer.status == 200
        assert answer.json()["result"]["content"][0]["text"] == SIMPLE_TEXT


@http_test
async def test_the_http_server_answers_deep_posts_in_a_legacy_session_and_serves_on() -> None:
    server, _ = build_test_server()
    async with running_server(server) as running, await RawConnection.open(running.port) as http:
        session = await Session.open(http)
        for line, request_id in deep_lines():
            refused = await session.post(line)
            assert refused.status == 400
            assert is_refusal(refused.json(), request_id), refused.json()
        _, events = await session.call(message("tools/call", {"name": "test_simple_text"}, 7))
        answer = json.loads(events[-1].data)
        assert answer["id"] == 7
        assert answer["result"]["content"][0]["text"] == SIMPLE_TEXT


# ------------------------------------------------------------------ WebSocket server


@pytest.mark.parametrize("era", ["legacy", "modern"])
@trio_test
async def test_the_websocket_server_answers_deep_messages_and_serves_on(era: str) -> None:
    modern = era == "modern"
    server, _ = build_test_server()
    async with running_ws(server) as port, await RawWebSocket.connect(port) as ws:
        if not modern:
            await ws.send_json(legacy_request(0, "initialize", INITIALIZE))
            assert "result" in await ws.receive_answer(0)
            await ws.send_json({"jsonrpc": "2.0", "method": "notifications/initialized"})
        for line, request_id in deep_lines(modern=modern):
            await ws.send_event(Message(data=line.decode()))
            answer = await ws.receive_json()
            assert is_refusal(answer, request_id), answer
        params = {"name": "test_simple_text"}
        build = modern_request if modern else legacy_request
        await ws.send_json(build(7, "tools/call", params))
        answer = await ws.receive_answer(7)
        assert answer["result"]["content"][0]["text"] == SIMPLE_TEXT


# ------------------------------------------------------------------ stdio client


@pytest.mark.parametrize("mode", ["legacy", "auto"])
@trio_test(timeout=30)
async def test_the_stdio_client_survives_deep_lines_and_a_deep_answer(mode: ConnectMode) -> None:
    seen: list[Any] = []
    async with open_stdio_client(
        PYTHON,
        [FIXTURE, "--behaviour", "deep-noise"],
        mode=mode,
        timeout=10,
        on_notification=seen.append,
    ) as client:
        # Lines 1,000 deep before the handshake (a notification, an answer nobody
        # asked for, an array, one cut short) were answered or dropped.
        assert client.era is not None
        assert text_of(await client.call_tool("say", {"text": "still here"})) == "said"
        # An answer too deep to read fails its call, and only it.
        with pytest.raises(InvalidServerResponseError):
            await client.call_tool("nested", {"levels": MAX_JSON_DEPTH + 100})
        assert text_of(await client.call_tool("say", {"text": "and here"})) == "said"
        # A notification too deep to read never reaches on_notification.
        await client.set_logging_level("info")
        assert text_of(await client.call_tool("log_nested", {"levels": 600})) == "logged"
        assert text_of(await client.call_tool("log_nested", {"levels": 3})) == "logged"
        assert client.closed_reason is None
    logs = [event for event in seen if event.method == "notifications/message"]
    assert [log.params.data for log in logs] == [[[[0]]]]


# ------------------------------------------------------------------ HTTP client


def deep_answer(request: Received, *, modern: bool, value: bytes = DEEP) -> bytes:
    """A result holding ``value``, in the usual key order (so its id can be read)."""
    request_id = json.dumps(request.message["id"]).encode()
    kind = b'"resultType":"complete",' if modern else b""
    return b'{"jsonrpc":"2.0","id":%b,"result":{%b"content":[],"structuredContent":%b}}' % (
        request_id,
        kind,
        value,
    )


@pytest.mark.parametrize("era", ["legacy", "modern"])
@trio_test
async def test_the_http_client_fails_a_call_answered_too_deep_and_goes_on(era: str) -> None:
    script = McpScript(era)

    async def deep_json(request: Received, reply: Reply) -> None:
        if request.message["params"]["name"] == "deep":
            await reply.json(deep_answer(request, modern=script.modern))
        else:
            await script.answer(request, reply)

    script.hooks["tools/call"] = deep_json
    async with (
        scripted_server(script) as server,
        open_http_client(server.url, mode="auto", timeout=5, get_stream=False) as client,
    ):
        with pytest.raises(InvalidServerResponseError):
            await client.call_tool("deep")
        assert text_of(await client.call_tool("echo", {"x": 1})) == "echo: {'x': 1}"


@pytest.mark.parametrize("era", ["legacy", "modern"])
@trio_test
async def test_the_http_client_drops_deep_events_and_reads_the_answer_after(era: str) -> None:
    script = McpScript(era)

    async def streamed(request: Received, reply: Reply) -> None:
        await reply.sse()
        log = b'{"jsonrpc":"2.0","method":"notifications/message","params":{"level":"info",'
        await reply.event((log + b'"data":' + DEEP + b"}}").decode())
        await reply.event(DEEP.decode())
        value = {"content": [{"type": "text", "text": "done"}]}
        await reply.event(result(request, value, modern=script.modern))
        await reply.end()

    script.hooks["tools/call"] = streamed
    seen: list[Any] = []
    async with (
        scripted_server(script) as server,
        open_http_client(
            server.url, mode="auto", timeout=5, get_stream=False, on_notification=seen.append
        ) as client,
    ):
        assert text_of(await client.call_tool("echo")) == "done"
        assert text_of(await client.call_tool("echo")) == "done"
    assert seen == []


@trio_test
async def test_the_http_client_reads_no_deep_error_body_and_goes_on() -> None:
    script = McpScript("modern")
    refused = trio.Event()

    async def deep_error(request: Received, reply: Reply) -> None:
        if request.message["params"]["name"] != "deep":
            await script.answer(request, reply)
            return
        request_id = json.dumps(request.message["id"]).encode()
        error = b'{"code":-32602,"message":"no","data":' + DEEP + b"}"
        refused.set()
        await reply.json(b'{"jsonrpc":"2.0","id":%b,"error":%b}' % (request_id, error), 400)

    script.hooks["tools/call"] = deep_error
    async with (
        scripted_server(script) as server,
        open_http_client(server.url, mode="modern", timeout=5) as client,
    ):
        # The body is never decoded: the call fails on its HTTP status alone.
        with pytest.raises(HttpStatusError) as failed:
            await client.call_tool("deep")
        assert failed.value.status == 400
        assert refused.is_set()
        assert text_of(await client.call_tool("echo", {"x": 1})) == "echo: {'x': 1}"


# ------------------------------------------------------------------ WebSocket client


@trio_test
async def test_the_websocket_client_fails_a_call_answered_too_deep_and_goes_on() -> None:
    async def deep_server(ws: RawWebSocket) -> None:
        # Each call gets a deep notification first; "deep" a deep answer, others "fine".
        await answer_handshake(ws)
        while isinstance(event := await ws.next_event(), TextMessage):
            request = json.loads(event.data)
            if "id" not in request:
                continue
            deep_log = (
                b'{"jsonrpc":"2.0","method":"notifications/message","params":{"level":"info",'
                b'"data":%b}}' % DEEP
            )
            await ws.send_event(Message(data=deep_log.decode()))
            value = DEEP if request["params"]["name"] == "deep" else b'{"content":[]}'
            answer = b'{"jsonrpc":"2.0","id":%b,"result":%b}' % (
                json.dumps(request["id"]).encode(),
                value,
            )
            await ws.send_event(Message(data=answer.decode()))

    seen: list[Any] = []
    async with (
        raw_ws_server(deep_server) as port,
        open_websocket_client(
            f"ws://127.0.0.1:{port}/ws", mode="legacy", timeout=5, on_notification=seen.append
        ) as client,
    ):
        with pytest.raises(InvalidServerResponseError):
            await client.call_tool("deep")
        assert (await client.call_tool("fine")).content == []
        assert client.closed_reason is None
    assert seen == []
