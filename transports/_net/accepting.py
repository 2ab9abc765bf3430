"""Accepting TCP connections up to a cap: shared by `serve_http` and `serve_websocket`.

Each turn of the accept loop takes every connection the kernel has queued (up to
`ACCEPT_BATCH`), not one. Under load trio runs each ready task once per turn of its
scheduler, the accept loop like any connection: taking one connection per turn, a
burst of 256 new connections waited for 256 turns of all the connections already
served, the last one up to 4 seconds before its first request was even read (measured
with ``wrk``, 256 connections, 2026-07-28 ``tools/call``: issue 15; the benchmark is
``python -m bench.fairness``). trio has no public way to take a queued connection
without a turn of the scheduler, so that part reads the kernel's queue itself
(`_Queued`): below trio's API, for the latency tail that benchmark shows.
"""

from __future__ import annotations

import contextlib
import socket
import sys
import traceback
from collections.abc import Awaitable, Callable
from typing import Final

import trio

from transports._net import http1

__all__ = ["ACCEPT_BATCH", "REJECT_TIMEOUT", "ErrorReporter", "accept_connections", "print_error"]

#: Connections taken from the kernel's queue in one turn of the accept loop, at most.
#: Enough for a burst of clients to be accepted at once; bounded so that a flood of
#: connections holds the others up for ~1.5 ms per turn at worst (each connection costs
#: ~12 µs here: the accept, its `trio.SocketStream`, its task started), not for as
#: long as the flood lasts.
ACCEPT_BATCH: Final = 128
#: Seconds spent telling a connection past the cap that we are full.
REJECT_TIMEOUT: Final = 1.0
#: What it is told, before any request is read (a server may answer first: an error
#: response, then close). Framed once.
_FULL: Final = http1.ServerConnection().send_response(503, [], close=True)

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
    ``serve_one`` releases its slot when it is done. Each turn takes up to
    `ACCEPT_BATCH` connections.
    """
    async with listener:
        with _Queued(listener.socket) as queued:
            while True:
                stream: trio.SocketStream | None = await listener.accept()
                taken = 0
                while stream is not None:
                    try:
                        open_connections.acquire_nowait()
                    except trio.WouldBlock:
                        nursery.start_soon(_reject, stream)  # (never holding up the loop)
                    else:
                        nursery.start_soon(serve_one, stream)
                    taken += 1
                    stream = queued.take() if taken < ACCEPT_BATCH else None


class _Queued:
    """Takes the connections queued on a listening socket, without waiting.

    trio's ``accept`` passes through the scheduler after each connection (a turn of the
    event loop each, see the module docstring), and has no way to take one without
    waiting; so the queue is read through a duplicate of the listening socket, which
    the loop only does right after trio's own ``accept`` returned. Any error (the
    connection reset before we took it, no descriptors left) ends the batch: trio's
    ``accept`` then meets it again, and deals with it as it always does.
    """

    def __init__(self, listening: trio.socket.SocketType) -> None:
        self._socket = socket.fromfd(
            listening.fileno(), listening.family, listening.type, listening.proto
        )
        self._socket.setblocking(False)

    def take(self) -> trio.SocketStream | None:
        """A connection the kernel has queued, or None if there is none."""
        try:
            connection, _ = self._socket.accept()
        except OSError:  # (BlockingIOError: none queued)
            return None
        return trio.SocketStream(trio.socket.from_stdlib_socket(connection))

    def __enter__(self) -> _Queued:
        return self

    def __exit__(self, *exc_info: object) -> None:
        self._socket.close()


async def _reject(stream: trio.SocketStream) -> None:
    """Tell a connection past the cap that we are full (`_FULL`), and close it."""
    with trio.move_on_after(REJECT_TIMEOUT):
        with contextlib.suppress(trio.BrokenResourceError, trio.ClosedResourceError):
            await stream.send_all(_FULL)
    await stream.aclose()
