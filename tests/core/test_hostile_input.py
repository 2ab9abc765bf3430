"""Hostile input of any shape and nesting gets a protocol answer, and the conversation goes on.

The fuzz invariant of `tests.core.test_fuzz` (only events or `RemoteProtocolError` come
out of `Connection.receive`), pushed to arbitrary nesting: deep arrays and objects,
valid or cut short, at the top, in params, in ``_meta``, in an unknown member, in a
result or error data, in a batch, with strings full of brackets, fed to both roles in
both eras. Past `MAX_JSON_DEPTH` nothing is decoded: a request gets -32700 with its id,
an answer to one of our requests ends it unusable. After every input the same
connection still answers a valid request. Then the second-order siblings: what a server
does with a value that deep (a handler echoing it, a result that can't be encoded).
"""

from __future__ import annotations

import asyncio
import json
import random
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import hypothesis.strategies as st
import pytest
from hypothesis import HealthCheck, given, settings

from mcpcore import (
    MAX_JSON_DEPTH,
    Connection,
    ErrorReceived,
    Event,
    InvalidMessage,
    InvalidResponse,
    LocalProtocolError,
    NotificationReceived,
    ProgressReceived,
    RequestReceived,
    ResponseReceived,
    jsonrpc,
    types,
)
from mcpcore.http import error_in_body, read_modern_request
from mcpcore.server import Server
from tests.core.pair import Pair
from tests.core.test_fuzz import feed

HOSTILE = settings(max_examples=300, deadline=None, suppress_health_check=list(HealthCheck))
PENDING = 1  # the id of the request a client has in flight when the input arrives


# --------------------------------------------------------------- the connections


@dataclass
class Side:
    """One connection in a given role and era, and how to prove it still works."""

    name: str
    connection: Connection
    check: Callable[[], None]


def _server(version: str | None) -> Side:
    pair = Pair()
    if version is None:
        pair.go_modern()
    else:
        pair.handshake(version)

    def still_answers() -> None:
        # A fresh request from the client is received, answered, and the answer read.
        request_id, data = pair.client.send_request("tools/list")
        [event] = pair.server.receive(data)
        assert isinstance(event, RequestReceived), event
        reply = pair.server.send_result(request_id, types.ListToolsResult(tools=[]))
        assert reply is not None
        [answer] = pair.client.receive(reply)
        assert isinstance(answer, ResponseReceived), answer

    return Side(f"server {version or 'modern'}", pair.server, still_answers)


def _client(modern: bool) -> Side:
    pair = Pair()
    if modern:
        pair.go_modern()
    else:
        pair.handshake()
    client = pair.client
    client.send_request("tools/call", types.CallToolRequestParams(name="t"), request_id=PENDING)

    def still_answers() -> None:
        # A new request of ours gets its answer.
        request_id, data = client.send_request("tools/list", request_id="after")
        [event] = pair.server.receive(data)
        assert isinstance(event, RequestReceived), event
        reply = pair.server.send_result(request_id, types.ListToolsResult(tools=[]))
        assert reply is not None
        [answer] = client.receive(reply)
        assert isinstance(answer, ResponseReceived), answer

    return Side(f"client {'modern' if modern else 'legacy'}", client, still_answers)


def sides() -> list[Side]:
    """Both roles, both eras (and the one legacy revision with batches)."""
    return [
        _server("2025-11-25"),
        _server("2025-03-26"),
        _server(None),
        _client(modern=False),
        _client(modern=True),
    ]


def receive(side: Side, data: bytes) -> list[Event]:
    """`feed` (only events or RemoteProtocolError; every reply a valid message), then
    the connection must still work."""
    events = feed(side.connection, data)
    side.check()
    return events


# ------------------------------------------------------------------ the input


@dataclass(frozen=True)
class Placement:
    """Where the deep value goes in a message, and how many levels it adds there."""

    name: str
    before: bytes
    after: bytes
    levels: int


PLACEMENTS = [
    Placement("top", b"", b"", 0),
    Placement(
        "arguments",
        b'{"jsonrpc":"2.0","id":"g","method":"tools/call","params":{"name":"t","arguments":{"a":',
        b"}}}",
        3,
    ),
    Placement(
        "meta", b'{"jsonrpc":"2.0","id":"g","method":"ping","params":{"_meta":{"x":', b"}}}", 3
    ),
    Placement("unknown member", b'{"jsonrpc":"2.0","id":"g","method":"ping","x":', b"}", 1),
    Placement("unusual order", b'{"method":"ping","id":"g","jsonrpc":"2.0","params":', b"}", 1),
    Placement(
        "notification",
        b'{"jsonrpc":"2.0","method":"notifications/message","params":{"level":"info","data":',
        b"}}",
        2,
    ),
    Placement(
        "result",
        b'{"jsonrpc":"2.0","id":%d,"result":{"content":[],"structuredContent":' % PENDING,
        b"}}",
        2,
    ),
    Placement(
        "error data",
        b'{"jsonrpc":"2.0","id":%d,"error":{"code":-1,"message":"m","data":' % PENDING,
        b"}}",
        2,
    ),
    Placement("batch", b'[{"jsonrpc":"2.0","id":"g","method":"ping","params":{"x":', b"}}]", 3),
]

