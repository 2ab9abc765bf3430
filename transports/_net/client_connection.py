"""One HTTP/1.1 connection, the client's side, over a trio stream (TCP, or TLS over TCP).

One `transports._net.http1.ClientConnection` serves the connection for as long as it
lasts, one cycle per exchange (``start_next_cycle``): it frames every request (and
checks its method, target and headers as it does) and parses every response. A request
goes out in one ``send_all`` (head and body together). A response is read as a head
(`HttpConnection.round_trip`) and then body chunks (`HttpConnection.receive_data`).
Once both messages are complete the connection can carry the next exchange (HTTP/1.1
keep-alive, unless either side said ``Connection: close``;
`HttpConnection.reusable`), which is what the pool keeps.

Every failure of the network or of the server's HTTP becomes a `ConnectionClosedError`
that says what happened.
"""

from __future__ import annotations

from typing import Final

import trio

from transports._client.errors import ConnectionClosedError
from transports._net import http1
from transports._runtime.busypoll import BusyPolling, socket_fd

__all__ = ["MAX_HEAD_SIZE", "READ_SIZE", "Head", "HttpConnection", "peer_address"]

#: Bytes asked of the socket per read.
READ_SIZE: Final = 64 * 1024
#: The largest response head (status line and headers) accepted. h11's default is
#: 16 KiB; MCP servers send a few hundred bytes, but proxies and auth servers add
#: headers, and 64 KiB still bounds what a broken server makes us buffer.
MAX_HEAD_SIZE: Final = 64 * 1024

Headers = list[tuple[bytes, bytes]]


class Head:
    """A response's status line and headers (names lower-cased)."""

    __slots__ = ("headers", "reason", "status")

    def __init__(self, status: int, reason: bytes, headers: Headers) -> None:
        self.status = status
        self.reason = reason.decode("latin-1")
        self.headers = headers

    def get(self, name: bytes) -> bytes | None:
        """The value of header ``name`` (lower-case), or None; the last one if repeated."""
        found = None
        for key, value in self.headers:
            if key == name:
                found = value
        return found

    def __repr__(self) -> str:
        return f"<HTTP {self.status} {self.reason}>"


