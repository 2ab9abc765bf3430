"""Bad input from the peer never escapes as an exception: it becomes an answer (or silence)."""

from __future__ import annotations

import json
from typing import Any

import msgspec
import pytest

from mcpcore import (
    CLIENT,
    DEFAULT_METHODS,
    SERVER,
    Connection,
    Direction,
    ErrorReceived,
    InvalidMessage,
    LocalProtocolError,
    MethodSpec,
    NotificationReceived,
    RequestReceived,
    ResponseReceived,
    jsonrpc,
    types,
)
from tests.core.pair import Pair
from tests.oracle import oracle


def only_event(events: list[Any]) -> InvalidMessage:
    [event] = events
    assert isinstance(event, InvalidMessage), event
    return event


def reply(events: list[Any]) -> dict[str, Any]:
    event = only_event(events)
    assert event.reply is not None
    oracle("2026-07-28").check(event.reply)  # every error reply is a valid message
    decoded: dict[str, Any] = json.loads(event.reply)
    return decoded


@pytest.fixture
def server() -> Connection:
    pair = Pair()
    pair.handshake()
    return pair.server


# ------------------------------------------------------------------ -32700


@pytest.mark.parametrize(
    "data",
    [b"{", b"not json", b'{"jsonrpc":"2.0",', b"\xff\xfe{}", b'{"a":"\xc3\x28"}', b""],
    ids=["truncated", "words", "unterminated", "bad-utf8-start", "bad-utf8-string", "empty"],
)
def test_unreadable_bytes_are_a_parse_error_without_an_id(server: Connection, data: bytes) -> None:
    answer = reply(server.receive(data))
    assert answer["error"]["code"] == -32700
    assert "id" not in answer


# ------------------------------------------------------------------ -32600


@pytest.mark.parametrize(
    ("data", "echoed_id"),
    [
        (b"5", None),
        (b'"text"', None),
        (b"null", None),
        (b"{}", None),
        (b'{"id":1,"method":"ping"}', 1),
        (b'{"jsonrpc":"1.0","id":"a","method":"ping"}', "a"),
        (b'{"jsonrpc":"2.0","id":null,"method":"ping"}', None),
        (b'{"jsonrpc":"2.0","id":1.5,"method":"ping"}', None),
        (b'{"jsonrpc":"2.0","id":true,"method":"ping"}', None),
        (b'{"jsonrpc":"2.0","id":{"a":1},"method":"ping"}', None),
        (b'{"jsonrpc":"2.0","id":2,"method":5}', 2),
        (b'{"jsonrpc":"2.0","id":3,"method":"ping","result":{}}', 3),
        (b'{"jsonrpc":"2.0","id":4}', 4),
    ],
)
def test_structurally_invalid_messages_are_invalid_request(
    server: Connection, data: bytes, echoed_id: Any
) -> None:
    answer = reply(server.receive(data))
    assert answer["error"]["code"] == -32600
    assert answer.get("id") == echoed_id


def test_a_duplicate_request_id_in_flight_is_refused(server: Connection) -> None:
    [first] = server.receive(b'{"jsonrpc":"2.0","id":"x","method":"tools/list"}')
    assert isinstance(first, RequestReceived)
    answer = reply(server.receive(b'{"jsonrpc":"2.0","id":"x","method":"tools/list"}'))
    assert answer == {
        "jsonrpc": "2.0",
        "id": "x",
        "error": {"code": -32600, "message": "Invalid Request: id already in flight"},
    }
    assert server.requests_in_flight == 1


# ------------------------------------------------------------ -32601 / -32602


def test_an_unknown_method_is_method_not_found_echoing_the_exact_id(server: Connection) -> None:
    answer = reply(server.receive(b'{"jsonrpc":"2.0","id":"7","method":"nope"}'))
    assert answer["id"] == "7"  # the string, not the number
    assert answer["error"]["code"] == -32601
    answer = reply(server.receive(b'{"jsonrpc":"2.0","id":7,"method":"nope"}'))
    assert answer["id"] == 7


@pytest.mark.parametrize(
    "params",
    [
        b'{"name":5}',
        b"{}",
        b"[1,2]",
        b"null",
        b'{"name":"t","arguments":[1]}',
        b'{"name":"t","_meta":"x"}',
    ],
)
def test_bad_params_are_invalid_params(server: Connection, params: bytes) -> None:
    data = b'{"jsonrpc":"2.0","id":9,"method":"tools/call","params":' + params + b"}"
    answer = reply(server.receive(data))
    assert answer["id"] == 9
    assert answer["error"]["code"] == -32602


