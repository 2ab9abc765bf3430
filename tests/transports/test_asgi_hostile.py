"""`AsgiApp` under generated requests, valid and hostile: a well-formed answer, never a crash.

"Hostile input of any shape gets a protocol error, never a crash." An ASGI server hands
the app whatever its clients send that HTTP lets through: any method and path, any
header fields and values (repeated, missing, contradicting the body), any body, in any
pieces, from a client that may leave at any time. Hypothesis draws sequences of such
requests against one app, so that what one request leaves behind (a known head, a
session, a 2024-11-05 stream) meets the next; the everything server answers them.

Each request must end (a stalled body meets its deadline, a stream ends when its client
leaves), and whatever the app sent must be one HTTP response: a start with a valid
status and byte fields, then body pieces, the last one final unless the client left
first. No answer is a 500 (the app's own failure), none shows a traceback, and a JSON
answer is JSON. The examples run on trio with a virtual clock, and fewer of them on
asyncio in real time with short deadlines: what differs is how a request is cancelled
(`transports._runtime.primitives.Interruptible`). The real servers' handling of the
same bytes (uvicorn, hypercorn) is ``tests/asgi``'s; this is the app's.
"""

from __future__ import annotations

import itertools
import json
import math
import re
from collections.abc import MutableMapping
from dataclasses import dataclass, field
from typing import Any, Final

import anyio
import pytest
import trio.testing
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from examples.everything import build_server
from tests.transports.test_asgi_app import Exchange
from transports import AsgiApp, HttpLimits

Message = MutableMapping[str, Any]

MODERN: Final = "2026-07-28"
VERSIONS: Final = [MODERN, "2025-11-25", "2025-06-18", "2025-03-26", "2024-11-05"]
META: Final = {
    "io.modelcontextprotocol/protocolVersion": MODERN,
    "io.modelcontextprotocol/clientCapabilities": {},
}
#: Placeholders a generated field may hold, filled from what earlier answers gave.
SESSION, SSE_SESSION = "<session>", "<sse session>"
_SSE_ENDPOINT: Final = re.compile(rb"sessionId=([^\s&\"]+)")
_NESTED_HEAD: Final = b'{"jsonrpc":"2.0","id":1,"method":"ping","params":'
#: What a Python traceback shows of the code it went through.
_TRACEBACK: Final = re.compile(rb'Traceback \(most recent call last\)|File "[^"]*", line \d')

# ------------------------------------------------------------------ the grammar

