"""The client half of mcpcore.http: POST headers, error statuses, tool header declarations."""

from __future__ import annotations

import base64
from typing import Any

import msgspec
import pytest

from mcpcore import CLIENT, Connection, jsonrpc
from mcpcore.http import (
    MAX_SESSION_ID_LENGTH,
    InvalidTool,
    Refusal,
    ToolHeaderRegistry,
    describe_message,
    error_in_body,
    judge_refusal,
    media_type,
    message_headers,
    valid_session_id,
)
from mcpcore.types import (
    CallToolRequestParams,
    ClientCapabilities,
    Implementation,
    InitializeRequestParams,
    ListToolsResult,
    ReadResourceRequestParams,
    Tool,
)

INFO = Implementation(name="t", version="1")


def modern_connection() -> Connection:
    connection = Connection(CLIENT, capabilities=ClientCapabilities(), implementation=INFO)
    connection.start_modern("2026-07-28")
    return connection


def encoded(text: str) -> str:
    return "=?base64?" + base64.b64encode(text.encode()).decode() + "?="


# ------------------------------------------------------------------ describe_message


def test_a_modern_tools_call_is_described_from_its_own_bytes() -> None:
    connection = modern_connection()
    params = CallToolRequestParams(name="search", arguments={"region": "eu", "n": 3})
    request_id, data = connection.send_request("tools/call", params)
    message = describe_message(data)
    assert message.request_id == request_id
    assert message.method == "tools/call"
    assert message.is_request
    assert message.is_modern
    assert message.protocol_version == "2026-07-28"
    assert message.name == "search"
    assert message.argument_values() == {"region": "eu", "n": 3}


def test_resources_read_names_its_uri() -> None:
    connection = modern_connection()
    _, data = connection.send_request(
        "resources/read", ReadResourceRequestParams(uri="file:///a b")
    )
    message = describe_message(data)
    assert message.name == "file:///a b"


def test_a_list_request_has_no_name() -> None:
    _, data = modern_connection().send_request("tools/list")
    message = describe_message(data)
    assert message.method == "tools/list"
    assert message.name is None
    assert message.argument_values() is None


def test_legacy_messages_are_not_modern() -> None:
    connection = Connection(CLIENT, capabilities=ClientCapabilities(), implementation=INFO)
    params = InitializeRequestParams(
        protocol_version="2025-11-25", capabilities=ClientCapabilities(), client_info=INFO
    )
    _, data = connection.send_request("initialize", params)
    message = describe_message(data)
    assert message.method == "initialize"
    assert not message.is_modern


def test_notifications_and_responses() -> None:
    notification = describe_message(b'{"jsonrpc":"2.0","method":"notifications/initialized"}')
    assert notification.request_id is None
    assert not notification.is_request
    response = describe_message(b'{"jsonrpc":"2.0","id":4,"result":{}}')
    assert response.request_id == 4
    assert response.method is None
    assert not response.is_request


def test_odd_shapes_cost_only_the_optional_headers() -> None:
    message = describe_message(b'{"jsonrpc":"2.0","id":"x","method":"m","params":[1,2]}')
    assert (message.request_id, message.method, message.name) == ("x", "m", None)
    assert describe_message(b"[1]").method is None
    with pytest.raises(msgspec.DecodeError):
        describe_message(b"{nope")


def test_a_name_that_is_not_a_string_is_not_mirrored() -> None:
    data = (
        b'{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":7,'
        b'"_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28"}}}'
    )
    message = describe_message(data)
    assert message.is_modern
    assert message.name is None


# ------------------------------------------------------------------ message_headers

SCHEMA: dict[str, Any] = {
    "type": "object",
    "properties": {
        "region": {"type": "string", "x-mcp-header": "Region"},
        "priority": {"type": "integer", "x-mcp-header": "Priority"},
        "verbose": {"type": "boolean", "x-mcp-header": "Verbose"},
        "query": {"type": "string"},
    },
}


