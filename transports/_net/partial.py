"""Partially received messages: one budget for the whole process, and their buffers.

A message arrives in pieces: an HTTP request body (up to `transports.MAX_BODY_SIZE`), a
WebSocket message in fragments (up to `transports.MAX_MESSAGE_SIZE`). Each connection
bounds its own, but a thousand connections each holding one almost complete is
gigabytes. So every connection of the process, HTTP and WebSocket alike (an upgraded
one too), draws on one `PartialBudget` (`PARTIAL_BUDGET`) for the bytes it holds of a
message not yet complete:

* the first `PARTIAL_FLOOR` bytes of a message are free: every connection may always
  hold that much, so ordinary messages (a few kilobytes) are never refused however
  many large ones are pending, and the floors of all connections together are bounded
  by the connection cap (1,024 connections of 64 KiB: 64 MiB);
* beyond the floor, bytes are reserved from the budget, by the announced size when
  there is one (HTTP's ``Content-Length``, before the body is read) or as they arrive
  (a chunked body, WebSocket fragments); a message that would take the process past
  the budget is refused (HTTP 413 with ``Retry-After``, WebSocket close 1009), and
  what it held is given back;
* the reservation is given back when the message completes, is refused, or its
  connection ends in any way (`MessageBuffer.clear`, called from ``finally`` blocks).

The bytes beyond the floor live in an anonymous memory map of their own
(`MessageBuffer`), not on the heap: a map is returned to the operating system the
moment it is closed, where pieces of the heap freed by a closed connection mostly stay
with the process (glibc keeps them for reuse; measured: 32 connections holding 4 MiB
each left the server 110 MiB larger after they closed).

`MAX_PARTIAL_BYTES` is the budget's default. `HttpLimits.max_partial_bytes` and
`WebSocketLimits.max_partial_bytes` set it; it is one budget per process, so while
several servers run in one process the smallest of their settings applies.
"""

from __future__ import annotations

import contextlib
import mmap
from collections.abc import Iterator
from typing import Final

import anyio
from anyio.abc import TaskStatus

__all__ = [
    "MAX_PARTIAL_BYTES",
    "PARTIAL_BUDGET",
    "PARTIAL_FLOOR",
    "PARTIAL_RETRY_AFTER",
    "MessageBuffer",
    "PartialBudget",
    "apply_budget",
]

#: Bytes all the connections of the process together may hold beyond their floors in
#: messages not yet complete. 16 request bodies of the full 4 MiB at once, or 4
#: WebSocket messages of 16 MiB; with the floors, a flood of partial messages costs the
#: process at most ~128 MiB instead of gigabytes.
MAX_PARTIAL_BYTES: Final = 64 * 1024 * 1024
#: Bytes of a partial message each connection may hold without drawing on the budget:
#: one read's worth, far more than a typical MCP message (a few kilobytes), so that
#: small messages are never starved by large ones.
PARTIAL_FLOOR: Final = 64 * 1024
#: Seconds an HTTP client refused for want of budget is told to wait before it retries
#: (``Retry-After`` of the 413, RFC 9110 §15.5.14): long enough for the bodies in
#: flight to complete at a modest rate.
PARTIAL_RETRY_AFTER: Final = 5


class PartialBudget:
    """Bytes the connections of a process may hold in partial messages (module docstring).

    Args:
        capacity: The budget when no server has set one (`limited_to`).

    Attributes:
        held: Bytes reserved now.
    """

    def __init__(self, capacity: int = MAX_PARTIAL_BYTES) -> None:
        self._default = capacity
        self._settings: list[int] = []
        self._capacity = capacity
        self.held = 0

    @property
    def capacity(self) -> int:
        """The budget in force: the smallest setting of the servers running, or the default."""
        return self._capacity

    def try_reserve(self, size: int) -> bool:
        """Reserve ``size`` more bytes; False (and nothing reserved) past the budget."""
        if self.held + size > self._capacity:
            return False
        self.held += size
        return True

    def release(self, size: int) -> None:
        """Give back ``size`` reserved bytes."""
        self.held -= size

    @contextlib.contextmanager
    def limited_to(self, capacity: int) -> Iterator[None]:
        """Apply a server's setting while the block runs (the smallest setting wins).

        Raises:
            ValueError: ``capacity`` is not positive.
        """
        if capacity <= 0:
            raise ValueError("the partial-message budget must be positive")
        self._settings.append(capacity)
        self._capacity = min(self._settings)
        try:
            yield
        finally:
            self._settings.remove(capacity)
            self._capacity = min(self._settings, default=self._default)