def test_missing_params_are_invalid_only_when_required(server: Connection) -> None:
    answer = reply(server.receive(b'{"jsonrpc":"2.0","id":1,"method":"tools/call"}'))
    assert answer["error"]["code"] == -32602
    [event] = server.receive(b'{"jsonrpc":"2.0","id":2,"method":"tools/list"}')
    assert isinstance(event, RequestReceived)
    assert event.params == types.PaginatedRequestParams()


# -------------------------------------------------- notifications and responses


@pytest.mark.parametrize(
    "data",
    [
        b'{"jsonrpc":"2.0","method":"notifications/nope"}',
        b'{"jsonrpc":"2.0","method":"notifications/progress","params":{"progress":"x"}}',
        b'{"jsonrpc":"2.0","method":"tools/list"}',  # a request's method, with no id
        b'{"jsonrpc":"2.0","method":"notifications/initialized"}',  # again, after the handshake
    ],
)
def test_a_broken_notification_is_never_answered(server: Connection, data: bytes) -> None:
    event = only_event(server.receive(data))
    assert event.reply is None


@pytest.mark.parametrize(
    "data",
    [
        b'{"jsonrpc":"2.0","id":99,"result":{}}',
        b'{"jsonrpc":"2.0","id":99,"error":{"code":1,"message":"x"}}',
        b'{"jsonrpc":"2.0","id":99,"result":{},"error":{"code":1,"message":"x"}}',
        b'{"jsonrpc":"2.0","id":null,"result":{}}',
        b'{"jsonrpc":"2.0","id":1,"error":{"code":"x"}}',
        b'{"jsonrpc":"1.0","id":1,"result":{}}',
    ],
)
def test_a_stray_or_broken_response_is_never_answered(server: Connection, data: bytes) -> None:
    event = only_event(server.receive(data))
    assert event.reply is None


def test_an_error_response_without_an_id_reaches_the_client() -> None:
    client = Connection(CLIENT)
    for data in (
        b'{"jsonrpc":"2.0","error":{"code":-32700,"message":"Parse error"}}',
        b'{"jsonrpc":"2.0","id":null,"error":{"code":-32700,"message":"Parse error"}}',
    ):
        [event] = client.receive(data)
        assert isinstance(event, ErrorReceived)
        assert event.request_id is None
        assert event.error.code == -32700


def test_error_data_of_any_shape_is_decoded() -> None:
    pair = Pair()
    pair.go_modern()
    request_id, _ = pair.client.send_request("tools/list")
    data = json.dumps(
        {
            "jsonrpc": "2.0",
            "id": request_id,
            "error": {"code": 1, "message": "m", "data": [1, {"a": None}]},
        }
    ).encode()
    [event] = pair.client.receive(data)
    assert isinstance(event, ErrorReceived)
    assert event.error.data == [1, {"a": None}]
    assert event.method == "tools/list"


# ------------------------------------------------------------------ exact ids


def test_string_and_integer_ids_are_different_requests() -> None:
    pair = Pair()
    pair.handshake()
    pair.client.send_request("tools/list", request_id="7")
    pair.client.send_request("tools/list", request_id=7)
    [as_int] = pair.client.receive(b'{"jsonrpc":"2.0","id":7,"result":{"tools":[]}}')
    assert isinstance(as_int, ResponseReceived)
    assert as_int.request_id == 7
    assert pair.client.pending_requests == ("7",)
    [as_str] = pair.client.receive(b'{"jsonrpc":"2.0","id":"7","result":{"tools":[]}}')
    assert isinstance(as_str, ResponseReceived)
    assert as_str.request_id == "7"


def test_our_ids_are_never_reused_while_in_flight_nor_null_nor_float() -> None:
    pair = Pair()
    pair.handshake()
    first, _ = pair.client.send_request("ping", request_id=2)
    second, _ = pair.client.send_request("ping")
    third, _ = pair.client.send_request("ping")
    assert len({first, second, third}) == 3
    with pytest.raises(LocalProtocolError, match="in flight"):
        pair.client.send_request("ping", request_id=2)
    for bad in (None, 1.5, True):
        if bad is None:
            continue  # None means "allocate one"
        with pytest.raises(LocalProtocolError):
            pair.client.send_request("ping", request_id=bad)  # type: ignore[arg-type]


