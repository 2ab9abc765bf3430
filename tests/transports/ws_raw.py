"""A WebSocket client driven by hand, for the WebSocket server tests.

The tests of `transports.serve_websocket` must be able to send what no well-behaved
client sends (binary frames, fragments, oversized messages, raw bytes, no pongs), so
the client here is wsproto and a socket, nothing else: no MCP, no runtime.

    async with running_ws(server) as port, await RawWebSocket.connect(port) as ws:
        await ws.send_json({"jsonrpc": "2.0", "id": 1, "method": "ping"})
        answer = await ws.receive_json()
"""

from __future__ import annotations

import json
import ssl
from collections.abc import AsyncIterator, Awaitable, Callable, Sequence
from contextlib import asynccontextmanager
from functools import partial
from typing import Any, Final

import trio
from wsproto import ConnectionType, WSConnection
from wsproto.events import (
    AcceptConnection,
    BytesMessage,
    CloseConnection,
    Event,
    Message,
    Ping,
    RejectConnection,
    RejectData,
    Request,
    TextMessage,
)

from mcpcore.server import Server
from transports import serve_websocket

__all__ = [
    "INITIALIZE",
    "META",
    "READ_TIMEOUT",
    "RawWebSocket",
    "RefusedError",
    "StoppableServer",
    "is_utf8",
    "legacy_request",
    "modern_request",
    "raw_ws_server",
    "running_ws",
]

#: Seconds any one read waits before the test fails.
READ_TIMEOUT: Final = 10.0
MODERN: Final = "2026-07-28"
LEGACY: Final = "2025-11-25"
META: Final = {
    "io.modelcontextprotocol/protocolVersion": MODERN,
    "io.modelcontextprotocol/clientCapabilities": {},
}
INITIALIZE: Final = {
    "protocolVersion": LEGACY,
    "capabilities": {},
    "clientInfo": {"name": "raw", "version": "1"},
}


def modern_request(request_id: int | str, method: str, params: dict[str, Any] | None = None) -> Any:
    """A 2026-07-28 request: its own ``_meta`` envelope, no handshake needed."""
    return {
        "jsonrpc": "2.0",
        "id": request_id,
        "method": method,
        "params": {**(params or {}), "_meta": META},
    }


def legacy_request(request_id: int | str, method: str, params: dict[str, Any] | None = None) -> Any:
    """A request of the handshake eras (no ``_meta`` envelope)."""
    message: dict[str, Any] = {"jsonrpc": "2.0", "id": request_id, "method": method}
    if params is not None:
        message["params"] = params
    return message


def is_utf8(data: bytes) -> bool:
    """Whether ``data`` is UTF-8: what a text frame may carry (RFC 6455 §5.6)."""
    try:
        data.decode("utf-8")
    except UnicodeDecodeError:
        return False
    return True


@asynccontextmanager
async def running_ws(server: Server, **options: Any) -> AsyncIterator[int]:
    """`serve_websocket` for ``server`` on a free port, for the block; fails on errors."""
    errors: list[BaseException] = []
    async with trio.open_nursery() as nursery:
        port = await nursery.start(
            partial(serve_websocket, server, port=0, on_error=errors.append, **options)
        )
        yield port
        nursery.cancel_scope.cancel()
    assert not errors, errors


@asynccontextmanager
async def raw_ws_server(
    handler: Callable[[RawWebSocket], Awaitable[None]],
    *,
    subprotocol: str | None = "mcp",
    ssl_context: ssl.SSLContext | None = None,
) -> AsyncIterator[int]:
    """A WebSocket server by hand on a free port (TLS with ``ssl_context``).

    ``handler`` gets each connection once its handshake is accepted.
    """

    async def serve(stream: trio.abc.Stream) -> None:
        async with stream:
            ws = await RawWebSocket.accept(stream, subprotocol)
            await handler(ws)

    async with trio.open_nursery() as nursery:
        if ssl_context is None:
            plain: list[trio.SocketListener] = await nursery.start(
                partial(trio.serve_tcp, serve, 0, host="127.0.0.1")
            )
            port = plain[0].socket.getsockname()[1]
        else:
            tls: list[trio.SSLListener[trio.SocketStream]] = await nursery.start(
                partial(trio.serve_ssl_over_tcp, serve, 0, ssl_context, host="127.0.0.1")
            )
            transport = tls[0].transport_listener
            assert isinstance(transport, trio.SocketListener)
            port = transport.socket.getsockname()[1]
        yield port
        nursery.cancel_scope.cancel()


class StoppableServer:
    """`serve_websocket` in a cancel scope of its own, so that a test can stop it alone."""

    def __init__(self, server: Server, **options: Any) -> None:
        self.scope = trio.CancelScope()
        self._server = server
        self._options = options

    async def run(self, *, task_status: trio.TaskStatus[int] = trio.TASK_STATUS_IGNORED) -> None:
        """Serve until `stop` (for ``nursery.start``, which gives the port)."""
        with self.scope:
            await serve_websocket(self._server, port=0, task_status=task_status, **self._options)

    def stop(self) -> None:
        """Shut the server down (as cancelling it does)."""
        self.scope.cancel()


class RefusedError(Exception):
    """The server answered the handshake with an HTTP error."""

    def __init__(self, status: int, headers: dict[str, str], body: bytes) -> None:
        super().__init__(f"HTTP {status}")
        self.status = status
        self.headers = headers
        self.body = body


