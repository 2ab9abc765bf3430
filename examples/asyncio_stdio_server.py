"""The everything server over stdio, driven by plain asyncio: no trio anywhere.

It shows what embedding mcpcore takes: a loop that reads bytes, a `LineFramer` that
cuts them into messages, a `Connection` that turns each into events, a `Server` that
answers, and one writer. Each request runs in its own task; a cancellation from the
client cancels that task.

    python examples/asyncio_stdio_server.py
"""

from __future__ import annotations

import asyncio
import os
import secrets
import sys
import time
from pathlib import Path
from typing import Any

if __package__ in (None, ""):  # run as a script: make the repository importable
    sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from examples.everything import build_server
from mcpcore import (
    CancelRequested,
    ErrorReceived,
    Event,
    InvalidMessage,
    InvalidResponse,
    NotificationReceived,
    RequestReceived,
    ResponseReceived,
    jsonrpc,
)
from mcpcore.framing import LineFramer, OversizedMessage
from mcpcore.server import Server
from mcpcore.types import RequestId

#: Bytes read from stdin at a time.
READ_SIZE = 64 * 1024


class StdioOutbound:
    """Writes whole lines to stdout, and routes the client's answers back to their askers."""

    def __init__(self, writer: asyncio.StreamWriter) -> None:
        self._writer = writer
        self._waiting: dict[RequestId, asyncio.Future[Any]] = {}

    async def send(self, data: bytes) -> None:
        """Write one message as one line."""
        self._writer.write(data + b"\n")
        await self._writer.drain()

    async def request(self, request_id: RequestId, data: bytes) -> Any:
        """Send a server-to-client request and wait for its answer."""
        future: asyncio.Future[Any] = asyncio.get_running_loop().create_future()
        self._waiting[request_id] = future
        await self.send(data)
        return await future

    def answered(self, event: ResponseReceived | ErrorReceived | InvalidResponse) -> None:
        """Hand an answer to whoever asked."""
        future = None if event.request_id is None else self._waiting.pop(event.request_id, None)
        if future is not None and not future.done():
            future.set_result(event)


async def open_stdio() -> tuple[asyncio.StreamReader, asyncio.StreamWriter]:
    """This process's stdin and stdout as an asyncio reader and writer."""
    loop = asyncio.get_running_loop()
    reader = asyncio.StreamReader()
    await loop.connect_read_pipe(
        lambda: asyncio.StreamReaderProtocol(reader), os.fdopen(0, "rb", 0)
    )
    transport, protocol = await loop.connect_write_pipe(
        asyncio.streams.FlowControlMixin, os.fdopen(1, "wb", 0)
    )
    return reader, asyncio.StreamWriter(transport, protocol, reader, loop)


class Session:
    """The client's one connection: each message in becomes what it asks for.

    Each request runs in a task of its own, kept by id so a cancellation can cancel it.
    """

    def __init__(self, server: Server, outbound: StdioOutbound) -> None:
        self._server = server
        self._outbound = outbound
        self.connection = server.connection()
        self._tasks: dict[RequestId, asyncio.Task[None]] = {}

    async def receive(self, line: bytes | OversizedMessage) -> None:
        """Take one line from the framer and act on every event it makes."""
        if isinstance(line, OversizedMessage):
            message = f"Message too large (limit {line.limit} bytes)"
            await self._outbound.send(
                jsonrpc.encode_error_response(None, jsonrpc.INVALID_REQUEST, message)
            )
            return
        for event in self.connection.receive(line):
            await self._dispatch(event)

    async def finish(self) -> None:
        """Let the requests still running finish (for a while)."""
        if self._tasks:
            await asyncio.wait(list(self._tasks.values()), timeout=5)

    async def _dispatch(self, event: Event) -> None:
        if isinstance(event, RequestReceived):
            self._tasks[event.request_id] = asyncio.create_task(self._answer(event))
        elif isinstance(event, CancelRequested):
            task = self._tasks.get(event.request_id)
            if task is not None:
                task.cancel()
            self._server.request_cancelled(self.connection, event.request_id)
        elif isinstance(event, ResponseReceived | ErrorReceived | InvalidResponse):
            self._outbound.answered(event)
        elif isinstance(event, NotificationReceived):
            await self._server.handle_notification(self.connection, event)
        elif isinstance(event, InvalidMessage) and event.reply is not None:
            await self._outbound.send(event.reply)

    async def _answer(self, event: RequestReceived) -> None:
        try:
            reply = await self._server.handle_request(self.connection, event, self._outbound)
            if reply is not None:
                await self._outbound.send(reply)
        finally:
            self._tasks.pop(event.request_id, None)


async def serve(server: Server) -> None:
    """Serve ``server`` on this process's stdin and stdout until stdin ends."""
    reader, writer = await open_stdio()
    outbound = StdioOutbound(writer)
    session = Session(server, outbound)
    server.attach(session.connection, outbound)
    framer = LineFramer()
    while chunk := await reader.read(READ_SIZE):
        for line in framer.feed(chunk):
            await session.receive(line)
    # stdin ended: "(S) SHOULD exit promptly on stdin EOF"; let running requests finish.
    await session.finish()
    server.detach(session.connection)


def main() -> None:
    """Run the everything server on stdio."""
    server = build_server(asyncio.sleep, secret=secrets.token_bytes(32), clock=time.time)
    asyncio.run(serve(server))


if __name__ == "__main__":
    main()
