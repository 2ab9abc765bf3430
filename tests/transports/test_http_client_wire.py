"""open_http_client against scripted servers: what goes on the wire, in both eras.

Headers of each era, the legacy session's life (GET stream, re-initialize after a 404,
DELETE), ``x-mcp-header`` mirroring and the dropping of invalid tools, bearer tokens.
"""

from __future__ import annotations

import base64
from typing import Any

import pytest
import trio

from mcpcore import NotificationReceived
from mcpcore.client import ConnectMode, InvalidServerResponseError, McpError
from mcpcore.versions import Era
from tests.transports.http_mcp_script import LEGACY, MODERN, McpScript, result, rpc_error
from tests.transports.http_scripted_server import Received, Reply, scripted_server
from tests.transports.trio_helpers import trio_test
from transports import HttpStatusError, open_http_client

TIMEOUT = 5.0


def b64(text: str) -> str:
    return "=?base64?" + base64.b64encode(text.encode()).decode() + "?="


@trio_test
async def test_legacy_session_headers_get_stream_and_delete() -> None:
    script = McpScript("legacy")
    got_stream = []

    async def get(request: Received, reply: Reply) -> None:
        got_stream.append(request)
        await reply.sse()
        await reply.event({"jsonrpc": "2.0", "method": "notifications/tools/list_changed"})
        await reply.end()
        script.hooks["GET"] = refuse  # one stream is enough

    async def refuse(request: Received, reply: Reply) -> None:
        await reply.status(405)

    script.hooks["GET"] = get
    notifications: list[str] = []
    notified = trio.Event()

    def on_notification(event: NotificationReceived) -> None:
        notifications.append(event.method)
        notified.set()

    async with scripted_server(script) as server:
        async with open_http_client(
            server.url, mode="legacy", timeout=TIMEOUT, on_notification=on_notification
        ) as client:
            assert client.era is Era.LEGACY
            assert client.session_id == "session-1"
            result_ = await client.call_tool("echo", {"x": 1})
            assert result_.content[0].text == "echo: {'x': 1}"  # type: ignore[union-attr]
            await notified.wait()  # it came on the GET stream
        initialize, initialized, call = (
            server.rpc("initialize")
            + server.rpc("notifications/initialized")
            + server.rpc("tools/call")
        )
        assert "mcp-protocol-version" not in initialize.headers
        assert "mcp-session-id" not in initialize.headers
        assert initialize.headers["accept"] == "application/json, text/event-stream"
        assert initialize.headers["content-type"] == "application/json"
        for later in (initialized, call):
            assert later.headers["mcp-session-id"] == "session-1"
            assert later.headers["mcp-protocol-version"] == LEGACY
            assert "mcp-method" not in later.headers
        assert got_stream[0].headers["accept"] == "text/event-stream"
        assert got_stream[0].headers["mcp-session-id"] == "session-1"
        deletes = [r for r in server.requests if r.method == "DELETE"]
        assert len(deletes) == 1
        assert deletes[0].headers["mcp-session-id"] == "session-1"
        assert notifications == ["notifications/tools/list_changed"]


@trio_test
async def test_a_legacy_server_without_sessions_gets_no_session_header_nor_delete() -> None:
    script = McpScript("legacy", session_id=None)
    async with scripted_server(script) as server:
        async with open_http_client(server.url, mode="legacy", timeout=TIMEOUT) as client:
            assert client.session_id is None
            await client.call_tool("echo")
        assert all("mcp-session-id" not in r.headers for r in server.requests)
        assert not [r for r in server.requests if r.method == "DELETE"]