_json_leaves = st.none() | st.booleans() | st.integers() | st.floats() | st.text(max_size=8)
_json_values = st.recursive(
    _json_leaves,
    lambda inner: (
        st.lists(inner, max_size=3) | st.dictionaries(st.text(max_size=6), inner, max_size=3)
    ),
    max_leaves=8,
)
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
    _json_values,
)
_params = st.fixed_dictionaries(
    {},
    optional={
        "name": _tool_names | st.text(max_size=8),
        "arguments": _json_values,
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
        "id": st.integers() | st.text(max_size=6) | st.none() | st.floats() | _json_values,
        "method": _rpc_methods | st.text(max_size=10),
        "params": _params | _json_values,
        "result": _json_values,
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
    if how in ("cut", "flip", "insert"):
        put = b"" if how == "cut" else draw(st.binary(min_size=1, max_size=4))
        # (cut: all from ``at`` dropped; flip: the byte at ``at`` replaced; insert: put in)
        rest = b"" if how == "cut" else data[at + 1 :] if how == "flip" else data[at:]
        return data[:at] + put + rest
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


# ------------------------------------------------------------------ the client


@dataclass
class Seen:
    """What earlier answers gave the placeholders (a session, a 2024-11-05 stream's)."""

    session: bytes = b"none"
    sse_session: bytes = b"none"
    streaming: anyio.Event = field(default_factory=anyio.Event)  # (sse_session is known)


class Hostile(Exchange):
    """One generated request handed to the app (an `Exchange`), as its client acts.

    Its fields and query get what the placeholders stand for when it is made; the client
    leaves (``hung_up``) once answered, or at once when the answer starts if it leaves
    early, or after `Backend.stay`.
    """

    def __init__(self, request: Request, seen: Seen) -> None:
        body = request.body
        bounds = [0, *request.cuts, len(body)]
        query = request.query.replace(SSE_SESSION.encode(), seen.sse_session)
        pieces = [body[a:b] for a, b in itertools.pairwise(bounds)]
        super().__init__(
            request.method, request.path, pieces=pieces, query=query, stall=request.stall
        )
        self.scope["headers"] = _head(request, seen)
        self.request = request
        self.seen = seen
        self.answered = anyio.Event()

    async def send(self, message: Message) -> None:
        """Record it, and keep what the placeholders stand for; leave if the client would."""
        await super().send(message)
        self._remember()
        if message["type"] == "http.response.start" and self.request.leave_early:
            self.hung_up.set()
        if message["type"] == "http.response.body" and not message.get("more_body", False):
            self.answered.set()

    async def visit(self, app: AsgiApp, stay: float) -> None:
        """Hand the request to ``app``; leave once answered, or after ``stay`` seconds."""
        async with anyio.create_task_group() as group:

            async def leave() -> None:
                with anyio.move_on_after(stay):
                    await self.answered.wait()
                self.hung_up.set()

            group.start_soon(leave)
            await self.through(app)
            group.cancel_scope.cancel()

    def _remember(self) -> None:
        for name, value in self.messages[0].get("headers", ()):
            if name.lower() == b"mcp-session-id":
                self.seen.session = value
        found = _SSE_ENDPOINT.search(self.body)
        if found:
            self.seen.sse_session = found.group(1)
            self.seen.streaming.set()

    def check(self) -> None:
        """What the app sent is one well-formed HTTP response (see the module docstring)."""
        if not self.messages:
            assert self.hung_up.is_set(), "the client stayed, and got no answer"
            return
        start, *pieces = self.messages
        assert start["type"] == "http.response.start"
        status = start["status"]
        assert isinstance(status, int)
        assert 100 <= status <= 599
        assert status != 500, self.body
        headers = start.get("headers", [])
        assert all(isinstance(n, bytes) and isinstance(v, bytes) for n, v in headers)
        assert all(p["type"] == "http.response.body" for p in pieces)
        assert all(isinstance(p.get("body", b""), bytes) for p in pieces)
        assert not any(p.get("more_body", False) is False for p in pieces[:-1])
        complete = bool(pieces) and self.complete
        assert complete or self.hung_up.is_set(), "the answer never ended while its client stayed"
        assert not _TRACEBACK.search(self.body), self.body
        kind = {n.lower(): v for n, v in headers}.get(b"content-type", b"")
        if complete and kind.startswith(b"application/json") and self.request.method != "HEAD":
            json.loads(self.body)


def _head(request: Request, seen: Seen) -> Fields:
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


# ------------------------------------------------------------------ the test


_INITIALIZED: Final = b'{"jsonrpc":"2.0","method":"notifications/initialized"}'
#: What every example starts with: a 2026-07-28 call (the heads it teaches meet what
#: follows), a 2025-11-25 session opened (its id fills `SESSION`).
_PRIMERS: Final = [
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
_STREAM: Final = Request(
    "GET", "/mcp", b"", [(b"host", b"127.0.0.1:8000"), (b"accept", b"text/event-stream")], b""
)


@dataclass(frozen=True)
class Backend:
    """Where examples run: trio on a virtual clock, or asyncio (uvicorn's) in real time.

    Attributes:
        name: anyio's name for the library.
        limits: The app's: small, so that generated heads and bodies reach them.
        stay: Seconds a client stays after its request before it leaves: past the body
            deadline, so that a stalled body met it, and past a keep-alive comment.
        bound: Seconds an example may take (its requests, each bounded by ``stay``).
        examples: How many Hypothesis draws.
    """

    name: str
    limits: HttpLimits
    stay: float
    bound: float
    examples: int

    def run(self, sequence: list[Request]) -> list[Hostile]:
        """Serve ``sequence`` (see `_serve`) on this backend."""
        options = {}
        if self.name == "trio":
            options["clock"] = trio.testing.MockClock(autojump_threshold=0)
        exchanges: list[Hostile] = anyio.run(
            _serve, self, sequence, backend=self.name, backend_options=options
        )
        return exchanges


_SMALL: Final = {"max_body_size": 4096, "max_header_count": 24, "max_header_size": 2048}
BACKENDS: Final = [
    Backend("trio", HttpLimits(**_SMALL, body_timeout=10.0), 120.0, 3600.0, examples=300),
    # (Real time: short deadlines, few draws. The code that differs is the cancellation.)
    Backend(
        "asyncio",
        HttpLimits(**_SMALL, body_timeout=0.2, sse_keepalive_interval=0.1),
        stay=0.3,
        bound=60.0,
        examples=40,
    ),
]


async def _serve(backend: Backend, sequence: list[Request]) -> list[Hostile]:
    """The primers, then ``sequence``, one at a time, beside a 2024-11-05 stream."""
    app = AsgiApp(build_server(anyio.sleep), limits=backend.limits)
    seen = Seen()
    done = []
    with anyio.fail_after(backend.bound):
        async with app.lifespan(), anyio.create_task_group() as group:
            stream = Hostile(_STREAM, seen)
            group.start_soon(stream.visit, app, math.inf)
            await seen.streaming.wait()
            for request in [*_PRIMERS, *sequence]:
                exchange = Hostile(request, seen)
                await exchange.visit(app, backend.stay)
                done.append(exchange)
            stream.hung_up.set()
    return [stream, *done]


def _check(exchanges: list[Hostile]) -> None:
    stream, call, initialize, initialized = exchanges[:4]
    assert [call.status, initialize.status, initialized.status] == [200, 200, 202]
    assert stream.status == 200
    assert b"event: endpoint" in stream.body
    for exchange in exchanges:
        exchange.check()


@pytest.mark.parametrize("backend", BACKENDS, ids=[backend.name for backend in BACKENDS])
def test_every_request_gets_one_well_formed_answer_and_none_crashes(backend: Backend) -> None:
    @settings(
        max_examples=backend.examples,
        deadline=None,
        suppress_health_check=[HealthCheck.too_slow],
    )
    @given(st.lists(requests(), min_size=1, max_size=5))
    def examples(sequence: list[Request]) -> None:
        _check(backend.run(sequence))

    examples()
