"""`serve_websocket` spoken to by hand: the handshake, the framing, liveness, semantics.

Issue 6: the ``mcp`` subprotocol (and a handshake offering none), Host/Origin and the
bearer token checked before the upgrade, a binary frame closed with 1003, an oversized
message with 1009, fragments put together, a peer that stops answering pings, an abrupt
close mid-request, the close handshake, both eras per connection, cancellation both
ways, listen streams told apart by their subscriptionId. The client is wsproto driven
by hand (`tests.transports.ws_raw`), or our own client where the test is about MCP.
"""

from __future__ import annotations

import json
from typing import Any

import pytest
import trio
import trio.testing
from wsproto.events import CloseConnection, Message, Ping, TextMessage
from wsproto.frame_protocol import CloseReason

from mcpcore import types
from mcpcore.client import ClientCallbacks
from mcpcore.server import Context
from tests.transports.http_raw import RawConnection, build_test_server
from tests.transports.trio_helpers import trio_test
from tests.transports.ws_raw import (
    INITIALIZE,
    RawWebSocket,
    RefusedError,
    StoppableServer,
    legacy_request,
    modern_request,
    running_ws,
)
from transports import (
    BearerAuth,
    Principal,
    WebSocketLimits,
    open_websocket_client,
)

SIMPLE_TEXT = "This is a simple text response for testing."
#: The everything server's tool answering with a simple text.
SIMPLE = {"name": "test_simple_text", "arguments": {}}
UPGRADE_HEADERS = {
    "Upgrade": "websocket",
    "Connection": "Upgrade",
    "Sec-WebSocket-Key": "dGhlIHNhbXBsZSBub25jZQ==",
    "Sec-WebSocket-Version": "13",
}


def cancelled(request_id: int | str) -> Any:
    """A ``notifications/cancelled`` for ``request_id``."""
    return {
        "jsonrpc": "2.0",
        "method": "notifications/cancelled",
        "params": {"requestId": request_id, "reason": "test"},
    }


async def ping_answered(ws: RawWebSocket, request_id: int = 99) -> None:
    """The connection still works: a modern request is answered."""
    await ws.send_json(modern_request(request_id, "tools/list"))
    answer = await ws.receive_answer(request_id)
    assert "result" in answer, answer


# ------------------------------------------------------------------ handshake


@trio_test
async def test_the_mcp_subprotocol_is_selected_whenever_offered() -> None:
    server, _ = build_test_server()
    async with running_ws(server) as port:
        for offered in (["mcp"], ["chat", "mcp"], ["mcp", "mcp.version.2026-07-28"]):
            async with await RawWebSocket.connect(port, subprotocols=offered) as ws:
                assert ws.subprotocol == "mcp", offered
                await ping_answered(ws)


@trio_test
async def test_a_handshake_offering_no_subprotocol_or_others_is_served_without_one() -> None:
    server, _ = build_test_server()
    async with running_ws(server) as port:
        for offered in ([], ["chat"]):
            async with await RawWebSocket.connect(port, subprotocols=offered) as ws:
                assert ws.subprotocol is None, offered
                await ping_answered(ws)


@trio_test
async def test_a_foreign_origin_is_refused_with_403_before_upgrading() -> None:
    server, _ = build_test_server()
    async with running_ws(server) as port:
        with pytest.raises(RefusedError) as refused:
            await RawWebSocket.connect(port, headers=[("Origin", "http://evil.example.com")])
        assert refused.value.status == 403
        assert "id" not in json.loads(refused.value.body)  # a JSON-RPC error without id
        # A local page is fine.
        origin = ("Origin", f"http://localhost:{port}")
        async with await RawWebSocket.connect(port, headers=[origin]) as ws:
            await ping_answered(ws)


@trio_test
async def test_a_foreign_host_is_refused_with_421_before_upgrading() -> None:
    server, _ = build_test_server()
    async with running_ws(server) as port:
        with pytest.raises(RefusedError) as refused:
            await RawWebSocket.connect(port, host="evil.example.com")
        assert refused.value.status == 421
    async with (
        running_ws(server, allowed_hosts=["mcp.example.com"]) as port,
        await RawWebSocket.connect(port, host="mcp.example.com:443") as ws,
    ):
        await ping_answered(ws)


