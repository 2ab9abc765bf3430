"""Accepting TCP connections up to a cap: shared by `serve_http` and `serve_websocket`."""

from __future__ import annotations

import contextlib
import sys
import traceback
from collections.abc import Awaitable, Callable
from typing import Final

import trio

__all__ = ["REJECT_TIMEOUT", "ErrorReporter", "accept_connections", "print_error"]

#: Seconds spent telling a connection past the cap that we are full.
REJECT_TIMEOUT: Final = 1.0
_FULL: Final = b"HTTP/1.1 503 Service Unavailable\r\nconnection: close\r\ncontent-length: 0\r\n\r\n"

#: Told about an unexpected error that ended one connection.
ErrorReporter = Callable[[BaseException], None]


def print_error(error: BaseException) -> None:
    """The default `ErrorReporter`: the traceback, on stderr."""
    traceback.print_exception(error, file=sys.stderr)


async def accept_connections(
    listener: trio.SocketListener,
    nursery: trio.Nursery,
    open_connections: trio.Semaphore,
    serve_one: Callable[[trio.SocketStream], Awaitable[None]],
) -> None:
    """Serve each connection ``listener`` accepts in ``nursery``, while a slot is free.

    A connection past the cap (``open_connections`` has no slot) gets 503 and is closed;
    ``serve_one`` releases its slot when it is done.
    """
    async with listener:
        while True:
            stream = await listener.accept()
            try:
                open_connections.acquire_nowait()
            except trio.WouldBlock:
                await _reject(stream)
                continue
            nursery.start_soon(serve_one, stream)


async def _reject(stream: trio.SocketStream) -> None:
    """Tell a connection past the cap that we are full, and close it."""
    with trio.move_on_after(REJECT_TIMEOUT):
        with contextlib.suppress(trio.BrokenResourceError, trio.ClosedResourceError):
            await stream.send_all(_FULL)
    await stream.aclose()
