"""TARGET on the command line, and the mcpcore clients that reach it.

A target is a URL (``http(s)://`` for Streamable HTTP, either era, or the 2024-11-05
HTTP+SSE transport; ``ws(s)://`` for WebSocket) or the command that starts a stdio
server. `open_clients` opens what a run at a concurrency of C needs, as wrk does:

- HTTP: one client whose pool keeps C keep-alive connections (a 2025-11-25 session is
  shared by all of them, as a real client's would be), and one more for the stream of a
  2024-11-05 HTTP+SSE server;
- WebSocket: C clients, one connection each;
- stdio: one server process, its one pipe carrying the C requests in flight (its stderr
  captured, bounded: the end of it says why a server that exits at once did).

Every client is opened without the result cache (a 2026-07-28 result with a ``ttlMs``
would otherwise be answered from memory, and the server never asked) and, over HTTP,
without the legacy GET stream (it would hold one of the C connections).
"""

from __future__ import annotations

from collections.abc import AsyncIterator, Sequence
from contextlib import AsyncExitStack, asynccontextmanager
from dataclasses import dataclass
from typing import Final, Literal
from urllib.parse import urlsplit

from mcpcore.client import ConnectMode
from transports import Client, open_http_client, open_stdio_client, open_websocket_client

__all__ = [
    "HTTP_SCHEMES",
    "STREAM_CONNECTIONS",
    "WEBSOCKET_SCHEMES",
    "Target",
    "open_clients",
    "parse_target",
]

#: URL schemes of Streamable HTTP (and the legacy HTTP+SSE transport).
HTTP_SCHEMES: Final = frozenset({"http", "https"})
#: URL schemes of MCP over WebSocket.
WEBSOCKET_SCHEMES: Final = frozenset({"ws", "wss"})
#: Connections an HTTP client may hold besides the C that carry requests: the 2024-11-05
#: HTTP+SSE transport (a server without Streamable HTTP) answers on one long GET stream,
#: which holds a connection of its own. (Streamable HTTP never opens it: no GET stream.)
STREAM_CONNECTIONS: Final = 1


@dataclass(frozen=True)
class Target:
    """What a load test drives.

    Attributes:
        transport: ``http``, ``websocket`` or ``stdio``.
        url: The server's URL (None for stdio).
        command: The command that starts the stdio server (empty for a URL).
    """

    transport: Literal["http", "websocket", "stdio"]
    url: str | None = None
    command: tuple[str, ...] = ()

    def describe(self) -> str:
        """The target as the report names it."""
        return self.url if self.url is not None else " ".join(self.command)


def parse_target(words: Sequence[str]) -> Target:
    """The target of the command line: one URL, or a command (after ``--``).

    Raises:
        ValueError: Nothing given, or a URL of another scheme.
    """
    if not words:
        raise ValueError("give a URL (http://, ws://) or -- and the command of a stdio server")
    scheme = urlsplit(words[0]).scheme.lower() if len(words) == 1 else ""
    if scheme in HTTP_SCHEMES:
        return Target("http", url=words[0])
    if scheme in WEBSOCKET_SCHEMES:
        return Target("websocket", url=words[0])
    if "://" in words[0] and len(words) == 1:
        raise ValueError(f"{words[0]!r}: the URL must be http(s):// or ws(s)://")
    return Target("stdio", command=tuple(words))


@asynccontextmanager
async def open_clients(
    target: Target, concurrency: int, *, mode: ConnectMode, timeout: float
) -> AsyncIterator[list[Client]]:
    """The clients a run at ``concurrency`` shares out among its workers (see above).

    Raises:
        ConnectionClosedError: The server could not be reached (or went away).
        HttpStatusError: The server refused us at the HTTP level.
        OSError: The stdio server's command could not be started.
    """
    async with AsyncExitStack() as stack:
        if target.transport == "http":
            assert target.url is not None
            client: Client = await stack.enter_async_context(
                open_http_client(
                    target.url,
                    mode=mode,
                    timeout=timeout,
                    cache=False,
                    get_stream=False,
                    max_connections=concurrency + STREAM_CONNECTIONS,
                    max_idle_connections=concurrency,
                )
            )
            yield [client]
        elif target.transport == "websocket":
            assert target.url is not None
            yield [
                await stack.enter_async_context(
                    open_websocket_client(target.url, mode=mode, timeout=timeout, cache=False)
                )
                for _ in range(concurrency)
            ]
        else:
            program, *arguments = target.command
            client = await stack.enter_async_context(
                open_stdio_client(
                    program, arguments, mode=mode, timeout=timeout, cache=False, stderr="capture"
                )
            )
            yield [client]
