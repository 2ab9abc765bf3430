"""`FastCalls` answers a 2026-07-28 ``tools/call`` exactly as the general path does.

Hypothesis draws request bodies around a valid ``tools/call`` (the JSON-RPC members,
ids of every JSON type, tools of every kind, arguments of any shape, envelopes valid
and not, members the one-pass path does not know, duplicated keys, spacing), and
each body goes both ways on two identical servers: the general path (the server's
`Connection` reads it, `Server.handle_request` answers) and `FastCalls`, which learns
from the general path as a driver feeds it. Whenever `FastCalls` answers, its bytes
must be the general path's; when it hands a `Ran` back, the general path given that
outcome must answer as the general path alone.
"""

from __future__ import annotations

import asyncio
import json
from typing import Any

import hypothesis.strategies as st
import pytest
from hypothesis import HealthCheck, given, settings

from mcpcore import InvalidMessage, RequestReceived, jsonrpc, types
from mcpcore.http import read_modern_request
from mcpcore.server import (
    MAX_ENVELOPE_SIZE,
    Context,
    FastCalls,
    McpError,
    Ran,
    Server,
    ToolError,
)
from mcpcore.types import CLIENT_CAPABILITIES_META_KEY, PROTOCOL_VERSION_META_KEY

_META: dict[str, Any] = {PROTOCOL_VERSION_META_KEY: "2026-07-28", CLIENT_CAPABILITIES_META_KEY: {}}
_METAS: list[Any] = [
    _META,
    {**_META, "progressToken": "p"},
    {**_META, "progressToken": 1.5},
    {**_META, CLIENT_CAPABILITIES_META_KEY: {"roots": {"listChanged": 1}}},
    {**_META, PROTOCOL_VERSION_META_KEY: "2025-11-25"},
    {PROTOCOL_VERSION_META_KEY: "2026-07-28"},
    {},
    "x",
]
_UNENCODABLE = object()


class _Nowhere:
    """An Outbound nobody reads: these tools send nothing before their answer."""

    async def send(self, data: bytes) -> None:
        raise AssertionError("nothing is sent before the answer")

    async def request(self, request_id: types.RequestId, data: bytes) -> Any:
        raise AssertionError("a 2026-07-28 server sends no requests")


def _server() -> Server:
    server = Server("fast", "1.0", secret=b"k" * 32, clock=lambda: 0.0)

    @server.tool()
    def echo(text: str, times: int = 1) -> str:
        """Plain text."""
        return text * times

    @server.tool()
    def add(a: int, b: int = 2) -> dict[str, int]:
        """Structured output."""
        return {"sum": a + b}

    @server.tool(input_schema={"type": "object", "properties": {"n": {"type": "number"}}})
    def schema(arguments: dict[str, Any]) -> str:
        """Arguments checked by a JSON Schema."""
        return repr(arguments.get("n"))

    @server.tool()
    def boom() -> str:
        """Fails (its message must not leak)."""
        raise RuntimeError("internal detail")

    @server.tool()
    def told() -> str:
        """Fails with a message for the client."""
        raise ToolError("told you")

    @server.tool()
    def refuses() -> str:
        """Answers with a JSON-RPC error."""
        raise McpError(jsonrpc.INVALID_PARAMS, "refused")

    @server.tool()
    def asks() -> types.InputRequiredResult:
        """Answers with what only some requests may carry."""
        return types.InputRequiredResult(request_state="s")

    @server.tool()
    def presumes() -> types.InputRequiredResult:
        """Asks what the client did not declare it can answer (elicitation)."""
        form = types.ElicitRequestFormParams(
            message="Who?", requested_schema={"type": "object", "properties": {}}
        )
        return types.InputRequiredResult(
            input_requests={"who": types.ElicitRequest(params=form)}, request_state="s"
        )

    @server.tool()
    def odd() -> types.CallToolResult:
        """A result JSON can't hold."""
        text = types.TextContent(text="x")
        return types.CallToolResult(content=[text], structured_content={"x": _UNENCODABLE})

    _add_async_tools(server)
    return server