def test_a_bytearray_is_copied_before_decoding() -> None:
    # msgspec.Raw values are views into their input: a reused buffer must not leak in.
    pair = Pair()
    pair.handshake()
    buffer = bytearray(b'{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"a"}}')
    [event] = pair.server.receive(buffer)  # type: ignore[arg-type]
    buffer[:] = b"x" * len(buffer)
    assert isinstance(event, RequestReceived)
    assert event.params.name == "a"


# -------------------------------------------------------------- encoding


def test_encoders_write_compact_single_line_json() -> None:
    params = types.CallToolRequestParams(name="t", arguments={"text": "a\nb"})
    data = jsonrpc.encode_request(1, "tools/call", params)
    assert b"\n" not in data
    assert data == (
        b'{"jsonrpc":"2.0","id":1,"method":"tools/call",'
        b'"params":{"name":"t","arguments":{"text":"a\\nb"}}}'
    )
    assert jsonrpc.encode_notification("notifications/initialized") == (
        b'{"jsonrpc":"2.0","method":"notifications/initialized"}'
    )
    assert jsonrpc.encode_error_response(None, -32700, "Parse error") == (
        b'{"jsonrpc":"2.0","error":{"code":-32700,"message":"Parse error"}}'
    )


# ------------------------------------------------------------- custom methods


class EchoParams(msgspec.Struct, kw_only=True):
    text: str
    meta: dict[str, Any] | msgspec.UnsetType = msgspec.field(default=msgspec.UNSET, name="_meta")


class EchoResult(types.Result, kw_only=True):
    text: str


ECHO = MethodSpec("acme/echo", EchoParams, EchoResult, Direction.CLIENT_TO_SERVER)
NUDGE = MethodSpec("acme/nudge", types.NotificationParams, None, Direction.SERVER_TO_CLIENT)


@pytest.mark.parametrize("era", ["legacy", "modern"])
def test_users_register_their_own_methods(era: str) -> None:
    methods = DEFAULT_METHODS.with_methods(ECHO, NUDGE)
    client = Connection(CLIENT, methods=methods)
    server = Connection(SERVER, methods=methods)
    if era == "legacy":
        pair = Pair()
        pair.client, pair.server = client, server
        pair.handshake()
    else:
        client.start_modern()
    request_id, data = client.send_request("acme/echo", EchoParams(text="hi"))
    [request] = server.receive(data)
    assert isinstance(request, RequestReceived)
    assert request.params.text == "hi"
    [response] = client.receive(server.send_result(request_id, EchoResult(text="hi")) or b"")
    assert isinstance(response, ResponseReceived)
    assert response.result.text == "hi"
    assert (response.result.result_type == "complete") is (era == "modern")
    if era == "legacy":
        [nudge] = client.receive(server.send_notification("acme/nudge"))
        assert isinstance(nudge, NotificationReceived)
    # an unregistered connection does not know the method
    plain = Connection(SERVER)
    assert only_event(plain.receive(data)).code in (-32601, -32600)


def test_a_method_table_rejects_duplicates() -> None:
    with pytest.raises(ValueError, match="twice"):
        type(DEFAULT_METHODS)([ECHO, ECHO])
    assert DEFAULT_METHODS.with_methods(ECHO)["acme/echo"] is ECHO
    assert "acme/echo" not in DEFAULT_METHODS


@pytest.mark.parametrize(
    ("data", "expected"),
    [
        (b'{"jsonrpc":"2.0","id":1,"result":{}}', 1),
        (b'{"jsonrpc":"2.0","id":-3,"result":{}}', -3),
        (b'{"jsonrpc":"2.0","id":"a","result":{}}', "a"),
        (b'{"jsonrpc":"2.0","id":"7","result":{}}', "7"),
        # anything else is for the general path to read
        (b'{"jsonrpc":"2.0","id":"a\\"b","result":{}}', None),
        (b'{"jsonrpc":"2.0","id":1,"error":{}}', None),
        (b'{"jsonrpc":"2.0","id":1.5,"result":{}}', None),
        (b'{"jsonrpc":"2.0","id":null,"result":{}}', None),
        (b'{"id":1,"jsonrpc":"2.0","result":{}}', None),
        (b'{"jsonrpc": "2.0", "id": 1, "result": {}}', None),
        (b'{"jsonrpc":"2.0","id":"unterminated', None),
        (b'{"jsonrpc":"2.0","id":12', None),
    ],
)
def test_peek_result_id_reads_only_the_usual_shape(data: bytes, expected: object) -> None:
    peeked = jsonrpc.peek_result_id(data)
    assert peeked == expected
    assert type(peeked) is type(expected)
