"""A tiny scripted HTTP/1.1 server (trio + h11) for client tests: each test writes the answers.

    async def handler(request: Received, reply: Reply) -> None:
        if request.method == "POST":
            await reply.json({"jsonrpc": "2.0", "id": request.message["id"], "result": {}})

    async with scripted_server(handler) as server:
        ...  # server.url, server.requests

Bound to 127.0.0.1 on a port the kernel picks. Each connection is served by a task of
its own, request after request (keep-alive); a handler may answer with JSON, with an
event stream written event by event, with an empty status, or cut the connection.
Whatever the handler leaves unanswered gets a 500.
"""

from __future__ import annotations

import json
import ssl
from collections.abc import AsyncIterator, Awaitable, Callable
from contextlib import asynccontextmanager
from dataclasses import dataclass, field
from typing import Any

import h11
import trio

from mcpcore.framing import encode_comment, encode_event

__all__ = ["Received", "Reply", "ScriptedServer", "scripted_server"]


@dataclass
class Received:
    """One request the server got (headers lower-cased)."""

    method: str
    target: str
    headers: dict[str, str]
    body: bytes
    connection: int

    @property
    def message(self) -> Any:
        """The body as JSON (None when empty)."""
        return json.loads(self.body) if self.body else None

    @property
    def rpc_method(self) -> str | None:
        message = self.message
        return message.get("method") if isinstance(message, dict) else None


class Reply:
    """The handler's way to answer one request."""

    def __init__(self, stream: trio.abc.Stream, conn: h11.Connection) -> None:
        self._stream = stream
        self._conn = conn
        self.started = False
        self.finished = False
        self.aborted = False

    async def _send(self, event: h11.Event) -> None:
        data = self._conn.send(event)
        if data:
            await self._stream.send_all(data)

    async def status(self, status: int, headers: list[tuple[str, str]] | None = None) -> None:
        """An answer without a body."""
        await self.body(status, b"", "text/plain", headers)

    async def json(
        self, value: Any, status: int = 200, headers: list[tuple[str, str]] | None = None
    ) -> None:
        """A JSON answer."""
        data = value if isinstance(value, bytes) else json.dumps(value).encode()
        await self.body(status, data, "application/json", headers)

    async def body(
        self,
        status: int,
        data: bytes,
        content_type: str,
        headers: list[tuple[str, str]] | None = None,
    ) -> None:
        """An answer with a body of ``content_type``."""
        all_headers = [("content-type", content_type), ("content-length", str(len(data)))]
        await self._send(h11.Response(status_code=status, headers=all_headers + (headers or [])))
        self.started = True
        if data:
            await self._send(h11.Data(data=data))
        await self._send(h11.EndOfMessage())
        self.finished = True

    async def sse(self, headers: list[tuple[str, str]] | None = None) -> None:
        """Start an event stream (chunked); then `event` and `end`."""
        all_headers = [("content-type", "text/event-stream"), ("cache-control", "no-cache")]
        await self._send(h11.Response(status_code=200, headers=all_headers + (headers or [])))
        self.started = True

    async def event(
        self,
        data: Any = "",
        *,
        id: str | None = None,
        retry: int | None = None,
        event: str | None = None,
    ) -> None:
        """One event; ``data`` JSON-encoded unless it is a string."""
        text = data if isinstance(data, str) else json.dumps(data)
        await self._send(h11.Data(data=encode_event(text, id=id, retry=retry, event=event)))

    async def comment(self, text: str = "keep-alive") -> None:
        """An SSE comment."""
        await self._send(h11.Data(data=encode_comment(text)))

    async def end(self) -> None:
        """End the event stream."""
        await self._send(h11.EndOfMessage())
        self.finished = True

    async def abort(self) -> None:
        """Cut the connection at once, whatever was sent."""
        self.aborted = True
        await trio.aclose_forcefully(self._stream)


Handler = Callable[[Received, Reply], Awaitable[None]]


