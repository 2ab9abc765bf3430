"""The 2026-07-28 request POST checks, in the order the conformance probes require.

Cases from CONFORMANCE.md §4.4, §8.2 (server-stateless), §8.5 (http-header-validation)
and §8.6 (http-custom-header-server-validation).
"""

from __future__ import annotations

import json
from typing import Any

import pytest

from mcpcore import jsonrpc
from mcpcore.http import (
    HeaderParam,
    HttpRejection,
    check_modern_request,
    header_params,
    read_modern_request,
)

SUPPORTED = ("2026-07-28",)
META = {
    "io.modelcontextprotocol/protocolVersion": "2026-07-28",
    "io.modelcontextprotocol/clientCapabilities": {},
}
REGION_SCHEMA = {
    "type": "object",
    "properties": {"region": {"type": "string", "x-mcp-header": "Region"}},
}


def tool_params(name: str) -> tuple[HeaderParam, ...]:
    return header_params(REGION_SCHEMA) if name == "regional" else ()


def body(method: str, params: dict[str, Any] | None = None, request_id: Any = 1) -> bytes:
    message: dict[str, Any] = {"jsonrpc": "2.0", "id": request_id, "method": method}
    if params is not None:
        message["params"] = params
    return json.dumps(message).encode()


def check(data: bytes, headers: dict[str, str]) -> HttpRejection | None:
    request = read_modern_request(data)
    assert request is not None
    lowered = {name.lower(): value for name, value in headers.items()}
    return check_modern_request(
        request, lambda name: lowered.get(name.lower()), SUPPORTED, tool_params
    )


def standard(method: str, name: str | None = None) -> dict[str, str]:
    headers = {"MCP-Protocol-Version": "2026-07-28", "Mcp-Method": method}
    if name is not None:
        headers["Mcp-Name"] = name
    return headers


def test_a_valid_request_passes() -> None:
    assert check(body("tools/list", {"_meta": META}), standard("tools/list")) is None


@pytest.mark.parametrize(
    "params",
    [
        None,
        {},
        {"_meta": {"io.modelcontextprotocol/clientCapabilities": {}}},
        {"_meta": {"io.modelcontextprotocol/protocolVersion": "2026-07-28"}},
        {"_meta": "not an object"},
    ],
)
def test_missing_meta_keys_are_minus_32602_before_anything_else(
    params: dict[str, Any] | None,
) -> None:
    # Even with the header missing or wrong: the keys are checked first (trap 10.2-8).
    rejection = check(body("server/discover", params, 101), {"MCP-Protocol-Version": "v1"})
    assert rejection is not None
    assert (rejection.status, rejection.code, rejection.request_id) == (400, -32602, 101)
    assert json.loads(rejection.body())["id"] == 101


def test_a_header_that_disagrees_with_meta_is_minus_32020_before_the_version_check() -> None:
    meta = {**META, "io.modelcontextprotocol/protocolVersion": "v999.0.0"}
    rejection = check(body("server/discover", {"_meta": meta}, 302), standard("server/discover"))
    assert rejection is not None
    assert (rejection.status, rejection.code, rejection.request_id) == (400, -32020, 302)


def test_an_unsupported_version_is_minus_32022_with_supported_and_requested() -> None:
    meta = {**META, "io.modelcontextprotocol/protocolVersion": "v999.0.0"}
    headers = {"MCP-Protocol-Version": "v999.0.0", "Mcp-Method": "server/discover"}
    rejection = check(body("server/discover", {"_meta": meta}, 301), headers)
    assert rejection is not None
    assert (rejection.status, rejection.code) == (400, jsonrpc.UNSUPPORTED_PROTOCOL_VERSION)
    assert rejection.data == {"supported": ["2026-07-28"], "requested": "v999.0.0"}
    assert json.loads(rejection.body())["error"]["data"]["requested"] == "v999.0.0"


def test_malformed_capabilities_are_minus_32602() -> None:
    meta = {**META, "io.modelcontextprotocol/clientCapabilities": []}
    rejection = check(body("tools/list", {"_meta": meta}), standard("tools/list"))
    assert rejection is not None
    assert rejection.code == -32602


