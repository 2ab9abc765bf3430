"""2026-07-28 Streamable HTTP: one self-contained request per POST, answered on its own.

A POST carries one request, checked in the order of `mcpcore.http.check_modern_request`
(CONFORMANCE §4.4); then the server answers it in the connection's task:

* as one JSON body when nothing comes before the answer (statuses per
  `mcpcore.http.status_for_error`: 400 for -32602/-32020/-32021/-32022, 404 for
  -32601); with ``replies="stream"``, an answer of status 200 as an event stream of
  that one event instead;
* as an event stream once the handler sends progress or a log message ("a JSON
  response cannot carry them", trap 10.2-14), or once it has been quiet for the
  keep-alive interval (a comment then keeps proxies from cutting it, CHECKLIST G5);
* ``subscriptions/listen`` is a long-lived stream: its acknowledgement goes out at once,
  then whatever the server's hub delivers to it, until the client closes it or the
  server ends it with its result.

A notification gets 202 and no body. Closing the response stream cancels the request
("(S) MUST treat the disconnect as cancellation"): the connection's reader cancels the
task that runs it.

Two memos spare a client's every request what its first one settled, and answer exactly
as without them (``tests/transports/test_asgi_posted.py``): the checks before the server
are skipped for a request whose every part they read passed them before
(`MAX_REMEMBERED_REQUESTS`), and a ``tools/call`` of a tool that takes no `Context` is
answered in one pass once the general path admitted its ``_meta`` envelope
(`mcpcore.server.FastCalls`; a tool's unusual outcome is answered by the general path).

Requests from one TCP connection share one `mcpcore.Connection`: HTTP/1.1 serves them
one at a time, so their ids can't collide, and the Connection (with its envelope and
method tables) is built once per client connection instead of once per request.
Different clients never share one.
"""

from __future__ import annotations

from functools import partial
from typing import Final, Protocol

from msgspec import UNSET

from mcpcore import Connection, InvalidMessage, RequestReceived, jsonrpc, types
from mcpcore.framing import encode_event
from mcpcore.http import (
    METHOD_HEADER,
    NAME_HEADER,
    PROTOCOL_VERSION_HEADER,
    HeaderParam,
    HttpRejection,
    InvalidHeaderAnnotationError,
    ModernRequest,
    accepts_json_and_sse,
    check_modern_request,
    header_params,
    is_json,
    peek_message,
    read_modern_request,
    status_for_error,
)
from mcpcore.server import MAX_ENVELOPE_SIZE, FastCall, FastCalls, Ran, Server
from mcpcore.types import RequestId
from mcpcore.versions import Era, era_of
from transports._http.server.sessions import Answer
from transports._net.reply import Reply, ReplyMode, ResponseWriter
from transports._runtime import primitives
from transports._runtime.requestlog import answer, log_protocol_error, logs_answers

__all__ = ["MAX_REMEMBERED_REQUESTS", "ModernEndpoint", "PostedRequest"]


class PostedRequest(Protocol):
    """What `ModernEndpoint.post` reads of a request: its header fields and its body.

    A `transports._net.request.HttpRequest`, or the lighter view of an ASGI request an
    app builds for a POST it knows is one of these (`transports._asgi.posted`).
    """

    @property
    def body(self) -> bytes:
        """The whole body."""

    def header(self, name: str) -> str | None:
        """A header's value by name, in any case (None when absent)."""


#: Requests (`ModernEndpoint._verdict_key`) remembered as passing the checks before the
#: server. A client sends the same ``_meta`` and headers with each request, and running the
#: checks costs about a tenth of a 2026-07-28 request's time in an ASGI app
#: (``python -m bench.asgi_profile``); the memo is emptied when full, so that clients
#: sending ever new values can't grow it (a key holds ``_meta``, at most a few KiB).
MAX_REMEMBERED_REQUESTS: Final = 1024

#: The largest request remembered, in bytes of ``_meta``, header values and names (a
#: body may be megabytes): a client's are a few hundred; a larger one is checked each
#: time, so that the memo holds at most `MAX_REMEMBERED_REQUESTS` times this (4 MiB).
MAX_REMEMBERED_KEY_SIZE: Final = MAX_ENVELOPE_SIZE