@dataclass
class ScriptedServer:
    """The running server: its URL, and every request it received."""

    port: int
    path: str
    scheme: str = "http"
    requests: list[Received] = field(default_factory=list)
    connections: int = 0
    #: Connections open now, and the most ever open at once.
    open_connections: int = 0
    most_open: int = 0
    #: Set each time a request arrives (a test waits on it instead of sleeping).
    arrived: trio.Event = field(default_factory=trio.Event)
    #: Cancel scopes of the connection tasks (to kill every connection at once).
    scopes: list[trio.CancelScope] = field(default_factory=list)

    @property
    def url(self) -> str:
        return f"{self.scheme}://127.0.0.1:{self.port}{self.path}"

    def rpc(self, method: str) -> list[Received]:
        """The requests whose JSON-RPC method is ``method``."""
        return [request for request in self.requests if request.rpc_method == method]

    async def wait_for(self, predicate: Callable[[], bool]) -> None:
        """Wait until ``predicate()`` holds, checked at each arrival (bounded by the test)."""
        while not predicate():
            self.arrived = trio.Event()
            await self.arrived.wait()

    def kill_connections(self) -> None:
        """Cut every open connection (the server "dies" mid-call)."""
        for scope in self.scopes:
            scope.cancel()


async def _serve_connection(
    stream: trio.abc.Stream, server: ScriptedServer, handler: Handler
) -> None:
    server.connections += 1
    server.open_connections += 1
    server.most_open = max(server.most_open, server.open_connections)
    number = server.connections
    conn = h11.Connection(h11.SERVER)
    scope = trio.CancelScope()
    server.scopes.append(scope)
    with scope:
        try:
            while (received := await _read_request(stream, conn, number)) is not None:
                server.requests.append(received)
                server.arrived.set()
                reply = Reply(stream, conn)
                await handler(received, reply)
                if reply.aborted:
                    return
                await _complete(reply)
                if conn.our_state is h11.MUST_CLOSE or conn.their_state is h11.MUST_CLOSE:
                    return
                conn.start_next_cycle()
        except (trio.BrokenResourceError, trio.ClosedResourceError, h11.RemoteProtocolError):
            return
        finally:
            server.open_connections -= 1
            await trio.aclose_forcefully(stream)


async def _read_request(
    stream: trio.abc.Stream, conn: h11.Connection, number: int
) -> Received | None:
    """The next whole request on connection ``number``; None once the client is done."""
    request: h11.Request | None = None
    body = b""
    while True:
        event = conn.next_event()
        if event is h11.NEED_DATA:
            data = await stream.receive_some(65536)
            conn.receive_data(bytes(data))
        elif isinstance(event, h11.Request):
            request = event
        elif isinstance(event, h11.Data):
            body += event.data
        elif isinstance(event, h11.EndOfMessage):
            break
        elif isinstance(event, h11.ConnectionClosed) or event is h11.PAUSED:
            return None
    assert request is not None
    return Received(
        request.method.decode(),
        request.target.decode(),
        {k.decode(): v.decode() for k, v in request.headers},
        body,
        number,
    )


async def _complete(reply: Reply) -> None:
    """Answer 500 if the handler did not answer; end the event stream it left open."""
    if not reply.started:
        await reply.status(500)
    elif not reply.finished:
        await reply.end()


@asynccontextmanager
async def scripted_server(
    handler: Handler, path: str = "/mcp", *, tls: ssl.SSLContext | None = None
) -> AsyncIterator[ScriptedServer]:
    """Run a scripted server for the duration of the block (over TLS with ``tls``)."""
    async with trio.open_nursery() as nursery:
        listeners = await trio.open_tcp_listeners(0, host="127.0.0.1")
        port = listeners[0].socket.getsockname()[1]
        server = ScriptedServer(port, path, scheme="http" if tls is None else "https")

        async def serve(stream: trio.abc.Stream) -> None:
            if isinstance(stream, trio.SSLStream):
                try:
                    await stream.do_handshake()
                except trio.BrokenResourceError:
                    return  # the client refused our certificate
            await _serve_connection(stream, server, handler)

        served: list[trio.abc.Listener[Any]] = list(listeners)
        if tls is not None:
            served = [
                trio.SSLListener(listener, tls, https_compatible=True) for listener in listeners
            ]
        nursery.start_soon(trio.serve_listeners, serve, served)
        try:
            yield server
        finally:
            nursery.cancel_scope.cancel()
