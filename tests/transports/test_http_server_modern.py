"""`serve_http` on the 2026-07-28 path, over raw HTTP.

Statuses and header checks (CONFORMANCE §4.4), JSON versus event-stream answers,
cancellation by closing the response, ``subscriptions/listen``, HTTP/1.1 keep-alive
and pipelining.
"""

from __future__ import annotations

import json
from typing import Any

import pytest
import trio

from tests.transports.http_raw import (
    MODERN,
    RawConnection,
    build_test_server,
    http_test,
    jump,
    modern_body,
    modern_headers,
    running_server,
)
from transports import HttpLimits

# ------------------------------------------------------------------ answers


@http_test
async def test_a_request_is_answered_with_json() -> None:
    server, _ = build_test_server()
    async with running_server(server) as running, await RawConnection.open(running.port) as http:
        response = await http.request(
            headers=modern_headers("tools/call", "test_simple_text"),
            body=modern_body("tools/call", {"name": "test_simple_text"}, request_id="a"),
        )
        assert response.status == 200
        assert response.headers["content-type"] == "application/json"
        message = response.json()
        assert message["id"] == "a"
        assert message["result"]["resultType"] == "complete"
        assert message["result"]["content"][0]["text"].startswith("This is a simple text")
        assert b"\n" not in response.body  # compact, single-line JSON (trap 10.2-9)
        assert "mcp-session-id" not in response.headers  # "MUST NOT mint or echo one"


@http_test
async def test_progress_turns_the_answer_into_an_event_stream() -> None:
    server, _ = build_test_server()
    async with running_server(server) as running, await RawConnection.open(running.port) as http:
        params = {"name": "test_tool_with_progress", "_meta": {"progressToken": "p-1"}}
        await http.send(
            http.encode(
                headers=modern_headers("tools/call", "test_tool_with_progress"),
                body=modern_body("tools/call", params),
            )
        )
        head = await http.read_head()
        assert head.status == 200
        assert head.headers["content-type"] == "text/event-stream"
        assert head.headers["x-accel-buffering"] == "no"
        events = [json.loads(event.data) for event in await http.read_all_events()]
        progress = [e["params"]["progress"] for e in events if e.get("method")]
        assert progress == [0, 50, 100]
        assert all(e["params"]["progressToken"] == "p-1" for e in events if e.get("method"))
        assert events[-1]["id"] == 1
        assert events[-1]["result"]["content"][0]["text"] == "Progress test completed"
        # The connection is still good for the next request.
        again = await http.request(
            headers=modern_headers("tools/list"), body=modern_body("tools/list")
        )
        assert again.status == 200


@http_test
async def test_logs_only_with_a_log_level_and_only_on_a_stream() -> None:
    server, _ = build_test_server()
    async with running_server(server) as running, await RawConnection.open(running.port) as http:
        headers = modern_headers("tools/call", "test_logging_tool")
        quiet = await http.request(
            headers=headers, body=modern_body("tools/call", {"name": "test_logging_tool"})
        )
        assert quiet.headers["content-type"] == "application/json"
        params = {
            "name": "test_logging_tool",
            "_meta": {"io.modelcontextprotocol/logLevel": "debug"},
        }
        await http.send(http.encode(headers=headers, body=modern_body("tools/call", params)))
        assert (await http.read_head()).headers["content-type"] == "text/event-stream"
        events = [json.loads(event.data) for event in await http.read_all_events()]
        assert [e["method"] for e in events[:-1]] == ["notifications/message"]


@http_test
async def test_a_quiet_request_gets_keepalive_comments_on_a_stream() -> None:
    server, record = build_test_server()
    limits = HttpLimits(sse_keepalive_interval=10)
    async with (
        running_server(server, limits=limits) as running,
        await RawConnection.open(running.port) as http,
    ):
        await http.send(
            http.encode(
                headers=modern_headers("tools/call", "progress_then_wait"),
                body=modern_body("tools/call", {"name": "progress_then_wait"}),
            )
        )
        await jump(11)  # (no progress token: nothing was sent so far)
        head = await http.read_head()
        assert head.headers["content-type"] == "text/event-stream"
        assert await http.read_chunk() == b": keep-alive\n\n"
        record["release"].set()
        events = await http.read_all_events()
        assert json.loads(events[-1].data)["result"]["content"][0]["text"] == "released"


@http_test
async def test_a_notification_gets_202_without_a_body() -> None:
    server, _ = build_test_server()
    async with running_server(server) as running, await RawConnection.open(running.port) as http:
        response = await http.request(
            headers=modern_headers("notifications/initialized"),
            body=modern_body("notifications/initialized", request_id=None),
        )
        assert (response.status, response.body) == (202, b"")


