"""The ASGI apps of the ``asgi`` layer, each run by its own uvicorn process (``--factory``).

    uvicorn --factory bench._asgi_apps:mcpcore_modern --loop uvloop --http httptools ...

Seven factories, one per server and era, every one serving ``get_weather`` (the tool of
`bench.dispatch`, as the other HTTP layers) at ``/mcp``:

* `mcpcore_modern` / `mcpcore_legacy`: `transports.AsgiApp` serving
  `bench.dispatch.build_server`. Modern: the default ``replies="auto"`` (a 2026-07-28
  answer is a JSON body unless something comes before it: what users get). Legacy:
  ``replies="json"`` (the default answers a 2025-11-25 POST with a primed, resumable event
  stream; JSON bodies compare like with like against the SDK's ``json_response=True``).
* `sdk_modern` / `sdk_legacy`: the official SDK's ``MCPServer``
  (`bench.sdk_dispatch.high_level_server`) as ``streamable_http_app``: stateless JSON
  (``json_response=True, stateless_http=True``, as `bench.sdk_http` and PERF.md's wrk
  table) for the 2026-07-28 row, stateful sessions with JSON replies
  (``json_response=True, stateless_http=False``) for the 2025-11-25 row.
* `core_modern`: the floor of any MCP app on top of this core, 2026-07-28 only: the body
  read, the headers checked (`mcpcore.http.check_modern_request`), the call answered in
  one pass by the same `Server`'s `mcpcore.server.FastCalls` once the general path
  (`Connection.receive`, `Server.handle_request`) admitted its envelope, in the
  `Interruptible` block mcpcore's app runs a request in, the answer's status read, two
  ``send`` calls. No Host/Origin check, no limits, no
  streams, no watcher, no pooling policy: not an app to serve, only what the core's own
  work costs on this server, so that mcpcore's row shows what its transport adds.
* `minimal_modern`: what Python and msgspec reach doing a 2026-07-28 ``tools/call``'s
  work by hand, 2026-07-28 only: the version, method and name headers compared with the
  body, the body decoded into Structs typed for this one call, `bench.dispatch.weather`
  called, mcpcore's very answer (the same bytes) encoded from Structs. No rule beyond
  those: no envelope validation, no method table, no argument schema, no error path.
  Not an MCP server: the bound below the core's floor, which shows how much of the
  floor is the core's generality rather than the work.
* `echo_modern` / `echo_legacy`: the ceiling, no MCP. A bare ASGI app that reads the
  body, decodes it with msgspec, and answers ``{"jsonrpc":"2.0","id":<its id>,
  "result":<mcpcore's result in that era>}`` (`bench.stdio.exchanged_lines`: the same
  shape and size as mcpcore's answer), ``Content-Type: application/json``.

With ``BENCH_ASGI_TOOL=async`` in its environment (`TOOL_VARIABLE`), ``get_weather`` is an
``async def`` in mcpcore's app, the SDK's and the core floor (the same body; the SDK runs a
plain ``def`` tool on a worker thread, an ``async def`` one in its event loop); the minimal
app and the echo have no tool to change.

With ``BENCH_ASGI_PROFILE=FILE`` in its environment, a factory turns cProfile on in the
server process (uvicorn runs the app in its main thread) and writes the stats to FILE
when the server shuts down (SIGTERM or SIGINT: the lifespan's ``lifespan.shutdown``).
"""

from __future__ import annotations

import cProfile
import os
from collections.abc import Awaitable, Callable, MutableMapping
from concurrent.futures import ThreadPoolExecutor
from typing import Any, Final

import msgspec

from mcpcore.versions import LATEST_LEGACY_VERSION, LATEST_MODERN_VERSION

__all__ = [
    "INITIALIZE",
    "INITIALIZED",
    "PROFILE_VARIABLE",
    "REQUEST_HEADERS",
    "TOOL_VARIABLE",
    "core_modern",
    "echo_legacy",
    "echo_modern",
    "mcpcore_legacy",
    "mcpcore_modern",
    "minimal_modern",
    "sdk_legacy",
    "sdk_modern",
    "tool_kind",
]

#: Each era's request headers (besides Content-Type and Accept): what mcpcore's client
#: sends with a 2026-07-28 ``tools/call`` of ``get_weather``, and a 2025-11-25 one.
REQUEST_HEADERS: Final[dict[str, tuple[tuple[str, str], ...]]] = {
    "legacy": (("MCP-Protocol-Version", LATEST_LEGACY_VERSION),),
    "modern": (
        ("MCP-Protocol-Version", LATEST_MODERN_VERSION),
        ("Mcp-Method", "tools/call"),
        ("Mcp-Name", "get_weather"),
    ),
}
#: The two messages that open a 2025-11-25 session before the load.
INITIALIZE: Final = msgspec.json.encode(
    {
        "jsonrpc": "2.0",
        "id": 1,
        "method": "initialize",
        "params": {
            "protocolVersion": LATEST_LEGACY_VERSION,
            "capabilities": {},
            "clientInfo": {"name": "bench-asgi", "version": "1.0"},
        },
    }
)
INITIALIZED: Final = b'{"jsonrpc":"2.0","method":"notifications/initialized"}'