class HttpConnection:
    """An HTTP/1.1 client connection over ``stream``.

    Attributes:
        exchanges: How many requests this connection has carried (a connection that
            carried some is a reused one, which the server may have closed meanwhile).
    """

    def __init__(self, stream: trio.abc.Stream, *, busy_poll: float = 0.0) -> None:
        self._stream = stream
        self._busy_polling = BusyPolling(socket_fd(stream), busy_poll)
        self._http = http1.ClientConnection(max_head_size=MAX_HEAD_SIZE)
        self._closed = False
        self._eof = False
        self.exchanges = 0
        #: Whether any byte of the current response arrived (an empty answer on a
        #: reused connection means the server closed it first: safe to retry).
        self.got_response_bytes = False

    @property
    def peer_address(self) -> str | None:
        """The IP address this connection reached (see `peer_address`)."""
        return peer_address(self._stream)

    @property
    def reusable(self) -> bool:
        """Whether both messages of the exchange are complete and the server keeps it open."""
        return not self._closed and self._http.reusable

    async def round_trip(
        self, method: bytes, target: bytes, headers: Headers, body: bytes = b""
    ) -> Head:
        """Send a request, head and body in one write; read the response's head.

        ``headers`` must include ``Host``; ``Content-Length`` is added to a body. 1xx
        responses are skipped. (One coroutine for the whole trip: it is the hot path.)

        Raises:
            ConnectionClosedError: The write failed, the connection ended, or the server
                broke HTTP.
            http1.LocalProtocolError: The method, target or a header is malformed
                (nothing was sent).
        """
        h = self._http
        if h.reusable:
            h.start_next_cycle()
        data = h.send_request(method, target, headers, body)
        self.exchanges += 1
        self.got_response_bytes = False
        try:
            await self._stream.send_all(data)
        except (trio.BrokenResourceError, trio.ClosedResourceError, OSError) as exc:
            h.send_failed()
            raise ConnectionClosedError(f"sending the request failed ({_describe(exc)})") from exc
        while True:
            event = await self._next_event()
            if not isinstance(event, http1.Response):
                raise ConnectionClosedError(f"the server sent {type(event).__name__} first")
            if event.status >= 200:  # (1xx: skipped)
                return Head(event.status, event.reason, event.headers)

    async def receive_data(self) -> bytes:
        """The next chunk of the response body; ``b""`` once the body is complete.

        Raises:
            ConnectionClosedError: The connection ended before the body did.
        """
        event = await self._next_event()
        if isinstance(event, http1.Data):
            return event.data
        if event is http1.END:
            return b""
        raise ConnectionClosedError(f"the server sent {type(event).__name__} inside a body")

    def body_complete_now(self) -> bool:
        """Whether the rest of the body, if any, is only its end, already received.

        Lets a reader that has what it wanted keep the connection without waiting for
        more: an event stream's last event and the end of its body usually arrive in
        the same packet.
        """
        h = self._http
        if h.response_complete:
            return True
        try:
            return h.next_event() is http1.END
        except http1.RemoteProtocolError:
            return False

    async def _next_event(self) -> http1.Event:
        h = self._http
        while True:
            try:
                event = h.next_event()
            except http1.RemoteProtocolError as exc:
                if self._eof:
                    raise ConnectionClosedError(self._ended()) from exc
                raise ConnectionClosedError(f"the server broke HTTP/1.1: {exc}") from exc
            if event is not http1.NEED_DATA:
                if event is http1.PAUSED or event is http1.CLOSED:
                    raise ConnectionClosedError(self._ended())
                return event
            try:
                data = await self._stream.receive_some(READ_SIZE)
            except (trio.BrokenResourceError, trio.ClosedResourceError, OSError) as exc:
                raise ConnectionClosedError(
                    f"the connection to the server broke ({_describe(exc)})"
                ) from exc
            if data:
                self.got_response_bytes = True
            else:
                self._eof = True
            h.receive_data(data)

    def _ended(self) -> str:
        if self.got_response_bytes:
            return "the server closed the connection in the middle of its answer"
        return "the server closed the connection without answering"

    def close_now(self) -> None:
        """Close the connection at once, synchronously (its socket; no TLS goodbye).

        The socket is owned by whoever holds the connection, so no other task is
        waiting on it.
        """
        if self._closed:
            return
        self._closed = True
        self._busy_polling.close()  # (before the descriptor goes)
        stream: object = self._stream
        if isinstance(stream, trio.SSLStream):
            stream = stream.transport_stream
        if isinstance(stream, trio.SocketStream):
            stream.socket.close()

    async def aclose(self) -> None:
        """Close the connection at once (no TLS goodbye awaited: it may hang)."""
        if not self._closed:
            self._closed = True
            self._busy_polling.close()
            await trio.aclose_forcefully(self._stream)


def peer_address(stream: trio.abc.Stream) -> str | None:
    """The IP address a TCP (or TLS over TCP) stream is connected to, None if unknown.

    What the name resolved to for this very connection: `transports.OAuth` judges the
    MCP server's trust zone by it, not by a lookup of its own (DNS rebinding).
    """
    if isinstance(stream, trio.SSLStream):
        stream = stream.transport_stream
    if not isinstance(stream, trio.SocketStream):
        return None
    try:
        return str(stream.socket.getpeername()[0])
    except OSError:
        return None  # (the socket is closed, or no longer connected)


def _describe(exc: BaseException) -> str:
    cause = exc.__cause__ if isinstance(exc, trio.BrokenResourceError) else None
    return str(cause or exc) or type(cause or exc).__name__
