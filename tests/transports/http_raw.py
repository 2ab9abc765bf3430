"""Raw HTTP/1.1 for the HTTP server tests: bytes written by hand, responses read by hand.

The tests of `transports.serve_http` must be able to send what no well-behaved client
sends (a wrong ``Host``, a dribbled head, two requests in one write), so the client
here writes raw bytes and reads responses with a minimal parser of its own (status
line, headers, ``Content-Length`` or chunked bodies, and server-sent events through
`mcpcore.framing.SSEParser`). It is not the project's HTTP client.

    async with running_server(build()) as server:
        async with await RawConnection.open(server.port) as http:
            response = await http.request("POST", body=modern_body("tools/list"), headers=...)

Tests run on a `trio.testing.MockClock` that runs at real speed (`http_test`), so that
a test can jump past a timeout instead of sleeping through it.
"""

from __future__ import annotations

import functools
import json
from collections.abc import AsyncIterator, Callable, Coroutine
from contextlib import asynccontextmanager
from dataclasses import dataclass, field
from functools import partial
from typing import Any, Final

import trio
import trio.testing

from mcpcore.framing import SSEEvent, SSEParser
from mcpcore.server import Context, Server
from transports import serve_http

__all__ = [
    "LEGACY",
    "MODERN",
    "POST_HEADERS",
    "TEST_TIMEOUT",
    "RawConnection",
    "RawResponse",
    "RunningServer",
    "build_test_server",
    "http_test",
    "jump",
    "message",
    "modern_body",
    "modern_headers",
    "running_server",
]

#: Seconds a test may take (real time plus clock jumps are both bounded by it).
TEST_TIMEOUT: Final = 60.0
#: Seconds any one read waits before the test fails.
READ_TIMEOUT: Final = 10.0
MODERN: Final = "2026-07-28"
LEGACY: Final = "2025-11-25"
META: Final = {
    "io.modelcontextprotocol/protocolVersion": MODERN,
    "io.modelcontextprotocol/clientCapabilities": {},
}
#: The headers of a legacy POST (the modern ones: `modern_headers`).
POST_HEADERS: Final = {
    "Content-Type": "application/json",
    "Accept": "application/json, text/event-stream",
}


def message(method: str, params: dict[str, Any] | None = None, request_id: Any = None) -> bytes:
    """A JSON-RPC request (with ``request_id``) or notification, as bytes."""
    body: dict[str, Any] = {"jsonrpc": "2.0", "method": method}
    if request_id is not None:
        body["id"] = request_id
    if params is not None:
        body["params"] = params
    return json.dumps(body).encode()


def http_test(test: Callable[..., Coroutine[Any, Any, None]]) -> Callable[..., None]:
    """Run an async test on a real-speed `MockClock` (see `jump`), bounded in time."""

    @functools.wraps(test)
    def wrapper(*args: Any, **kwargs: Any) -> None:
        async def bounded() -> None:
            with trio.fail_after(TEST_TIMEOUT):
                await test(*args, **kwargs)

        trio.run(bounded, clock=trio.testing.MockClock(rate=1.0))

    return wrapper


async def jump(seconds: float) -> None:
    """Move the clock forward (past a timeout), and let the tasks that wake up run."""
    clock = trio.lowlevel.current_clock()
    assert isinstance(clock, trio.testing.MockClock)
    await trio.testing.wait_all_tasks_blocked(0.05)  # the server is done with what it got
    clock.jump(seconds)
    await trio.testing.wait_all_tasks_blocked(0.05)


def build_test_server() -> tuple[Server, dict[str, Any]]:
    """The everything server plus tools that record what happened to them."""
    from examples.everything import build_server

    server = build_server(trio.sleep)
    record: dict[str, Any] = {"started": trio.Event(), "cancelled": trio.Event()}

    @server.tool()
    async def wait_forever(ctx: Context) -> str:
        """Waits until cancelled, and says so."""
        record["started"].set()
        try:
            await trio.sleep_forever()
        finally:
            record["cancelled"].set()

    @server.tool()
    async def progress_then_wait(ctx: Context) -> str:
        """Reports progress, then waits for the test to let it finish."""
        await ctx.report_progress(1, 2)
        record.setdefault("release", trio.Event())
        await record["release"].wait()
        await ctx.report_progress(2, 2)
        return "released"

    @server.tool()
    def big_text() -> str:
        """Returns more text than the socket buffers hold (32 MiB)."""
        return "x" * (32 * 1024 * 1024)

    return server, record


@dataclass
class RunningServer:
    """A `serve_http` in the test's nursery."""

    port: int
    server: Server
    errors: list[BaseException] = field(default_factory=list)

    @property
    def host(self) -> str:
        """The ``Host`` header naming it."""
        return f"127.0.0.1:{self.port}"


@asynccontextmanager
async def running_server(server: Server, **options: Any) -> AsyncIterator[RunningServer]:
    """Serve ``server`` on a free port for the block; fails on any connection error."""
    errors: list[BaseException] = []
    async with trio.open_nursery() as nursery:
        port = await nursery.start(
            partial(serve_http, server, port=0, on_error=errors.append, **options)
        )
        yield RunningServer(port, server, errors)
        nursery.cancel_scope.cancel()
    assert not errors, errors


@dataclass
class RawResponse:
    """A response read off the wire."""

    status: int
    headers: dict[str, str]
    body: bytes = b""

    def json(self) -> Any:
        """The body as JSON."""
        return json.loads(self.body)


def modern_body(
    method: str, params: dict[str, Any] | None = None, request_id: int | str | None = 1
) -> bytes:
    """A 2026-07-28 request (or notification when ``request_id`` is None) with its _meta."""
    message: dict[str, Any] = {"jsonrpc": "2.0", "method": method}
    if request_id is not None:
        message["id"] = request_id
    message["params"] = {**(params or {}), "_meta": {**META, **(params or {}).get("_meta", {})}}
    return json.dumps(message).encode()


