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

When nothing is queued and nothing is being written, a sender given a ``try_write``
writes its message itself, at once, without waking the writer task: one message on an
idle connection (the sequential request-response case) then costs no trip through the
scheduler. Whatever the pipe does not take at once goes to the queue, first in line, and
the writer task finishes it; order is kept either way, and nothing a sender does can be
interrupted half-way, since the direct write never waits.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from typing import Final

import trio

from transports._runtime.fdio import EAGER_TURNS

__all__ = [
    "MAX_COALESCED_BYTES",
    "MAX_QUEUED_MESSAGES",
    "POSTS_PER_TURN",
    "WRITE_TIMEOUT",
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
#: Seconds one write may take once started (it is shielded from cancellation, so it
#: needs its own bound): a peer that reads nothing for this long is treated as gone.
WRITE_TIMEOUT: Final = 30.0


class MessageWriter:
    """Serialises and coalesces the writes to one `trio.abc.SendStream`.

    Run `run` in a task of the connection's nursery, then call `send` from any task.
    ``aclose`` (or closing the stream) ends it.
    """

    def __init__(
        self,
        stream: trio.abc.SendStream,
        *,
        try_write: Callable[[bytes], int] | None = None,
        max_queued: int = MAX_QUEUED_MESSAGES,
        write_timeout: float = WRITE_TIMEOUT,
    ) -> None:
        if max_queued < 1:
            raise ValueError("max_queued must be at least 1")
        self._stream = stream
        self._try_write = try_write
        self._write_timeout = write_timeout
        self._send_channel, self._receive_channel = trio.open_memory_channel[bytes](max_queued)
        self._queued = 0  # messages in the channel, not yet taken by the writer task
        self._writing = False  # the writer task holds messages it has not written yet
        self._eager = 0  # direct writes since the last checkpoint
        self._posted = 0  # messages posted since the last checkpoint
        self._done = trio.Event()
        #: Why writing stopped, once it has (the peer went away, or we closed).
        self.failure: BaseException | None = None

    async def send(self, data: bytes) -> None:
        """Write one framed message, or queue it; waits while the queue is full.

        Raises:
            ConnectionError: The stream is closed or broken; nothing more can be written.
        """
        if self._try_write is not None and not self._writing and not self._queued:
            data = self._write_now(data)
            if not data:
                self._eager += 1
                if self._eager >= EAGER_TURNS:  # a sender that never waits still yields
                    self._eager = 0
                    await trio.lowlevel.checkpoint()
                return
        self._queued += 1
        try:
            await self._send_channel.send(data)
        except (trio.ClosedResourceError, trio.BrokenResourceError):
            self._queued -= 1
            raise ConnectionError(self._why_closed()) from self.failure
        except BaseException:
            self._queued -= 1
            raise

    def _write_now(self, data: bytes) -> bytes:
        """Write what the stream takes at once; what it did not take."""
        assert self._try_write is not None
        if self.failure is not None or self._done.is_set():
            raise ConnectionError(self._why_closed())
        try:
            sent = self._try_write(data)
        except (trio.BrokenResourceError, trio.ClosedResourceError) as exc:
            self.failure = exc
            self._send_channel.close()
            raise ConnectionError(self._why_closed()) from exc
        return data[sent:]

    async def post(self, data: bytes) -> None:
        """Queue one framed message for the writer task, without writing it here.

        For notifications a handler may send in floods (progress, log messages): the
        writer task joins whatever is waiting into one write, where `send`'s direct
        write would cost a system call (and a wake-up of the peer) per message. What
        it skips: the direct write, and the scheduler trip of a channel ``send``; the
        sender still yields every `POSTS_PER_TURN` messages, which lets the writer task
        run, and waits while the queue is full (backpressure, bounded memory). Order
        is kept: a later `send` goes behind what is queued.

        Raises:
            ConnectionError: The stream is closed or broken; nothing more can be written.
        """
        try:
            self._send_channel.send_nowait(data)
        except trio.WouldBlock:
            await self.send(data)  # the queue is full: wait for room, like any sender
            return
        except (trio.ClosedResourceError, trio.BrokenResourceError):
            raise ConnectionError(self._why_closed()) from self.failure
        self._queued += 1
        self._posted += 1
        if self._posted >= POSTS_PER_TURN:
            self._posted = 0
            await trio.lowlevel.checkpoint()

    def send_nowait(self, data: bytes) -> bool:
        """Queue one framed message if there is room at once; False if there is none.

        For the few places that must not wait (shielded cleanup, a cancellation sent
        while being cancelled). A closed writer drops the message.
        """
        if self._try_write is not None and not self._writing and not self._queued:
            try:
                data = self._write_now(data)
            except ConnectionError:
                return False
            if not data:
                return True
            # (The queue is empty, so the rest of a message begun here always fits.)
        try:
            self._send_channel.send_nowait(data)
        except (trio.WouldBlock, trio.ClosedResourceError, trio.BrokenResourceError):
            return False
        self._queued += 1
        return True

    async def run(self) -> None:
        """Write until `aclose` or until the stream breaks (then every sender fails)."""
        receive = self._receive_channel
        try:
            async for first in receive:
                self._writing = True
                self._queued -= 1
                batch = [first]
                size = len(first)
                while size < MAX_COALESCED_BYTES:
                    try:
                        data = receive.receive_nowait()
                    except (trio.WouldBlock, trio.EndOfChannel):
                        break
                    self._queued -= 1
                    batch.append(data)
                    size += len(data)
                await self._write(batch[0] if len(batch) == 1 else b"".join(batch))
                self._writing = False
        except (trio.BrokenResourceError, trio.ClosedResourceError, trio.TooSlowError) as exc:
            self.failure = exc
        finally:
            # Nobody will write what is still queued: wake the senders with an error.
            receive.close()
            self._done.set()

    async def _write(self, data: bytes) -> None:
        # Shielded: a write cut in the middle would leave half a message on the wire.
        with trio.CancelScope(shield=True):
            with trio.fail_after(self._write_timeout):
                await self._stream.send_all(data)

    async def aclose(self, *, flush_timeout: float = math.inf) -> None:
        """Stop taking messages, write those already queued (within ``flush_timeout``)."""
        self._send_channel.close()
        with trio.move_on_after(flush_timeout):
            await self._done.wait()
        self._receive_channel.close()

    def _why_closed(self) -> str:
        if self.failure is None:
            return "the connection is closed"
        return f"the connection broke: {type(self.failure).__name__}"