@pytest.mark.parametrize("mode", ["auto", "modern"])
@trio_test
async def test_modern_headers_and_x_mcp_header_params(mode: ConnectMode) -> None:
    tools: list[dict[str, Any]] = [
        {
            "name": "route",
            "inputSchema": {
                "type": "object",
                "properties": {
                    "region": {"type": "string", "x-mcp-header": "Region"},
                    "priority": {"type": "integer", "x-mcp-header": "Priority"},
                    "debug": {"type": "boolean", "x-mcp-header": "Debug"},
                    "note": {"type": "string"},
                },
            },
        },
        {
            "name": "broken",
            "inputSchema": {
                "type": "object",
                "properties": {"n": {"type": "number", "x-mcp-header": "N"}},
            },
        },
        {"name": "plain", "inputSchema": {"type": "object"}},
    ]
    script = McpScript("modern", tools=tools)
    async with scripted_server(script) as server:
        async with open_http_client(server.url, mode=mode, timeout=TIMEOUT) as client:
            assert client.era is Era.MODERN
            names = [tool.name async for tool in client.iter_tools()]
            assert names == ["route", "plain"]  # "(C) MUST drop that tool"
            assert [tool.name for tool in client.invalid_tools] == ["broken"]
            assert "string, integer or boolean" in client.invalid_tools[0].reason
            await client.call_tool(
                "route", {"region": " eu-west ", "priority": 7, "debug": None, "note": "n"}
            )
            await client.call_tool("plain", {"region": "x"})
        assert not [r for r in server.requests if r.method in ("GET", "DELETE")]
        discover = server.rpc("server/discover")[0]
        assert discover.headers["mcp-protocol-version"] == MODERN
        assert discover.headers["mcp-method"] == "server/discover"
        assert "mcp-name" not in discover.headers
        route, plain = server.rpc("tools/call")
        assert route.headers["mcp-protocol-version"] == MODERN
        assert route.message["params"]["_meta"]["io.modelcontextprotocol/protocolVersion"] == MODERN
        assert route.headers["mcp-method"] == "tools/call"
        assert route.headers["mcp-name"] == "route"
        assert route.headers["mcp-param-region"] == b64(" eu-west ")
        assert route.headers["mcp-param-priority"] == "7"
        assert "mcp-param-debug" not in route.headers  # null: omitted
        assert not [h for h in plain.headers if h.startswith("mcp-param-")]
        assert all("mcp-session-id" not in r.headers for r in server.requests)


@trio_test
async def test_a_session_that_expired_is_started_again() -> None:
    script = McpScript("legacy")
    async with scripted_server(script) as server:
        async with open_http_client(
            server.url, mode="legacy", timeout=TIMEOUT, get_stream=False
        ) as client:
            await client.call_tool("echo", {"n": 1})
            script.expired.add("session-1")
            answer = await client.call_tool("echo", {"n": 2})
            assert answer.content[0].text == "echo: {'n': 2}"  # type: ignore[union-attr]
            assert client.session_id == "session-2"
            await client.call_tool("echo", {"n": 3})
        initializes = server.rpc("initialize")
        assert len(initializes) == 2
        assert "mcp-session-id" not in initializes[1].headers  # "without a session id"
        assert initializes[1].message["params"] == initializes[0].message["params"]
        assert initializes[1].message["id"] != initializes[0].message["id"]
        initialized = server.rpc("notifications/initialized")
        assert [r.headers["mcp-session-id"] for r in initialized] == ["session-1", "session-2"]
        calls = server.rpc("tools/call")
        assert [r.headers["mcp-session-id"] for r in calls] == [
            "session-1",
            "session-1",  # answered 404
            "session-2",  # the same request again, in the new session
            "session-2",
        ]
        assert calls[1].body == calls[2].body


@trio_test
async def test_a_session_that_cannot_be_renewed_ends_the_client() -> None:
    script = McpScript("legacy")
    async with (
        scripted_server(script) as server,
        open_http_client(server.url, mode="legacy", timeout=TIMEOUT, get_stream=False) as client,
    ):

        async def refuse(request: Received, reply: Reply) -> None:
            await reply.status(503)

        script.expired.add("session-1")
        script.hooks["initialize"] = refuse
        with pytest.raises(ConnectionError, match="starting a new one failed"):
            await client.call_tool("echo")
        assert client.closed_reason is not None
        with pytest.raises(ConnectionError):
            await client.call_tool("echo")