_VerdictKey = tuple[object, ...]
_LISTEN: Final = "subscriptions/listen"
_TOOLS_CALL: Final = "tools/call"
_FINAL_KINDS: Final = frozenset({"result", "error"})


class ModernEndpoint:
    """Serves 2026-07-28 POSTs (see the module docstring)."""

    def __init__(self, server: Server, *, stream_backlog: int, replies: ReplyMode = "auto") -> None:
        self._server = server
        self._stream_all = replies == "stream"
        self._supported = tuple(
            version for version in server.supported_versions if era_of(version) is Era.MODERN
        )
        self._backlog = stream_backlog
        self._tool_params: dict[str, tuple[types.Tool, tuple[HeaderParam, ...]]] = {}
        self._passed: set[_VerdictKey] = set()
        #: The tools/call requests answered in one pass (None: every request goes the
        #: general way).
        self.fast: FastCalls | None = server.fast_calls()

    async def post(
        self, request: PostedRequest, reply: Reply, http: ResponseWriter, principal: str | None
    ) -> FastCall | None:
        """Answer one POST; the ``tools/call`` answered in one pass, if it was.

        A driver may remember a request's head by that call: every check of the head
        and of the call's name and ``_meta`` passed (`answer_call`).
        """
        if not accepts_json_and_sse(request.header("accept")):
            await reply.refuse(406, "Not Acceptable: accept application/json and text/event-stream")
            return None
        if not is_json(request.header("content-type")):
            await reply.refuse(415, "Unsupported Media Type: the body must be application/json")
            return None
        fast = self.fast
        call = None if fast is None or logs_answers() else self._fast_call(fast, request)
        if call is not None:
            answered = await self.answer_call(call, request.body, reply, http, principal)
            return call if answered else None
        body = request.body
        peeked = read_modern_request(body)
        connection = self._connection_of(http)
        if peeked is not None and peeked.id is not None:
            rejection = self._rejection(peeked, peeked.id, request, connection)
            if rejection is not None:
                body = rejection.body()
                log_protocol_error(body)
                await reply.respond_json(rejection.status, body)
                return None
        await self._receive(body, peeked, connection, reply, principal=principal, ran=None)
        return None

    async def answer_call(
        self,
        call: FastCall,
        body: bytes,
        reply: Reply,
        http: ResponseWriter,
        principal: str | None,
    ) -> bool:
        """Run ``call``, read from ``body`` by `fast`, whose checks passed; answer it.

        For a request every check before the server passed: `post`'s own, or a driver's
        that remembers the heads of calls `post` answered in one pass (an ASGI app's
        `transports._asgi.known`). False: the tool's outcome was the general path's to
        answer (`mcpcore.server.Ran`), and it answered it.
        """
        fast = self.fast
        assert fast is not None  # (the call was read by it)
        if call.awaits:
            reply.may_stream = True  # (a long tool gets the keep-alive, as in _serve)
            done = await fast.answer_awaited(call)
        else:
            done = fast.answer(call)
        if isinstance(done, Ran):
            # (A request whose tool ran passed the checks: what it did is answered as it is.)
            connection = self._connection_of(http)
            peeked = read_modern_request(body)
            await self._receive(body, peeked, connection, reply, principal=principal, ran=done)
            return False
        await reply.answer(done, status=200, stream=self._stream_all)
        return True

    async def _receive(
        self,
        body: bytes,
        peeked: ModernRequest | None,
        connection: Connection,
        reply: Reply,
        *,
        principal: str | None,
        ran: Ran | None,
    ) -> None:
        """Have the connection read the body, and answer what it found."""
        for event in connection.receive(body):
            if isinstance(event, RequestReceived):
                if self.fast is not None and peeked is not None and peeked.meta_json:
                    self.fast.learn(peeked.meta_json, event)
                await self._serve(event, connection, reply, principal, ran)
                return
            if isinstance(event, InvalidMessage):
                if event.reply is not None:
                    log_protocol_error(event.reply)
                    await reply.respond_json(status_for_error(event.code), event.reply)
                    return
                if event.method is None:
                    # "(C) MUST NOT POST responses" (2026-07-28 basic/transports).
                    await reply.refuse(400, "Bad Request: clients do not send responses")
                    return
        # "Notification POST accepted → 202 with no body."
        await reply.respond(202)

    def _fast_call(self, fast: FastCalls, request: PostedRequest) -> FastCall | None:
        """The ``tools/call`` `FastCalls` answers in one pass, if the checks passed it before.

        None: the general path answers the request (nothing ran).
        """
        call = fast.read(request.body)
        if call is None or not self._passed_before(call, request):
            return None
        return call

    def _rejection(
        self,
        peeked: ModernRequest,
        request_id: RequestId,
        request: PostedRequest,
        connection: Connection,
    ) -> HttpRejection | None:
        """What the checks before the server refuse the request with (None: it passes).

        `check_modern_request`, then `_removed`. Their verdict depends only on the
        parts of the request in `_verdict_key`: a key seen passing passes again
        without running them (a client sends the same ``_meta`` and headers with
        every request).
        """
        key = self._verdict_key(peeked, request)
        passed = self._passed
        if key is not None and key in passed:
            return None
        rejection = check_modern_request(
            peeked, request.header, self._supported, self._header_params
        )
        if rejection is None:
            rejection = _removed(connection, peeked.method, peeked.meta, request_id)
        if rejection is None and key is not None and _key_size(key) <= MAX_REMEMBERED_KEY_SIZE:
            if len(passed) >= MAX_REMEMBERED_REQUESTS:
                passed.clear()
            passed.add(key)
        return rejection

    def _verdict_key(self, peeked: ModernRequest, request: PostedRequest) -> _VerdictKey | None:
        """All the checks read of a request, or None when some of it can't be a key.

        The id is only echoed. The arguments are read only for a tool that mirrors
        some of them into headers: such calls have no key.
        """
        method, name, uri, task_id = peeked.method, peeked.name, peeked.uri, peeked.task_id
        if not (_keyable(name) and _keyable(uri) and _keyable(task_id)):
            return None
        if method == _TOOLS_CALL and isinstance(name, str) and self._header_params(name):
            return None
        return _key(request, method, name, uri=uri, task_id=task_id, meta_json=peeked.meta_json)

    def _passed_before(self, call: FastCall, request: PostedRequest) -> bool:
        """Whether the checks before the server passed a request like ``call`` before."""
        if self._params_of(call.name, call.definition):
            return False
        key = _key(
            request, _TOOLS_CALL, call.name, uri=UNSET, task_id=UNSET, meta_json=call.meta_json
        )
        return key in self._passed

    def _connection_of(self, http: ResponseWriter) -> Connection:
        connection = http.modern
        if not isinstance(connection, Connection):
            connection = self._server.connection()
            http.modern = connection
            http.on_close(partial(self._server.detach, connection))
        return connection

    async def _serve(
        self,
        event: RequestReceived,
        connection: Connection,
        reply: Reply,
        principal: str | None,
        ran: Ran | None,
    ) -> None:
        outbound = _RequestOutbound(reply, self._backlog)
        reply.may_stream = True
        try:
            answered = await answer(
                self._server, connection, event, outbound, principal=principal, ran=ran
            )
            if event.method == _LISTEN and answered is None:  # (else refused: answered)
                try:
                    await outbound.serve_listen()
                finally:
                    self._server.request_cancelled(connection, event.request_id)
            elif answered is not None:
                await reply.answer(answered, stream=self._stream_all)
        finally:
            outbound.close()

    def _header_params(self, tool_name: str) -> tuple[HeaderParam, ...]:
        """The ``x-mcp-header`` arguments of a registered tool (cached per definition)."""
        tool = self._server.tools.definition(tool_name, modern=True)
        return () if tool is None else self._params_of(tool_name, tool)

    def _params_of(self, tool_name: str, tool: types.Tool) -> tuple[HeaderParam, ...]:
        """`_header_params` of the tool ``tool_name`` whose definition is ``tool``."""
        cached = self._tool_params.get(tool_name)
        if cached is not None and cached[0] is tool:
            return cached[1]
        try:
            params = header_params(tool.input_schema)
        except InvalidHeaderAnnotationError:
            params = ()  # (a client drops such a tool; nothing can be mirrored)
        self._tool_params[tool_name] = (tool, params)
        return params


