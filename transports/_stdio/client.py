"""The stdio client: an MCP server run as a subprocess, spoken to over its stdin and stdout.

"The client launches the server as a subprocess. The server reads JSON-RPC from stdin
and writes to stdout", one message per line (2024-11-05 basic/transports, unchanged
since). The pipes are raw byte streams (`trio.lowlevel.open_process`): no text
wrappers, no thread per line, a bounded line framer on the way in.

Shutdown follows 2026-07-28 basic/lifecycle: "(C) SHOULD close the server's stdin,
wait, then force-terminate (SIGTERM→SIGKILL on POSIX)": stdin closed, `SHUTDOWN_GRACE`
seconds, SIGTERM, `SHUTDOWN_GRACE` seconds, SIGKILL.

A server that dies fails every pending call at once with `ServerExitedError` (its exit
status, and the end of its stderr when captured). Three things can tell: its stdout
ending, its process ending (a grandchild may hold stdout open), a write to its stdin
failing; whichever comes first waits a moment for the exit status, then fails the calls.
"""

from __future__ import annotations

import os
import subprocess
from collections.abc import AsyncIterator, Callable, Mapping, Sequence
from contextlib import aclosing, asynccontextmanager
from typing import Final, Literal, TypeAlias, cast

import trio

from mcpcore.client import (
    DEFAULT_PROBE_TIMEOUT,
    ClientCallbacks,
    ConnectMode,
)
from mcpcore.framing import MAX_MESSAGE_SIZE, LineFramer
from mcpcore.types import Implementation
from transports._client.calls import DEFAULT_TIMEOUT, MAX_TOTAL_TIMEOUT
from transports._client.client import CLIENT_INFO, Client
from transports._client.errors import ConnectionClosedError, ServerExitedError
from transports._client.notifications import (
    NotificationCallback,
    NotificationDispatcher,
)
from transports._client.opening import ClientSettings, open_client
from transports._client.stream import StreamDriver
from transports._runtime.busypoll import BusyPolling
from transports._runtime.writer import MessageWriter
from transports._stdio.lines import read_lines
from transports._stdio.pipes import write_now

__all__ = [
    "EXIT_STATUS_WAIT",
    "FLUSH_TIMEOUT",
    "MAX_STDERR_CAPTURE",
    "MAX_STDERR_LINE",
    "SHUTDOWN_GRACE",
    "StderrOption",
    "StdioClient",
    "open_stdio_client",
]

#: Seconds the server gets to exit after its stdin is closed, and again after SIGTERM
#: (the official Python SDK waits 2 s too, PROCESS_TERMINATION_TIMEOUT).
SHUTDOWN_GRACE: Final = 2.0
#: Seconds to wait for the exit status once the server's stdout ended or a write to it
#: failed, so that the error can name it. A server that closes stdout and lives on gets
#: a plain `ConnectionClosedError` after this.
EXIT_STATUS_WAIT: Final = 1.0
#: Bytes of the server's stderr kept, from its end, when captured: enough for a Python
#: traceback, bounded for a server that logs without end.
MAX_STDERR_CAPTURE: Final = 64 * 1024
#: The longest stderr line given to a ``stderr`` callback; longer ones come in pieces.
MAX_STDERR_LINE: Final = 64 * 1024
#: Bytes asked of a pipe per read.
READ_SIZE: Final = 64 * 1024
#: Seconds given to write what is already queued when the client closes.
FLUSH_TIMEOUT: Final = 2.0

#: Where the server's stderr goes: ``"inherit"`` (this process's stderr, untouched),
#: ``"devnull"``, ``"capture"`` (its end is kept: `StdioClient.stderr` and
#: `ServerExitedError.stderr`), or a callable given each line (bytes, no newline) in a
#: task of its own, which also keeps the end as ``"capture"`` does.
StderrOption: TypeAlias = Literal["inherit", "devnull", "capture"] | Callable[[bytes], object]


class StdioClient(Client):
    """A `Client` whose server is a subprocess (see `open_stdio_client`)."""

    @property
    def _driver(self) -> StreamDriver[StdioLink]:
        # (`open_stdio_client` gives every StdioClient this transport.)
        return cast("StreamDriver[StdioLink]", self._transport)

    @property
    def process(self) -> trio.Process:
        """The server's process."""
        return self._driver.link.process

    @property
    def returncode(self) -> int | None:
        """The server's exit status once it has exited (negative: killed by a signal)."""
        return self._driver.link.process.returncode

    @property
    def stderr(self) -> bytes:
        """The end of the server's stderr (up to `MAX_STDERR_CAPTURE` bytes).

        Empty unless ``stderr`` was ``"capture"`` or a callable.
        """
        return bytes(self._driver.link.stderr_tail)

    @property
    def oversized_messages(self) -> int:
        """Lines from the server dropped unread for passing ``max_message_size``.

        Their ids are unknown, so a call such a line answered ends by its timeout.
        """
        return self._driver.oversized_messages