def test_modern_headers_mirror_version_method_name_and_params() -> None:
    registry = ToolHeaderRegistry()
    registry.learn(ListToolsResult(tools=[Tool(name="héllo", input_schema=SCHEMA)]))
    connection = modern_connection()
    arguments = {"region": " eu ", "priority": 42, "verbose": False, "query": "q"}
    _, data = connection.send_request(
        "tools/call", CallToolRequestParams(name="héllo", arguments=arguments)
    )
    message = describe_message(data)
    headers = message_headers(
        message,
        negotiated_version="2025-11-25",  # ignored: the message says 2026-07-28
        session_id="abc",  # ignored: "sessions are removed"
        header_params=registry.params_for("héllo"),
    )
    assert headers == [
        ("MCP-Protocol-Version", "2026-07-28"),
        ("Mcp-Method", "tools/call"),
        ("Mcp-Name", encoded("héllo")),
        ("Mcp-Param-Region", encoded(" eu ")),
        ("Mcp-Param-Priority", "42"),
        ("Mcp-Param-Verbose", "false"),
    ]


def test_null_and_absent_params_are_omitted() -> None:
    registry = ToolHeaderRegistry()
    registry.learn(ListToolsResult(tools=[Tool(name="t", input_schema=SCHEMA)]))
    _, data = modern_connection().send_request(
        "tools/call", CallToolRequestParams(name="t", arguments={"region": None, "priority": 0})
    )
    headers = dict(message_headers(describe_message(data), header_params=registry.params_for("t")))
    assert headers["Mcp-Param-Priority"] == "0"
    assert "Mcp-Param-Region" not in headers
    assert "Mcp-Param-Verbose" not in headers


def test_legacy_headers_carry_the_session_and_the_negotiated_version() -> None:
    initialize = describe_message(b'{"jsonrpc":"2.0","id":1,"method":"initialize","params":{}}')
    assert message_headers(initialize, negotiated_version="2025-11-25") == []
    call = describe_message(b'{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"x"}}')
    assert message_headers(call, negotiated_version="2025-03-26", session_id="s-1") == [
        ("Mcp-Session-Id", "s-1"),
        ("MCP-Protocol-Version", "2025-03-26"),
    ]
    reply = describe_message(b'{"jsonrpc":"2.0","id":"srv-1","result":{}}')
    assert message_headers(reply, negotiated_version="2025-11-25", session_id="s") == [
        ("Mcp-Session-Id", "s"),
        ("MCP-Protocol-Version", "2025-11-25"),
    ]


# ------------------------------------------------------------------ judge_refusal


@pytest.mark.parametrize(
    ("status", "method", "had_session", "code", "reauthenticated", "expected"),
    [
        (401, "tools/call", False, None, False, Refusal.REAUTHENTICATE),
        (401, "initialize", False, None, True, Refusal.FORBIDDEN),
        # 401 and 403 are never evidence of an era (CHECKLIST §15).
        (403, "initialize", False, None, False, Refusal.FORBIDDEN),
        (404, "tools/call", True, None, False, Refusal.SESSION_EXPIRED),
        (404, "tools/call", True, -32001, False, Refusal.SESSION_EXPIRED),
        (404, "tools/call", True, jsonrpc.METHOD_NOT_FOUND, False, Refusal.JSONRPC_ERROR),
        (404, "tools/call", False, None, False, Refusal.HTTP_ERROR),
        (404, "tools/call", False, jsonrpc.METHOD_NOT_FOUND, False, Refusal.JSONRPC_ERROR),
        (405, "initialize", False, None, False, Refusal.TRY_HTTP_SSE),
        (404, "initialize", False, None, False, Refusal.TRY_HTTP_SSE),
        (400, "initialize", False, jsonrpc.INVALID_REQUEST, False, Refusal.TRY_HTTP_SSE),
        (
            400,
            "initialize",
            False,
            jsonrpc.UNSUPPORTED_PROTOCOL_VERSION,
            False,
            Refusal.JSONRPC_ERROR,
        ),
        (400, "initialize", False, jsonrpc.HEADER_MISMATCH, False, Refusal.JSONRPC_ERROR),
        (404, "initialize", False, jsonrpc.METHOD_NOT_FOUND, False, Refusal.JSONRPC_ERROR),
        (500, "initialize", False, None, False, Refusal.HTTP_ERROR),
        (400, "server/discover", False, None, False, Refusal.HTTP_ERROR),
        (400, "tools/call", False, jsonrpc.HEADER_MISMATCH, False, Refusal.JSONRPC_ERROR),
        (503, None, True, None, False, Refusal.HTTP_ERROR),
    ],
)
def test_judge_refusal(  # noqa: PLR0917
    status: int,
    method: str | None,
    had_session: bool,
    code: int | None,
    reauthenticated: bool,
    expected: Refusal,
) -> None:
    verdict = judge_refusal(
        status,
        method=method,
        had_session=had_session,
        error_code=code,
        reauthenticated=reauthenticated,
    )
    assert verdict is expected


