"""2026-07-28 ``tools/call`` answered in one pass, from what the general path decided before.

A 2026-07-28 request goes through the `mcpcore.Connection` (the JSON-RPC envelope, the
method table, the ``_meta`` envelope, the in-flight table), the `Server` (rounds, the
`Context`, the handler table, the tool registry) and back through the `Connection`
(result checks, shaping, encoding). For the call a busy server answers most, a
``tools/call`` of a tool that needs nothing of the request but its arguments
(`ToolRegistry.standalone`: no `Context`, no task; ``def`` or ``async def``), every one
of those decisions but the tool's own work depends only on the request's ``_meta``,
which a client sends unchanged with each request.

`FastCalls` remembers the ``_meta`` envelopes the general path admitted for a
``tools/call`` (`FastCalls.learn`, fed by the driver with the `RequestReceived`), and
answers a call whose envelope it knows by validating the arguments, running the tool
and encoding its result: what the general path answers, byte for byte
(``tests/core/test_fastcalls.py`` and ``tests/transports/test_asgi_posted.py`` check
it, request by request, against the general path).

It declines (None), before running anything, whatever it is not sure of: an envelope it
has not seen admitted, a body with anything besides ``jsonrpc``, ``id``, ``method`` and
``params`` (``name``, ``arguments``, ``_meta``), a tool that takes a `Context` or may
run as a task, arguments the tool refuses (the general path words that answer). What
it learns only once the tool ran, an exception or a result other than a plain
`CallToolResult`, or one JSON can't hold, it hands back as `Ran`, for
`Server.handle_request` to answer as it answers any handler's outcome.

A synchronous tool is answered by `FastCalls.answer`, without a coroutine; an
``async def`` one by `FastCalls.answer_awaited`, which awaits it in the caller's task
(as the general path does: the driver's cancellation reaches it the same way).

Measured with ``python -m bench.asgi_profile``: the ASGI app answers such a call in less
than half the time the general path takes (~11 µs against ~24, the same transport).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any, Final, Literal

import msgspec
from msgspec import UNSET, Raw, UnsetType

from mcpcore import jsonrpc, types
from mcpcore._results import shape_modern_result
from mcpcore.events import RequestReceived
from mcpcore.methods import DEFAULT_METHODS
from mcpcore.server._tools import (
    RegisteredTool,
    ToolRegistry,
    bind_arguments,
    run_at_once,
    run_tool,
)
from mcpcore.types import SERVER_INFO_META_KEY
from mcpcore.versions import Era, era_of

__all__ = ["MAX_ENVELOPE_SIZE", "MAX_KNOWN_ENVELOPES", "FastCall", "FastCalls", "Ran"]

#: ``_meta`` envelopes remembered as admitted. A client sends one envelope with every
#: request (a new one with each progress token); the memo is emptied when full, so that
#: clients sending ever new ones can't grow it (an envelope is a few hundred bytes).
MAX_KNOWN_ENVELOPES: Final = 1024

#: The largest ``_meta`` remembered, in bytes (a body may be megabytes): a client's
#: envelope is a few hundred; a larger one takes the general path each time, so that the
#: memo holds at most `MAX_KNOWN_ENVELOPES` times this (4 MiB) whatever clients send.
MAX_ENVELOPE_SIZE: Final = 4096

_TOOLS_CALL: Final = DEFAULT_METHODS["tools/call"]
# (What Connection.send_result lets through as a result: an encoding failure.)
_UNENCODABLE: Final = (msgspec.EncodeError, TypeError, RecursionError)


class _Params(msgspec.Struct, forbid_unknown_fields=True, gc=False):
    name: str
    meta: Raw = msgspec.field(name="_meta")
    arguments: dict[str, Any] | UnsetType = UNSET


class _Call(msgspec.Struct, forbid_unknown_fields=True, gc=False):
    jsonrpc: Literal["2.0"]
    id: int | str
    method: Literal["tools/call"]
    params: _Params


_DECODER: Final = msgspec.json.Decoder(_Call)


class FastCall(msgspec.Struct, gc=False, eq=False):
    """A ``tools/call`` `FastCalls.read` took: ready to run.

    (A record, so a Struct, made in C. Nothing it holds can refer back to it: no
    cycle, so no tracking by the garbage collector. ``awaits`` and ``definition`` are
    the tool's, copied: read for every call answered, without a property's call.)

    Attributes:
        id: The request id.
        name: The tool's name.
        meta_json: Its ``_meta``, as the body wrote it.
        awaits: Whether the tool is an ``async def`` (`FastCalls.answer_awaited` runs
            it; else `FastCalls.answer`).
        definition: The tool's published 2026-07-28 definition (what ``tools/list``
            gives).
    """

    id: types.RequestId
    name: str
    meta_json: bytes
    awaits: bool
    definition: types.Tool
    _tool: RegisteredTool
    _kwargs: dict[str, Any]


class Ran:
    """A tool's outcome the general path must answer: its result, or what it raised.

    Pass it to `Server.handle_request` (``ran=``) with the request's event: it answers
    as if the handler had just returned (or raised) this.
    """

    __slots__ = ("error", "result")

    def __init__(self, result: Any = None, error: Exception | None = None) -> None:
        self.result = result
        self.error = error

    def outcome(self) -> Any:
        """The result, or the exception raised again."""
        if self.error is not None:
            raise self.error
        return self.result


class FastCalls:
    """Answers 2026-07-28 ``tools/call`` requests in one pass (see the module docstring).

    Args:
        tools: The server's tools.
        info: The server's `types.Implementation` (the results' ``serverInfo``).
        with_cache_hints: What the server adds to a 2026-07-28 result.
        max_envelopes: See `MAX_KNOWN_ENVELOPES`.
    """

    __slots__ = ("_envelopes", "_hints", "_max", "_meta", "_tools")

    def __init__(
        self,
        tools: ToolRegistry,
        info: types.Implementation | None,
        with_cache_hints: Callable[[Any], Any],
        *,
        max_envelopes: int = MAX_KNOWN_ENVELOPES,
    ) -> None:
        self._tools = tools
        # (As the Connection's: "servers SHOULD include serverInfo in every result's _meta")
        self._meta = None if info is None else {SERVER_INFO_META_KEY: info}
        self._hints = with_cache_hints
        self._max = max_envelopes
        # (each maps to itself: a call carries the very object remembered, whose hash is
        # known and which compares by identity in its caller's memos)
        self._envelopes: dict[bytes, bytes] = {}

    def learn(self, meta_json: bytes, event: RequestReceived) -> None:
        """The general path admitted ``event``, a request whose ``_meta`` was ``meta_json``."""
        version = event.protocol_version
        if event.method != "tools/call" or version is None or era_of(version) is not Era.MODERN:
            return
        if len(meta_json) > MAX_ENVELOPE_SIZE:
            return
        envelopes = self._envelopes
        if len(envelopes) >= self._max:
            envelopes.clear()
        envelopes[meta_json] = meta_json

    def read(self, body: bytes) -> FastCall | None:
        """The call in ``body`` if this can answer it; None: the general path must.

        Only a ``tools/call`` with nothing else in it: the Connection answers bodies
        nested past its bound (`jsonrpc.nests_too_deeply`). Invalid UTF-8 fails the
        decoding: every string is decoded, no member is skipped, and a ``_meta`` is taken
        only as the very bytes of one the general path admitted.
        """
        if len(body) > jsonrpc.SHALLOW_SIZE and jsonrpc.nests_too_deeply(body):
            return None
        try:
            call = _DECODER.decode(body)
        except jsonrpc.DECODE_ERRORS:
            return None
        params = call.params
        meta_json = self._envelopes.get(bytes(params.meta))
        if meta_json is None:
            return None
        tool = self._tools.standalone(params.name)
        if tool is None:
            return None
        arguments = {} if params.arguments is UNSET else params.arguments
        problem, kwargs = bind_arguments(tool, arguments)
        if problem is not None:
            return None
        return FastCall(call.id, params.name, meta_json, tool.awaits, tool.modern, tool, kwargs)

    def answer(self, call: FastCall) -> bytes | Ran:
        """Run a synchronous tool; the response to send, or its outcome for the general path.

        Raises:
            ValueError: The tool is an ``async def`` (``call.awaits``): await
                `answer_awaited` instead.
        """
        if call.awaits:
            raise ValueError(f"tool {call.name!r} is async: await answer_awaited(call)")
        try:
            result = run_at_once(call._tool, call._kwargs)
        except Exception as exc:  # the general path answers it (a failure, an McpError...)
            return Ran(error=exc)
        return self._response(call, result)

    async def answer_awaited(self, call: FastCall) -> bytes | Ran:
        """`answer`, for any tool: an ``async def`` one is awaited in the caller's task."""
        try:
            result = await run_tool(call._tool, call._kwargs)
        except Exception as exc:  # (as in answer; a cancellation is no Exception)
            return Ran(error=exc)
        return self._response(call, result)

    def _response(self, call: FastCall, result: Any) -> bytes | Ran:
        """The response to ``call`` whose tool returned ``result`` (or that, as a `Ran`)."""
        if type(result) is not types.CallToolResult:
            return Ran(result)  # (its type is checked there)
        shaped = shape_modern_result(_TOOLS_CALL, self._hints(result), self._meta)
        try:
            return jsonrpc.encode_result_response(call.id, shaped)
        except _UNENCODABLE:
            return Ran(result)
