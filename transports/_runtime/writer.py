"""One writer per byte stream: a bounded queue, drained by one task, in coalesced writes.

Every task of a connection (handlers, the reader answering garbage, a client's calls)
hands whole framed messages to `MessageWriter.send`; one task, `MessageWriter.run`,
takes whatever is waiting and writes it with a single ``send_all``. That gives the
three properties the runtime needs (shared/DESIGN.md §5, STYLE habit 6):

* writes are serialised: messages never interleave, whatever the tasks do;
* a cancelled sender never leaves half a message: a message is either queued whole or
  not at all, and the write itself is shielded from cancellation;
* it is cheap: one ``send_all`` costs about 6 µs here, so under load many messages
  share one (the pipelined ceiling in shared/PERF.md doubles with coalescing).

The queue is bounded: when the peer does not read, senders wait (backpressure) instead
of piling up memory.

When nothing is queued and nothing is being written, a sender writes its own message
instead of waking the writer task: one message on an idle connection (the sequential
request-response case) then costs no hand-over to another task. It writes with the
stream's ``send_all``, shielded and bounded like the writer task's writes, or, when the
transport gives one (``write_now``: stdio's pipes, see `transports._stdio.pipes`), with
a function that writes what the stream takes at once without waiting; what that leaves
goes to the queue, first in line. Order is kept either way.

It runs under trio (every trio driver) and under asyncio (`serve_stdio_asyncio`): its
lock, channel, events and cancel scopes come from `transports._runtime.primitives`
(trio's own under trio), and the stream is anything with ``send_all`` (`ByteSink`).
"""

from __future__ import annotations

import math
from collections.abc import Callable
from typing import Final, Protocol

from transports._runtime import primitives
from transports._runtime.primitives import AnyReceiveChannel, AnySendChannel

__all__ = [
    "MAX_COALESCED_BYTES",
    "MAX_QUEUED_MESSAGES",
    "POSTS_PER_TURN",
    "WRITES_PER_TURN",
    "WRITE_TIMEOUT",
    "ByteSink",
    "MessageWriter",
]

#: Messages waiting to be written before senders wait. Enough to keep the writer busy
#: while 100+ handlers answer at once; small enough that a peer that stops reading
#: holds at most this many messages of memory per connection.
MAX_QUEUED_MESSAGES: Final = 256
#: The most bytes joined into one write. Past it the join costs more than the saved
#: system call, and one huge result should not drag small ones behind it.
MAX_COALESCED_BYTES: Final = 256 * 1024
#: Messages `MessageWriter.post` queues before the poster yields to the scheduler (so
#: the writer task and the connection's other tasks run). Each yield plus the writer
#: task's turn costs ~65k instructions, a posted message ~18k: 64 to a turn keeps that
#: overhead near 1k per message, and a flooding handler holds the loop for about a
#: millisecond at most. Below `MAX_QUEUED_MESSAGES`, so a turn's batch fits the queue.
POSTS_PER_TURN: Final = 64
#: Messages a sender writes itself with ``write_now`` (which never waits, so never
#: yields) before it yields to the scheduler anyway, so that a task writing a flood
#: cannot starve the connection's other tasks.
WRITES_PER_TURN: Final = 16
#: Seconds one write may take once started (it is shielded from cancellation, so it
#: needs its own bound): a peer that reads nothing for this long is treated as gone.
WRITE_TIMEOUT: Final = 30.0


# The exceptions below (and `run`'s) are built when used, not at import:
# `transports._runtime.primitives.GONE` and the others hold trio's classes only once
# trio is imported.


def _write_failed() -> tuple[type[Exception], ...]:
    """What `MessageWriter._write` raises when it fails: the stream is gone, or timed out."""
    return (*primitives.GONE, TimeoutError)


def _not_queued() -> tuple[type[Exception], ...]:
    """What queueing a message without waiting raises when it can't be queued."""
    return primitives.WOULD_BLOCK + primitives.GONE


