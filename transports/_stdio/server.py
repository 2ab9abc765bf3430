"""The stdio server under trio: one MCP connection over this process's stdin and stdout.

`trio.lowlevel.FdStream` reads and writes the descriptors; everything else (the
private stdout, the framing, the limits, the runtime) is `transports._stdio.serving`'s,
shared with the asyncio server (`transports._stdio.asyncio_server`).
"""

from __future__ import annotations

import os

import trio

from mcpcore.framing import MAX_MESSAGE_SIZE
from mcpcore.server import Server
from transports._runtime.busypoll import BusyPolling
from transports._runtime.serving import MAX_CONCURRENT_HANDLERS, SHUTDOWN_GRACE
from transports._stdio.pipes import write_now
from transports._stdio.serving import STDIN, protocol_stdout, serve_pipes

__all__ = ["serve_stdio"]


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
        protect_stdout: Point file descriptor 1 at stderr while serving, so that stray
            output of a tool lands on stderr ("(S) MUST NOT write anything but valid
            MCP messages to stdout"). Turn it off only when nothing else can write to
            stdout.
        busy_poll: Seconds to spin, at most, waiting for the client's next request
            before the event loop sleeps; 0 (the default) never spins. Opt in with
            `transports.RECOMMENDED_BUSY_POLL` (see `transports.BusyPolling`).
        task_status: Started once the server reads stdin (for ``nursery.start``).
    """
    with protocol_stdout(protect_stdout) as out_fd:
        stdin = trio.lowlevel.FdStream(os.dup(STDIN))
        stdout = trio.lowlevel.FdStream(out_fd)
        async with stdin, stdout, trio.open_nursery() as nursery:
            await serve_pipes(
                server,
                stdin,
                stdout,
                nursery,
                write_now=write_now(stdout),
                max_message_size=max_message_size,
                max_handlers=max_handlers,
                shutdown_grace=shutdown_grace,
                while_reading=BusyPolling(stdin.fileno(), busy_poll),
                started=task_status.started,
            )