@trio_test
async def test_a_bearer_token_is_required_when_configured_and_names_the_principal() -> None:
    server, _ = build_test_server()
    seen: list[str | None] = []

    @server.tool()
    def whoami(ctx: Context) -> str:
        """Says who is asking."""
        seen.append(ctx.principal)
        return str(ctx.principal)

    def verify(token: str) -> Principal | None:
        return Principal("alice", frozenset({"mcp"})) if token == "s3cret" else None

    auth = BearerAuth(verify, ["https://auth.example.com"], required_scopes=["mcp"])
    async with running_ws(server, auth=auth) as port:
        with pytest.raises(RefusedError) as refused:
            await RawWebSocket.connect(port)
        assert refused.value.status == 401
        challenge = refused.value.headers["www-authenticate"]
        assert challenge.startswith("Bearer resource_metadata=")
        assert "/.well-known/oauth-protected-resource/ws" in challenge
        with pytest.raises(RefusedError) as refused:
            await RawWebSocket.connect(port, headers=[("Authorization", "Bearer wrong")])
        assert refused.value.status == 401
        assert 'error="invalid_token"' in refused.value.headers["www-authenticate"]
        # The metadata the challenge names is served, without a token.
        async with await RawConnection.open(port) as http:
            response = await http.request("GET", "/.well-known/oauth-protected-resource/ws")
            assert response.status == 200
            assert response.json()["authorization_servers"] == ["https://auth.example.com"]
        token = ("Authorization", "Bearer s3cret")
        async with await RawWebSocket.connect(port, headers=[token]) as ws:
            await ws.send_json(modern_request(1, "tools/call", {"name": "whoami"}))
            answer = await ws.receive_answer(1)
            assert answer["result"]["content"][0]["text"] == "alice"
    assert seen == ["alice"]


@trio_test
async def test_requests_that_are_not_a_websocket_handshake_are_refused() -> None:
    server, _ = build_test_server()
    async with running_ws(server) as port, await RawConnection.open(port) as http:
        plain = await http.request("GET", "/ws")
        assert plain.status == 426  # "Upgrade Required"
        assert plain.headers["upgrade"] == "websocket"
        post = await http.request("POST", "/ws", body=b"{}")
        assert post.status == 405
        assert post.headers["allow"] == "GET"
    async with running_ws(server) as port, await RawConnection.open(port) as http:
        elsewhere = await http.request("GET", "/mcp", headers=UPGRADE_HEADERS)
        assert elsewhere.status == 404
    async with running_ws(server) as port, await RawConnection.open(port) as http:
        no_key = {**UPGRADE_HEADERS}
        del no_key["Sec-WebSocket-Key"]
        assert (await http.request("GET", "/ws", headers=no_key)).status == 400
    async with running_ws(server) as port, await RawConnection.open(port) as http:
        old_version = {**UPGRADE_HEADERS, "Sec-WebSocket-Version": "8"}
        refused = await http.request("GET", "/ws", headers=old_version)
        assert refused.status == 426
        assert refused.headers["sec-websocket-version"] == "13"


@trio_test
async def test_a_client_that_sends_no_handshake_is_dropped_after_the_timeout() -> None:
    server, _ = build_test_server()
    limits = WebSocketLimits(handshake_timeout=0.2)
    async with running_ws(server, limits=limits) as port:
        stream = await trio.open_tcp_stream("127.0.0.1", port)
        async with stream:
            await stream.send_all(b"GET /ws HTTP/1.1\r\nHost: 127.0.0.1\r\n")  # never ends
            with trio.fail_after(5):
                answer = b""
                while data := await stream.receive_some(4096):
                    answer += data
            assert answer.startswith(b"HTTP/1.1 408 ")


@trio_test
async def test_connections_past_the_cap_get_503() -> None:
    server, _ = build_test_server()
    async with running_ws(server, limits=WebSocketLimits(max_connections=1)) as port:
        async with await RawWebSocket.connect(port) as ws:
            await ping_answered(ws)
            with pytest.raises(RefusedError) as refused:
                await RawWebSocket.connect(port)
            assert refused.value.status == 503
            await ping_answered(ws)
        # Its slot is free again once it is gone.
        with trio.fail_after(5):
            while True:
                try:
                    async with await RawWebSocket.connect(port) as again:
                        await ping_answered(again)
                        break
                except RefusedError:
                    await trio.sleep(0.01)  # (the server notices the close in its own time)


# ------------------------------------------------------------------ framing


