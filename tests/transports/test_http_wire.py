"""The HTTP/1.1 messages written without h11 (transports._net.wire), read back by h11."""

from __future__ import annotations

import h11
import pytest

from transports._net.wire import encode_request, encode_response, field_error, keeps_alive


def parse_response(data: bytes, method: bytes = b"POST") -> tuple[h11.Response, bytes, bool]:
    """h11's reading of a response to a ``method`` request: head, body, keeps alive."""
    client = h11.Connection(h11.CLIENT)
    client.send(h11.Request(method=method, target="/", headers=[("host", "x")]))
    client.send(h11.EndOfMessage())
    client.receive_data(data)
    head = client.next_event()
    assert isinstance(head, h11.Response)
    body = b""
    while not isinstance(event := client.next_event(), h11.EndOfMessage):
        assert isinstance(event, h11.Data)
        body += event.data
    return head, body, client.their_state is h11.DONE


def test_a_response_reads_back_with_its_status_headers_and_body() -> None:
    data = encode_response(404, [(b"content-type", b"application/json")], b'{"a":1}')
    head, body, reusable = parse_response(data)
    assert (head.status_code, head.reason) == (404, b"Not Found")
    assert dict(head.headers) == {b"content-type": b"application/json", b"content-length": b"7"}
    assert body == b'{"a":1}'
    assert reusable


def test_closing_says_so_and_an_empty_body_has_length_zero() -> None:
    head, body, reusable = parse_response(encode_response(202, [], b"", close=True))
    assert (head.status_code, body) == (202, b"")
    assert dict(head.headers) == {b"content-length": b"0", b"connection": b"close"}
    assert not reusable  # h11 sees MUST_CLOSE


def test_a_head_response_declares_the_length_but_carries_no_body() -> None:
    data = encode_response(405, [], b"not here", head_only=True)
    assert data.endswith(b"\r\n\r\n")
    head, body, _ = parse_response(data, method=b"HEAD")
    assert (head.status_code, dict(head.headers)[b"content-length"], body) == (405, b"8", b"")


def test_a_request_reads_back_whole_and_the_body_gets_its_length() -> None:
    data = encode_request(b"POST", b"/mcp?x=1", [(b"host", b"h:1"), (b"accept", b"*/*")], b"{}")
    server = h11.Connection(h11.SERVER)
    server.receive_data(data)
    head = server.next_event()
    assert isinstance(head, h11.Request)
    assert (head.method, head.target, head.http_version) == (b"POST", b"/mcp?x=1", b"1.1")
    assert list(head.headers) == [
        (b"host", b"h:1"),
        (b"accept", b"*/*"),
        (b"content-length", b"2"),
    ]
    data_event = server.next_event()
    assert isinstance(data_event, h11.Data)
    assert data_event.data == b"{}"
    assert isinstance(server.next_event(), h11.EndOfMessage)
    # Without a body, no length: a GET.
    assert b"content-length" not in encode_request(b"GET", b"/", [(b"host", b"h")], b"")


@pytest.mark.parametrize(
    ("name", "value"),
    [
        (b"x-a", b"one\r\nx-evil: 1"),  # a header smuggled in
        (b"x-a", b"one\nx"),
        (b"x-a", b"nul\x00"),
        (b"x a", b"v"),
        (b"x-a:", b"v"),
        (b"", b"v"),
    ],
)
def test_a_malformed_header_is_refused_on_both_sides(name: bytes, value: bytes) -> None:
    assert field_error(name, value) is not None
    with pytest.raises(h11.LocalProtocolError):
        encode_response(200, [(name, value)], b"")
    with pytest.raises(h11.LocalProtocolError):
        encode_request(b"GET", b"/", [(name, value)], b"")


def test_values_with_spaces_tabs_and_obs_text_are_fine() -> None:
    assert field_error(b"www-authenticate", b'Bearer realm="a b",\tx=\xe9') is None


@pytest.mark.parametrize(
    ("method", "target"), [(b"PO ST", b"/"), (b"", b"/"), (b"GET", b"/a b"), (b"GET", b"")]
)
def test_a_malformed_request_line_is_refused(method: bytes, target: bytes) -> None:
    with pytest.raises(h11.LocalProtocolError):
        encode_request(method, target, [(b"host", b"h")], b"")


@pytest.mark.parametrize(
    ("version", "fields", "expected"),
    [
        (b"1.1", [], True),
        (b"1.1", [(b"connection", b"keep-alive")], True),
        (b"1.1", [(b"connection", b"Close")], False),
        (b"1.1", [(b"connection", b"upgrade, close ")], False),
        (b"1.1", [(b"x-connection", b"close")], True),
        (b"1.0", [], False),
        (b"1.0", [(b"connection", b"keep-alive")], False),  # (no 1.0 keep-alive, as h11)
    ],
)
def test_keep_alive_follows_the_request(
    version: bytes, fields: list[tuple[bytes, bytes]], expected: bool
) -> None:
    assert keeps_alive(version, fields) is expected
