"""Reading a pipe line by line: one JSON-RPC message per line, both directions of stdio.

"Messages are delimited by newlines" (2024-11-05 basic/transports, unchanged since).
The pipe is any `trio.abc.ReceiveStream` (a `trio.lowlevel.FdStream` in practice: the
server's stdin, the client's end of the server's stdout); `read_lines` asks it for
whatever it holds, up to a size, and cuts lines with a bounded `LineFramer`, so that
one system call serves a whole burst of pipelined messages.

After delivering a chunk's lines it lets the loop turn once more before it asks the
pipe again (``receive_some`` then turns once itself): the tasks those lines woke (a
handler, a waiting caller) write their answer, or their next request, first, and the
peer gets that much longer to answer before the pipe is found empty, which costs an
epoll registration and a sleep (or, with busy polling, a spin). Measured side by side
(``python -m bench --only stdio --busy-poll 0.0005``, tools/call one call at a time,
interleaved runs with and without it): 1.4x the calls per second with busy polling on,
no difference with it off (``--busy-poll 0``).
"""

from __future__ import annotations

from collections.abc import AsyncGenerator

import trio

from mcpcore.framing import LineFramer, OversizedMessage

__all__ = ["read_lines"]


async def read_lines(
    stream: trio.abc.ReceiveStream, framer: LineFramer, size: int
) -> AsyncGenerator[bytes | OversizedMessage, None]:
    """Every line ``stream`` delivers, cut by ``framer``, until end of input.

    A last line without its newline still counts.

    Raises:
        trio.ClosedResourceError: The stream was closed (by us).
        trio.BrokenResourceError: Reading failed.
    """
    while data := await stream.receive_some(size):
        for line in framer.feed(data):
            yield line
        await trio.lowlevel.checkpoint()  # (see the module docstring)
    rest = framer.end_of_input()
    if rest:
        yield rest