@trio_test
async def test_a_binary_frame_closes_the_connection_with_1003() -> None:
    server, _ = build_test_server()
    async with running_ws(server) as port, await RawWebSocket.connect(port) as ws:
        await ws.send_event(Message(data=json.dumps(modern_request(1, "tools/list")).encode()))
        close = await ws.expect_close()
        assert close.code == CloseReason.UNSUPPORTED_DATA
        await ws.expect_eof()


@trio_test
async def test_a_message_over_the_limit_closes_with_1009_in_one_frame_or_in_fragments() -> None:
    server, _ = build_test_server()
    limits = WebSocketLimits(max_message_size=1024)
    async with running_ws(server, limits=limits) as port:
        async with await RawWebSocket.connect(port) as ws:
            padding = "x" * 1024
            await ws.send_json(modern_request(1, "tools/list", {"padding": padding}))
            assert (await ws.expect_close()).code == CloseReason.MESSAGE_TOO_BIG
            await ws.expect_eof()
        async with await RawWebSocket.connect(port) as ws:
            # Each fragment is small: only their sum is over the limit.
            for _ in range(5):
                await ws.send_event(TextMessage(data="y" * 300, message_finished=False))
            assert (await ws.expect_close()).code == CloseReason.MESSAGE_TOO_BIG
        async with await RawWebSocket.connect(port) as ws:
            # Just under the limit is fine.
            message = modern_request(2, "tools/list")
            filler = 1000 - len(json.dumps(modern_request(2, "tools/list", {"p": ""})))
            message["params"]["p"] = "z" * filler
            await ws.send_json(message)
            assert "result" in await ws.receive_answer(2)


@trio_test
async def test_a_fragmented_message_is_put_together() -> None:
    server, _ = build_test_server()
    async with running_ws(server) as port, await RawWebSocket.connect(port) as ws:
        text = json.dumps(modern_request(1, "tools/call", SIMPLE))
        pieces = [text[:5], text[5:40], text[40:41], text[41:]]
        for index, piece in enumerate(pieces):
            last = index == len(pieces) - 1
            await ws.send_event(TextMessage(data=piece, message_finished=last))
            if index == 1:
                # A control frame between fragments is allowed (RFC 6455 §5.4).
                await ws.send_event(Ping(payload=b"between"))
        answer = await ws.receive_answer(1)
        assert answer["result"]["content"][0]["text"] == SIMPLE_TEXT
        # A message split over TCP writes, a byte at a time, is read as well.
        frame = ws.ws.send(Message(data=json.dumps(modern_request(3, "tools/list"))))
        for byte in frame:
            await ws.send_raw(bytes([byte]))
        assert "result" in await ws.receive_answer(3)


@trio_test
async def test_garbage_in_a_text_frame_gets_a_parse_error_and_the_connection_goes_on() -> None:
    server, _ = build_test_server()
    async with running_ws(server) as port, await RawWebSocket.connect(port) as ws:
        await ws.send_event(Message(data="{not json"))
        error = await ws.receive_json()
        assert error["error"]["code"] == -32700
        assert error.get("id") is None
        await ping_answered(ws)


@trio_test
async def test_invalid_utf8_closes_with_1007() -> None:
    server, _ = build_test_server()
    async with running_ws(server) as port, await RawWebSocket.connect(port) as ws:
        payload = b'{"x":"\xff"}'
        key = b"\x01\x02\x03\x04"
        masked = bytes(byte ^ key[index % 4] for index, byte in enumerate(payload))
        await ws.send_raw(bytes([0x81, 0x80 | len(payload)]) + key + masked)
        close = await ws.expect_close()
        assert close.code == CloseReason.INVALID_FRAME_PAYLOAD_DATA


# ------------------------------------------------------------------ liveness and closing


@trio_test
async def test_a_quiet_client_that_answers_pings_stays_connected() -> None:
    server, _ = build_test_server()
    limits = WebSocketLimits(ping_interval=0.05, pong_timeout=1.0)
    async with running_ws(server, limits=limits) as port, await RawWebSocket.connect(port) as ws:
        await ws.send_json(modern_request(1, "tools/call", {"name": "wait_forever"}))
        assert await ws.next_event(until_pings=3) is None  # (they are answered inside)
        await ping_answered(ws)


