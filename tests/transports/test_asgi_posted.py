"""The short way of a 2026-07-28 POST through `AsgiApp` answers exactly as the router's way.

`transports._asgi.posted` hands a POST the router would send straight to the 2026-07-28
endpoint to that endpoint itself; `ModernEndpoint` remembers the requests that passed
its checks (`MAX_REMEMBERED_REQUESTS`); the app answers at once a call whose head the
endpoint answered in one pass before (`transports._asgi.known`). None of them may change
an answer. Hypothesis draws sequences of requests, valid and not (each header right,
wrong, missing or repeated; the envelope whole or not; removed methods; a tool that
mirrors an argument into a header), and each sequence goes through two apps: one as it
is, one whose requests all take the router's way, whose endpoint remembers nothing and
that answers no head at once. Every answer must be the same, byte for byte; and the
short way must have been taken.
"""

from __future__ import annotations

import json
from typing import Any

import anyio
import hypothesis.strategies as st
import pytest
from hypothesis import HealthCheck, given, settings

from examples.everything import build_server
from tests.transports.http_raw import META, MODERN
from tests.transports.test_asgi_app import Exchange
from transports import AsgiApp, ReplyMode
from transports._asgi.known import KnownHeads
from transports._asgi.posted import Shortcut
from transports._http.server import modern

Fields = list[tuple[bytes, bytes]]

#: The tools a passing request may call: synchronous, mirroring an argument into a
#: header, and ``async def`` (`FastCalls.answer_awaited`).
_PASSING = ["test_simple_text", "test_x_mcp_header", "test_trigger_tool_change"]
_TOOLS = [*_PASSING, "no_such_tool", "test_error_handling"]
_METHODS = ["tools/call", "tools/list", "ping", "initialize", "prompts/get", "resources/read"]
_METAS: list[Any] = [
    META,
    {**META, "progressToken": 7},
    {**META, "io.modelcontextprotocol/clientCapabilities": {"roots": {"listChanged": 1}}},
    {"io.modelcontextprotocol/protocolVersion": MODERN},
    {**META, "io.modelcontextprotocol/protocolVersion": "2025-11-25"},
    {**META, "io.modelcontextprotocol/protocolVersion": "2099-01-01"},
    5,
    None,  # (absent)
]


#: Each part of a request, and what it may be: the first value passes every check (with
#: the others at their first value too), the others fail one, or change the request.
_PARTS: dict[str, list[Any]] = {
    "method": ["tools/call", *_METHODS[1:]],
    "name": _TOOLS,
    "meta": _METAS,
    "arguments": [None, {}, {"region": "us-west1"}, {"region": 3}, "x"],
    "id": [1, "a", None, 2**70],
    "body": ["whole", b"{", b"[]", "cut"],
    "host": [b"127.0.0.1:8000", b"evil.example", None],
    "origin": [None, b"http://127.0.0.1:8000", b"http://evil.example"],
    "content-type": [b"application/json", b"application/json; charset=utf-8", b"text/plain"],
    "accept": [b"application/json, text/event-stream", b"text/html", None],
    "mcp-protocol-version": [MODERN.encode(), b" 2026-07-28 ", b"2099-01-01", b"2025-11-25", None],
    "mcp-method": ["same", b"tools/list", None],
    "mcp-name": [
        "same",
        b"=?base64?dGVzdF9zaW1wbGVfdGV4dA==?=",
        b"test_simple_text",
        b"other",
        None,
    ],
    "mcp-param-region": [b"us-west1", None, b"eu"],
    "repeated": [None, b"accept", b"mcp-name", b"host"],
    # (a mount point, then the path: "/mcp" mounted at "/mcp" is that app's "/")
    "target": ["/mcp", "/mcp?x=1", "/other", "/api|/api/mcp", "/mcp|/mcp"],
}
_FIELDS = ["host", "origin", "content-type", "accept", "mcp-protocol-version", "mcp-method"]
_FIELDS += ["mcp-name", "mcp-param-region"]


