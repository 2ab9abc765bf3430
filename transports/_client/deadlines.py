"""Call timeouts kept by one task per connection, not by a cancel scope per call.

Every request has a timeout, and the way trio means it to be waited for is a cancel
scope around the wait (``with trio.move_on_at(deadline): await answer``; Streamable
HTTP's client does exactly that, see `transports._client.calls.PendingCall.wait`). Yet
trio keeps every scope's deadline in its run loop's bookkeeping, and with tens of calls
waiting at once that costs more than the calls themselves. Measured side by side
(``python -m bench --only stdio --only websocket --busy-poll 0``, tools/call,
interleaved runs of this module against a cancel scope per call, on this project's
2-core VM): over stdio 1.4x the calls per second at 8 in flight, 1.5x at 64, 1.3x at
256; over WebSocket 1.1x at 64, 1.2x at 256. Past the 15% the house rule asks of code
that does by hand what a library offers; so the stdio and WebSocket client
(`transports._client.stream.StreamDriver`) keep their calls' deadlines here.

A connection keeps the deadlines of its waiting calls in buckets of `RESOLUTION`
seconds: registering a call is a set insertion, forgetting it a set removal, and one
task (`Deadlines.run`) sleeps until the earliest bucket that still holds a call, then
tells those calls their time is up (`Expirable.expire`, which sets the waiting call's
`trio.Event`). A timeout therefore fires up to `RESOLUTION` late, never early.

Memory stays bounded by the calls waiting: a bucket is deleted when its last call
leaves, and the heap of bucket times, which may keep times whose bucket is gone, is
rebuilt from the live buckets whenever it holds `MAX_STALE_TIMES` more entries than
there are buckets.
"""

from __future__ import annotations

import heapq
import math
from typing import Final, Protocol

import trio

__all__ = ["MAX_STALE_TIMES", "RESOLUTION", "Deadlines", "Expirable"]

#: Seconds per bucket: how late a timeout may fire. Far below any timeout a caller
#: sets on purpose; coarse enough that a burst of calls shares a few buckets.
RESOLUTION: Final = 0.005
#: Heap entries allowed beyond the live buckets before the heap is rebuilt: a call
#: answered at once deletes its bucket, and the next call in the same window pushes
#: its time again.
MAX_STALE_TIMES: Final = 256


class Expirable(Protocol):
    """A waiting call that can be told its deadline has passed (`PendingCall`)."""

    def expire(self) -> None:
        """The deadline passed: wake the waiter, who raises its timeout."""


class Deadlines:
    """The deadlines of one connection's waiting calls; run `run` in a task."""

    def __init__(self) -> None:
        self._buckets: dict[int, set[Expirable]] = {}
        self._times: list[int] = []  # heap of bucket numbers (some may be gone)
        self._wake = trio.Event()
        self._watching = math.inf  # the bucket number the task sleeps until

    def add(self, call: Expirable, deadline: float) -> int | None:
        """Watch ``call`` until ``deadline``; the key to `discard` it with (None: never)."""
        if deadline == math.inf:
            return None
        key = math.ceil(deadline / RESOLUTION)
        bucket = self._buckets.get(key)
        if bucket is None:
            bucket = self._buckets[key] = set()
            if len(self._times) > len(self._buckets) + MAX_STALE_TIMES:
                self._times = list(self._buckets)  # (the new key is among them)
                heapq.heapify(self._times)
            else:
                heapq.heappush(self._times, key)
            if key < self._watching:
                self._wake.set()  # earlier than the task's alarm: it must look again
        bucket.add(call)
        return key

    def discard(self, call: Expirable, key: int | None) -> None:
        """Stop watching ``call`` (answered, or given up)."""
        if key is None:
            return
        bucket = self._buckets.get(key)
        if bucket is not None:
            bucket.discard(call)
            if not bucket:
                del self._buckets[key]

    async def run(self) -> None:
        """Expire calls as their buckets come due, until cancelled."""
        buckets = self._buckets
        while True:
            times = self._times  # (`add` may have rebuilt it)
            due = math.floor(trio.current_time() / RESOLUTION)
            while times and (times[0] <= due or times[0] not in buckets):
                for call in buckets.pop(heapq.heappop(times), ()):
                    call.expire()
            self._watching = times[0] if times else math.inf
            self._wake = trio.Event()
            with trio.move_on_at(self._watching * RESOLUTION):
                await self._wake.wait()
