"""What hostile or careless clients send an MCP server: what the servers' hostile tests draw.

`tests/transports/test_asgi_hostile.py` hands `requests` to `transports.AsgiApp` as ASGI
scopes; `tests/transports/test_http_server_hostile.py` writes them to
`transports.serve_http` as raw HTTP/1.1; `tests/transports/test_stream_server_hostile.py`
writes `stream_messages` (one message each, of either era, often as sent, else broken)
to the stdio and WebSocket servers. A `Request` is what a client of each era
sends (a 2026-07-28 call or other request, a 2025-11-25 session's POST or GET, a
2024-11-05 stream's POST), often as sent, else with faults: fields changed, dropped or
repeated (any bytes), the body broken (cut, a byte changed, bytes put in, a batch,
nesting past the bound, a body past the limit, raw bytes), a wrong Content-Length, a
body that stops coming, a client that leaves as the answer starts, another method or
path. Placeholders in fields and query (`SESSION`, `SSE_SESSION`) stand for what earlier
answers gave (`Seen`), so that a sequence meets a live session and stream.

`check_answer` is what every HTTP answer must be, whichever server gave it;
`check_message` what every message a stream server sends must be.
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass, field
from typing import Any, Final

import anyio
from hypothesis import strategies as st

from tests.core.test_fuzz import json_values

__all__ = [
    "MODERN",
    "PRIMERS",
    "SESSION",
    "SSE_SESSION",
    "STREAM",
    "STREAM_OPENINGS",
    "Fields",
    "Request",
    "Seen",
    "check_answer",
    "check_message",
    "head_fields",
    "requests",
    "stream_messages",
]

MODERN: Final = "2026-07-28"
VERSIONS: Final = [MODERN, "2025-11-25", "2025-06-18", "2025-03-26", "2024-11-05"]
META: Final = {
    "io.modelcontextprotocol/protocolVersion": MODERN,
    "io.modelcontextprotocol/clientCapabilities": {},
}
#: Placeholders a generated field may hold, filled from what earlier answers gave.
SESSION, SSE_SESSION = "<session>", "<sse session>"
SSE_ENDPOINT: Final = re.compile(rb"sessionId=([^\s&\"]+)")
_NESTED_HEAD: Final = b'{"jsonrpc":"2.0","id":1,"method":"ping","params":'
#: What a Python traceback shows of the code it went through.
_TRACEBACK: Final = re.compile(rb'Traceback \(most recent call last\)|File "[^"]*", line \d')

# ------------------------------------------------------------------ the grammar

_tool_names = st.sampled_from(
    ["test_simple_text", "test_tool_with_progress", "test_error_handling", "nope", ""]
)
_rpc_methods = st.sampled_from(
    [
        "tools/call",
        "tools/list",
        "resources/list",
        "resources/read",
        "resources/templates/list",
        "prompts/list",
        "prompts/get",
        "completion/complete",
        "initialize",
        "ping",
        "subscriptions/listen",
        "tasks/get",
        "logging/setLevel",
        "notifications/initialized",
        "notifications/cancelled",
        "bogus/method",
    ]
)
_metas = st.one_of(
    st.just(META),
    st.fixed_dictionaries(
        {"io.modelcontextprotocol/protocolVersion": st.sampled_from([*VERSIONS, "9999-01-01"])}
    ),
    json_values,
)
_params = st.fixed_dictionaries(
    {},
    optional={
        "name": _tool_names | st.text(max_size=8),
        "arguments": json_values,
        "_meta": _metas,
        "uri": st.sampled_from(["test://static-text", "file:///etc/passwd", "::"]),
        "protocolVersion": st.sampled_from(VERSIONS),
        "capabilities": st.just({}),
        "clientInfo": st.just({"name": "fuzz", "version": "1"}),
    },
)
_messages = st.fixed_dictionaries(
    {"jsonrpc": st.sampled_from(["2.0", "2.0", "1.0"])},
    optional={
        "id": st.integers() | st.text(max_size=6) | st.none() | st.floats() | json_values,
        "method": _rpc_methods | st.text(max_size=10),
        "params": _params | json_values,
        "result": json_values,
    },
)


def _request(request_id: int, method: str, params: dict[str, Any]) -> bytes:
    message = {"jsonrpc": "2.0", "id": request_id, "method": method, "params": params}
    return json.dumps(message).encode()


def _valid_call() -> bytes:
    """A 2026-07-28 call of the plain text tool, as a client sends it."""
    return _request(1, "tools/call", {"name": "test_simple_text", "arguments": {}, "_meta": META})


def _initialize(version: str) -> bytes:
    params = {
        "protocolVersion": version,
        "capabilities": {},
        "clientInfo": {"name": "fuzz", "version": "1"},
    }
    return _request(0, "initialize", params)


Fields = list[tuple[bytes, bytes]]
_BASE: Final[Fields] = [
    (b"host", b"127.0.0.1:8000"),
    (b"content-type", b"application/json"),
    (b"accept", b"application/json, text/event-stream"),
]


def _modern_fields(method: str, name: str | None) -> Fields:
    fields = [*_BASE, (b"mcp-protocol-version", MODERN.encode()), (b"mcp-method", method.encode())]
    return fields if name is None else [*fields, (b"mcp-name", name.encode())]


@st.composite
def _exchanges(draw: st.DrawFn) -> tuple[str, str, bytes, Fields, bytes]:
    """What a client sends: method, path, query, fields and body, each era's way."""
    kind = draw(st.sampled_from(["call", "call", "modern", "initialize", "legacy", "sse", "get"]))
    if kind == "call":
        return "POST", "/mcp", b"", _modern_fields("tools/call", "test_simple_text"), _valid_call()
    if kind == "modern":
        message = draw(_messages)
        drawn = message.get("params")
        params = {**(drawn if isinstance(drawn, dict) else {}), "_meta": META}
        message["params"] = params
        method = message.get("method")
        name = params.get("name")
        fields = _modern_fields(
            method if isinstance(method, str) else "ping", name if isinstance(name, str) else None
        )
        return "POST", "/mcp", b"", fields, json.dumps(message).encode()
    if kind == "initialize":
        return "POST", "/mcp", b"", list(_BASE), _initialize(draw(st.sampled_from(VERSIONS[1:])))
    session = [(b"mcp-session-id", SESSION.encode()), (b"mcp-protocol-version", b"2025-11-25")]
    if kind == "legacy":
        return "POST", "/mcp", b"", _BASE + session, json.dumps(draw(_messages)).encode()
    if kind == "sse":  # (2024-11-05: a POST to the stream's endpoint)
        query = b"sessionId=" + SSE_SESSION.encode()
        return "POST", "/mcp", query, list(_BASE), json.dumps(draw(_messages)).encode()
    accept = [(b"host", b"127.0.0.1:8000"), (b"accept", b"text/event-stream")]
    return "GET", "/mcp", b"", accept + draw(st.sampled_from([[], session])), b""