@pytest.mark.parametrize(
    ("headers", "accepted"),
    [
        ({"Mcp-Method": "prompts/list"}, False),  # mismatched
        ({}, False),  # missing
        ({"mcp-method": "tools/list"}, True),  # names are case-insensitive
        ({"MCP-METHOD": "tools/list"}, True),
        ({"Mcp-Method": "TOOLS/LIST"}, False),  # values are not
        ({"Mcp-Method": "  tools/list\t"}, True),  # whitespace is trimmed
    ],
)
def test_the_method_header(headers: dict[str, str], accepted: bool) -> None:
    rejection = check(
        body("tools/list", {"_meta": META}), {"MCP-Protocol-Version": "2026-07-28", **headers}
    )
    if accepted:
        assert rejection is None
    else:
        assert rejection is not None
        assert (rejection.status, rejection.code) == (400, -32020)


@pytest.mark.parametrize(
    ("name_header", "accepted"),
    [
        ("test_simple_text", True),
        ("  test_simple_text  ", True),
        ("=?base64?dGVzdF9zaW1wbGVfdGV4dA==?=", True),
        ("wrong_tool_name", False),
        (None, False),
        ("=?base64?dGVzdF9zaW1wbGVfdGV4dA?=", False),  # bad padding
    ],
)
def test_the_name_header_of_a_tool_call(name_header: str | None, accepted: bool) -> None:
    data = body("tools/call", {"_meta": META, "name": "test_simple_text", "arguments": {}})
    rejection = check(data, standard("tools/call", name_header))
    assert (rejection is None) is accepted
    if rejection is not None:
        assert rejection.code == -32020


def test_the_name_header_of_a_resource_read_is_the_uri() -> None:
    uri = "file:///a b.txt"
    data = body("resources/read", {"_meta": META, "uri": uri})
    assert check(data, standard("resources/read", "=?base64?ZmlsZTovLy9hIGIudHh0?=")) is None
    assert check(data, standard("resources/read", "file:///other")) is not None


def test_a_missing_name_field_is_left_to_the_server() -> None:
    # The body itself is invalid (-32602 from the Connection), not a header problem.
    data = body("tools/call", {"_meta": META})
    assert check(data, standard("tools/call")) is None


@pytest.mark.parametrize(
    ("header", "region", "accepted"),
    [
        ("=?base64?SGVsbG8=?=", "Hello", True),
        ("=?base64?SGVsbG8?=", "Hello", False),  # bad padding
        ("=?base64?SGVs!!!bG8=?=", "Hello", False),  # bad characters
        ("SGVsbG8=", "SGVsbG8=", True),  # no prefix: a literal
        ("=?base64?SGVsbG8=", "=?base64?SGVsbG8=", True),  # no suffix: a literal
        (None, "test-value", False),  # omitted
        ("us-west1", "eu-west1", False),
    ],
)
def test_param_headers(header: str | None, region: str, accepted: bool) -> None:
    data = body("tools/call", {"_meta": META, "name": "regional", "arguments": {"region": region}})
    headers = standard("tools/call", "regional")
    if header is not None:
        headers["Mcp-Param-Region"] = header
    rejection = check(data, headers)
    assert (rejection is None) is accepted
    if rejection is not None:
        assert (rejection.status, rejection.code) == (400, -32020)


def test_tools_without_annotations_ignore_param_headers() -> None:
    data = body("tools/call", {"_meta": META, "name": "plain", "arguments": {"region": "x"}})
    headers = {**standard("tools/call", "plain"), "Mcp-Param-Region": "y"}
    assert check(data, headers) is None


@pytest.mark.parametrize(
    "data",
    [
        b"not json",
        b'[{"jsonrpc":"2.0","id":1,"method":"tools/list"}]',
        b'{"jsonrpc":"2.0","id":1,"result":{}}',
        b'{"jsonrpc":"2.0","id":1.5,"method":"tools/list"}',
        b'{"jsonrpc":"2.0","id":1,"method":"tools/list","params":[]}',
    ],
)
def test_bodies_that_are_not_one_request_are_left_to_the_connection(data: bytes) -> None:
    assert read_modern_request(data) is None


def test_a_notification_has_no_id() -> None:
    request = read_modern_request(b'{"jsonrpc":"2.0","method":"notifications/x"}')
    assert request is not None
    assert request.id is None
