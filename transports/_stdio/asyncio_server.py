"""The stdio server under asyncio (and uvloop): `serve_stdio`'s twin, without trio.

An asyncio program serves MCP on its stdin and stdout with `serve_stdio_asyncio`. Only
the descriptors' streams are its own (`transports._stdio.pipes.PipeStream`, as asyncio
has no ``FdStream``); the private stdout, the framing, the limits and the runtime (the
reader that never runs user code, a worker per request, cancellation, the bounded
queues, the shutdown grace) are `transports._stdio.serving`'s, the very code
`serve_stdio` runs. Its tasks live in an anyio task group, on whatever loop is running:
``asyncio.run``, ``anyio.run(..., backend="asyncio")``, uvloop.

Nothing here imports trio: it runs where trio is not installed.
"""

from __future__ import annotations

import os

import anyio

from mcpcore.framing import MAX_MESSAGE_SIZE
from mcpcore.server import Server
from transports._runtime.serving import MAX_CONCURRENT_HANDLERS, SHUTDOWN_GRACE
from transports._stdio.pipes import PipeStream, write_now
from transports._stdio.serving import STDIN, protocol_stdout, serve_pipes

__all__ = ["serve_stdio_asyncio"]


async def serve_stdio_asyncio(
    server: Server,
    *,
    max_message_size: int = MAX_MESSAGE_SIZE,
    max_handlers: int = MAX_CONCURRENT_HANDLERS,
    shutdown_grace: float = SHUTDOWN_GRACE,
    protect_stdout: bool = True,
) -> None:
    """Serve ``server`` on this process's stdin and stdout until stdin ends, under asyncio.

    The same server as `transports.serve_stdio`, for programs that run asyncio (or
    uvloop) instead of trio: ``asyncio.run(serve_stdio_asyncio(server))``. Invalid
    UTF-8 or JSON is answered -32700, an oversized line -32600 (the line is dropped and
    the stream continues). On end of input the requests still running get
    ``shutdown_grace`` seconds to finish and are then cancelled, the answers already
    written are flushed, and the function returns. Handlers run as asyncio tasks: they
    may await anything asyncio offers.

    Unix only, as `serve_stdio`. There is no ``busy_poll``: asyncio has no hook before
    its loop sleeps.

    Args:
        server: What to serve.
        max_message_size: The longest line accepted, in bytes.
        max_handlers: Requests handled at once; past it, stdin is not read.
        shutdown_grace: Seconds running requests get once stdin has ended.
        protect_stdout: Point file descriptor 1 at stderr while serving, so that stray
            output of a tool lands on stderr ("(S) MUST NOT write anything but valid
            MCP messages to stdout"). Turn it off only when nothing else can write to
            stdout.
    """
    with protocol_stdout(protect_stdout) as out_fd:
        stdin = PipeStream(os.dup(STDIN))
        stdout = PipeStream(out_fd)
        async with stdin, stdout, anyio.create_task_group() as tasks:
            await serve_pipes(
                server,
                stdin,
                stdout,
                tasks,
                write_now=write_now(stdout),
                max_message_size=max_message_size,
                max_handlers=max_handlers,
                shutdown_grace=shutdown_grace,
            )