@trio_test
async def test_a_peer_that_stops_answering_pings_is_closed_and_its_handlers_cancelled() -> None:
    server, record = build_test_server()
    limits = WebSocketLimits(ping_interval=0.05, pong_timeout=0.2)
    async with running_ws(server, limits=limits) as port, await RawWebSocket.connect(port) as ws:
        await ws.send_json(modern_request(1, "tools/call", {"name": "wait_forever"}))
        await record["started"].wait()
        ws.answer_pings = False  # and it sends nothing else either
        close = await ws.expect_close()
        assert close.code == CloseReason.INTERNAL_ERROR
        assert ws.pings >= 1
        await ws.expect_eof()
        with trio.fail_after(5):
            await record["cancelled"].wait()


@trio_test
async def test_an_abrupt_tcp_close_mid_request_cancels_the_handler() -> None:
    server, record = build_test_server()
    async with running_ws(server) as port:
        ws = await RawWebSocket.connect(port)
        await ws.send_json(modern_request(1, "tools/call", {"name": "wait_forever"}))
        await record["started"].wait()
        await ws.stream.aclose()  # no Close frame: the TCP connection just goes
        with trio.fail_after(5):
            await record["cancelled"].wait()


@trio_test
async def test_the_close_handshake_is_answered_with_the_same_code_then_tcp_closes() -> None:
    server, record = build_test_server()
    async with running_ws(server) as port, await RawWebSocket.connect(port) as ws:
        await ws.send_json(modern_request(1, "tools/call", {"name": "wait_forever"}))
        await record["started"].wait()
        await ws.send_event(CloseConnection(code=4000, reason="bye"))
        close = await ws.expect_close()
        assert (close.code, close.reason) == (4000, "bye")
        await ws.expect_eof()  # "the server MUST close the TCP connection first"
        with trio.fail_after(5):
            await record["cancelled"].wait()


@trio_test
async def test_shutting_the_server_down_closes_connections_with_1001() -> None:
    server, record = build_test_server()
    stoppable = StoppableServer(server)
    async with trio.open_nursery() as nursery:
        port = await nursery.start(stoppable.run)
        async with await RawWebSocket.connect(port) as ws:
            await ws.send_json(modern_request(1, "tools/call", {"name": "wait_forever"}))
            await record["started"].wait()
            stoppable.stop()
            close = await ws.expect_close()
            assert close.code == CloseReason.GOING_AWAY
            await ws.expect_eof()
        assert record["cancelled"].is_set()


# ------------------------------------------------------------------ MCP semantics


@trio_test
async def test_each_connection_chooses_its_era_and_initialize_is_scoped_to_it() -> None:
    server, _ = build_test_server()
    async with (
        running_ws(server) as port,
        await RawWebSocket.connect(port) as modern,
        await RawWebSocket.connect(port) as legacy,
    ):
        await legacy.send_json(legacy_request(1, "initialize", INITIALIZE))
        initialized = await legacy.receive_answer(1)
        assert initialized["result"]["protocolVersion"] == "2025-11-25"
        await legacy.send_json({"jsonrpc": "2.0", "method": "notifications/initialized"})
        await legacy.send_json(legacy_request(2, "tools/call", SIMPLE))
        answer = await legacy.receive_answer(2)
        assert answer["result"]["content"][0]["text"] == SIMPLE_TEXT
        assert "resultType" not in answer["result"]  # a legacy result
        # The other connection was not initialized: it speaks 2026-07-28, every
        # request carrying its own _meta.
        await modern.send_json(modern_request(1, "tools/call", SIMPLE))
        answer = await modern.receive_answer(1)
        assert answer["result"]["resultType"] == "complete"
        assert answer["result"]["content"][0]["text"] == SIMPLE_TEXT
        # On it, the first request decided: an initialize now is refused.
        await modern.send_json(legacy_request(2, "initialize", INITIALIZE))
        assert (await modern.receive_answer(2))["error"]["code"] == -32022


@trio_test
async def test_notifications_cancelled_cancels_the_request_and_it_gets_no_answer() -> None:
    server, record = build_test_server()
    async with running_ws(server) as port, await RawWebSocket.connect(port) as ws:
        await ws.send_json(modern_request(7, "tools/call", {"name": "wait_forever"}))
        await record["started"].wait()
        await ws.send_json(cancelled(7))
        with trio.fail_after(5):
            await record["cancelled"].wait()
        await ws.send_json(modern_request(8, "tools/list"))
        answer = await ws.receive_json()
        assert answer["id"] == 8  # nothing for 7 came before it