#: The process's budget: every server connection draws on it.
PARTIAL_BUDGET: Final = PartialBudget()


async def apply_budget(
    capacity: int, *, task_status: TaskStatus[None] = anyio.TASK_STATUS_IGNORED
) -> None:
    """Apply a server's setting to `PARTIAL_BUDGET` for as long as this task runs.

    (Started in the server's nursery, ``await nursery.start(apply_budget, capacity)``:
    the setting is in force before the first connection, and gone with the server.)
    """
    with PARTIAL_BUDGET.limited_to(capacity):
        task_status.started()
        await anyio.sleep_forever()  # (trio's nursery or anyio's task group alike)


class MessageBuffer:
    """The bytes of one message being received, accounted against a budget.

    Up to the floor, the pieces are kept as they came; past it, in an anonymous memory
    map whose excess over the floor is reserved from ``budget`` (see the module
    docstring). `take` returns the whole message and gives everything back; `clear`
    drops it. A buffer is reused for the connection's next message.

    Args:
        budget: Where the bytes beyond the floor are reserved (None: nowhere, for a
            client, whose peers are the servers it chose).
        floor: See `PARTIAL_FLOOR`.
    """

    __slots__ = ("_budget", "_floor", "_map", "_parts", "_reserved", "size")

    def __init__(self, budget: PartialBudget | None, floor: int = PARTIAL_FLOOR) -> None:
        self._budget = budget
        self._floor = floor
        self._parts: list[bytes] = []
        self._map: mmap.mmap | None = None
        self._reserved = 0
        #: Bytes held.
        self.size = 0

    def expect(self, total: int) -> bool:
        """Reserve for a message announced as ``total`` bytes, before it arrives.

        False (nothing reserved) if that would take the process past its budget.
        """
        if total <= self._floor:
            return True
        if not self._reserve(total - self._floor):
            return False
        if self._map is None or len(self._map) < total:
            self._move_to_map(total)
        return True

    def add(self, data: bytes | bytearray | memoryview) -> bool:
        """Add the next piece; False (and it is not added) past the process's budget."""
        end = self.size + len(data)
        if end <= self._floor and self._map is None:
            self._parts.append(bytes(data))
        else:
            if not self._reserve(end - self._floor):
                return False
            if self._map is None or len(self._map) < end:
                self._move_to_map(max(end, 2 * self.size, 2 * self._floor))
            assert self._map is not None
            self._map[self.size : end] = data
        self.size = end
        return True

    def take(self) -> bytes:
        """The whole message; the buffer is empty (and its reservation given back) after."""
        if self._map is not None:
            message = self._map[: self.size]
        elif len(self._parts) == 1:
            message = self._parts[0]
        else:
            message = b"".join(self._parts)
        self.clear()
        return message

    def clear(self) -> None:
        """Drop what is held and give its reservation back."""
        self._parts = []
        self.size = 0
        if self._map is not None:
            self._map.close()
            self._map = None
        if self._reserved:
            if self._budget is not None:
                self._budget.release(self._reserved)
            self._reserved = 0

    def _reserve(self, excess: int) -> bool:
        """Hold ``excess`` bytes beyond the floor in all."""
        more = excess - self._reserved
        if more <= 0:
            return True
        if self._budget is not None and not self._budget.try_reserve(more):
            return False
        self._reserved = excess
        return True

    def _move_to_map(self, capacity: int) -> None:
        """Keep the bytes in a memory map of ``capacity`` bytes from now on."""
        new = mmap.mmap(-1, capacity)
        old = self._map
        if old is not None:
            # Map to map through a view: a slice of the old map would be a copy on
            # the heap, which is what the maps are for avoiding.
            with memoryview(old) as view, view[: self.size] as held:
                new[: self.size] = held
            old.close()
        elif self._parts:
            new[: self.size] = b"".join(self._parts)
            self._parts = []
        self._map = new
