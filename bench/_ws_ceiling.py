"""The raw WebSocket ceiling: a bare wsproto + trio JSON echo, no MCP at all.

The server accepts WebSocket handshakes (wsproto, subprotocol ``mcp``) and answers every
text message with ``{"jsonrpc":"2.0","id":<the request's id>,"result":RESULT}``, msgspec
both ways; the answers to one read go out in one write. The client sends the very JSON
text mcpcore's client sends in that era (the id changed each time) as one text frame
through wsproto (masked, as a client must), and reads the answer through wsproto: one
call at a time it writes and reads the socket itself; with many in flight a reader task
routes the answers by id and a writer task joins the waiting frames into one write.

It is what any MCP-over-WebSocket peer on wsproto and trio must at least pay per call:
the TCP round trip through loopback, wsproto's framing (and masking) on both sides, one
JSON decode and encode each way. Under the same IO policy as mcpcore's client and server
in its row: each side spins up to ``busy_poll`` seconds on its socket before its event
loop sleeps (`transports.BusyPolling`, as `transports.serve_websocket` and
`transports.open_websocket_client` do for theirs; 0: never).
"""

from __future__ import annotations

from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from typing import Any, Final

import msgspec
import trio
from wsproto import ConnectionType, WSConnection
from wsproto.events import (
    AcceptConnection,
    CloseConnection,
    Message,
    Ping,
    Request,
    TextMessage,
)

from bench._busy_poll import OFF, busy_polling
from mcpcore_cli.bench.verify import BenchmarkError

__all__ = ["PATH", "READ_SIZE", "CeilingWsClient", "open_ceiling_ws", "serve_ceiling_ws"]

#: Bytes asked of a socket per read (as `transports.serve_websocket` does).
READ_SIZE: Final = 64 * 1024
#: The endpoint path both sides use.
PATH: Final = "/ws"


async def serve_ceiling_ws(
    port: int,
    result: Any,
    *,
    busy_poll: float = OFF,
    task_status: trio.TaskStatus[list[trio.SocketListener]] = trio.TASK_STATUS_IGNORED,
) -> None:
    """Answer every text message on ws://127.0.0.1:``port`` with ``result``, until killed.

    Each connection spins up to ``busy_poll`` seconds before the loop sleeps.
    """
    decode = msgspec.json.Decoder().decode
    encode = msgspec.json.Encoder().encode

    async def serve(stream: trio.SocketStream) -> None:
        with busy_polling(stream.socket.fileno(), busy_poll):
            await answer(stream)

    async def answer(stream: trio.SocketStream) -> None:
        ws = WSConnection(ConnectionType.SERVER)
        partial = ""
        while data := await stream.receive_some(READ_SIZE):
            ws.receive_data(data)
            out = b""
            for event in ws.events():
                if isinstance(event, TextMessage):
                    if not event.message_finished:  # the rest is in the next read
                        partial += event.data
                        continue
                    text, partial = partial + event.data, ""
                    request_id = decode(text)["id"]
                    answer = encode({"jsonrpc": "2.0", "id": request_id, "result": result})
                    out += ws.send(Message(data=answer.decode()))
                elif isinstance(event, Request):
                    out += ws.send(AcceptConnection(subprotocol="mcp"))
                elif isinstance(event, Ping):
                    out += ws.send(event.response())
                elif isinstance(event, CloseConnection):
                    await stream.send_all(out + ws.send(event.response()))
                    return
            if out:
                await stream.send_all(out)

    await trio.serve_tcp(serve, port, host="127.0.0.1", task_status=task_status)


class _Pending:
    """One pipelined call, waiting for its answer."""

    __slots__ = ("answer", "event")

    def __init__(self) -> None:
        self.event = trio.Event()
        self.answer: Any = None


