"""The stdio server: one MCP connection over this process's stdin and stdout.

"The server reads JSON-RPC from stdin and writes to stdout, one message per line"
(2024-11-05 basic/transports; the framing is unchanged in every revision). Both are
raw file descriptors read and written as bytes: no text wrappers, no thread per line.

stdout belongs to the protocol: "(S) MUST NOT write anything but valid MCP messages to
stdout". So while serving, file descriptor 1 is pointed at stderr and the protocol
writes to a private duplicate of the original stdout: a stray ``print()`` in a tool, or
a C library writing to fd 1, lands on stderr instead of corrupting the stream.

Both eras are served on the one connection: the first request decides (an
``initialize`` selects the legacy era, a request carrying the 2026-07-28 ``_meta``
envelope the modern one), as the core's `mcpcore.Connection` does.
"""

from __future__ import annotations

import os
import sys
from collections.abc import Iterator
from contextlib import aclosing, contextmanager
from typing import Final

import trio

from mcpcore.framing import MAX_MESSAGE_SIZE, LineFramer
from mcpcore.server import Server
from transports._runtime.busypoll import BusyPolling
from transports._runtime.serving import MAX_CONCURRENT_HANDLERS, SHUTDOWN_GRACE, ServerDriver
from transports._runtime.writer import MessageWriter
from transports._stdio.lines import read_lines
from transports._stdio.pipes import write_now

__all__ = ["READ_SIZE", "serve_stdio"]

#: Bytes asked of stdin per read: a whole burst of pipelined requests in one system call.
READ_SIZE: Final = 64 * 1024
#: Seconds given to write the answers already queued when the client hangs up.
FLUSH_TIMEOUT: Final = 5.0
_STDIN: Final = 0
_STDOUT: Final = 1
_STDERR: Final = 2


async def serve_stdio(
    server: Server,
    *,
    max_message_size: int = MAX_MESSAGE_SIZE,
    max_handlers: int = MAX_CONCURRENT_HANDLERS,
    shutdown_grace: float = SHUTDOWN_GRACE,
    protect_stdout: bool = True,
    busy_poll: float = 0.0,
    task_status: trio.TaskStatus[None] = trio.TASK_STATUS_IGNORED,
) -> None:
    """Serve ``server`` on this process's stdin and stdout until stdin ends.

    Invalid UTF-8 or JSON is answered -32700, an oversized line -32600 (the line is
    dropped and the stream continues). On end of input the requests still running get
    ``shutdown_grace`` seconds to finish and are then cancelled, the answers already
    written are flushed, and the function returns.

    Args:
        server: What to serve.
        max_message_size: The longest line accepted, in bytes.
        max_handlers: Requests handled at once; past it, stdin is not read.
        shutdown_grace: Seconds running requests get once stdin has ended.
        protect_stdout: Point file descriptor 1 at stderr while serving (see the
            module docstring). Turn it off only when nothing else can write to stdout.
        busy_poll: Seconds to spin, at most, waiting for the client's next request
            before the event loop sleeps; 0 (the default) never spins. Opt in with
            `transports.RECOMMENDED_BUSY_POLL` (see `transports.BusyPolling`).
        task_status: Started once the server reads stdin (for ``nursery.start``).
    """
    with _protocol_stdout(protect_stdout) as out_fd:
        stdin = trio.lowlevel.FdStream(os.dup(_STDIN))
        stdout = trio.lowlevel.FdStream(out_fd)
        async with stdin, stdout, trio.open_nursery() as nursery:
            writer = MessageWriter(stdout, write_now=write_now(stdout))
            nursery.start_soon(writer.run)
            driver = ServerDriver(
                server, server.connection(), writer, frame=_line, max_handlers=max_handlers
            )
            task_status.started()
            lines = read_lines(stdin, LineFramer(max_message_size), READ_SIZE)
            with BusyPolling(stdin.fileno(), busy_poll):
                async with aclosing(lines):
                    await driver.serve(lines, grace=shutdown_grace)
            await writer.aclose(flush_timeout=FLUSH_TIMEOUT)


def _line(message: bytes) -> bytes:
    return message + b"\n"


@contextmanager
def _protocol_stdout(protect: bool) -> Iterator[int]:
    """A private descriptor of the real stdout; fd 1 points at stderr meanwhile."""
    sys.stdout.flush()  # what Python already buffered belongs to whoever printed it
    protocol = os.dup(_STDOUT)
    if not protect:
        yield protocol
        return
    saved = os.dup(_STDOUT)
    os.dup2(_STDERR, _STDOUT)
    try:
        yield protocol
    finally:
        sys.stdout.flush()
        os.dup2(saved, _STDOUT)
        os.close(saved)