def _add_async_tools(server: Server) -> None:
    """The ``async def`` tools (`FastCalls.answer_awaited`), and one taking a Context."""

    @server.tool()
    async def later(text: str = "later") -> str:
        """Awaited (`FastCalls.answer_awaited`)."""
        await asyncio.sleep(0)
        return text

    @server.tool()
    async def later_add(a: int, b: int = 2) -> dict[str, int]:
        """Awaited, structured output."""
        await asyncio.sleep(0)
        return {"sum": a + b}

    @server.tool()
    async def later_boom() -> str:
        """Awaited, then fails (its message must not leak)."""
        await asyncio.sleep(0)
        raise RuntimeError("internal detail")

    @server.tool()
    async def later_told() -> str:
        """Awaited, then fails with a message for the client."""
        await asyncio.sleep(0)
        raise ToolError("told you later")

    @server.tool()
    async def later_asks() -> types.InputRequiredResult:
        """Awaited, then answers with what only some requests may carry."""
        return types.InputRequiredResult(request_state="s")

    @server.tool()
    async def with_context(ctx: Context, text: str = "x") -> str:
        """Takes the request's Context: only the general path runs it."""
        return f"{text} {ctx.request_id!r}"


_TOOLS = ["echo", "add", "schema", "boom", "told", "refuses", "asks", "presumes", "odd"]
_TOOLS += ["later", "later_add", "later_boom", "later_told", "later_asks", "with_context", "none"]
_JSON = st.recursive(
    st.none() | st.booleans() | st.integers() | st.floats(allow_nan=False) | st.text(max_size=5),
    lambda inner: st.lists(inner, max_size=3) | st.dictionaries(st.text(max_size=3), inner),
    max_leaves=6,
)
_ARGUMENTS = st.one_of(
    st.sampled_from([None, {}, {"text": "hi"}, {"text": "hi", "times": 2}, {"a": 1}, {"n": 2}]),
    st.dictionaries(st.sampled_from(["text", "times", "a", "b", "n", "z"]), _JSON, max_size=3),
    _JSON,
)


#: Each tool's arguments the tool takes.
_VALID = {
    "echo": {"text": "hé ✓"},
    "add": {"a": 1},
    "schema": {"n": 2},
    "later": {"text": "hé"},
    "later_add": {"a": 1},
}
#: What a body may change from a valid call, and to what.
_CHANGES: dict[str, st.SearchStrategy[Any]] = {
    "jsonrpc": st.sampled_from(["1.0", 2]),
    "method": st.sampled_from(["tools/list", "ping"]),
    "id": st.one_of(st.sampled_from([1.0, True, None, "", 2**64]), st.integers(), st.text()),
    "meta": st.sampled_from(_METAS[1:]),
    "arguments": _ARGUMENTS,
    "extra": st.sampled_from(["task", "requestState", "inputResponses", "x"]),
    "member": st.sampled_from(["result", "error", "x"]),
    "twice": st.just(True),
    "no id": st.just(True),
    "no meta": st.just(True),
    "invalid UTF-8": st.just(True),
}