def test_error_in_body() -> None:
    found = error_in_body(b'{"jsonrpc":"2.0","id":null,"error":{"code":-32020,"message":"m"}}')
    assert found is not None
    assert found.request_id is None
    assert (found.error.code, found.error.message) == (-32020, "m")
    found = error_in_body(b'{"jsonrpc":"2.0","id":"7","error":{"code":1,"message":"x","data":[1]}}')
    assert found is not None
    assert found.request_id == "7"
    assert found.error.data == [1]
    for body in (b"", b"Not Found", b'{"result":{}}', b"\xff", b'{"error":"no"}'):
        assert error_in_body(body) is None


def test_media_type() -> None:
    assert media_type(b"Text/Event-Stream; charset=utf-8") == "text/event-stream"
    assert media_type("application/json") == "application/json"
    assert media_type(None) == ""


def test_valid_session_id() -> None:
    assert valid_session_id(b"abc-123_~!") == "abc-123_~!"
    assert valid_session_id("x" * MAX_SESSION_ID_LENGTH) is not None
    for bad in (b"", b"a b", b"caf\xc3\xa9", "tab\t", "x" * (MAX_SESSION_ID_LENGTH + 1)):
        assert valid_session_id(bad) is None


# ------------------------------------------------------------------ ToolHeaderRegistry


def test_tools_with_invalid_annotations_are_dropped_and_recorded() -> None:
    registry = ToolHeaderRegistry()
    valid = Tool(name="valid", input_schema=SCHEMA)
    plain = Tool(name="plain", input_schema={"type": "object"})
    bad_type = Tool(
        name="bad_type",
        input_schema={
            "type": "object",
            "properties": {"n": {"type": "number", "x-mcp-header": "N"}},
        },
    )
    bad_name = Tool(
        name="bad_name",
        input_schema={
            "type": "object",
            "properties": {"n": {"type": "string", "x-mcp-header": "a b"}},
        },
    )
    result = ListToolsResult(tools=[valid, bad_type, plain, bad_name], next_cursor="c")
    kept = registry.learn(result)
    assert [tool.name for tool in kept.tools] == ["valid", "plain"]
    assert kept.next_cursor == "c"
    assert [invalid.name for invalid in registry.invalid] == ["bad_type", "bad_name"]
    assert all(isinstance(invalid, InvalidTool) and invalid.reason for invalid in registry.invalid)
    assert [p.name for p in registry.params_for("valid")] == ["Region", "Priority", "Verbose"]
    assert registry.params_for("plain") == ()
    assert registry.params_for("bad_type") == ()


def test_a_listing_without_invalid_tools_is_returned_as_it_is() -> None:
    result = ListToolsResult(tools=[Tool(name="valid", input_schema=SCHEMA)])
    assert ToolHeaderRegistry().learn(result) is result


def test_a_relisted_tool_replaces_what_was_known() -> None:
    registry = ToolHeaderRegistry()
    registry.learn(ListToolsResult(tools=[Tool(name="t", input_schema=SCHEMA)]))
    registry.learn(ListToolsResult(tools=[Tool(name="t", input_schema={"type": "object"})]))
    assert registry.params_for("t") == ()


def test_the_registry_is_bounded() -> None:
    registry = ToolHeaderRegistry(max_tools=2, max_invalid=1)
    tools = [Tool(name=f"t{i}", input_schema=SCHEMA) for i in range(3)]
    registry.learn(ListToolsResult(tools=tools))
    assert registry.params_for("t0") == ()
    assert registry.params_for("t1")
    assert registry.params_for("t2")
    bad = {"type": "object", "properties": {"n": {"type": "number", "x-mcp-header": "N"}}}
    registry.learn(
        ListToolsResult(
            tools=[Tool(name="b1", input_schema=bad), Tool(name="b2", input_schema=bad)]
        )
    )
    assert [invalid.name for invalid in registry.invalid] == ["b2"]
