"""The `ResponseWriter` of one ASGI request: a `Reply`'s decisions as ASGI messages.

A whole response is ``http.response.start`` with its ``Content-Length`` and one
``http.response.body``; an event stream is a start without a length (the ASGI server
chunks it) and a body message per write, ``more_body`` until the end. A `Reply` asking
to close the connection after its response gets ``Connection: close`` over HTTP/1.x,
which ASGI servers honour (there is no other way to ask them); HTTP/2 and 3 have no such
field (RFC 9113 §8.2.2), and the server keeps the connection.

"If send() is called on a closed connection the server should raise a server-specific
subclass of OSError" (ASGI 3, HTTP spec): that becomes `anyio.BrokenResourceError`, what
every writer raises when its client is gone (`transports._runtime.primitives.BROKEN`).
Some servers drop such messages silently instead; the request's watcher
(`transports._asgi.watching`) sees the client leave by ``http.disconnect`` then.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable, MutableMapping, Sequence
from typing import Any, Final

import anyio

from mcpcore import Connection
from transports._asgi.connections import ConnectionPool
from transports._net.reply import Header
from transports._runtime import primitives

__all__ = ["AsgiWriter", "Send"]

Send = Callable[[MutableMapping[str, Any]], Awaitable[None]]

_CLOSE: Final = (b"connection", b"close")


class AsgiWriter:
    """Writes one ASGI request's response (see the module docstring).

    Attributes:
        nudge: Called by the request's watcher `NUDGE_DELAY` after the request began.
        writing_since: When the write under way began (None: none is).
        last_write: When the last write ended (or the request began).
    """

    __slots__ = (
        "_clock",
        "_closers",
        "_connections",
        "_locked",
        "_may_close",
        "_modern",
        "_send",
        "_unlocked",
        "last_write",
        "nudge",
        "writing_since",
    )

    def __init__(
        self,
        send: Send,
        clock: Callable[[], float],
        connections: ConnectionPool,
        *,
        http1: bool = True,
    ) -> None:
        self._send = send
        self._clock = clock
        self._connections = connections
        # (HTTP/2 and 3 forbid connection-specific fields, RFC 9113 §8.2.2: no close there)
        self._may_close = http1
        self._locked = False
        self._unlocked: primitives.AnyEvent | None = None
        self._closers: list[Callable[[], None]] | None = None  # (most requests have none)
        self._modern: Connection | None = None
        self.nudge: Callable[[], None] | None = None
        self.writing_since: float | None = None
        self.last_write = clock()

    @property
    def modern(self) -> object | None:
        """The 2026-07-28 handler's `mcpcore.Connection` for this request (from the pool)."""
        if self._modern is None:
            self._modern = self._connections.take()
        return self._modern

    @modern.setter
    def modern(self, connection: object | None) -> None:
        raise AttributeError("an ASGI request's Connection comes from the app's pool")

    # The write lock is a flag: its only contenders are the answer and the watcher's
    # keep-alive (which never waits for it), and a lock object per request would cost
    # more than the rest of the writer (anyio's: ~2 µs to make on asyncio).

    async def lock(self) -> None:
        """Take the write lock (waiting while it is held)."""
        while self._locked:
            if self._unlocked is None:
                self._unlocked = primitives.Event()
            await self._unlocked.wait()
        self._locked = True

    def lock_nowait(self) -> bool:
        """Take the write lock if it is free."""
        if self._locked:
            return False
        self._locked = True
        return True

    def unlock(self) -> None:
        """Release the write lock (waking whoever waits for it)."""
        self._locked = False
        unlocked, self._unlocked = self._unlocked, None
        if unlocked is not None:
            unlocked.set()

    async def write_response(
        self, status: int, headers: Sequence[Header], body: bytes, *, close: bool
    ) -> None:
        """A whole response: its head with the body's length, and the body."""
        fields = [*headers, (b"content-length", str(len(body)).encode())]
        if close and self._may_close:
            fields.append(_CLOSE)
        await self._write(
            {"type": "http.response.start", "status": status, "headers": fields},
            {"type": "http.response.body", "body": body},
        )

    async def write_stream(self, head: Sequence[Header] | None, data: bytes, *, end: bool) -> None:
        """A piece of a streamed 200 response, after its head when ``head`` is given."""
        body: MutableMapping[str, Any] | None = None
        if data or end:
            body = {"type": "http.response.body", "body": data, "more_body": not end}
        if head is not None:
            start = {"type": "http.response.start", "status": 200, "headers": list(head)}
            await self._write(start, body)
        elif body is not None:
            await self._write(body)

    def on_close(self, closer: Callable[[], None]) -> None:
        """Call ``closer`` once the request is over."""
        if self._closers is None:
            self._closers = []
        self._closers.append(closer)

    def close(self, *, clean: bool) -> None:
        """The request is over (``clean``: answered, not cancelled): run what waited for it."""
        closers, self._closers = self._closers, None
        for closer in closers or ():
            closer()
        if self._modern is not None:
            self._connections.give_back(self._modern, clean=clean)
            self._modern = None

    async def _write(
        self, first: MutableMapping[str, Any], then: MutableMapping[str, Any] | None = None
    ) -> None:
        """Send ``first`` (and ``then``), timed as one write (the watcher sees a stuck one)."""
        send = self._send
        self.writing_since = self._clock()
        try:
            await send(first)
            if then is not None:
                await send(then)
        except OSError as exc:
            raise anyio.BrokenResourceError("the client is gone") from exc
        finally:
            self.last_write = self.writing_since
            self.writing_since = None