@st.composite
def _mutated(draw: st.DrawFn, data: bytes) -> bytes:
    """``data`` broken: cut, a byte changed, bytes put in, wrapped, replaced, or too deep."""
    how = draw(st.sampled_from(["cut", "flip", "insert", "batch", "nest", "raw", "large"]))
    at = draw(st.integers(0, max(len(data) - 1, 0)))
    if how == "cut":
        return data[:at]
    if how in ("flip", "insert"):  # (the byte at ``at`` replaced, or bytes put in before it)
        kept = data[at + 1 :] if how == "flip" else data[at:]
        return data[:at] + draw(st.binary(min_size=1, max_size=4)) + kept
    if how == "batch":
        return b"[" + data + b"," + data + b"]"
    if how == "nest":
        depth = draw(st.integers(1, 400))
        return _NESTED_HEAD + b"[" * depth + b"]" * depth + b"}"
    if how == "large":
        return b'{"a":"' + b"x" * draw(st.integers(4000, 9000)) + b'"}'
    return draw(st.binary(max_size=64))


_field_values = st.binary(max_size=12) | st.text(max_size=12).map(lambda t: t.encode("utf-8"))
#: What a changed field may become.
_OTHER_VALUES: Final[dict[bytes, list[bytes]]] = {
    b"host": [b"localhost", b"evil.example", b""],
    b"origin": [b"http://127.0.0.1:8000", b"http://evil.example", b"null"],
    b"content-type": [b"application/json; charset=utf-8", b"text/plain"],
    b"accept": [b"application/json", b"text/event-stream", b"*/*"],
    b"mcp-protocol-version": [v.encode() for v in VERSIONS],
    b"mcp-method": [b"tools/call", b"tools/list", b"initialize"],
    b"mcp-name": [b"test_simple_text", b"nope"],
    b"mcp-session-id": [SESSION.encode(), b"not-a-session"],
    b"last-event-id": [b"0", b"1/2", b"garbage"],
    b"authorization": [b"Bearer x", b"Basic eA=="],
    b"transfer-encoding": [b"chunked"],
}
_field_names = st.sampled_from(sorted(_OTHER_VALUES)) | st.binary(min_size=1, max_size=8).map(
    bytes.lower
)
#: The faults a request may have, besides its body's (``length``: its Content-Length).
_FAULTS: Final = ["field", "field", "drop", "repeat", "body", "length", "stall", "leave", "route"]