class RawWebSocket:
    """One WebSocket to the server, frames sent and read through wsproto by hand.

    Attributes:
        subprotocol: What the server selected.
        answer_pings: Answer the server's pings (set False to play a dead peer).
        pings: Pings received.
    """

    def __init__(self, stream: trio.abc.Stream, ws: WSConnection, subprotocol: str | None):
        self.stream = stream
        self.ws = ws
        self.subprotocol = subprotocol
        self.answer_pings = True
        self.pings = 0
        self._parts: list[str] = []

    @classmethod
    async def connect(
        cls,
        port: int,
        path: str = "/ws",
        *,
        subprotocols: Sequence[str] = ("mcp",),
        headers: Sequence[tuple[str, str]] = (),
        host: str | None = None,
    ) -> RawWebSocket:
        """Open a WebSocket; raises `RefusedError` when the server refuses the handshake."""
        stream = await trio.open_tcp_stream("127.0.0.1", port)
        ws = WSConnection(ConnectionType.CLIENT)
        request = Request(
            host=host or f"127.0.0.1:{port}",
            target=path,
            subprotocols=list(subprotocols),
            extra_headers=[(name.encode(), value.encode()) for name, value in headers],
        )
        await stream.send_all(ws.send(request))
        refusal: RejectConnection | None = None
        body = b""
        with trio.fail_after(READ_TIMEOUT):
            while True:
                data = await stream.receive_some(65536)
                if not data:
                    await stream.aclose()
                    raise EOFError("the server closed the connection during the handshake")
                ws.receive_data(data)
                for event in ws.events():
                    if isinstance(event, AcceptConnection):
                        return cls(stream, ws, event.subprotocol)
                    if isinstance(event, RejectConnection):
                        refusal = event
                    elif isinstance(event, RejectData):
                        body += event.data
                    if refusal is not None and (
                        not refusal.has_body
                        or (isinstance(event, RejectData) and event.body_finished)
                    ):
                        await stream.aclose()
                        fields = {k.decode().lower(): v.decode() for k, v in refusal.headers}
                        raise RefusedError(refusal.status_code, fields, body)

    @classmethod
    async def accept(cls, stream: trio.abc.Stream, subprotocol: str | None) -> RawWebSocket:
        """The server's side: read a handshake, accept it selecting ``subprotocol``."""
        ws = WSConnection(ConnectionType.SERVER)
        with trio.fail_after(READ_TIMEOUT):
            while True:
                data = bytes(await stream.receive_some(65536))
                if not data:
                    raise EOFError("the client left during the handshake")
                ws.receive_data(data)
                for event in ws.events():
                    if isinstance(event, Request):
                        await stream.send_all(ws.send(AcceptConnection(subprotocol=subprotocol)))
                        return cls(stream, ws, subprotocol)

    async def __aenter__(self) -> RawWebSocket:
        return self

    async def __aexit__(self, *exc: object) -> None:
        await self.stream.aclose()

    # ---------------------------------------------------------------- sending

    async def send_event(self, event: Event) -> None:
        """Send one wsproto event (a message, a frame of one, a ping, a Close)."""
        await self.stream.send_all(self.ws.send(event))

    async def send_json(self, message: Any) -> None:
        """One JSON message in one text frame."""
        await self.send_event(Message(data=json.dumps(message)))

    async def send_raw(self, data: bytes) -> None:
        """Bytes on the wire, as they are."""
        await self.stream.send_all(data)

    # ---------------------------------------------------------------- receiving

    async def next_event(self, *, until_pings: int | None = None) -> Event | None:
        """The next event: a whole text message, binary data, a Close; None at EOF.

        Pings are answered (unless `answer_pings` is off) and counted, not returned;
        with ``until_pings``, None is returned once that many have come.
        """
        with trio.fail_after(READ_TIMEOUT):
            while True:
                if until_pings is not None and self.pings >= until_pings:
                    return None
                for event in self.ws.events():
                    if isinstance(event, Ping):
                        self.pings += 1
                        if self.answer_pings:
                            await self.send_event(event.response())
                        continue
                    if isinstance(event, TextMessage):
                        self._parts.append(event.data)
                        if not event.message_finished:
                            continue
                        text = "".join(self._parts)
                        self._parts = []
                        return TextMessage(data=text)
                    if isinstance(event, (CloseConnection, BytesMessage)):
                        return event
                try:
                    data = bytes(await self.stream.receive_some(65536))
                except trio.BrokenResourceError:
                    data = b""
                if not data:
                    return None
                self.ws.receive_data(data)

    async def receive_json(self) -> Any:
        """The next message, decoded (fails on anything else)."""
        event = await self.next_event()
        assert isinstance(event, TextMessage), event
        return json.loads(event.data)

    async def receive_answer(self, request_id: int | str) -> Any:
        """The answer to ``request_id``, skipping notifications and other answers."""
        while True:
            message = await self.receive_json()
            if message.get("id") == request_id and "method" not in message:
                return message

    async def expect_close(self) -> CloseConnection:
        """Read until the server's Close frame (answering it); that frame."""
        while True:
            event = await self.next_event()
            assert event is not None, "the connection ended without a Close frame"
            if isinstance(event, CloseConnection):
                if self.ws.state.name == "REMOTE_CLOSING":
                    await self.send_event(event.response())
                return event

    async def expect_eof(self) -> None:
        """Read (and drop) until the server closes the TCP connection."""
        while await self.next_event() is not None:
            pass
