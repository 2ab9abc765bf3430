"""Reading a pipe line by line: one JSON-RPC message per line, both directions of stdio.

"Messages are delimited by newlines" (2024-11-05 basic/transports, unchanged since).
The pipe is any `ByteSource`: a `trio.lowlevel.FdStream` under trio (the server's
stdin, the client's end of the server's stdout), a `transports._stdio.pipes.PipeStream`
under asyncio. `read_lines` asks it for whatever it holds, up to a size, and cuts lines
with a bounded `LineFramer`, so that one system call serves a whole burst of pipelined
messages.

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
from typing import Protocol

from mcpcore.framing import LineFramer, OversizedMessage
from transports._runtime import primitives

__all__ = ["ByteSource", "read_lines"]


class ByteSource(Protocol):
    """What `read_lines` reads: a `trio.abc.ReceiveStream`, or a `PipeStream` under asyncio.

    ``receive_some`` returns what the pipe holds, up to ``max_bytes``, waiting while it
    holds nothing; ``b""`` at end of input.
    """

    async def receive_some(self, max_bytes: int, /) -> bytes | bytearray:
        """Up to ``max_bytes`` bytes, at least one; ``b""`` at end of input."""
        ...


async def read_lines(
    stream: ByteSource, framer: LineFramer, size: int
) -> AsyncGenerator[bytes | OversizedMessage, None]:
    """Every line ``stream`` delivers, cut by ``framer``, until end of input.

    A last line without its newline still counts.

    Raises:
        ClosedResourceError: The stream was closed (by us); trio's or anyio's class
            (`transports._runtime.primitives.CLOSED`).
        BrokenResourceError: Reading failed (`transports._runtime.primitives.BROKEN`).
    """
    # (Looked up once per pipe: asking which library runs at every chunk read cost 1.3%
    # of a sequential stdio tools/call on the server, measured with callgrind.)
    checkpoint = primitives.checkpoint_function()
    while data := await stream.receive_some(size):
        for line in framer.feed(data):
            yield line
        await checkpoint()  # (see the module docstring)
    rest = framer.end_of_input()
    if rest:
        yield rest
