"""The 2026-07-28 `mcpcore.Connection` objects of an ASGI app, reused from request to request.

``serve_http`` builds one `Connection` per TCP connection and serves that client's
2026-07-28 requests with it one after another (`transports._http.server.modern`). An
ASGI app is shown requests, not connections, and building a `Connection` (its envelope
and method tables) with its teardown costs ~7 µs, a twentieth of a whole request here.
So a request takes an idle one, and gives it back once it is answered; a request that
ended otherwise (cancelled, the client gone, an error) takes its `Connection` with it
(`mcpcore.server.Server.detach`), as a closed TCP connection does. A `Connection` serves
one request at a time, as on a TCP connection, so ids never collide.
"""

from __future__ import annotations

from typing import Final

from mcpcore import Connection
from mcpcore.server import Server

__all__ = ["MAX_POOLED_CONNECTIONS", "ConnectionPool"]

#: Idle `Connection` objects kept for the next requests: one per request in flight at the
#: concurrency one worker sustains (a few kilobytes each); past it, they are dropped.
MAX_POOLED_CONNECTIONS: Final = 256


class ConnectionPool:
    """Hands out `Connection` objects of ``server`` and takes them back.

    Args:
        server: Whose connections these are.
        max_idle: See `MAX_POOLED_CONNECTIONS`.
    """

    __slots__ = ("_idle", "_max_idle", "_server")

    def __init__(self, server: Server, max_idle: int = MAX_POOLED_CONNECTIONS) -> None:
        self._server = server
        self._max_idle = max_idle
        self._idle: list[Connection] = []

    def take(self) -> Connection:
        """An idle connection, or a new one."""
        idle = self._idle
        return idle.pop() if idle else self._server.connection()

    def give_back(self, connection: Connection, *, clean: bool) -> None:
        """A request is done with ``connection``: keep it if it ended ``clean``ly."""
        if clean and len(self._idle) < self._max_idle:
            self._idle.append(connection)
        else:
            self._server.detach(connection)