@dataclass
class Request:
    """One generated request: what an ASGI server hands the app, and how its client acts."""

    method: str
    path: str
    query: bytes
    fields: Fields
    body: bytes
    cuts: list[int] = field(default_factory=list)
    length: str = "right"  # ("wrong", "none", "two", "text"): the Content-Length sent
    stall: bool = False  # (the body's last piece never comes)
    leave_early: bool = False  # (the client leaves as soon as the answer starts)


def _fault(draw: st.DrawFn, request: Request, fault: str) -> None:
    """Give ``request`` the ``fault``."""
    fields = request.fields
    if fault == "field":
        name = draw(_field_names)
        value = draw(st.sampled_from(_OTHER_VALUES.get(name, [b""])) | _field_values)
        request.fields = [f for f in fields if f[0] != name] + [(name, value)]
    elif fault == "drop" and fields:
        del fields[draw(st.integers(0, len(fields) - 1))]
    elif fault == "repeat" and fields:
        fields.append(fields[draw(st.integers(0, len(fields) - 1))])
    elif fault == "body":
        request.body = draw(_mutated(request.body))
    elif fault == "length":
        request.length = draw(st.sampled_from(["wrong", "none", "two", "text"]))
    elif fault == "stall":
        request.stall = True
    elif fault == "leave":
        request.leave_early = True
    elif fault == "route":
        request.method = draw(st.sampled_from(["GET", "POST", "DELETE", "PUT", "HEAD", "BREW"]))
        request.path = draw(st.sampled_from(["/mcp/", "/", "/other", "/mcp/../mcp", "/mcp"]))
        request.query = draw(st.sampled_from([b"", b"sessionId=x", b"%ff", b"a=1&a=2"]))


@st.composite
def requests(draw: st.DrawFn) -> Request:
    """A client's request, often as sent, else with a few faults (or many)."""
    method, path, query, fields, body = draw(_exchanges())
    request = Request(method, path, query, fields, body)
    most = draw(st.sampled_from([0, 2, 6]))
    for fault in draw(st.lists(st.sampled_from(_FAULTS), max_size=most)):
        _fault(draw, request, fault)
    request.fields = list(draw(st.permutations(request.fields)))
    body = request.body
    request.cuts = sorted(draw(st.lists(st.integers(0, max(len(body), 1)), max_size=3)))
    return request


@dataclass
class Seen:
    """What earlier answers gave the placeholders (a session, a 2024-11-05 stream's).

    Make it in the running event loop (its event is the running library's).
    """

    session: bytes = b"none"
    sse_session: bytes = b"none"
    streaming: anyio.Event = field(default_factory=anyio.Event)  # (sse_session is known)

    def remember(self, headers: Fields, body: bytes) -> None:
        """Keep what an answer's fields and body (so far) give the placeholders."""
        for name, value in headers:
            if name.lower() == b"mcp-session-id":
                self.session = value
        found = SSE_ENDPOINT.search(body)
        if found:
            self.sse_session = found.group(1)
            self.streaming.set()


def head_fields(request: Request, seen: Seen) -> Fields:
    """The request's fields, placeholders filled, with the Content-Length it sends."""
    session = SESSION.encode()
    fields = [(name, seen.session if value == session else value) for name, value in request.fields]
    length = str(len(request.body)).encode()
    if request.length == "right":
        fields.append((b"content-length", length))
    elif request.length == "wrong":
        fields.append((b"content-length", str(len(request.body) + 7).encode()))
    elif request.length == "two":
        fields += [(b"content-length", length), (b"content-length", b"1")]
    elif request.length == "text":
        fields.append((b"content-length", b"12a"))
    return fields


_INITIALIZED: Final = b'{"jsonrpc":"2.0","method":"notifications/initialized"}'
#: What every example starts with: a 2026-07-28 call (the heads it teaches meet what
#: follows), a 2025-11-25 session opened (its id fills `SESSION`).
PRIMERS: Final = [
    Request("POST", "/mcp", b"", _modern_fields("tools/call", "test_simple_text"), _valid_call()),
    Request("POST", "/mcp", b"", list(_BASE), _initialize("2025-11-25")),
    Request(
        "POST",
        "/mcp",
        b"",
        [*_BASE, (b"mcp-session-id", SESSION.encode()), (b"mcp-protocol-version", b"2025-11-25")],
        _INITIALIZED,
    ),
]
#: A 2024-11-05 client's stream, open while the example runs (its session fills
#: `SSE_SESSION`).
STREAM: Final = Request(
    "GET", "/mcp", b"", [(b"host", b"127.0.0.1:8000"), (b"accept", b"text/event-stream")], b""
)