class CeilingWsClient:
    """Sends one JSON-RPC request per text frame over one wsproto connection.

    `call` writes and reads the socket itself (one call at a time); `call_pipelined`
    leaves the writing to `write_requests` and the reading to `read_answers`, which run
    as tasks in ``nursery`` from the first pipelined call on, so that many calls can be
    in flight (and `call` pipelines too from then on: only one task may read).
    """

    def __init__(
        self, stream: trio.SocketStream, ws: WSConnection, request: bytes, nursery: trio.Nursery
    ) -> None:
        self._stream = stream
        self._ws = ws
        self._request: dict[str, Any] = msgspec.json.decode(request)
        self._encode = msgspec.json.Encoder().encode
        self._decode = msgspec.json.Decoder().decode
        self._next_id = 0
        self._pending: dict[int, _Pending] = {}
        self._outbox, self._queued = trio.open_memory_channel[bytes](float("inf"))
        self._nursery = nursery
        self._pipelining = False
        self._partial = ""  # a text message whose end is still to be read

    def _frame(self) -> tuple[int, bytes]:
        self._next_id += 1
        self._request["id"] = self._next_id
        text = self._encode(self._request).decode()
        return self._next_id, self._ws.send(Message(data=text))

    async def call(self) -> Any:
        """One call, alone on the socket: write the request, read the answer; its result."""
        if self._pipelining:
            return await self.call_pipelined()
        request_id, frame = self._frame()
        await self._stream.send_all(frame)
        ws = self._ws
        while True:
            for event in ws.events():
                if isinstance(event, TextMessage):
                    if not event.message_finished:
                        self._partial += event.data
                        continue
                    answer = self._decode(self._partial + event.data)
                    self._partial = ""
                    if answer["id"] != request_id:
                        raise BenchmarkError(f"ceiling: answer {answer['id']!r} to {request_id}")
                    return answer["result"]
            data = await self._stream.receive_some(READ_SIZE)
            if not data:
                raise BenchmarkError("ceiling: the server hung up")
            ws.receive_data(data)

    async def call_pipelined(self) -> Any:
        """One call among many in flight; its result."""
        if not self._pipelining:
            self._pipelining = True
            self._nursery.start_soon(self.write_requests)
            self._nursery.start_soon(self.read_answers)
        request_id, frame = self._frame()
        pending = self._pending[request_id] = _Pending()
        self._outbox.send_nowait(frame)
        await pending.event.wait()
        return pending.answer

    async def write_requests(self) -> None:
        """The writer task: every waiting frame, joined into one write."""
        queued = self._queued
        async for first in queued:
            frames = [first]
            while True:
                try:
                    frames.append(queued.receive_nowait())
                except trio.WouldBlock:
                    break
            await self._stream.send_all(first if len(frames) == 1 else b"".join(frames))

    async def read_answers(self) -> None:
        """The reader task: each answer to the call waiting for it."""
        ws, decode, pending = self._ws, self._decode, self._pending
        while data := await self._stream.receive_some(READ_SIZE):
            ws.receive_data(data)
            for event in ws.events():
                if isinstance(event, TextMessage):
                    if not event.message_finished:  # answers joined past one read
                        self._partial += event.data
                        continue
                    answer = decode(self._partial + event.data)
                    self._partial = ""
                    waiting = pending.pop(answer["id"])
                    waiting.answer = answer["result"]
                    waiting.event.set()
        raise BenchmarkError("ceiling: the server hung up")


async def _connect(port: int) -> tuple[trio.SocketStream, WSConnection]:
    stream = await trio.open_tcp_stream("127.0.0.1", port)
    ws = WSConnection(ConnectionType.CLIENT)
    await stream.send_all(
        ws.send(Request(host=f"127.0.0.1:{port}", target=PATH, subprotocols=["mcp"]))
    )
    while True:
        data = await stream.receive_some(READ_SIZE)
        if not data:
            raise BenchmarkError("ceiling: the server refused the handshake")
        ws.receive_data(data)
        for event in ws.events():
            if isinstance(event, AcceptConnection):
                return stream, ws
            raise BenchmarkError(f"ceiling: unexpected handshake answer {event!r}")


@asynccontextmanager
async def open_ceiling_ws(
    port: int, request: bytes, *, busy_poll: float = OFF
) -> AsyncIterator[CeilingWsClient]:
    """A `CeilingWsClient` to the server on ``port``, its tasks stopped on exit.

    It spins up to ``busy_poll`` seconds on its socket before the loop sleeps.
    """
    stream, ws = await _connect(port)
    async with stream, trio.open_nursery() as nursery:
        with busy_polling(stream.socket.fileno(), busy_poll):
            yield CeilingWsClient(stream, ws, request, nursery)
        nursery.cancel_scope.cancel()