@asynccontextmanager
async def open_stdio_client(
    command: str | os.PathLike[str],
    args: Sequence[str] = (),
    *,
    env: Mapping[str, str] | None = None,
    cwd: str | os.PathLike[str] | None = None,
    stderr: StderrOption = "inherit",
    callbacks: ClientCallbacks | None = None,
    on_notification: NotificationCallback | None = None,
    client_info: Implementation = CLIENT_INFO,
    mode: ConnectMode = "auto",
    timeout: float = DEFAULT_TIMEOUT,
    probe_timeout: float = DEFAULT_PROBE_TIMEOUT,
    max_total_timeout: float = MAX_TOTAL_TIMEOUT,
    max_message_size: int = MAX_MESSAGE_SIZE,
    shutdown_grace: float = SHUTDOWN_GRACE,
    cache: bool = True,
    busy_poll: float = 0.0,
) -> AsyncIterator[StdioClient]:
    """Start an MCP server as a subprocess and yield a connected client.

        async with open_stdio_client("python", ["server.py"]) as client:
            print(client.server_info, client.era)

    On exit (or `Client.aclose`) pending calls fail, stdin is closed, and the process
    gets ``shutdown_grace`` seconds to exit before SIGTERM, and as long again before
    SIGKILL.

    Args:
        command: The program to run.
        args: Its arguments.
        env: The server's whole environment; None gives it this process's.
        cwd: Its working directory.
        stderr: Where its stderr goes; see `StderrOption`. "(C) SHOULD NOT assume
            stderr means an error" (2025-11-25 basic/transports): it is only ever shown.
        callbacks: Elicitation, sampling and roots (they set what the client declares).
        on_notification: Called with each notification that is not on a listen stream
            (log messages, list changes, legacy resource updates), one at a time in a
            task of its own; see `MAX_QUEUED_NOTIFICATIONS` for a callback that falls
            behind. An exception it raises goes to ``callbacks.on_callback_error``
            when set, else ends the client.
        client_info: Our name and version.
        mode: How to choose the era: ``"auto"`` (probe, fall back to the handshake),
            ``"legacy"`` or ``"modern"``.
        timeout: Seconds each request waits by default, ``initialize`` included.
        probe_timeout: Seconds to wait for the ``server/discover`` probe.
        max_total_timeout: The hard limit of a call whose timeout progress resets.
        max_message_size: The longest line accepted from the server, in bytes.
        shutdown_grace: See above and `SHUTDOWN_GRACE`.
        cache: Keep 2026-07-28 results for as long as their ``ttlMs`` allows.
        busy_poll: Seconds to spin, at most, waiting for the server's next message
            before the event loop sleeps; 0 (the default) never spins. Opt in with
            `transports.RECOMMENDED_BUSY_POLL` (see `transports.BusyPolling`).

    Raises:
        OSError: The program could not be started.
        ServerExitedError: The server exited before the connection was ready.
    """
    settings = ClientSettings(
        callbacks=callbacks,
        on_notification=on_notification,
        client_info=client_info,
        mode=mode,
        timeout=timeout,
        probe_timeout=probe_timeout,
        max_total_timeout=max_total_timeout,
        cache=cache,
    )
    stderr_target = _stderr_target(stderr)
    process = await trio.lowlevel.open_process(
        [os.fspath(command), *args],
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        stderr=stderr_target,
        env=env,
        cwd=cwd,
    )
    link = StdioLink(
        process,
        grace=shutdown_grace,
        busy_poll=busy_poll,
        max_message_size=max_message_size,
        stderr=None if stderr == "inherit" else stderr,
    )

    def connect(
        nursery: trio.Nursery, notifications: NotificationDispatcher | None
    ) -> StreamDriver[StdioLink]:
        return StreamDriver(nursery, link, timeout=timeout, notifications=notifications)

    try:
        async with open_client(settings, connect, StdioClient) as client:
            yield client
    finally:
        with trio.CancelScope(shield=True):
            if process.returncode is None:  # only if closing was cut short
                process.kill()
                await process.wait()
            # The pipes' descriptors, now that no task reads or writes them.
            for pipe in (process.stdin, process.stdout, process.stderr):
                if pipe is not None:
                    await pipe.aclose()