class ByteSink(Protocol):
    """Where a `MessageWriter` writes: a `trio.abc.SendStream`, or a pipe under asyncio.

    ``send_all`` raises one of `transports._runtime.primitives.CLOSED` or ``BROKEN``
    when nothing more can be written.
    """

    async def send_all(self, data: bytes, /) -> None:
        """Write all of ``data``, waiting while the peer does not read."""
        ...


class MessageWriter:
    """Serialises and coalesces the writes to one `ByteSink`.

    Run `run` in a task of the connection's nursery, then call `send` from any task.
    ``aclose`` (or closing the stream) ends it.

    Args:
        stream: Where the messages go.
        write_now: Writes what ``stream`` takes at once, without waiting, and says how
            many bytes that was (see the module docstring); None: ``send_all``.
        max_queued: See `MAX_QUEUED_MESSAGES`.
        write_timeout: See `WRITE_TIMEOUT`.
    """

    def __init__(
        self,
        stream: ByteSink,
        *,
        write_now: Callable[[bytes], int] | None = None,
        max_queued: int = MAX_QUEUED_MESSAGES,
        write_timeout: float = WRITE_TIMEOUT,
    ) -> None:
        if max_queued < 1:
            raise ValueError("max_queued must be at least 1")
        self._stream = stream
        self._write_now = write_now
        self._written_now = 0  # messages written with write_now since the last yield
        self._write_timeout = write_timeout
        channel: tuple[AnySendChannel[bytes], AnyReceiveChannel[bytes]]
        channel = primitives.open_channel(max_queued)
        self._send_channel, self._receive_channel = channel
        self._posted = 0  # messages posted since the last checkpoint
        # Held by whoever is writing to the stream: the writer task, or a sender writing
        # its own message (see `send`).
        self._writing = primitives.Lock()
        # Messages handed to the channel and not written yet (queued, on their way to
        # the writer task, or in its hands): a sender may write its own only when none.
        self._unwritten = 0
        self._closed = False  # `aclose` was called: nothing more is taken
        self._done = primitives.Event()
        #: Why writing stopped, once it has (the peer went away, or we closed).
        self.failure: BaseException | None = None

    async def send(self, data: bytes) -> None:
        """Write one framed message, or queue it; waits while the queue is full.

        On an idle stream the sender writes the message itself (see the module
        docstring).

        Raises:
            ConnectionError: The stream is closed or broken; nothing more can be written.
        """
        if not self._unwritten and not self._writing.locked():
            if self._closed or self.failure is not None:
                raise ConnectionError(self._why_closed())
            if self._write_now is None:
                await self._send_all_now(data)
                return
            data = self._written_at_once(data)
            if not data:
                self._written_now += 1
                if self._written_now >= WRITES_PER_TURN:
                    self._written_now = 0
                    await primitives.sleep(0)  # (a checkpoint)
                return
            # (What the stream did not take goes to the queue: it is empty, so first.)
        self._unwritten += 1
        try:
            await self._send_channel.send(data)
        except primitives.GONE:
            self._unwritten -= 1
            raise ConnectionError(self._why_closed()) from self.failure
        except BaseException:
            self._unwritten -= 1  # (cancelled while waiting for room: not queued)
            raise

    async def _send_all_now(self, data: bytes) -> None:
        """Write ``data`` in the sender's task, as the writer task would."""
        writing = self._writing
        writing.acquire_nowait()
        try:
            await self._write(data)
        except _write_failed() as exc:
            raise self._broken(exc) from exc
        finally:
            writing.release()

    def _written_at_once(self, data: bytes) -> bytes:
        """Write what the stream takes now (``write_now``); what it did not take."""
        assert self._write_now is not None
        try:
            sent = self._write_now(data)
        except primitives.GONE as exc:
            raise self._broken(exc) from exc
        return data[sent:]

    def _broken(self, exc: BaseException) -> ConnectionError:
        """Writing failed: nothing more will be written (the writer task ends too)."""
        self.failure = exc
        self._send_channel.close()
        return ConnectionError(self._why_closed())

    async def post(self, data: bytes) -> None:
        """Queue one framed message for the writer task, without writing it here.

        For notifications a handler may send in floods (progress, log messages): the
        writer task joins whatever is waiting into one write. What it skips is the
        scheduler trip of a channel ``send`` per message; the sender still yields
        every `POSTS_PER_TURN` messages, which lets the writer task run, and waits
        while the queue is full (backpressure, bounded memory). Order is kept: a
        later `send` goes behind what is queued.

        Raises:
            ConnectionError: The stream is closed or broken; nothing more can be written.
        """
        try:
            self._send_channel.send_nowait(data)
        except primitives.WOULD_BLOCK:
            await self.send(data)  # the queue is full: wait for room, like any sender
            return
        except primitives.GONE:
            raise ConnectionError(self._why_closed()) from self.failure
        self._unwritten += 1
        self._posted += 1
        if self._posted >= POSTS_PER_TURN:
            self._posted = 0
            await primitives.sleep(0)  # (a checkpoint)

    def send_nowait(self, data: bytes) -> bool:
        """Queue one framed message if there is room at once; False if there is none.

        For the few places that must not wait (shielded cleanup, a cancellation sent
        while being cancelled). A closed writer drops the message.
        """
        if self._write_now is not None and not self._unwritten and not self._writing.locked():
            if self._closed or self.failure is not None:
                return False
            try:
                data = self._written_at_once(data)
            except ConnectionError:
                return False
            if not data:
                return True
            # (The queue is empty, so the rest of a message begun here always fits.)
        try:
            self._send_channel.send_nowait(data)
        except _not_queued():
            return False
        self._unwritten += 1
        return True

    async def run(self) -> None:
        """Write until `aclose` or until the stream breaks (then every sender fails)."""
        receive = self._receive_channel
        # What taking a message without waiting raises when none is there: it ends every
        # batch, so built once here (in the running library: trio's classes if trio).
        none_waiting = primitives.WOULD_BLOCK + primitives.END_OF_CHANNEL
        try:
            async for first in receive:
                # (After a sender's own write, if one is under way: what queued behind
                # it meanwhile joins this batch.)
                async with self._writing:
                    batch = [first]
                    size = len(first)
                    while size < MAX_COALESCED_BYTES:
                        try:
                            data = receive.receive_nowait()
                        except none_waiting:
                            break
                        batch.append(data)
                        size += len(data)
                    await self._write(batch[0] if len(batch) == 1 else b"".join(batch))
                self._unwritten -= len(batch)
        except _write_failed() as exc:
            self.failure = exc
        finally:
            # Nobody will write what is still queued: wake the senders with an error.
            receive.close()
            self._done.set()

    async def _write(self, data: bytes) -> None:
        # Shielded: a write cut in the middle would leave half a message on the wire. The
        # scope's own deadline still ends it (a shield keeps out only outer cancellations).
        deadline = primitives.current_time() + self._write_timeout
        with primitives.CancelScope(deadline=deadline, shield=True) as scope:
            await self._stream.send_all(data)
        if scope.cancelled_caught:
            raise TimeoutError(f"the peer read nothing for {self._write_timeout} s")

    async def aclose(self, *, flush_timeout: float = math.inf) -> None:
        """Stop taking messages, write those already queued (within ``flush_timeout``)."""
        self._closed = True
        self._send_channel.close()
        with primitives.CancelScope(deadline=primitives.current_time() + flush_timeout):
            await self._done.wait()
        self._receive_channel.close()

    def _why_closed(self) -> str:
        if self.failure is None:
            return "the connection is closed"
        return f"the connection broke: {type(self.failure).__name__}"