@trio_test
async def test_a_refreshable_token_is_fetched_again_on_401() -> None:
    script = McpScript("modern")
    tokens = iter(["old", "new"])
    fetched: list[str] = []

    async def token() -> str:
        fetched.append(next(tokens))
        return fetched[-1]

    async def handler(request: Received, reply: Reply) -> None:
        if request.headers.get("authorization") != "Bearer new":
            await reply.status(401, [("www-authenticate", 'Bearer resource_metadata="x"')])
            return
        await script(request, reply)

    async with scripted_server(handler) as server:
        async with open_http_client(server.url, auth=token, timeout=TIMEOUT) as client:
            await client.call_tool("echo")
        assert fetched == ["old", "new"]
        assert [r.headers["authorization"] for r in server.requests[:2]] == [
            "Bearer old",
            "Bearer new",
        ]
        assert all(r.headers["authorization"] == "Bearer new" for r in server.requests[1:])


@trio_test
async def test_401_with_a_fixed_token_and_403_are_errors_not_era_evidence() -> None:
    async def handler(request: Received, reply: Reply) -> None:
        if request.headers.get("authorization") == "Bearer nope":
            await reply.status(403)
        else:
            await reply.status(401, [("www-authenticate", 'Bearer resource_metadata="m"')])

    async with scripted_server(handler) as server:
        with pytest.raises(HttpStatusError) as raised:
            async with open_http_client(server.url, auth="tok", timeout=TIMEOUT):
                pass
        assert raised.value.status == 401
        assert raised.value.www_authenticate == 'Bearer resource_metadata="m"'
        assert len(server.requests) == 1  # no fallback: a 401 says nothing about eras
        with pytest.raises(HttpStatusError) as raised:
            async with open_http_client(server.url, auth="nope", timeout=TIMEOUT):
                pass
        assert raised.value.status == 403


@trio_test
async def test_user_headers_go_on_every_request_and_reserved_ones_are_refused() -> None:
    script = McpScript("legacy")
    async with scripted_server(script) as server:
        async with open_http_client(
            server.url, mode="legacy", timeout=TIMEOUT, headers={"X-Trace": "abc"}
        ) as client:
            await client.call_tool("echo")
        assert all(r.headers["x-trace"] == "abc" for r in server.requests)
        with pytest.raises(ValueError, match="sets"):
            async with open_http_client(server.url, headers={"Mcp-Session-Id": "x"}):
                pass
        # A value with CR LF would smuggle a header (or a request) past us: the HTTP/1.1
        # layer, which frames every request, refuses it when the client is made.
        with pytest.raises(ValueError, match="illegal header"):
            async with open_http_client(server.url, headers={"X-Trace": "a\r\nX-Evil: 1"}):
                pass
        with pytest.raises(ValueError, match="illegal header"):
            async with open_http_client(server.url, headers={"X Trace": "a"}):
                pass


@trio_test
async def test_an_error_status_with_a_json_rpc_error_is_that_error() -> None:
    script = McpScript("modern")

    async def header_mismatch(request: Received, reply: Reply) -> None:
        await reply.json(rpc_error(None, -32602, "bad params"), status=400)

    script.hooks["tools/call"] = header_mismatch
    async with (
        scripted_server(script) as server,
        open_http_client(server.url, timeout=TIMEOUT) as client,
    ):
        with pytest.raises(McpError) as raised:
            await client.call_tool("echo")
        assert raised.value.code == -32602


@trio_test
async def test_an_error_status_without_json_rpc_is_an_http_status_error() -> None:
    script = McpScript("modern")

    async def fail(request: Received, reply: Reply) -> None:
        await reply.body(500, b"<html>oops</html>", "text/html")

    script.hooks["tools/call"] = fail
    async with (
        scripted_server(script) as server,
        open_http_client(server.url, timeout=TIMEOUT) as client,
    ):
        with pytest.raises(HttpStatusError) as raised:
            await client.call_tool("echo")
        assert raised.value.status == 500
        assert raised.value.method == "tools/call"
        await client.list_tools()  # the client is still usable