def modern_headers(method: str, name: str | None = None, **extra: str) -> dict[str, str]:
    """The headers of a 2026-07-28 POST."""
    headers = {
        "Content-Type": "application/json",
        "Accept": "application/json, text/event-stream",
        "MCP-Protocol-Version": MODERN,
        "Mcp-Method": method,
    }
    if name is not None:
        headers["Mcp-Name"] = name
    headers.update(extra)
    return headers


class RawConnection:
    """One TCP connection to the server, spoken to in raw HTTP/1.1."""

    def __init__(self, stream: trio.SocketStream, host: str) -> None:
        self.stream = stream
        self.host = host
        self._buffer = bytearray()
        self._eof = False
        self._chunked = False
        self._remaining: int | None = None  # body bytes left (Content-Length)
        self._sse = SSEParser()

    @classmethod
    async def open(cls, port: int) -> RawConnection:
        """Connect to ``127.0.0.1:port``."""
        return cls(await trio.open_tcp_stream("127.0.0.1", port), f"127.0.0.1:{port}")

    async def __aenter__(self) -> RawConnection:
        return self

    async def __aexit__(self, *exc: object) -> None:
        await self.stream.aclose()

    # ---------------------------------------------------------------- writing

    def encode(
        self,
        method: str = "POST",
        target: str = "/mcp",
        headers: dict[str, str] | None = None,
        body: bytes = b"",
        *,
        host: str | None = None,
    ) -> bytes:
        """A request's bytes; ``Host`` and ``Content-Length`` unless given."""
        fields = {"Host": host or self.host, **(headers or {})}
        if body or method == "POST":
            fields.setdefault("Content-Length", str(len(body)))
        head = f"{method} {target} HTTP/1.1\r\n" + "".join(
            f"{name}: {value}\r\n" for name, value in fields.items()
        )
        return head.encode("latin-1") + b"\r\n" + body

    async def send(self, data: bytes) -> None:
        """Write raw bytes."""
        await self.stream.send_all(data)

    async def request(
        self,
        method: str = "POST",
        target: str = "/mcp",
        headers: dict[str, str] | None = None,
        body: bytes = b"",
        **options: Any,
    ) -> RawResponse:
        """Send a request and read its whole response."""
        await self.send(self.encode(method, target, headers, body, **options))
        return await self.read_response()

    # ---------------------------------------------------------------- reading

    async def _fill(self) -> bool:
        """Read more bytes; False at end of stream."""
        if self._eof:
            return False
        with trio.fail_after(READ_TIMEOUT):
            try:
                data = await self.stream.receive_some(65536)
            except trio.BrokenResourceError:
                data = b""
        if not data:
            self._eof = True
            return False
        self._buffer += data
        return True

    async def _read_until(self, marker: bytes) -> bytes:
        while (end := self._buffer.find(marker)) < 0:
            if not await self._fill():
                raise EOFError("the server closed the connection")
        data = bytes(self._buffer[: end + len(marker)])
        del self._buffer[: end + len(marker)]
        return data

    async def _read_exactly(self, size: int) -> bytes:
        while len(self._buffer) < size:
            if not await self._fill():
                raise EOFError("the server closed the connection")
        data = bytes(self._buffer[:size])
        del self._buffer[:size]
        return data

    async def read_head(self) -> RawResponse:
        """Read a status line and headers (skipping 1xx responses); the body is not read."""
        while True:
            head = (await self._read_until(b"\r\n\r\n")).decode("latin-1")
            status_line, *lines = head[:-4].split("\r\n")
            status = int(status_line.split(" ")[1])
            headers: dict[str, str] = {}
            for line in lines:
                name, _, value = line.partition(":")
                headers[name.strip().lower()] = value.strip()
            if status >= 200:
                break
        self._chunked = headers.get("transfer-encoding", "").lower() == "chunked"
        length = headers.get("content-length")
        self._remaining = int(length) if length is not None else None
        self._sse = SSEParser()
        return RawResponse(status, headers)

    async def read_chunk(self) -> bytes:
        """The next piece of the body; b"" at its end."""
        if self._chunked:
            size = int((await self._read_until(b"\r\n")).strip().split(b";")[0], 16)
            data = await self._read_exactly(size)
            await self._read_exactly(2)
            return data
        if self._remaining is not None:
            if self._remaining == 0:
                return b""
            data = await self._read_exactly(self._remaining)
            self._remaining = 0
            return data
        # Delimited by the end of the connection.
        if not self._buffer and not await self._fill():
            return b""
        data = bytes(self._buffer)
        self._buffer.clear()
        return data

    async def read_response(self) -> RawResponse:
        """Read a whole response."""
        response = await self.read_head()
        parts = []
        while chunk := await self.read_chunk():
            parts.append(chunk)
        response.body = b"".join(parts)
        return response

    async def read_events(self, count: int) -> list[SSEEvent]:
        """Read ``count`` events of the event stream whose head was read."""
        events: list[SSEEvent] = []
        while len(events) < count:
            chunk = await self.read_chunk()
            if not chunk:
                raise EOFError(f"the stream ended after {len(events)} events")
            events.extend(self._sse.feed(chunk))
        return events

    async def read_all_events(self) -> list[SSEEvent]:
        """Read the event stream to its end."""
        events: list[SSEEvent] = []
        while chunk := await self.read_chunk():
            events.extend(self._sse.feed(chunk))
        return events

    async def closed_by_server(self) -> bool:
        """Read until the server closes the connection (whatever it sent before)."""
        while await self._fill():
            pass
        return True