def _built(choice: dict[str, Any]) -> tuple[str, Fields, bytes]:
    """A POST from the value of each part: its target, its header fields, its body."""
    method, name, meta = choice["method"], choice["name"], choice["meta"]
    params: dict[str, Any] = {"name": name} if method != "resources/read" else {"uri": name}
    if meta is not None:
        params["_meta"] = meta
    if choice["arguments"] is not None:
        params["arguments"] = choice["arguments"]
    message: dict[str, Any] = {"jsonrpc": "2.0", "method": method, "params": params}
    if choice["id"] is not None:
        message["id"] = choice["id"]
    body = json.dumps(message).encode()
    body = {"whole": body, "cut": body[:-1]}.get(choice["body"], choice["body"])
    same = {"mcp-method": method.encode(), "mcp-name": name.encode()}
    fields: Fields = []
    for field in _FIELDS:
        value = choice[field]
        value = same[field] if value == "same" else value
        if value is not None:
            fields.append((field.encode(), value))
    repeated = [pair for pair in fields if pair[0] == choice["repeated"]]
    fields += repeated[:1]
    fields.append((b"content-length", str(len(body)).encode()))
    return choice["target"], fields, body


@st.composite
def _sequence(draw: st.DrawFn) -> list[tuple[str, Fields, bytes]]:
    """A passing request, then requests that each differ from it in a part or two."""
    base = {part: values[0] for part, values in _PARTS.items()}
    base["name"] = draw(st.sampled_from(_PASSING))
    exchanges = [_built(base)]
    for _ in range(draw(st.integers(1, 5))):
        choice = dict(base)
        parts = st.lists(st.sampled_from(sorted(_PARTS)), min_size=1, max_size=2, unique=True)
        for part in draw(parts):
            choice[part] = draw(st.sampled_from(_PARTS[part][1:]))
        target, fields, body = _built(choice)
        exchanges.append((target, draw(st.permutations(fields)), body))
    return exchanges


def _request(target: str, fields: Fields, body: bytes) -> Exchange:
    root, _, target = target.rpartition("|")
    path, _, query = target.partition("?")
    exchange = Exchange("POST", path, body=body, query=query.encode(), root_path=root)
    exchange.scope["headers"] = fields
    return exchange


def _answer(exchange: Exchange) -> tuple[int, list[Any], bytes]:
    """The status, header fields and body (a legacy session's random id left out)."""
    start, *rest = exchange.messages
    fields = [(k, b"<id>" if k == b"mcp-session-id" else v) for k, v in start["headers"]]
    return start["status"], fields, b"".join(m.get("body", b"") for m in rest)


class _RouterOnly(modern.ModernEndpoint):
    """The endpoint as it was: every request checked afresh."""

    def _verdict_key(self, peeked: Any, request: Any) -> None:
        return None


async def _both(exchanges: list[tuple[str, Fields, bytes]], replies: ReplyMode = "auto") -> None:
    short = AsgiApp(build_server(anyio.sleep), replies=replies)
    general = AsgiApp(build_server(anyio.sleep), replies=replies)
    async with short.lifespan(), general.lifespan():
        running = general._running
        assert running is not None
        router = running.router
        router.modern = _RouterOnly(general.server, stream_backlog=16, replies=replies)
        router.modern.fast = None
        running.known = KnownHeads(None, general.limits)  # (no head answered at once)
        for target, fields, body in exchanges:
            posted_way = await _request(target, fields, body).through(short)
            with pytest.MonkeyPatch.context() as patch:
                patch.setattr(Shortcut, "take", lambda *_: None)
                router_way = await _request(target, fields, body).through(general)
            assert _answer(posted_way) == _answer(router_way), (target, fields, body)


_SINGLE_CHANGES = [
    (tool, part, value) for tool in _PASSING for part in _PARTS for value in _PARTS[part][1:]
]


@pytest.mark.parametrize(("tool", "part", "value"), _SINGLE_CHANGES)
def test_one_change_after_a_passing_request(tool: str, part: str, value: Any) -> None:
    """Every request one part away from a passing one: the memo must not pass it."""
    base = {part: values[0] for part, values in _PARTS.items()}
    base["name"] = tool
    changed = {**base, part: value}
    anyio.run(_both, [_built(base), _built(changed), _built(base)])


@settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(_sequence(), st.sampled_from(["auto", "json", "stream"]))
def test_the_short_way_answers_as_the_router(
    exchanges: list[tuple[str, Fields, bytes]], replies: ReplyMode
) -> None:
    """Random pairs of changes, in each ``replies`` mode (a stream of one event, or JSON)."""
    anyio.run(_both, exchanges, replies)


def _tool_call(name: str, arguments: dict[str, Any] | None = None) -> tuple[bytes, Fields]:
    """A valid 2026-07-28 ``tools/call`` of ``name``: its body and header fields."""
    params: dict[str, Any] = {"name": name, "_meta": META}
    if arguments is not None:
        params["arguments"] = arguments
    message = {"jsonrpc": "2.0", "id": 1, "method": "tools/call", "params": params}
    fields: Fields = [
        (b"content-type", b"application/json"),
        (b"accept", b"application/json, text/event-stream"),
        (b"mcp-protocol-version", MODERN.encode()),
        (b"mcp-method", b"tools/call"),
        (b"mcp-name", name.encode()),
        (b"host", b"127.0.0.1:8000"),
    ]
    return json.dumps(message).encode(), fields