# ------------------------------------------------------------------ statuses


def error_of(body: bytes) -> tuple[Any, int]:
    message = json.loads(body)
    return message.get("id"), message["error"]["code"]


@http_test
async def test_protocol_errors_get_their_statuses() -> None:
    server, _ = build_test_server()
    async with running_server(server) as running, await RawConnection.open(running.port) as http:
        # -32602: no _meta at all.
        no_meta = json.dumps(
            {"jsonrpc": "2.0", "id": 101, "method": "server/discover", "params": {}}
        )
        response = await http.request(
            headers=modern_headers("server/discover"), body=no_meta.encode()
        )
        assert (response.status, error_of(response.body)) == (400, (101, -32602))
        # -32020: the header disagrees with _meta.
        mismatch = modern_body(
            "server/discover",
            {"_meta": {"io.modelcontextprotocol/protocolVersion": "v999.0.0"}},
            request_id=302,
        )
        response = await http.request(headers=modern_headers("server/discover"), body=mismatch)
        assert (response.status, error_of(response.body)) == (400, (302, -32020))
        # -32022: a version we do not speak, with what we do.
        response = await http.request(
            headers=modern_headers("server/discover", **{"MCP-Protocol-Version": "v999.0.0"}),
            body=mismatch,
        )
        assert (response.status, error_of(response.body)) == (400, (302, -32022))
        assert response.json()["error"]["data"] == {
            "supported": [MODERN],
            "requested": "v999.0.0",
        }
        # -32021: the tool needs a client capability the request did not declare.
        response = await http.request(
            headers=modern_headers("tools/call", "test_missing_capability"),
            body=modern_body("tools/call", {"name": "test_missing_capability"}, request_id=401),
        )
        assert (response.status, error_of(response.body)) == (400, (401, -32021))
        assert response.json()["error"]["data"] == {"requiredCapabilities": {"sampling": {}}}


@pytest.mark.parametrize(
    "method",
    [
        "initialize",
        "ping",
        "logging/setLevel",
        "resources/subscribe",
        "resources/unsubscribe",
        "unknown/method",
    ],
)
@http_test
async def test_unknown_and_removed_methods_are_404_with_minus_32601(method: str) -> None:
    server, _ = build_test_server()
    every: dict[str, dict[str, Any]] = {
        "initialize": {
            "protocolVersion": MODERN,
            "capabilities": {},
            "clientInfo": {"name": "c", "version": "1"},
        },
        "logging/setLevel": {"level": "info"},
        "resources/subscribe": {"uri": "test://watched-resource"},
        "resources/unsubscribe": {"uri": "test://watched-resource"},
    }
    params = every.get(method, {})
    async with running_server(server) as running, await RawConnection.open(running.port) as http:
        for _ in range(2):  # (twice: the first must not change how the second is served)
            response = await http.request(
                headers=modern_headers(method), body=modern_body(method, params, request_id=500)
            )
            assert (response.status, error_of(response.body)) == (404, (500, -32601))


@http_test
async def test_get_and_delete_are_405_on_the_modern_path_and_without_the_legacy_eras() -> None:
    server, _ = build_test_server()
    async with running_server(server) as running, await RawConnection.open(running.port) as http:
        response = await http.request(
            "GET", headers={"MCP-Protocol-Version": MODERN, "Accept": "text/event-stream"}
        )
        assert (response.status, response.headers["allow"]) == (405, "POST")
    async with (
        running_server(server, legacy=False) as running,
        await RawConnection.open(running.port) as http,
    ):
        for method in ("GET", "DELETE"):
            response = await http.request(method, headers={"Accept": "text/event-stream"})
            assert response.status == 405, method
        # Without the legacy eras, a POST without the header is a 2026-07-28 request:
        # "Otherwise (S) MUST reject it (400 HeaderMismatch)".
        headers = modern_headers("tools/list")
        del headers["MCP-Protocol-Version"]
        response = await http.request(headers=headers, body=modern_body("tools/list"))
        assert (response.status, error_of(response.body)[1]) == (400, -32020)


@http_test
async def test_accept_and_content_type_are_checked() -> None:
    server, _ = build_test_server()
    async with running_server(server) as running, await RawConnection.open(running.port) as http:
        body = modern_body("tools/list")
        only_json = modern_headers("tools/list", Accept="application/json")
        assert (await http.request(headers=only_json, body=body)).status == 406
        text = modern_headers("tools/list", **{"Content-Type": "text/plain"})
        assert (await http.request(headers=text, body=body)).status == 415
        either_order = modern_headers("tools/list", Accept="text/event-stream, application/json")
        assert (await http.request(headers=either_order, body=body)).status == 200


