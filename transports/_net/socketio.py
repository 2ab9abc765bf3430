"""Reading and writing a TCP socket without a scheduler round trip per message.

The pipes of stdio are read and written on their descriptors directly
(`transports._runtime.fdio`); a WebSocket's socket gets the same treatment, for the same
reason: trio's ``receive_some`` and ``send_all`` pass through the scheduler before any
byte moves, and on a request-response connection those turns of the event loop are the
largest cost left once the protocol work is done (measured for this transport: see
bench/README.md, layer ``websocket``).

* `direct_writer` gives `transports._runtime.writer.MessageWriter` its ``try_write``: a message
  on an idle connection is written by the task that made it, at once, without waking
  the writer task. Whatever the socket does not take goes through the writer task.
* `read_some` reads what the socket holds; only when it holds nothing does it wait.
  A reader that finds data every time would never let the connection's other tasks
  (or the other connections) run: its caller yields after each read that did not wait.

Both only apply to a plain `trio.SocketStream` (TLS has its own buffering); anything
else is read and written through its stream methods.
"""

from __future__ import annotations

import errno
import os
from collections.abc import Callable

import trio

__all__ = ["direct_writer", "read_some"]


def direct_writer(
    stream: trio.abc.Stream, defer: Callable[[], bool] | None = None
) -> Callable[[bytes], int] | None:
    """A ``try_write`` for ``stream``'s socket, or None when it is not a plain socket.

    While ``defer()`` says so, it writes nothing (the message goes to the writer task,
    which joins whatever is waiting into one write).
    """
    if not isinstance(stream, trio.SocketStream):
        return None
    sock = stream.socket

    def try_write(data: bytes) -> int:
        """Write what the socket takes now, without waiting; how many bytes that was."""
        if defer is not None and defer():
            return 0
        try:
            # fileno() each time: a closed socket says -1 (EBADF), never a reused number.
            return os.write(sock.fileno(), data)
        except BlockingIOError:
            return 0
        except OSError as exc:
            raise _translated(exc) from None

    return try_write


async def read_some(stream: trio.abc.Stream, size: int) -> tuple[bytes, bool]:
    """Up to ``size`` bytes from ``stream`` (b"" at the end), waiting only if it has none.

    Also says whether it waited (went through the scheduler): a reader whose reads
    never wait must yield by itself now and then (see `transports._websocket.channel`).

    Raises:
        trio.ClosedResourceError: The stream was closed (by us).
        trio.BrokenResourceError: Reading failed (the peer reset the connection...).
    """
    if not isinstance(stream, trio.SocketStream):
        return bytes(await stream.receive_some(size)), True
    sock = stream.socket
    waited = False
    while True:
        try:
            return os.read(sock.fileno(), size), waited
        except BlockingIOError:
            await trio.lowlevel.wait_readable(sock)
            waited = True
        except OSError as exc:
            raise _translated(exc) from None


def _translated(exc: OSError) -> trio.ClosedResourceError | trio.BrokenResourceError:
    if exc.errno == errno.EBADF:
        return trio.ClosedResourceError("the socket was closed")
    return trio.BrokenResourceError(f"the connection broke: {exc.strerror}")
