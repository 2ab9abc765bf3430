"""`mcpcore.http` server rules: statuses, era routing, Host/Origin, media types.

The modern request checks have their own file (test_http_modern_checks.py).
"""

from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st

from mcpcore import jsonrpc
from mcpcore.http import (
    OriginPolicy,
    accepts,
    accepts_json_and_sse,
    is_json,
    legacy_version,
    peek_message,
    route_for,
    split_host,
    status_for_error,
)
from mcpcore.types import TextContent
from mcpcore.versions import Era

# ------------------------------------------------------------------ statuses


@pytest.mark.parametrize(
    ("code", "status"),
    [
        (jsonrpc.METHOD_NOT_FOUND, 404),
        (jsonrpc.INVALID_PARAMS, 400),
        (jsonrpc.HEADER_MISMATCH, 400),
        (jsonrpc.MISSING_REQUIRED_CLIENT_CAPABILITY, 400),
        (jsonrpc.UNSUPPORTED_PROTOCOL_VERSION, 400),
        (jsonrpc.PARSE_ERROR, 400),
        (jsonrpc.INVALID_REQUEST, 400),
        (jsonrpc.INTERNAL_ERROR, 200),
        (-1, 200),
    ],
)
def test_error_codes_map_to_the_spec_statuses(code: int, status: int) -> None:
    assert status_for_error(code) == status


@pytest.mark.parametrize("request_id", [7, -3, "7", 'a"b', "x\\", '","error":{"code":1', ""])
def test_peek_tells_results_errors_requests_and_notifications_apart(
    request_id: int | str,
) -> None:
    result = jsonrpc.encode_result_response(request_id, {"error": {"code": 5}})
    assert peek_message(result) == ("result", None)
    error = jsonrpc.encode_error_response(request_id, -32601, "no")
    assert peek_message(error) == ("error", -32601)
    request = jsonrpc.encode_request(request_id, "sampling/createMessage", {})
    assert peek_message(request).kind == "request"
    notification = jsonrpc.encode_notification("notifications/message", {"level": "info"})
    assert peek_message(notification).kind == "notification"


def test_peek_reads_an_error_without_an_id_and_refuses_unknown_shapes() -> None:
    assert peek_message(jsonrpc.encode_error_response(None, -32700, "bad")) == ("error", -32700)
    assert peek_message(b'{"id":1,"jsonrpc":"2.0","result":{}}').kind == "unknown"
    assert peek_message(b"").kind == "unknown"
    assert peek_message(b'{"jsonrpc":"2.0","id":"unterminated').kind == "unknown"


@given(st.one_of(st.integers(-(2**53), 2**53), st.text()))
def test_peek_agrees_with_the_encoder_for_any_id(request_id: int | str) -> None:
    content = [TextContent(text='","error":{"code":-1}')]
    assert peek_message(jsonrpc.encode_result_response(request_id, content)).kind == "result"
    assert peek_message(jsonrpc.encode_error_response(request_id, 42, "x")) == ("error", 42)


# ------------------------------------------------------------------ routing


@pytest.mark.parametrize(
    ("header", "era"),
    [
        (None, Era.LEGACY),
        ("2024-11-05", Era.LEGACY),
        ("2025-03-26", Era.LEGACY),
        ("2025-06-18", Era.LEGACY),
        (" 2025-11-25 ", Era.LEGACY),
        ("2026-07-28", Era.MODERN),
        ("v999.0.0", Era.MODERN),  # the unsupported-version probe must reach the modern path
        ("", Era.MODERN),
    ],
)
def test_requests_are_routed_by_the_protocol_version_header(header: str | None, era: Era) -> None:
    assert route_for(header) is era


def test_a_missing_header_means_2025_03_26() -> None:
    assert legacy_version(None) == "2025-03-26"
    assert legacy_version("2025-11-25 ") == "2025-11-25"


# ------------------------------------------------------------------ Host and Origin


@pytest.mark.parametrize(
    ("authority", "split"),
    [
        ("localhost", ("localhost", None)),
        ("LocalHost:3001", ("localhost", "3001")),
        ("[::1]:80", ("[::1]", "80")),
        ("[::1]", ("[::1]", None)),
        ("[::1", ("", None)),
        ("[::1]x", ("", None)),
        ("host:port", ("", None)),
    ],
)
def test_split_host(authority: str, split: tuple[str, str | None]) -> None:
    assert split_host(authority) == split


@pytest.mark.parametrize(
    "host", ["localhost", "localhost:3001", "127.0.0.1:8080", "[::1]:1", "LOCALHOST"]
)
def test_loopback_hosts_are_allowed_on_any_port_by_default(host: str) -> None:
    assert OriginPolicy().host_allowed(host)


@pytest.mark.parametrize(
    "host", [None, "evil.example.com", "evil.example.com:3001", "127.0.0.2", "localhost.evil", ""]
)
def test_other_hosts_are_refused_by_default(host: str | None) -> None:
    assert not OriginPolicy().host_allowed(host)
    assert OriginPolicy().refusal(host, None) == 421


def test_configured_hosts_ports_and_the_wildcard() -> None:
    policy = OriginPolicy(allowed_hosts=["api.example.com", "box:8443"])
    assert policy.host_allowed("api.example.com:1234")
    assert policy.host_allowed("box:8443")
    assert not policy.host_allowed("box:8444")
    assert not policy.host_allowed("localhost")
    assert OriginPolicy(allowed_hosts=["*"]).host_allowed("anything.example")


@pytest.mark.parametrize(
    ("origin", "allowed"),
    [
        (None, True),  # not a browser
        ("http://localhost:5173", True),
        ("https://127.0.0.1", True),
        ("http://[::1]:3000", True),
        ("http://evil.example.com", False),
        ("null", False),
        ("file://localhost", False),
        ("http://localhost/path", False),
        ("https://app.example.com", True),  # configured exactly
        ("https://app.example.com:444", False),
    ],
)
def test_origins(origin: str | None, allowed: bool) -> None:
    policy = OriginPolicy(allowed_origins=["https://app.example.com/"])
    assert policy.origin_allowed(origin) is allowed
    assert policy.refusal("localhost:1", origin) == (None if allowed else 403)


# ------------------------------------------------------------------ media types


@pytest.mark.parametrize(
    ("accept", "both"),
    [
        (None, True),
        ("application/json, text/event-stream", True),
        ("text/event-stream, application/json", True),
        ("Application/JSON;q=0.9 , TEXT/event-stream", True),
        ("*/*", True),
        ("application/*, text/*", True),
        ("application/json", False),
        ("text/event-stream", False),
        ("application/json, text/event-stream;q=0", False),
        ("text/html", False),
    ],
)
def test_a_post_must_accept_json_and_sse(accept: str | None, both: bool) -> None:
    assert accepts_json_and_sse(accept) is both


def test_accepts_one_type() -> None:
    assert accepts("text/event-stream", "text/event-stream")
    assert accepts("text/*;q=0.5", "text/event-stream")
    assert not accepts("application/json", "text/event-stream")
    assert not accepts("text/event-stream;q=0.0", "text/event-stream")
    assert accepts("text/event-stream;q=bogus", "text/event-stream")


@pytest.mark.parametrize(
    ("content_type", "json"),
    [
        ("application/json", True),
        ("application/json; charset=utf-8", True),
        ("Application/JSON", True),
        ("text/plain", False),
        ("application/jsonx", False),
        (None, False),
    ],
)
def test_a_post_body_must_be_json(content_type: str | None, json: bool) -> None:
    assert is_json(content_type) is json