class StdioLink:
    """The `transports._client.stream.StreamLink` of one subprocess: its pipes and its life.

    Args:
        process: The server, its stdin and stdout pipes.
        grace: See `SHUTDOWN_GRACE`.
        busy_poll: Seconds to spin for the server's stdout (0: never).
        max_message_size: The longest line accepted from the server.
        stderr: What to do with the server's stderr: None when it is not a pipe.

    Attributes:
        process: The server.
        stderr_tail: The end of the server's stderr (when captured).
    """

    def __init__(
        self,
        process: trio.Process,
        *,
        grace: float,
        busy_poll: float,
        max_message_size: int,
        stderr: Literal["devnull", "capture"] | Callable[[bytes], object] | None,
    ) -> None:
        stdin = process.stdin
        assert stdin is not None
        assert process.stdout is not None
        self.process = process
        direct = write_now(stdin) if isinstance(stdin, trio.lowlevel.FdStream) else None
        self.writer = MessageWriter(stdin, write_now=direct)
        self.stderr_tail = bytearray()
        self._grace = grace
        self._busy_poll = busy_poll
        self._max_message_size = max_message_size
        self._stderr = stderr
        self._driver: StreamDriver[StdioLink] | None = None
        self._stdout_done = trio.Event()
        self._stderr_done = trio.Event()

    def frame(self, message: bytes) -> bytes:
        """One message as a line.

        "Messages are delimited by newlines, and MUST NOT contain embedded newlines"
        (2024-11-05 basic/transports): the core never pretty-prints.
        """
        return message + b"\n"

    def start(self, nursery: trio.Nursery, driver: StreamDriver[StdioLink]) -> None:
        """Start the tasks: writer, reader, exit watcher, stderr reader."""
        self._driver = driver
        nursery.start_soon(self._write)
        nursery.start_soon(self._read)
        nursery.start_soon(self._watch_exit)
        stderr = self._stderr
        if stderr is None or stderr == "devnull":
            self._stderr_done.set()
        else:
            nursery.start_soon(self._read_stderr, None if stderr == "capture" else stderr)

    # ----------------------------------------------------------------- tasks

    async def _write(self) -> None:
        await self.writer.run()
        if self.writer.failure is not None:
            await self._lost(f"writing to the server failed ({self.writer.failure!r})")

    async def _read(self) -> None:
        stdout = self.process.stdout
        assert stdout is not None
        assert self._driver is not None
        fd = stdout.fileno() if isinstance(stdout, trio.lowlevel.FdStream) else -1
        lines = read_lines(stdout, LineFramer(self._max_message_size), READ_SIZE)
        try:
            with BusyPolling(fd, self._busy_poll):
                async with aclosing(lines):
                    await self._driver.read(lines)
        except (trio.BrokenResourceError, trio.ClosedResourceError):
            pass  # the pipe is gone: the same as its end (the driver does no IO of its own)
        finally:
            self._stdout_done.set()
        await self._lost("the server closed its stdout")

    async def _watch_exit(self) -> None:
        await self.process.wait()
        # What the server wrote before it exited is still in the pipe: let the reader
        # deliver it (answers sent just before exiting count), then fail the rest.
        with trio.move_on_after(EXIT_STATUS_WAIT):
            await self._stdout_done.wait()
        await self._lost("the server exited")

    async def _read_stderr(self, sink: Callable[[bytes], object] | None) -> None:
        stream = self.process.stderr
        assert stream is not None
        tail = self.stderr_tail
        partial = b""
        try:
            while chunk := await stream.receive_some(READ_SIZE):
                tail += chunk
                del tail[:-MAX_STDERR_CAPTURE]
                if sink is None:
                    continue
                *lines, partial = (partial + chunk).split(b"\n")
                for line in lines:
                    sink(line)
                while len(partial) > MAX_STDERR_LINE:
                    sink(partial[:MAX_STDERR_LINE])
                    partial = partial[MAX_STDERR_LINE:]
            if sink is not None and partial:
                sink(partial)
        except (trio.BrokenResourceError, trio.ClosedResourceError):
            pass  # we closed it: the process is going
        finally:
            self._stderr_done.set()

    async def _lost(self, reason: str) -> None:
        """The connection broke: fail everything, naming the exit status if there is one."""
        driver = self._driver
        assert driver is not None
        if driver.failure is not None:
            return
        with trio.move_on_after(EXIT_STATUS_WAIT):
            await self.process.wait()
        returncode = self.process.returncode
        if returncode is None:
            driver.fail(ConnectionClosedError(reason))
            return
        with trio.move_on_after(EXIT_STATUS_WAIT):
            await self._stderr_done.wait()  # the last words, for the error
        driver.fail(ServerExitedError(returncode, bytes(self.stderr_tail) or None))

    # ----------------------------------------------------------------- closing

    async def close(self) -> None:
        """Flush what is queued, close stdin, stop the process (the shutdown ladder)."""
        await self.writer.aclose(flush_timeout=FLUSH_TIMEOUT)
        assert self.process.stdin is not None
        await self.process.stdin.aclose()
        process = self.process
        with trio.move_on_after(self._grace):
            await process.wait()
        if process.returncode is None:
            process.terminate()  # SIGTERM
            with trio.move_on_after(self._grace):
                await process.wait()
        if process.returncode is None:
            process.kill()  # SIGKILL: can't be refused
            await process.wait()


def _stderr_target(stderr: StderrOption) -> int | None:
    if stderr == "inherit":
        return None
    if stderr == "devnull":
        return subprocess.DEVNULL
    if stderr == "capture" or callable(stderr):
        return subprocess.PIPE
    raise ValueError(
        f"stderr must be 'inherit', 'devnull', 'capture' or a callable, not {stderr!r}"
    )