@trio_test
async def test_a_header_mismatch_refetches_the_tools_and_retries() -> None:
    annotated = {
        "name": "route",
        "inputSchema": {
            "type": "object",
            "properties": {"region": {"type": "string", "x-mcp-header": "Region"}},
        },
    }
    script = McpScript("modern", tools=[annotated])

    async def check(request: Received, reply: Reply) -> None:
        if request.headers.get("mcp-param-region") != "eu":
            await reply.json(rpc_error(request.message["id"], -32020, "header mismatch"), 400)
            return
        await script.answer(request, reply)

    script.hooks["tools/call"] = check
    async with (
        scripted_server(script) as server,
        open_http_client(server.url, timeout=TIMEOUT) as client,
    ):
        # Called without listing the tools first: the declaration is unknown.
        answer = await client.call_tool("route", {"region": "eu"})
        assert answer.content[0].text.startswith("route")  # type: ignore[union-attr]
        calls = server.rpc("tools/call")
        assert len(calls) == 2
        assert calls[0].message["id"] != calls[1].message["id"]  # a new id
        assert calls[1].headers["mcp-param-region"] == "eu"
        assert len(server.rpc("tools/list")) == 1


@trio_test
async def test_a_202_answering_a_request_is_an_invalid_answer() -> None:
    script = McpScript("modern")

    async def accepted(request: Received, reply: Reply) -> None:
        await reply.status(202)

    script.hooks["tools/call"] = accepted
    async with (
        scripted_server(script) as server,
        open_http_client(server.url, timeout=TIMEOUT) as client,
    ):
        with pytest.raises(InvalidServerResponseError, match="202"):
            await client.call_tool("echo")


@trio_test
async def test_an_answer_over_the_size_limit_is_refused() -> None:
    script = McpScript("modern")

    async def huge(request: Received, reply: Reply) -> None:
        text = "x" * 5000
        value = {"content": [{"type": "text", "text": text}]}
        await reply.json(result(request, value, modern=True))

    script.hooks["tools/call"] = huge
    async with (
        scripted_server(script) as server,
        open_http_client(server.url, timeout=TIMEOUT, max_message_size=4096) as client,
    ):
        with pytest.raises(InvalidServerResponseError, match="4096"):
            await client.call_tool("echo")
        await client.list_tools()


@trio_test
async def test_closing_while_a_server_request_is_unanswered_closes_cleanly() -> None:
    # The server's ping comes instead of the call's answer; the client is closed before
    # its answer could run: there is nobody to answer, and the close raises nothing.
    script = McpScript("legacy")

    async def ask(request: Received, reply: Reply) -> None:
        await reply.json({"jsonrpc": "2.0", "id": 7, "method": "ping"})

    script.hooks["tools/call"] = ask
    async with scripted_server(script) as server:
        async with open_http_client(server.url, mode="legacy", timeout=TIMEOUT) as client:
            with pytest.raises(InvalidServerResponseError, match="does not answer"):
                await client.call_tool("echo")
        posted = [request.message for request in server.requests if request.method == "POST"]
        assert posted[-1]["method"] == "tools/call"  # (no answer to the ping went out)


@trio_test
async def test_a_server_request_id_used_again_while_we_deliver_our_answer_is_answered() -> None:
    # Our answer to the server's ping 7 frees the id in the core; the server sends
    # another ping 7 before that answer's POST is through. Both are answered, and the
    # client goes on.
    script = McpScript("legacy")
    replies: list[trio.Event] = [trio.Event(), trio.Event()]

    async def ask_twice(request: Received, reply: Reply) -> None:
        await reply.sse()
        await reply.event({"jsonrpc": "2.0", "id": 7, "method": "ping"})
        await replies[0].wait()  # (the first answer's POST waits for the second)
        await reply.event({"jsonrpc": "2.0", "id": 7, "method": "ping"})
        await replies[1].wait()
        await reply.event(result(request, {"content": [{"type": "text", "text": "done"}]}))
        await reply.end()

    async def answered(request: Received, reply: Reply) -> None:
        first = not replies[0].is_set()
        replies[0 if first else 1].set()
        if first:
            await replies[1].wait()
        await reply.status(202)

    script.hooks["tools/call"] = ask_twice
    script.hooks[""] = answered  # (our answers to the server's requests)
    async with scripted_server(script) as server:
        async with open_http_client(server.url, mode="legacy", timeout=TIMEOUT) as client:
            called = await client.call_tool("echo")
            assert called.content[0].text == "done"  # type: ignore[union-attr]
            await client.list_tools()
        ours = [r.message for r in server.requests if "result" in (r.message or {})]
        assert ours == [{"jsonrpc": "2.0", "id": 7, "result": {}}] * 2