OPENERS = {"[": (b"[", b"]"), "s": (b'["]}",', b"]"), "{": (b'{"k]":', b"}")}


def deep_value(depth: int, shape: str, seed: int, leaf: bytes) -> bytes:
    """``depth`` levels of arrays and objects (the kinds drawn from ``shape``), closed.

    Some levels start with a string full of closing brackets, and object keys hold one,
    to trip any reading that forgets strings.
    """
    pick = random.Random(seed).choice
    levels = [OPENERS[pick(shape)] for _ in range(depth)]
    return b"".join(o for o, _ in levels) + leaf + b"".join(c for _, c in reversed(levels))


@st.composite
def nestings(draw: st.DrawFn) -> tuple[Placement, bytes, int | None]:
    """A message with deep nesting somewhere: (where, bytes, its depth or None if broken)."""
    placement = draw(st.sampled_from(PLACEMENTS))
    edge = MAX_JSON_DEPTH - placement.levels
    depth = draw(
        st.sampled_from(["shallow", "edge", "deep", "huge"]).flatmap(
            lambda regime: {
                "shallow": st.integers(0, 30),
                "edge": st.integers(edge - 2, edge + 2),
                "deep": st.integers(edge + 1, 3000),
                "huge": st.integers(5000, 20_000),
            }[regime]
        )
    )
    shape = draw(st.sampled_from(["[", "{", "s", "[{", "[{s"]))
    leaf = draw(st.sampled_from([b"1", b'"]]}"', b"[]", b"{}", b'"\\"]"']))
    value = deep_value(depth, shape, draw(st.integers(0, 2**16)), leaf)
    data = placement.before + value + placement.after
    if draw(st.sampled_from(["valid", "valid", "broken"])) == "valid":
        return placement, data, placement.levels + depth + (leaf in (b"[]", b"{}"))
    # Broken: cut anywhere, or garbage of any bytes after (or instead of) the end.
    cut = draw(st.integers(0, len(data)))
    return placement, data[:cut] + draw(st.binary(max_size=40)), None


UNDECODED = (RequestReceived, NotificationReceived, ResponseReceived, ErrorReceived)


@HOSTILE
@given(case=nestings())
def test_any_nesting_gets_a_protocol_answer_and_the_connection_goes_on(
    case: tuple[Placement, bytes, int | None],
) -> None:
    placement, data, depth = case
    for side in sides():
        events = receive(side, data)
        if depth is None or depth <= MAX_JSON_DEPTH:
            continue
        # Past the limit nothing is decoded: no request, notification or answer is seen.
        assert not [e for e in events if isinstance(e, (*UNDECODED, ProgressReceived))], (
            side.name,
            placement.name,
            events,
        )
        for event in events:
            assert isinstance(event, InvalidMessage | InvalidResponse), event
            if isinstance(event, InvalidMessage):
                assert event.code in (jsonrpc.PARSE_ERROR, jsonrpc.INVALID_REQUEST), event


# Any bytes after a run of openers of any length: the shapes a parser meets at depth.
bracket_soup = st.text(alphabet=st.sampled_from(list('[]{}",:1 \\x')), max_size=400)
deep_garbage = st.builds(
    lambda opener, count, tail: opener * count + tail,
    st.sampled_from([b"[", b'{"a":', b'[{"]":', b" [ "]),
    st.integers(0, 3000),
    st.binary(max_size=200) | bracket_soup.map(str.encode),
)


@HOSTILE
@given(data=st.binary(max_size=300) | deep_garbage)
def test_any_bytes_get_a_protocol_answer_and_the_connection_goes_on(data: bytes) -> None:
    for side in sides():
        receive(side, data)


# ------------------------------------------------- the answers, one by one


def deep(depth: int) -> bytes:
    return b"[" * depth + b"]" * depth


def test_a_deep_request_is_answered_parse_error_with_its_id() -> None:
    server = _server("2025-11-25")
    data = b'{"jsonrpc":"2.0","id":"deep","method":"ping","params":{"x":' + deep(1000) + b"}}"
    [event] = receive(server, data)
    assert isinstance(event, InvalidMessage)
    assert event.code == jsonrpc.PARSE_ERROR
    assert event.request_id == "deep"
    assert event.reply is not None
    assert json.loads(event.reply) == {
        "jsonrpc": "2.0",
        "id": "deep",
        "error": {"code": -32700, "message": jsonrpc.TOO_DEEP.message},
    }


@pytest.mark.parametrize("kind", [b'"result":', b'"error":{"code":1,"message":"m","data":'])
def test_a_deep_answer_ends_our_request_unusable_and_is_not_answered(kind: bytes) -> None:
    client = _client(modern=False)
    data = b'{"jsonrpc":"2.0","id":%d,%b%b}' % (PENDING, kind, deep(1000))
    if kind != b'"result":':
        data += b"}"
    [event] = receive(client, data)
    assert isinstance(event, InvalidResponse)
    assert event.request_id == PENDING
    assert PENDING not in client.connection.pending_requests


