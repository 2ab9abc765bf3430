"""The raw HTTP ceiling: a bare HTTP/1.1 + trio JSON echo, no MCP at all.

The server answers every POST with ``{"jsonrpc":"2.0","id":<the request's id>,
"result":RESULT}`` (msgspec on both ways, keep-alive, one connection per client
connection): as a JSON body, or (``sse``) as an event stream of that one event
(``event: message`` and its ``data:`` line, chunked, as a Streamable HTTP server streams
an answer), head, event and end in one write. The client POSTs the very JSON body
mcpcore's client sends in that era, with the id changed each time and the headers a
Streamable HTTP client sends, over keep-alive connections: one per concurrent caller,
opened on demand and reused.

It is what any MCP server on trio must at least pay per request: the TCP round trip
through loopback, HTTP/1.1 parsed and framed on both sides by the very code mcpcore's
client and server use (`transports._net.http1`: the same rules as theirs, so that "vs
ceiling" compares MCP's cost alone), one JSON decode and encode each way. Under the same
IO policy as mcpcore's client and server in its row: each
side spins up to ``busy_poll`` seconds on each connection's socket before its event loop
sleeps (`transports.BusyPolling`, as `transports.serve_http` and
`transports.open_http_client` do for theirs; 0: never).
"""

from __future__ import annotations

from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from typing import Any, Final

import msgspec
import trio

from bench._busy_poll import OFF, busy_polling
from mcpcore_cli.bench.verify import BenchmarkError
from transports import BusyPolling
from transports._net import http1

__all__ = ["READ_SIZE", "CeilingHttpClient", "open_ceiling_http", "serve_ceiling_http"]

#: Bytes asked of a socket per read.
READ_SIZE: Final = 64 * 1024
#: The endpoint path both sides use.
PATH: Final = "/mcp"
_TARGET: Final = PATH.encode()


async def _next_message(
    connection: http1.ServerConnection | http1.ClientConnection, stream: trio.SocketStream
) -> bytes | None:
    """The body of the next request or response on ``connection``; None at EOF."""
    body = b""
    while True:
        event = connection.next_event()
        if event is http1.NEED_DATA:
            connection.receive_data(await stream.receive_some(READ_SIZE))
        elif isinstance(event, http1.Data):
            body += event.data
        elif event is http1.END:
            return body
        elif event is http1.CLOSED:
            return None


#: The head of an event-stream answer (no length: the body is chunked).
_SSE_HEADERS: Final = [(b"content-type", b"text/event-stream"), (b"cache-control", b"no-cache")]
_JSON_HEADERS: Final = [(b"content-type", b"application/json")]


def _data_of(body: bytes) -> bytes:
    """The ``data:`` of the one event of an event-stream body."""
    for line in body.splitlines():
        if line.startswith(b"data:"):
            return line[5:].lstrip(b" ")
    raise BenchmarkError(f"ceiling: no data in the event stream {body[:80]!r}")


async def serve_ceiling_http(
    port: int,
    result: Any,
    *,
    sse: bool = False,
    busy_poll: float = OFF,
    task_status: trio.TaskStatus[list[trio.SocketListener]] = trio.TASK_STATUS_IGNORED,
) -> None:
    """Answer every POST on 127.0.0.1:``port`` with ``result`` until killed (``sse``: as events).

    Each connection spins up to ``busy_poll`` seconds before the loop sleeps.
    """
    decode = msgspec.json.Decoder().decode
    encode = msgspec.json.Encoder().encode

    async def serve(stream: trio.SocketStream) -> None:
        with busy_polling(stream.socket.fileno(), busy_poll):
            await answer(stream)

    async def answer(stream: trio.SocketStream) -> None:
        connection = http1.ServerConnection()
        while (body := await _next_message(connection, stream)) is not None:
            payload = encode({"jsonrpc": "2.0", "id": decode(body)["id"], "result": result})
            if sse:
                payload = b"event: message\ndata: " + payload + b"\n\n"
                out = connection.send_stream_head(200, _SSE_HEADERS)
                out += connection.send_data(payload) + connection.send_end()
            else:
                out = connection.send_response(200, _JSON_HEADERS, payload)
            await stream.send_all(out)
            connection.start_next_cycle()

    await trio.serve_tcp(serve, port, host="127.0.0.1", task_status=task_status)


class CeilingHttpClient:
    """POSTs one JSON-RPC request per call over keep-alive HTTP/1.1 connections.

    Args:
        port: The ceiling server's port on 127.0.0.1.
        request: The JSON-RPC request body (its id is replaced per call).
        headers: The request's headers besides host, content type and length.
        sse: The server answers with event streams (the answer is the event's data).
        busy_poll: Seconds to spin on each connection's socket before the loop sleeps.
    """

    def __init__(
        self,
        port: int,
        request: bytes,
        headers: list[tuple[str, str]],
        *,
        sse: bool = False,
        busy_poll: float = OFF,
    ) -> None:
        self._port = port
        self._sse = sse
        self._busy_poll = busy_poll
        self._request: dict[str, Any] = msgspec.json.decode(request)
        self._headers = [
            (b"host", f"127.0.0.1:{port}".encode()),
            (b"content-type", b"application/json"),
            (b"accept", b"application/json, text/event-stream"),
            *((name.encode("latin-1"), value.encode("latin-1")) for name, value in headers),
        ]
        self._encode = msgspec.json.Encoder().encode
        self._decode = msgspec.json.Decoder().decode
        self._idle: list[tuple[http1.ClientConnection, trio.SocketStream]] = []
        self._streams: list[trio.SocketStream] = []
        self._polling: list[BusyPolling] = []
        self._next_id = 0

    async def call(self) -> Any:
        """One request on a free connection (a new one if all are busy); its result."""
        if self._idle:
            connection, stream = self._idle.pop()
        else:
            stream = await trio.open_tcp_stream("127.0.0.1", self._port)
            self._streams.append(stream)
            self._polling.append(busy_polling(stream.socket.fileno(), self._busy_poll))
            connection = http1.ClientConnection()
        self._next_id += 1
        request_id = self._request["id"] = self._next_id
        body = self._encode(self._request)
        await stream.send_all(connection.send_request(b"POST", _TARGET, self._headers, body))
        message = await _next_message(connection, stream)
        if message is None:
            raise BenchmarkError("ceiling: the server hung up")
        answer = self._decode(_data_of(message) if self._sse else message)
        if answer["id"] != request_id:
            raise BenchmarkError(f"ceiling: answer {answer['id']!r} to request {request_id}")
        connection.start_next_cycle()
        self._idle.append((connection, stream))
        return answer["result"]

    async def aclose(self) -> None:
        """Close every connection (its busy polling first)."""
        for polling in self._polling:
            polling.close()
        for stream in self._streams:
            await stream.aclose()


@asynccontextmanager
async def open_ceiling_http(
    port: int,
    request: bytes,
    headers: list[tuple[str, str]],
    *,
    sse: bool = False,
    busy_poll: float = OFF,
) -> AsyncIterator[CeilingHttpClient]:
    """A `CeilingHttpClient` to the server on ``port``, closed on exit."""
    client = CeilingHttpClient(port, request, headers, sse=sse, busy_poll=busy_poll)
    try:
        yield client
    finally:
        with trio.CancelScope(shield=True):
            await client.aclose()
