"""A small bounded pool of keep-alive connections to one server.

Each MCP message is its own POST ("each client message MUST be its own POST"), so
several may be in flight at once, each on its own connection; when one finishes its
connection goes back to the pool and carries the next request, saving the TCP (and
TLS) handshake: sequential calls on one client use one connection.

Two limits: `MAX_CLIENT_CONNECTIONS` open at once (a caller past it waits for one to come
back, within its own timeout), and `MAX_IDLE_CONNECTIONS` kept open while idle.
Long-lived streams (a legacy GET stream, a listen stream, a long SSE answer) hold
their connection for as long as they last.
"""

from __future__ import annotations

import ssl
from typing import Final

import trio

from transports._client.errors import ConnectionClosedError
from transports._net.client_connection import HttpConnection
from transports._net.url import HttpUrl

__all__ = [
    "CONNECT_TIMEOUT",
    "MAX_CLIENT_CONNECTIONS",
    "MAX_IDLE_CONNECTIONS",
    "ConnectFailedError",
    "ConnectionPool",
]

#: Connections open at once, streams included. Enough for tens of calls in flight and
#: a few listen streams; a client that needs more waits its turn instead of opening
#: sockets without end (browsers allow 6 per host; MCP traffic is heavier on streams).
MAX_CLIENT_CONNECTIONS: Final = 32
#: Idle connections kept for the next requests. Sequential use needs one; bursts of
#: concurrent calls reuse up to this many, and the rest are closed when they finish.
MAX_IDLE_CONNECTIONS: Final = 8
#: Seconds to open a connection (TCP, and the TLS handshake). A server that does not
#: accept within this is down or unreachable; the call's own timeout may be shorter.
CONNECT_TIMEOUT: Final = 10.0


class ConnectFailedError(ConnectionClosedError):
    """No connection to the server could be opened (it is down, or unreachable)."""


class ConnectionPool:
    """Connections to ``url``'s host, opened on demand, kept while idle.

    Args:
        url: The server (only its scheme, host and port matter here).
        ssl_context: For ``https``: the TLS settings (certificates verified against
            the system's store by default).
        max_connections: See `MAX_CLIENT_CONNECTIONS`.
        max_idle: See `MAX_IDLE_CONNECTIONS`.
        connect_timeout: See `CONNECT_TIMEOUT`.
        busy_poll: Seconds to spin waiting for an answer before the event loop sleeps;
            0 (the default) never spins (see `transports.RECOMMENDED_BUSY_POLL`).
        address: The IP address to connect to, already resolved (and checked) by the
            caller, instead of resolving ``url``'s host again; TLS still verifies the
            certificate against ``url``'s host, and the caller's ``Host`` header names it.
    """

    def __init__(
        self,
        url: HttpUrl,
        *,
        ssl_context: ssl.SSLContext | None = None,
        max_connections: int = MAX_CLIENT_CONNECTIONS,
        max_idle: int = MAX_IDLE_CONNECTIONS,
        connect_timeout: float = CONNECT_TIMEOUT,
        busy_poll: float = 0.0,
        address: str | None = None,
    ) -> None:
        if max_connections < 1:
            raise ValueError("max_connections must be at least 1")
        self._url = url
        if url.is_tls and ssl_context is None:
            ssl_context = ssl.create_default_context()
            ssl_context.set_alpn_protocols(["http/1.1"])
        self._ssl_context = ssl_context
        self._slots = trio.Semaphore(max_connections)
        self._max_idle = max_idle
        self._connect_timeout = connect_timeout
        self._busy_poll = busy_poll
        self._address = address
        self._idle: list[HttpConnection] = []
        self._closed = False

    async def acquire(self) -> HttpConnection:
        """A connection: an idle one if there is one, else a new one.

        Hand it back with `release` (or `discard`) exactly once.

        Raises:
            ConnectionClosedError: The pool is closed, or the connection failed.
        """
        if self._closed:
            raise ConnectionClosedError("the client is closed")
        try:
            # Without waiting when a slot is free: a trip through the scheduler costs as
            # much as a tenth of a request, and the request's own IO checkpoints anyway.
            self._slots.acquire_nowait()
        except trio.WouldBlock:
            await self._slots.acquire()
        try:
            if self._idle:
                return self._idle.pop()
            return await self._connect()
        except BaseException:
            self._slots.release()
            raise

    async def fresh(self) -> HttpConnection:
        """A new connection (to retry on after a reused one turned out to be closed)."""
        if self._closed:
            raise ConnectionClosedError("the client is closed")
        await self._slots.acquire()
        try:
            return await self._connect()
        except BaseException:
            self._slots.release()
            raise

    def release(self, connection: HttpConnection) -> None:
        """Give a connection back: kept if its exchange is complete, else closed."""
        self._slots.release()
        if connection.reusable and not self._closed and len(self._idle) < self._max_idle:
            self._idle.append(connection)
        else:
            _close_soon(connection)

    def discard(self, connection: HttpConnection) -> None:
        """Give a connection back that must not be reused (cut off mid-exchange)."""
        self._slots.release()
        _close_soon(connection)

    async def aclose(self) -> None:
        """Close the idle connections; connections in use close when given back."""
        self._closed = True
        idle, self._idle = self._idle, []
        for connection in idle:
            await connection.aclose()

    async def _connect(self) -> HttpConnection:
        url = self._url
        where = f"{url.host}:{url.port}"
        host = self._address or url.host
        with trio.move_on_after(self._connect_timeout) as waited:
            try:
                stream: trio.abc.Stream = await trio.open_tcp_stream(host, url.port)
            except OSError as exc:
                raise ConnectFailedError(f"can't connect to {where}: {exc}") from exc
            if self._ssl_context is not None:
                tls = trio.SSLStream(
                    stream, self._ssl_context, server_hostname=url.host, https_compatible=True
                )
                try:
                    await tls.do_handshake()
                except (trio.BrokenResourceError, OSError) as exc:
                    await trio.aclose_forcefully(tls)
                    cause = exc.__cause__ or exc
                    raise ConnectFailedError(f"TLS with {where} failed: {cause}") from exc
                except BaseException:
                    await trio.aclose_forcefully(tls)
                    raise
                stream = tls
            return HttpConnection(stream, busy_poll=self._busy_poll)
        assert waited.cancelled_caught
        raise ConnectionClosedError(
            f"can't connect to {where}: no answer in {self._connect_timeout:g} s"
        )


def _close_soon(connection: HttpConnection) -> None:
    connection.close_now()