#: The environment variable that turns cProfile on in a server process (its value: the
#: file the stats go to).
PROFILE_VARIABLE: Final = "BENCH_ASGI_PROFILE"

#: The environment variable that makes the tool an ``async def`` (``"async"``; the
#: default, ``"def"``, a plain function).
TOOL_VARIABLE: Final = "BENCH_ASGI_TOOL"
_TOOL_KINDS: Final = ("def", "async")

Scope = MutableMapping[str, Any]
Message = MutableMapping[str, Any]
Receive = Callable[[], Awaitable[Message]]
Send = Callable[[Message], Awaitable[None]]
App = Callable[[Scope, Receive, Send], Awaitable[None]]


def _profiled(app: Any) -> Any:
    """``app``, profiled by cProfile if `PROFILE_VARIABLE` names a file (else ``app`` itself).

    The stats are written when the lifespan protocol says ``lifespan.shutdown`` (uvicorn
    ends its process by raising the signal it caught again: no ``atexit`` runs).
    """
    target = os.environ.get(PROFILE_VARIABLE)
    if not target:
        return app
    profiler = cProfile.Profile()
    profiler.enable()

    async def profiled(scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "lifespan":
            return await app(scope, receive, send)  # type: ignore[no-any-return]

        async def receive_then_dump() -> Message:
            message = await receive()
            if message["type"] == "lifespan.shutdown":
                profiler.disable()
                profiler.dump_stats(target)
            return message

        return await app(scope, receive_then_dump, send)  # type: ignore[no-any-return]

    return profiled


def tool_kind() -> str:
    """``"def"`` or ``"async"``: how the tool is written (`TOOL_VARIABLE`).

    Raises:
        ValueError: The variable holds something else.
    """
    kind = os.environ.get(TOOL_VARIABLE, "def").strip() or "def"
    if kind not in _TOOL_KINDS:
        raise ValueError(f"{TOOL_VARIABLE}={kind!r}: expected 'def' or 'async'")
    return kind


def _async_tool() -> bool:
    return tool_kind() == "async"


# ------------------------------------------------------------------- mcpcore


def _mcpcore(replies: str) -> Any:
    from bench.dispatch import build_server
    from transports import AsgiApp

    server = build_server(awaited=_async_tool())
    return _profiled(AsgiApp(server, replies="json" if replies == "json" else "auto"))


def mcpcore_modern() -> Any:
    """The mcpcore `transports.AsgiApp`, default replies (2026-07-28: a JSON body)."""
    return _mcpcore("auto")


def mcpcore_legacy() -> Any:
    """The mcpcore `transports.AsgiApp` with ``replies="json"`` (2025-11-25: JSON bodies)."""
    return _mcpcore("json")


# ----------------------------------------------------------------------- SDK


def _sdk(*, stateless: bool) -> Any:
    from bench.dispatch import weather
    from bench.sdk_dispatch import high_level_server

    server = high_level_server(weather, awaited=_async_tool())
    return _profiled(server.streamable_http_app(json_response=True, stateless_http=stateless))


def sdk_modern() -> Any:
    """The SDK's ``streamable_http_app``, stateless with JSON responses."""
    return _sdk(stateless=True)


def sdk_legacy() -> Any:
    """The SDK's ``streamable_http_app``, with sessions and JSON responses."""
    return _sdk(stateless=False)


_JSON_HEAD: Final = [(b"content-type", b"application/json")]

# ---------------------------------------------------------------------- core


class _Discard:
    """The floor's `mcpcore.server.Outbound`: a tool that sends nothing before its answer."""

    async def send(self, data: bytes) -> None:
        raise AssertionError("the floor's tool sends nothing before its answer")

    async def request(self, request_id: Any, data: bytes) -> Any:
        raise AssertionError("a 2026-07-28 server sends no requests")


def core_modern() -> Any:
    """The floor: the core's work for a 2026-07-28 ``tools/call``, nothing around it."""
    from bench.dispatch import build_server
    from mcpcore import RequestReceived
    from mcpcore.http import (
        check_modern_request,
        peek_message,
        read_modern_request,
        status_for_error,
    )
    from mcpcore.versions import LATEST_MODERN_VERSION
    from transports._runtime.primitives import Interruptible

    server = build_server(awaited=_async_tool())
    fast = server.fast_calls()
    idle: list[Any] = []
    supported = (LATEST_MODERN_VERSION,)
    outbound = _Discard()

    async def app(scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await _lifespan_only(scope, receive, send)
            return
        headers = {
            name.decode("latin-1"): value.decode("latin-1") for name, value in scope["headers"]
        }
        body = (await receive())["body"]  # (wrk's bodies come whole)
        peeked = read_modern_request(body)

        def header(name: str) -> str | None:
            return headers.get(name.lower())

        if peeked is None or check_modern_request(peeked, header, supported, _no_params):
            raise AssertionError("the load's request is a valid 2026-07-28 tools/call")
        call = fast.read(body)
        answer = None
        with Interruptible():  # (as mcpcore's: a request the client can cancel)
            if call is not None:
                answered = await fast.answer_awaited(call) if call.awaits else fast.answer(call)
                assert isinstance(answered, bytes)
                answer = answered
            else:
                connection = idle.pop() if idle else server.connection()
                for event in connection.receive(body):
                    assert isinstance(event, RequestReceived)
                    assert peeked.meta_json is not None
                    fast.learn(peeked.meta_json, event)
                    answer = await server.handle_request(connection, event, outbound)
                idle.append(connection)
        assert answer is not None
        code = peek_message(answer).error_code
        status = 200 if code is None else status_for_error(code)
        head = [*_JSON_HEAD, (b"content-length", str(len(answer)).encode())]
        await send({"type": "http.response.start", "status": status, "headers": head})
        await send({"type": "http.response.body", "body": answer})

    return _profiled(app)


def _no_params(tool_name: str) -> tuple[()]:
    return ()  # (get_weather mirrors no argument into a header)


async def _lifespan_only(scope: Scope, receive: Receive, send: Send) -> None:
    """A lifespan with nothing to start: say so, then wait for the end."""
    if scope["type"] == "lifespan":
        while (await receive())["type"] != "lifespan.shutdown":
            await send({"type": "lifespan.startup.complete"})
        await send({"type": "lifespan.shutdown.complete"})


# ------------------------------------------------------------------- minimal


class _Arguments(msgspec.Struct):
    location: str
    units: str = "metric"


class _CallParams(msgspec.Struct):
    name: str
    arguments: _Arguments
    meta: dict[str, Any] = msgspec.field(name="_meta")


class _Call(msgspec.Struct):
    jsonrpc: str
    id: int | str
    method: str
    params: _CallParams


class _Text(msgspec.Struct, tag_field="type", tag="text"):
    text: str


class _CallResult(msgspec.Struct):
    meta: dict[str, Any] = msgspec.field(name="_meta")
    resultType: str  # noqa: N815 (the wire's name)
    content: list[_Text]


class _Answer(msgspec.Struct):
    jsonrpc: str
    id: int | str
    result: _CallResult


def minimal_modern() -> App:
    """A 2026-07-28 ``get_weather`` call answered by hand (see the module docstring)."""
    from bench.dispatch import INFO, weather
    from mcpcore.types import PROTOCOL_VERSION_META_KEY, SERVER_INFO_META_KEY

    decode = msgspec.json.Decoder(_Call).decode
    encode = msgspec.json.Encoder().encode
    server_meta = {SERVER_INFO_META_KEY: msgspec.to_builtins(INFO)}
    version = LATEST_MODERN_VERSION.encode()

    async def app(scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await _lifespan_only(scope, receive, send)
            return
        headers = dict(scope["headers"])
        call = decode((await receive())["body"])  # (wrk's bodies come whole)
        if (
            headers.get(b"mcp-protocol-version") != version
            or call.params.meta.get(PROTOCOL_VERSION_META_KEY) != version.decode()
            or headers.get(b"mcp-method") != call.method.encode()
            or headers.get(b"mcp-name") != call.params.name.encode()
            or call.params.name != "get_weather"
        ):
            raise AssertionError("the load's request is a valid 2026-07-28 get_weather call")
        arguments = call.params.arguments
        text = weather(arguments.location, arguments.units)
        result = _CallResult(server_meta, "complete", [_Text(text)])
        payload = encode(_Answer("2.0", call.id, result))
        head = [*_JSON_HEAD, (b"content-length", str(len(payload)).encode())]
        await send({"type": "http.response.start", "status": 200, "headers": head})
        await send({"type": "http.response.body", "body": payload})

    profiled: App = _profiled(app)
    return profiled


# ---------------------------------------------------------------------- echo


def echo_app(result: Any) -> App:
    """A bare ASGI app: every POST's body decoded, answered with ``result`` under its id."""
    decode = msgspec.json.Decoder().decode
    encode = msgspec.json.Encoder().encode

    async def app(scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await _lifespan_only(scope, receive, send)
            return
        body = b""
        while True:
            message = await receive()
            body += message.get("body", b"")
            if not message.get("more_body", False):
                break
        payload = encode({"jsonrpc": "2.0", "id": decode(body)["id"], "result": result})
        head = [*_JSON_HEAD, (b"content-length", str(len(payload)).encode())]
        await send({"type": "http.response.start", "status": 200, "headers": head})
        await send({"type": "http.response.body", "body": payload})

    return app


def _echo(era: str) -> App:
    from bench.stdio import exchanged_lines

    # (uvicorn calls the factory inside its running loop; the capture runs a loop of its own)
    with ThreadPoolExecutor(1) as thread:
        _, result = thread.submit(exchanged_lines, era).result()
    app: App = _profiled(echo_app(msgspec.json.decode(result)["result"]))
    return app


def echo_modern() -> App:
    """The ceiling answering mcpcore's 2026-07-28 result."""
    return _echo("modern")


def echo_legacy() -> App:
    """The ceiling answering mcpcore's 2025-11-25 result."""
    return _echo("legacy")