def _key(
    request: PostedRequest,
    method: str,
    name: object,
    *,
    uri: object,
    task_id: object,
    meta_json: bytes | None,
) -> _VerdictKey:
    """A `ModernEndpoint._passed` key: the parts of a request its checks read."""
    header = request.header
    return (
        method,
        name,
        uri,
        task_id,
        meta_json,
        header(PROTOCOL_VERSION_HEADER),
        header(METHOD_HEADER),
        header(NAME_HEADER),
    )


def _key_size(key: _VerdictKey) -> int:
    return sum(len(part) for part in key if isinstance(part, (str, bytes)))


def _keyable(value: object) -> bool:
    """A name, URI or task id the verdict key can hold: a string, or absent."""
    return value is UNSET or type(value) is str


def _removed(
    connection: Connection, method: str, meta: object, request_id: RequestId
) -> HttpRejection | None:
    """404 and -32601 for a method that does not exist in the request's version.

    The core refuses these too, except ``initialize``, which a connection that has not
    seen a 2026-07-28 request yet would take as the start of a legacy handshake: on
    this path it is a removed method ("initialize, ping, logging/setLevel,
    resources/subscribe and resources/unsubscribe return HTTP 404 with -32601", §4.2).
    """
    spec = connection.methods.get(method)
    version = meta.get(types.PROTOCOL_VERSION_META_KEY) if isinstance(meta, dict) else None
    if spec is not None and spec.is_request and version in spec.versions:
        return None
    return HttpRejection(
        status_for_error(jsonrpc.METHOD_NOT_FOUND),
        jsonrpc.METHOD_NOT_FOUND,
        f"Method not found: {method}",
        request_id,
    )