def check_answer(
    method: str, status: int, headers: Fields, body: bytes, *, complete: bool, left: bool
) -> None:
    """What the server sent ``method`` is a well-formed answer (``complete``: it ended).

    No 500 (the server's own failure), no traceback, JSON where it says JSON; an answer
    that did not end must be one whose client left (``left``).
    """
    assert 100 <= status <= 599
    assert status != 500, body
    assert complete or left, "the answer never ended while its client stayed"
    assert not _TRACEBACK.search(body), body
    kind = {name.lower(): value for name, value in headers}.get(b"content-type", b"")
    if complete and kind.startswith(b"application/json") and method != "HEAD":
        json.loads(body)


# ------------------------------------------------------------ stream transports


#: Tools of the everything server that take a while: they sleep, or ask the client
#: something (legacy: a request to the client; 2026-07-28: input required).
_SLOW_TOOLS: Final = ["test_tool_with_progress", "test_sampling", "test_elicitation"]


@st.composite
def stream_messages(draw: st.DrawFn) -> list[bytes]:
    """A client's next move on a stdio or WebSocket connection: one message, or a few.

    Either era's messages: a handshake (``initialize`` of a legacy version, then
    ``notifications/initialized``), a 2026-07-28 call or other request, a message of the
    legacy era, a call of a tool that takes a while, a cancellation, an answer to the
    server's request; or such a call and then its cancellation, in one move. Each is
    often as sent, else broken. Ids 0 and 1 are drawn often, so that requests in flight
    meet their cancellation, an id used again, and answers. A sequence of moves meets
    more state after one of the `STREAM_OPENINGS`.
    """
    kind = draw(
        st.sampled_from(
            [
                *["initialize", "initialized", "call", "modern", "legacy", "answer"],
                *["slow", "cancel", "cancelled"],
            ]
        )
    )
    if kind == "cancelled":  # (a call that takes a while, and its cancellation)
        call = draw(_stream_message("slow"))
        cancel = _cancellation(call["id"])
        return [draw(_maybe_broken(json.dumps(message).encode())) for message in (call, cancel)]
    if kind == "initialize":
        data = _initialize(draw(st.sampled_from(VERSIONS[1:])))
    elif kind == "initialized":
        data = _INITIALIZED
    elif kind == "call":
        data = _valid_call()
    else:
        data = json.dumps(draw(_stream_message(kind))).encode()
    return [draw(_maybe_broken(data))]


@st.composite
def _maybe_broken(draw: st.DrawFn, data: bytes) -> bytes:
    broken = draw(st.sampled_from([False, False, False, True]))  # (integers() favour bounds)
    return draw(_mutated(data)) if broken else data


def _cancellation(request_id: Any) -> dict[str, Any]:
    params = {"requestId": request_id, "reason": "drawn"}
    return {"jsonrpc": "2.0", "method": "notifications/cancelled", "params": params}


_small_ids = st.sampled_from([0, 0, 1])  # (few, so that they meet)


@st.composite
def _stream_message(draw: st.DrawFn, kind: str) -> dict[str, Any]:
    """A drawn message of ``kind`` (see `stream_messages`), as a JSON object."""
    if kind == "slow":
        # (Its _meta makes it a 2026-07-28 request; a legacy session takes it as metadata.)
        meta = draw(st.sampled_from([META, {**META, "progressToken": 1}]))
        params = {"name": draw(st.sampled_from(_SLOW_TOOLS)), "arguments": {}, "_meta": meta}
        return {"jsonrpc": "2.0", "id": draw(_small_ids), "method": "tools/call", "params": params}
    if kind == "cancel":
        return _cancellation(draw(_small_ids | json_values))
    if kind == "answer":  # (to a request of the server's, or to none)
        outcomes: list[dict[str, Any]] = [{"result": {}}, {"error": {"code": -1, "message": "no"}}]
        outcome = draw(st.sampled_from(outcomes))
        return {"jsonrpc": "2.0", "id": draw(_small_ids | json_values), **outcome}
    message: dict[str, Any] = draw(_messages)
    if kind == "modern":
        drawn = message.get("params")
        message["params"] = {**(drawn if isinstance(drawn, dict) else {}), "_meta": META}
    if "id" in message and draw(st.booleans()):
        message["id"] = draw(_small_ids)
    return message


#: How a stream client begins (a sequence of `stream_messages` follows): not at all, the
#: legacy handshake, a 2026-07-28 call.
STREAM_OPENINGS: Final = {
    "none": [],
    "legacy": [_initialize("2025-11-25"), _INITIALIZED],
    "modern": [_valid_call()],
}


def check_message(data: bytes) -> None:
    """What a stream server sent is a well-formed JSON-RPC message (or batch), no traceback."""
    assert not _TRACEBACK.search(data), data
    decoded = json.loads(data)
    for message in decoded if isinstance(decoded, list) else [decoded]:
        assert isinstance(message, dict), data
        assert message.get("jsonrpc") == "2.0", data