@st.composite
def _bodies(draw: st.DrawFn) -> bytes:
    """A valid 2026-07-28 tools/call, or one with a change or two."""
    name = draw(st.sampled_from(_TOOLS))
    changes = draw(st.lists(st.sampled_from(sorted(_CHANGES)), max_size=2, unique=True))
    change = {key: draw(_CHANGES[key]) for key in changes}
    params: dict[str, Any] = {"name": name, "_meta": change.get("meta", _META)}
    arguments = change.get("arguments", _VALID.get(name))
    if arguments is not None:
        params["arguments"] = arguments
    if "no meta" in change:
        del params["_meta"]
    if "extra" in change:
        params[change["extra"]] = {}
    message: dict[str, Any] = {
        "jsonrpc": change.get("jsonrpc", "2.0"),
        "id": change.get("id", draw(st.sampled_from([1, "a", 99]))),
        "method": change.get("method", "tools/call"),
        "params": params,
    }
    if "no id" in change:
        del message["id"]
    if "member" in change:
        message[change["member"]] = {}
    separators = draw(st.sampled_from([(",", ":"), (", ", ": ")]))
    ascii_only = draw(st.booleans())
    body = json.dumps(message, separators=separators, ensure_ascii=ascii_only).encode()
    if "invalid UTF-8" in change:
        body = body.replace("é".encode(), b"\xc3(")
    if "twice" in change:  # a key written twice (the last one counts)
        body = body.replace(b'"params"', b'"params":{},"params"', 1)
    return body


def _echo(meta: Any = _META, *, request_id: int = 1, text: str = "a") -> bytes:
    """A 2026-07-28 call of the echo tool."""
    params = {"name": "echo", "arguments": {"text": text}, "_meta": meta}
    message = {"jsonrpc": "2.0", "id": request_id, "method": "tools/call", "params": params}
    return json.dumps(message).encode()


def _meta_json(body: bytes) -> bytes | None:
    """The body's ``_meta`` as written, as a driver hands it to `FastCalls.learn`."""
    peeked = read_modern_request(body)
    return None if peeked is None else peeked.meta_json


def _general(server: Server, body: bytes, ran: Ran | None = None) -> tuple[bytes | None, Any]:
    """The general path's answer to ``body`` on a fresh connection, and its event."""
    connection = server.connection()
    events = connection.receive(body)
    for event in events:
        if isinstance(event, RequestReceived):
            coroutine = server.handle_request(connection, event, _Nowhere(), ran=ran)
            return asyncio.run(coroutine), event
        if isinstance(event, InvalidMessage):
            return event.reply, event
    return None, events


@settings(max_examples=400, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.lists(_bodies(), min_size=1, max_size=8))
def test_fast_calls_answer_as_the_general_path(bodies: list[bytes]) -> None:
    fast_server, general_server = _server(), _server()
    fast = fast_server.fast_calls()
    for body in [*bodies, *bodies]:  # (the second time round, the envelopes are known)
        expected, event = _general(general_server, body)
        call = fast.read(body)
        if call is not None:
            # (it runs the tool: only for a request the general path admits)
            assert isinstance(event, RequestReceived), body
            ran = asyncio.run(fast.answer_awaited(call)) if call.awaits else fast.answer(call)
            answered = _general(fast_server, body, ran)[0] if isinstance(ran, Ran) else ran
            assert answered == expected, body
        meta_json = _meta_json(body)
        if isinstance(event, RequestReceived) and meta_json:
            fast.learn(meta_json, event)


def test_fast_calls_take_the_common_call_once_its_envelope_is_known() -> None:
    server = _server()
    fast = server.fast_calls()
    body = _echo(request_id=7, text="hi")
    assert fast.read(body) is None  # (the envelope is unknown yet)
    expected, event = _general(server, body)
    meta_json = _meta_json(body)
    assert meta_json is not None
    fast.learn(meta_json, event)
    call = fast.read(body)
    assert call is not None
    assert fast.answer(call) == expected
    assert b'"text":"hi"' in expected


def _known(server: Server, fast: FastCalls, body: bytes) -> bytes | None:
    """The general path's answer to ``body``, from which ``fast`` learns its envelope."""
    expected, event = _general(server, body)
    meta_json = _meta_json(body)
    assert isinstance(event, RequestReceived)
    assert meta_json is not None
    fast.learn(meta_json, event)
    return expected


def _call(name: str, arguments: dict[str, Any], *, request_id: int = 3) -> bytes:
    params = {"name": name, "arguments": arguments, "_meta": _META}
    message = {"jsonrpc": "2.0", "id": request_id, "method": "tools/call", "params": params}
    return json.dumps(message).encode()