class _RequestOutbound:
    """A 2026-07-28 request's `mcpcore.server.Outbound`: its response stream.

    The handler runs in the connection's task and writes directly. Anything sent from
    another task (the hub delivering to a listen stream) is queued, and the
    connection's task writes it while it serves the listen stream.
    """

    __slots__ = ("_backlog", "_owner", "_queue", "_reply", "_take")

    def __init__(self, reply: Reply, backlog: int) -> None:
        self._reply = reply
        self._owner = primitives.current_task()
        self._backlog = backlog
        self._queue: primitives.AnySendChannel[bytes] | None = None
        self._take: primitives.AnyReceiveChannel[bytes] | None = None

    async def send(self, data: bytes) -> None:
        """Write a notification of the request (progress, a log message, a listen frame)."""
        if primitives.current_task() is self._owner and self._take is None:
            try:
                await self._reply.stream_message(data)
            except primitives.GONE as exc:
                raise ConnectionError("the client closed the stream") from exc
            return
        queue = self._open_queue()
        try:
            queue.send_nowait(data)
        except primitives.WOULD_BLOCK:
            queue.close()  # the client stopped reading: end the stream
            raise ConnectionError("the client does not read its stream") from None
        except primitives.CLOSED:
            raise ConnectionError("the stream is closed") from None

    def close(self) -> None:
        """The request is over: close its queue, if it has one (both ends)."""
        if self._queue is not None:
            self._queue.close()
        if self._take is not None:
            self._take.close()

    async def request(self, request_id: RequestId, data: bytes) -> Answer:
        """Never used: "servers MUST NOT initiate JSON-RPC requests" (2026-07-28 basic)."""
        raise ConnectionError("a 2026-07-28 server never sends requests")

    def _open_queue(self) -> primitives.AnySendChannel[bytes]:
        if self._queue is None:
            channel: tuple[primitives.AnySendChannel[bytes], primitives.AnyReceiveChannel[bytes]]
            channel = primitives.open_channel(self._backlog)
            self._queue, self._take = channel
        return self._queue

    async def serve_listen(self) -> None:
        """Write what the hub delivers until the server's closing result, or a hang-up."""
        reply = self._reply
        if not reply.started:
            return  # the stream was refused before its acknowledgement
        self._open_queue()
        take = self._take
        assert take is not None
        async for data in take:
            if peek_message(data).kind in _FINAL_KINDS:
                await reply.answer(data)
                return
            await reply.send_raw(encode_event(data))
        await reply.end_stream()  # the queue overflowed: the client re-listens