def test_the_short_way_is_taken_and_remembers() -> None:
    """A valid call goes the short way, and its checks are remembered once passed."""
    body, fields = _tool_call("test_simple_text")

    async def main() -> None:
        app = AsgiApp(build_server(anyio.sleep))
        seen: list[object] = []
        take = Shortcut.take

        def spy(*args: Any) -> Any:
            seen.append(result := take(*args))
            return result

        async with app.lifespan():
            with pytest.MonkeyPatch.context() as patch:
                patch.setattr(Shortcut, "take", spy)
                for _ in range(3):
                    exchange = await _request("/mcp", fields, body).through(app)
                    assert exchange.status == 200
            assert app._running is not None
            assert len(app._running.router.modern._passed) == 1
        assert len(seen) == 3
        assert None not in seen

    anyio.run(main)


#: The headers of a 2026-07-28 ``tools/list`` (`_listing`).
_LISTING: Fields = [
    (b"content-type", b"application/json"),
    (b"mcp-protocol-version", MODERN.encode()),
    (b"mcp-method", b"tools/list"),
    (b"host", b"127.0.0.1:8000"),
]


def _listing(meta: dict[str, Any]) -> bytes:
    """A 2026-07-28 ``tools/list`` carrying ``meta`` (its headers: `_LISTING`)."""
    message = {"jsonrpc": "2.0", "id": 1, "method": "tools/list", "params": {"_meta": meta}}
    return json.dumps(message).encode()


def test_the_memo_is_bounded(monkeypatch: pytest.MonkeyPatch) -> None:
    """Ever new ``_meta`` values can't grow the memo past its bound."""
    monkeypatch.setattr(modern, "MAX_REMEMBERED_REQUESTS", 4)

    async def main() -> None:
        app = AsgiApp(build_server(anyio.sleep))
        async with app.lifespan():
            for token in range(10):
                body = _listing({**META, "progressToken": token})
                exchange = await _request("/mcp", _LISTING, body).through(app)
                assert exchange.status == 200
                assert app._running is not None
                assert 1 <= len(app._running.router.modern._passed) <= 4

    anyio.run(main)


def test_large_requests_are_not_remembered() -> None:
    """A ``_meta`` or a header past the memos' bounds is checked each time, and answered."""
    body = _listing({**META, "x": "y" * 5000})
    fields = _LISTING
    long_version = [*fields[:1], (b"mcp-protocol-version", b"9" * 2000), *fields[2:]]

    async def main() -> None:
        app = AsgiApp(build_server(anyio.sleep))
        async with app.lifespan():
            running = app._running
            assert running is not None
            for _ in range(2):
                exchange = await _request("/mcp", fields, body).through(app)
                assert exchange.status == 200
                refused = await _request("/mcp", long_version, body).through(app)
                assert refused.status == 400  # (-32020: the header does not match _meta)
            assert not running.router.modern._passed
            assert len(running.shortcut._decided) == 1  # (the ordinary client's)

    anyio.run(main)


def test_a_tool_that_comes_to_mirror_an_argument_is_checked_again() -> None:
    """Calls remembered as passing; the tool registered again with an ``x-mcp-header``.

    The same request, lacking the ``Mcp-Param-Region`` header the new definition asks
    for, is refused as the general path refuses it (-32020), not answered in one pass.
    """
    body, fields = _tool_call("regional", {"region": "eu"})
    plain = {"type": "object", "properties": {"region": {"type": "string"}}}

    async def main() -> None:
        server = build_server(anyio.sleep)

        def regional(arguments: dict[str, Any]) -> str:
            return f"region={arguments.get('region')}"

        server.tool("regional", input_schema=plain)(regional)
        app = AsgiApp(server)
        async with app.lifespan():
            for _ in range(2):
                exchange = await _request("/mcp", fields, body).through(app)
                assert exchange.status == 200
            server.tools.remove("regional")
            header = {"type": "string", "x-mcp-header": "Region"}
            schema = {"type": "object", "properties": {"region": header}}
            server.tool("regional", input_schema=schema)(regional)
            exchange = await _request("/mcp", fields, body).through(app)
            assert exchange.status == 400
            assert b"-32020" in _answer(exchange)[2]

    anyio.run(main)