@http_test
async def test_garbage_bodies_get_400() -> None:
    server, _ = build_test_server()
    async with running_server(server) as running, await RawConnection.open(running.port) as http:
        headers = modern_headers("tools/list")
        for body in (b"{not json", b'[{"jsonrpc":"2.0","id":1,"method":"tools/list"}]'):
            response = await http.request(headers=headers, body=body)
            assert response.status == 400, body
            assert response.json()["error"]["code"] in (-32700, -32600)
        posted_result = b'{"jsonrpc":"2.0","id":1,"result":{}}'
        assert (await http.request(headers=headers, body=posted_result)).status == 400


# ------------------------------------------------------------------ header checks


@pytest.mark.parametrize(
    ("extra", "status"),
    [
        ({"Mcp-Name": "test_x_mcp_header", "Mcp-Param-Region": "us-west1"}, 200),
        ({"mcp-name": "  test_x_mcp_header ", "MCP-PARAM-REGION": "us-west1"}, 200),
        ({"Mcp-Name": "test_x_mcp_header", "Mcp-Param-Region": "=?base64?dXMtd2VzdDE=?="}, 200),
        ({"Mcp-Name": "test_x_mcp_header", "Mcp-Param-Region": "=?base64?dXMtd2VzdDE?="}, 400),
        ({"Mcp-Name": "test_x_mcp_header", "Mcp-Param-Region": "eu-west1"}, 400),
        ({"Mcp-Name": "test_x_mcp_header"}, 400),
        ({"Mcp-Name": "other_tool", "Mcp-Param-Region": "us-west1"}, 400),
        ({"Mcp-Param-Region": "us-west1"}, 400),
        ({"Mcp-Method": "tools/list", "Mcp-Name": "test_x_mcp_header"}, 400),
        ({"Mcp-Method": "TOOLS/CALL", "Mcp-Name": "test_x_mcp_header"}, 400),
    ],
)
@http_test
async def test_method_name_and_param_headers_are_checked(
    extra: dict[str, str], status: int
) -> None:
    server, _ = build_test_server()
    headers = {
        key: value for key, value in modern_headers("tools/call").items() if key != "Mcp-Method"
    }
    headers["Mcp-Method"] = "tools/call"
    headers.update(extra)
    arguments = {"region": "us-west1"}
    body = modern_body("tools/call", {"name": "test_x_mcp_header", "arguments": arguments})
    async with running_server(server) as running, await RawConnection.open(running.port) as http:
        response = await http.request(headers=headers, body=body)
        assert response.status == status
        if status == 400:
            assert error_of(response.body) == (1, -32020)
        else:
            assert response.json()["result"]["content"][0]["text"] == "region=us-west1"


# ------------------------------------------------------------------ cancellation


@http_test
async def test_closing_the_response_stream_cancels_the_handler() -> None:
    server, record = build_test_server()
    async with running_server(server) as running:
        http = await RawConnection.open(running.port)
        await http.send(
            http.encode(
                headers=modern_headers("tools/call", "wait_forever"),
                body=modern_body("tools/call", {"name": "wait_forever"}),
            )
        )
        await record["started"].wait()
        assert not record["cancelled"].is_set()
        await http.stream.aclose()  # "closing the response stream IS the cancellation"
        await record["cancelled"].wait()


@http_test
async def test_a_client_leaving_in_the_middle_of_an_answer_is_no_error() -> None:
    server, _ = build_test_server()
    async with running_server(server) as running:  # (it fails on any connection error)
        async with await RawConnection.open(running.port) as http:
            await http.send(
                http.encode(
                    headers=modern_headers("tools/call", "big_text"),
                    body=modern_body("tools/call", {"name": "big_text"}),
                )
            )
            assert (await http.read_head()).status == 200
        await trio.testing.wait_all_tasks_blocked(0.05)
        async with await RawConnection.open(running.port) as again:
            response = await again.request(
                headers=modern_headers("tools/list"), body=modern_body("tools/list")
            )
            assert response.status == 200


# ------------------------------------------------------------------ listen