def test_an_async_tool_is_awaited_in_one_pass() -> None:
    server = _server()
    fast = server.fast_calls()
    expected = _known(server, fast, _call("later", {"text": "soon"}))
    call = fast.read(_call("later", {"text": "soon"}))
    assert call is not None
    assert call.awaits
    with pytest.raises(ValueError, match="answer_awaited"):
        fast.answer(call)  # (it would hand back a coroutine never awaited)
    assert asyncio.run(fast.answer_awaited(call)) == expected
    assert expected is not None
    assert b'"text":"soon"' in expected


def test_answer_awaited_answers_a_synchronous_tool_as_answer() -> None:
    server = _server()
    fast = server.fast_calls()
    _known(server, fast, _echo())
    call = fast.read(_echo(text="b"))
    assert call is not None
    assert not call.awaits
    assert asyncio.run(fast.answer_awaited(call)) == fast.answer(call)


def test_a_failing_async_tool_is_handed_back_to_the_general_path() -> None:
    server = _server()
    fast = server.fast_calls()
    body = _call("later_boom", {})
    expected = _known(server, fast, body)
    call = fast.read(body)
    assert call is not None
    ran = asyncio.run(fast.answer_awaited(call))
    assert isinstance(ran, Ran)
    assert isinstance(ran.error, RuntimeError)
    assert _general(server, body, ran)[0] == expected
    assert expected is not None
    assert b"internal detail" not in expected


def test_a_tool_that_takes_the_context_is_left_to_the_general_path() -> None:
    server = _server()
    fast = server.fast_calls()
    body = _call("with_context", {"text": "y"})
    expected = _known(server, fast, body)
    assert expected is not None
    assert b"y 3" in expected
    assert fast.read(body) is None


def test_the_known_envelopes_are_bounded() -> None:
    server = _server()
    fast_bounded = FastCalls(server.tools, server.info, lambda result: result, max_envelopes=3)
    for token in range(10):
        body = _echo({**_META, "progressToken": token})
        _, event = _general(server, body)
        meta_json = _meta_json(body)
        assert meta_json is not None
        fast_bounded.learn(meta_json, event)
        assert 1 <= len(fast_bounded._envelopes) <= 3


def test_a_legacy_request_teaches_nothing() -> None:
    """Only a 2026-07-28 request's ``_meta`` is learned: one a 2025-11-25 session admits
    says nothing of how a 2026-07-28 request carrying it is admitted."""
    server = _server()
    fast = server.fast_calls()
    connection = server.connection()
    initialize = {
        "jsonrpc": "2.0",
        "id": 0,
        "method": "initialize",
        "params": {
            "protocolVersion": "2025-11-25",
            "capabilities": {},
            "clientInfo": {"name": "c", "version": "1"},
        },
    }
    [opened] = connection.receive(json.dumps(initialize).encode())
    assert isinstance(opened, RequestReceived)
    asyncio.run(server.handle_request(connection, opened, _Nowhere()))
    connection.receive(b'{"jsonrpc":"2.0","method":"notifications/initialized"}')
    body = _echo({"progressToken": 5})  # (no envelope: a 2026-07-28 request refuses it)
    [event] = connection.receive(body)
    assert isinstance(event, RequestReceived)
    assert event.protocol_version == "2025-11-25"
    meta_json = _meta_json(body)
    assert meta_json is not None
    fast.learn(meta_json, event)
    assert fast.read(body) is None


def test_a_large_envelope_is_not_remembered() -> None:
    """The memo holds small envelopes only: a large one takes the general path each time."""
    server = _server()
    fast = server.fast_calls()
    body = _echo({**_META, "x": "y" * MAX_ENVELOPE_SIZE})
    _, event = _general(server, body)
    assert isinstance(event, RequestReceived)
    meta_json = _meta_json(body)
    assert meta_json is not None
    fast.learn(meta_json, event)
    assert fast.read(body) is None
    assert not fast._envelopes