def test_a_deep_line_nobody_can_place_is_answered_parse_error_without_an_id() -> None:
    for side in sides():
        [event] = receive(side, deep(1000))
        assert isinstance(event, InvalidMessage)
        assert event.code == jsonrpc.PARSE_ERROR
        assert event.request_id is None
        assert event.reply is not None


def test_the_http_pre_readers_refuse_deep_bodies_unread() -> None:
    # The HTTP server reads a 2026-07-28 body before the Connection (for its header
    # checks); the HTTP client reads error bodies. Neither decodes past the limit.
    body = b'{"jsonrpc":"2.0","id":1,"method":"ping","params":{"_meta":' + deep(1000) + b"}}"
    assert read_modern_request(body) is None
    error = b'{"jsonrpc":"2.0","id":1,"error":{"code":1,"message":"m","data":' + deep(1000)
    assert error_in_body(error + b"}}") is None


# ------------------------------------------------------ second-order siblings


def nested_list(depth: int) -> Any:
    value: Any = 0
    for _ in range(depth):
        value = [value]
    return value


def echo_server() -> tuple[Server, list[Any]]:
    server = Server("echo", "1.0")
    seen: list[Any] = []

    @server.tool()
    def echo(value: Any) -> Any:
        """Returns its argument, as structured output."""
        seen.append(value)
        return {"echo": value}

    return server, seen


def test_a_handler_echoes_arguments_up_to_the_limit_and_never_sees_deeper_ones() -> None:
    server, seen = echo_server()
    pair = Pair()
    pair.server = server.connection()
    pair.handshake()

    # {"jsonrpc"… "params":{"name":…,"arguments":{"value": <value>}}}: 3 levels more.
    arguments = {"value": nested_list(MAX_JSON_DEPTH - 3)}
    params = types.CallToolRequestParams(name="echo", arguments=arguments)
    _, data = pair.client.send_request("tools/call", params)
    [event] = pair.server.receive(data)
    assert isinstance(event, RequestReceived), event
    reply = asyncio.run(server.handle_request(pair.server, event, _NoOutbound()))
    assert seen == [nested_list(MAX_JSON_DEPTH - 3)]
    # The answer holds the value a level deeper than the request did (in
    # structuredContent's "echo"): encoded all the same, and refused by a client whose
    # limit it passes, which ends the call unusable instead of decoding it.
    assert reply is not None
    [answer] = pair.client.receive(reply)
    assert isinstance(answer, InvalidResponse), answer
    # One level more: refused before decoding, so no handler ever runs; so is a value
    # deep enough that decoding it left no stack for the handler (it ran, before).
    for depth in (MAX_JSON_DEPTH + 1, 990):
        value = deep(depth - 3)
        data = b'{"jsonrpc":"2.0","id":%d,"method":"tools/call","params":' % depth
        data += b'{"name":"echo","arguments":{"value":%b}}}' % value
        [refused] = pair.server.receive(data)
        assert isinstance(refused, InvalidMessage)
        assert (refused.code, refused.request_id) == (jsonrpc.PARSE_ERROR, depth)
    assert len(seen) == 1


class _NoOutbound:
    """An Outbound for handlers that never send anything before their answer."""

    async def send(self, data: bytes) -> None:
        raise AssertionError("nothing is sent before the answer")

    async def request(self, request_id: Any, data: bytes) -> Any:
        raise AssertionError("nothing is asked")


@pytest.mark.parametrize("bad", ["deep", "object"])
def test_a_result_that_cant_be_encoded_is_a_local_error_and_leaves_the_request_open(
    bad: str,
) -> None:
    pair = Pair()
    pair.handshake()
    request = pair.request("tools/call", types.CallToolRequestParams(name="t"))
    structured = nested_list(20_000) if bad == "deep" else {"x": object()}
    result = types.CallToolResult(content=[], structured_content=structured)
    with pytest.raises(LocalProtocolError):
        pair.server.send_result(request.request_id, result)
    # Still open: the error that answers it instead goes out.
    reply = pair.server.send_error(request.request_id, jsonrpc.INTERNAL_ERROR, "Internal error")
    [event] = pair.to_client(reply)
    assert isinstance(event, ErrorReceived)


def test_a_server_answers_internal_error_when_a_handler_builds_a_result_too_deep() -> None:
    server = Server("deep", "1.0")
    errors: list[BaseException] = []
    server.on_error = lambda exc, *_: errors.append(exc)

    @server.tool()
    def tower() -> types.CallToolResult:
        """Builds a value deeper than any stack can encode."""
        return types.CallToolResult(content=[], structured_content=nested_list(20_000))

    pair = Pair()
    pair.server = server.connection()
    pair.handshake()
    request = pair.request("tools/call", types.CallToolRequestParams(name="tower"))
    reply = asyncio.run(server.handle_request(pair.server, request, _NoOutbound()))
    [event] = pair.to_client(reply)
    assert isinstance(event, ErrorReceived)
    assert event.error.code == jsonrpc.INTERNAL_ERROR
    assert [type(error) for error in errors] == [LocalProtocolError]