@http_test
async def test_a_listen_stream_acknowledges_then_delivers_list_changed() -> None:
    server, _ = build_test_server()
    async with running_server(server) as running:
        listener = await RawConnection.open(running.port)
        await listener.send(
            listener.encode(
                headers=modern_headers("subscriptions/listen"),
                body=modern_body(
                    "subscriptions/listen",
                    {"notifications": {"toolsListChanged": True}},
                    request_id="sub-1",
                ),
            )
        )
        head = await listener.read_head()
        assert head.headers["content-type"] == "text/event-stream"
        [ack] = await listener.read_events(1)
        acknowledged = json.loads(ack.data)
        assert acknowledged["method"] == "notifications/subscriptions/acknowledged"
        subscription = acknowledged["params"]["_meta"]["io.modelcontextprotocol/subscriptionId"]
        assert subscription == "sub-1"
        async with await RawConnection.open(running.port) as caller:
            response = await caller.request(
                headers=modern_headers("tools/call", "test_trigger_tool_change"),
                body=modern_body("tools/call", {"name": "test_trigger_tool_change"}),
            )
            assert response.status == 200
        [changed] = await listener.read_events(1)
        notification = json.loads(changed.data)
        assert notification["method"] == "notifications/tools/list_changed"
        assert notification["params"]["_meta"]["io.modelcontextprotocol/subscriptionId"] == "sub-1"
        await listener.stream.aclose()


@http_test
async def test_a_listen_stream_ends_with_its_result_when_the_server_closes_streams() -> None:
    server, _ = build_test_server()
    async with running_server(server) as running, await RawConnection.open(running.port) as http:
        await http.send(
            http.encode(
                headers=modern_headers("subscriptions/listen"),
                body=modern_body("subscriptions/listen", {"notifications": {}}, request_id=9),
            )
        )
        await http.read_head()
        await http.read_events(1)
        await server.close_streams()
        rest = await http.read_all_events()
        assert json.loads(rest[-1].data)["id"] == 9
        # The connection goes on.
        response = await http.request(
            headers=modern_headers("tools/list"), body=modern_body("tools/list")
        )
        assert response.status == 200


# ------------------------------------------------------------------ HTTP/1.1


REQUESTS_ON_ONE_CONNECTION = 10_000


@http_test
async def test_ten_thousand_requests_on_one_keepalive_connection() -> None:
    server, _ = build_test_server()
    async with running_server(server) as running, await RawConnection.open(running.port) as http:
        headers = modern_headers("tools/call", "test_simple_text")
        with trio.fail_after(45):  # bounded: ~3 s on the development machine
            for number in range(REQUESTS_ON_ONE_CONNECTION):
                body = modern_body("tools/call", {"name": "test_simple_text"}, request_id=number)
                response = await http.request(headers=headers, body=body)
                assert response.status == 200
                assert response.json()["id"] == number


@http_test
async def test_a_request_pipelined_behind_a_long_one_is_answered_after_it() -> None:
    # The long one outlasts WATCH_DELAY, so the watcher reads the next request while it
    # runs, into the h11 that then hands it to a fresh one (the answer went past h11).
    server, _ = build_test_server()

    @server.tool()
    async def linger() -> str:
        """Answers after a fifth of a second."""
        await trio.sleep(0.2)
        return "lingered"

    def call(name: str, number: int) -> bytes:
        body = modern_body("tools/call", {"name": name}, request_id=number)
        return http.encode(headers=modern_headers("tools/call", name), body=body)

    async with running_server(server) as running, await RawConnection.open(running.port) as http:
        await http.send(call("linger", 0))
        await trio.sleep(0.1)  # (past WATCH_DELAY, before the answer)
        await http.send(call("test_simple_text", 1))
        first, second = await http.read_response(), await http.read_response()
        assert first.json()["result"]["content"][0]["text"] == "lingered"
        assert (first.json()["id"], second.json()["id"]) == (0, 1)
        await http.send(call("test_simple_text", 2))
        assert (await http.read_response()).json()["id"] == 2


@http_test
async def test_pipelined_requests_are_answered_in_order() -> None:
    server, _ = build_test_server()
    async with running_server(server) as running, await RawConnection.open(running.port) as http:
        burst = b"".join(
            http.encode(
                headers=modern_headers("tools/call", name),
                body=modern_body("tools/call", {"name": name}, request_id=number),
            )
            for number, name in enumerate(
                ["test_tool_with_progress", "test_simple_text", "test_error_handling"] * 3
            )
        )
        await http.send(burst)  # nine requests in one write
        ids = []
        for _ in range(9):
            response = await http.read_response()
            if response.headers["content-type"] == "text/event-stream":
                message = json.loads(response.body.split(b"data: ")[-1])
            else:
                message = response.json()
            ids.append(message["id"])
        assert ids == list(range(9))
