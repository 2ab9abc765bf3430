"""Serving this process's stdin and stdout, whichever library runs it.

`serve_stdio` (trio, `transports._stdio.server`) and `serve_stdio_asyncio` (asyncio and
uvloop, through anyio, `transports._stdio.asyncio_server`) differ only in the streams
that read and write the descriptors: each opens its own, and hands them to `serve_pipes`
here, which runs the one `transports._runtime.serving.ServerDriver` over them. So both
frame, bound, cancel and shut down alike.

"The server reads JSON-RPC from stdin and writes to stdout, one message per line"
(2024-11-05 basic/transports; the framing is unchanged in every revision). Both are
raw file descriptors read and written as bytes: no text wrappers, no thread per line.

stdout belongs to the protocol: "(S) MUST NOT write anything but valid MCP messages to
stdout". So while serving, file descriptor 1 is pointed at stderr and the protocol
writes to a private duplicate of the original stdout (`protocol_stdout`): a stray
``print()`` in a tool, or a C library writing to fd 1, lands on stderr instead of
corrupting the stream.

Both eras are served on the one connection: the first request decides (an
``initialize`` selects the legacy era, a request carrying the 2026-07-28 ``_meta``
envelope the modern one), as the core's `mcpcore.Connection` does.
"""

from __future__ import annotations

import os
import sys
from collections.abc import Callable, Iterator
from contextlib import AbstractContextManager, aclosing, contextmanager, nullcontext
from typing import Final

from mcpcore.framing import LineFramer
from mcpcore.server import Server
from transports._runtime.primitives import AnyTaskGroup
from transports._runtime.serving import ServerDriver
from transports._runtime.writer import ByteSink, MessageWriter
from transports._stdio.lines import ByteSource, read_lines

__all__ = ["FLUSH_TIMEOUT", "READ_SIZE", "STDIN", "protocol_stdout", "serve_pipes"]

#: Bytes asked of stdin per read: a whole burst of pipelined requests in one system call.
READ_SIZE: Final = 64 * 1024
#: Seconds given to write the answers already queued when the client hangs up.
FLUSH_TIMEOUT: Final = 5.0
#: This process's standard descriptors.
STDIN: Final = 0
_STDOUT: Final = 1
_STDERR: Final = 2


async def serve_pipes(
    server: Server,
    stdin: ByteSource,
    stdout: ByteSink,
    tasks: AnyTaskGroup,
    *,
    write_now: Callable[[bytes], int] | None,
    max_message_size: int,
    max_handlers: int,
    shutdown_grace: float,
    while_reading: AbstractContextManager[object] | None = None,
    started: Callable[[], object] | None = None,
) -> None:
    """Serve ``server`` on ``stdin`` and ``stdout`` until ``stdin`` ends, then flush.

    Args:
        server: What to serve.
        stdin: Where the client's lines come from.
        stdout: Where the answers go.
        tasks: Where the writer runs (a nursery, or an anyio task group).
        write_now: ``stdout``'s write that never waits
            (`transports._stdio.pipes.write_now`), or None.
        max_message_size: The longest line accepted, in bytes.
        max_handlers: Requests handled at once; past it, stdin is not read.
        shutdown_grace: Seconds running requests get once stdin has ended.
        while_reading: Entered while stdin is read (busy polling, under trio).
        started: Called once the server reads stdin.
    """
    writer = MessageWriter(stdout, write_now=write_now)
    tasks.start_soon(writer.run)
    driver = ServerDriver(
        server, server.connection(), writer, frame=_line, max_handlers=max_handlers
    )
    if started is not None:
        started()
    lines = read_lines(stdin, LineFramer(max_message_size), READ_SIZE)
    with while_reading or nullcontext():
        async with aclosing(lines):
            await driver.serve(lines, grace=shutdown_grace)
    await writer.aclose(flush_timeout=FLUSH_TIMEOUT)


def _line(message: bytes) -> bytes:
    return message + b"\n"


@contextmanager
def protocol_stdout(protect: bool) -> Iterator[int]:
    """A private descriptor of the real stdout; fd 1 points at stderr meanwhile.

    Args:
        protect: Point fd 1 at stderr (see the module docstring); False: only duplicate it.
    """
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
