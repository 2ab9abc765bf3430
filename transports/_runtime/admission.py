"""Requests waiting for a handler slot: read ahead, bounded, and dropped when cancelled.

A connection of the stdio/WebSocket runtime (`transports._runtime.serving`) runs at most
``max_handlers`` requests at once. A request read while every slot is taken waits in
its connection's `AdmissionQueue`, in order, and the reader goes on reading, so that it
sees what the client sends meanwhile: a ``notifications/cancelled`` for a waiting
request takes it out of the queue (it never starts: "receivers SHOULD stop work",
2025-11-25 basic/utilities/cancellation, and no work is the least), and the client's
answers to the server's own questions reach the handlers waiting for them. Only when
the queue is full (`MAX_WAITING_REQUESTS`, or `MAX_WAITING_BYTES`) does the reader stop,
which is the backpressure (shared/DESIGN.md §5).

A request that will never be answered (cancelled before or while it ran, or dropped
because its connection ended) is forgotten with `mcpcore.Connection.abandon`, so that
its id does not stay "in flight" for the connection's lifetime.

Its semaphore, events and task group are the running library's
(`transports._runtime.primitives`: trio's own under trio, anyio's under asyncio).
"""

from __future__ import annotations

from collections.abc import Callable, Hashable
from typing import Final, Generic, TypeVar

from transports._runtime import primitives
from transports._runtime.primitives import AnyEvent, AnySemaphore, AnyTaskGroup

__all__ = ["MAX_WAITING_BYTES", "MAX_WAITING_REQUESTS", "AdmissionQueue"]

#: Requests of one connection read ahead while every handler slot is taken. Reading on
#: is what lets a cancellation of a waiting request be seen before it starts; a client
#: keeping more requests in flight than `transports.MAX_CONCURRENT_HANDLERS` plus this
#: waits for the reader (backpressure), as before.
MAX_WAITING_REQUESTS: Final = 64
#: Bytes of the requests waiting at most (the first may be larger: it was read before
#: the queue filled). With the count, memory per connection stays bounded however
#: large the messages are.
MAX_WAITING_BYTES: Final = 1024 * 1024

_Job = TypeVar("_Job")


class AdmissionQueue(Generic[_Job]):
    """The requests of one connection waiting for a slot (see the module docstring).

    Args:
        nursery: Where the task handing queued requests to free slots runs (started
            when the first request has to wait, ended when none does).
        slots: The connection's handler slots (one is held by each running request).
        start: Starts a request whose slot is taken (it gives the slot back when done).
        max_waiting: See `MAX_WAITING_REQUESTS`.
        max_bytes: See `MAX_WAITING_BYTES`.
    """

    def __init__(
        self,
        nursery: AnyTaskGroup,
        slots: AnySemaphore,
        start: Callable[[_Job], None],
        *,
        max_waiting: int = MAX_WAITING_REQUESTS,
        max_bytes: int = MAX_WAITING_BYTES,
    ) -> None:
        if max_waiting < 1 or max_bytes < 1:
            raise ValueError("max_waiting and max_bytes must be positive")
        self._nursery = nursery
        self._slots = slots
        self._start = start
        self._max_waiting = max_waiting
        self._max_bytes = max_bytes
        self._waiting: dict[Hashable, tuple[_Job, int]] = {}
        self._bytes = 0
        self._dispatching = False
        self._room: AnyEvent | None = None  # set when the reader may read on

    def __len__(self) -> int:
        return len(self._waiting)

    @property
    def full(self) -> bool:
        """Whether the reader must wait (`wait_for_room`) before reading more."""
        return len(self._waiting) >= self._max_waiting or self._bytes >= self._max_bytes

    def admit(self, key: Hashable, job: _Job, size: int) -> None:
        """Start ``job`` now if a slot is free and nothing waits before it; else queue it.

        ``size`` is the bytes of the message that carried it (what waiting costs).
        """
        if not self._waiting:
            try:
                self._slots.acquire_nowait()  # (no trip through the scheduler)
            except primitives.WOULD_BLOCK:
                pass
            else:
                self._start(job)
                return
        self._waiting[key] = (job, size)
        self._bytes += size
        if not self._dispatching:
            self._dispatching = True
            self._nursery.start_soon(self._dispatch)

    def drop(self, key: Hashable) -> _Job | None:
        """Take a waiting request out of the queue (it was cancelled); None if not queued."""
        waiting = self._waiting.pop(key, None)
        if waiting is None:
            return None
        self._left(waiting[1])
        return waiting[0]

    def clear(self) -> list[_Job]:
        """Take every waiting request out (the connection is ending); they never start."""
        jobs = [job for job, _ in self._waiting.values()]
        self._waiting.clear()
        self._left(self._bytes)
        return jobs

    async def wait_for_room(self) -> None:
        """Wait until the queue is no longer full."""
        while self.full:
            room = self._room = primitives.Event()
            await room.wait()

    def _left(self, size: int) -> None:
        self._bytes -= size
        room = self._room
        if room is not None and not self.full:
            self._room = None
            room.set()

    async def _dispatch(self) -> None:
        """Hand each waiting request, in order, the next slot that frees."""
        try:
            while self._waiting:
                await self._slots.acquire()
                if not self._waiting:  # (all cancelled meanwhile)
                    self._slots.release()
                    break
                key = next(iter(self._waiting))
                job, size = self._waiting.pop(key)
                self._left(size)
                self._start(job)
        finally:
            self._dispatching = False