@trio_test
async def test_cancelling_a_call_cancels_the_servers_question_to_the_client() -> None:
    server, _ = build_test_server()
    asked = trio.Event()
    question_cancelled = trio.Event()

    async def elicit(params: Any) -> Any:
        asked.set()
        try:
            await trio.sleep_forever()
        finally:
            question_cancelled.set()

    callbacks = ClientCallbacks(elicitation=elicit)
    async with running_ws(server) as port:
        url = f"ws://127.0.0.1:{port}/ws"
        async with open_websocket_client(url, mode="legacy", callbacks=callbacks) as client:
            async with trio.open_nursery() as nursery:

                async def call() -> None:
                    await client.call_tool("test_elicitation", {"message": "Really?"})

                nursery.start_soon(call)
                await asked.wait()
                # Client → server: our call is cancelled on the wire...
                nursery.cancel_scope.cancel()
            # ...and server → client: its elicitation is cancelled on the wire too.
            with trio.fail_after(5):
                await question_cancelled.wait()
            assert (await client.call_tool("test_simple_text")).content[0] == types.TextContent(
                text=SIMPLE_TEXT
            )


@trio_test
async def test_listen_streams_on_one_connection_are_told_apart_by_subscription_id() -> None:
    server, _ = build_test_server()
    async with running_ws(server) as port:
        url = f"ws://127.0.0.1:{port}/ws"
        async with open_websocket_client(url, mode="modern") as client:
            tools = types.SubscriptionFilter(tools_list_changed=True)
            prompts = types.SubscriptionFilter(prompts_list_changed=True)
            async with client.listen(tools) as tool_stream, client.listen(prompts) as prompt_stream:
                assert tool_stream.subscription_id != prompt_stream.subscription_id
                await client.call_tool("test_trigger_tool_change")
                await client.call_tool("test_trigger_prompt_change")
                tool_event = await anext(tool_stream)
                assert tool_event.method == "notifications/tools/list_changed"
                assert tool_event.subscription_id == tool_stream.subscription_id
                # The prompt stream got no tool change before its own (order is kept).
                prompt_event = await anext(prompt_stream)
                assert prompt_event.method == "notifications/prompts/list_changed"
                assert prompt_event.subscription_id == prompt_stream.subscription_id


@trio_test(timeout=60)
async def test_a_thousand_concurrent_calls_on_one_connection() -> None:
    server, _ = build_test_server()
    answers: dict[int, str] = {}
    async with running_ws(server) as port:
        url = f"ws://127.0.0.1:{port}/ws"
        async with open_websocket_client(url, mode="modern") as client:

            async def one(index: int) -> None:
                read = await client.read_resource(f"test://template/{index}/data")
                [contents] = read.contents
                assert isinstance(contents, types.TextResourceContents)
                answers[index] = json.loads(contents.text)["id"]

            async with trio.open_nursery() as nursery:
                for index in range(1000):
                    nursery.start_soon(one, index)
            assert (await client.call_tool("test_simple_text")).content[0] == types.TextContent(
                text=SIMPLE_TEXT
            )
    assert answers == {index: str(index) for index in range(1000)}


@trio_test
async def test_past_the_handler_cap_requests_wait_until_one_finishes() -> None:
    server, _ = build_test_server()
    started: list[int] = []
    release = trio.Event()

    @server.tool()
    async def hold(number: int) -> str:
        """Waits for the test to let it finish."""
        started.append(number)
        await release.wait()
        return f"done {number}"

    async with (
        running_ws(server, limits=WebSocketLimits(max_handlers=2)) as port,
        await RawWebSocket.connect(port) as ws,
    ):
        for number in (1, 2, 3):
            arguments = {"name": "hold", "arguments": {"number": number}}
            await ws.send_json(modern_request(number, "tools/call", arguments))
        # Everything settles with two handlers running and the third request waiting
        # for a slot (the shared runtime's reader stops once its queue is full).
        # (The first two start in either order: trio runs a batch of tasks shuffled.)
        await trio.testing.wait_all_tasks_blocked(0.1)
        assert sorted(started) == [1, 2]
        release.set()
        answers = {(await ws.receive_json())["id"] for _ in range(3)}
        assert answers == {1, 2, 3}
        assert started[2] == 3
