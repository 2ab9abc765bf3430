"""What ``serve_http``'s connection watcher does, for the requests of an ASGI app.

``serve_http`` gives every TCP connection a watcher task (`transports._net.
server_connection`); an ASGI app sees requests, not connections, and a task per request
would cost more than a fast request's whole answer. So one `Watcher` task serves the
whole app from a heap of deadlines, and a request costs a push:

* while its body arrives, a request whose body is not whole within
  `HttpLimits.body_timeout` is cancelled, and answered 408 (``Watch.late_body``);
* `NUDGE_DELAY` after its answer began, if it still runs, its answer's nudge is called
  (a legacy answer stream gathering its first events, `transports._http.server.streams`);
* `WATCH_DELAY` after, a request still running is a long one: it gets a task of its own
  that waits for ``http.disconnect`` (2026-07-28: "closing the response stream IS the
  cancellation", so the request is cancelled), sends keep-alive comments on a quiet
  stream every `HttpLimits.sse_keepalive_interval`, and cancels a request whose client
  has read nothing for `HttpLimits.write_timeout`.

A request answered sooner than `NUDGE_DELAY` is dropped unseen at its first ring. First
rings are due in the order requests arrive (each `NUDGE_DELAY` after its start), so they
wait in a queue, not the heap: a push and a pop each cost a constant few steps, where a
heap entry cost a comparison per level each way (the watcher handles every request of a
busy app: under uvicorn, switching it off altogether gained ~4.5% of requests per second
of ``python -m bench --only asgi``'s 2026-07-28 call at 8 connections). Moved rings (a
late body's deadline, the watch of a long request) go to the heap.
"""

from __future__ import annotations

import heapq
import itertools
import math
from collections import deque
from typing import Final

import msgspec

from transports._asgi.reading import Receive
from transports._asgi.writer import AsgiWriter
from transports._net.limits import NUDGE_DELAY, WATCH_DELAY, HttpLimits
from transports._net.reply import Reply
from transports._runtime import primitives
from transports._runtime.primitives import AnyCancelScope, AnyTaskGroup, Interruptible

__all__ = ["WATCH_GRANULARITY", "Watch", "Watcher"]

#: Seconds between two wake-ups of the watcher at least: a deadline rings up to this late
#: (a nudge due after 10 ms may come after 15), and under load the watcher wakes at most
#: 200 times a second, not once per request.
WATCH_GRANULARITY: Final = 0.005

#: What the watcher acts on: the writer, the reply, the ASGI ``receive``, the cancel scope.
Parts = tuple[AsgiWriter, Reply, Receive, Interruptible]


class Watch(msgspec.Struct, eq=False):
    """One request being answered, as the `Watcher` sees it (`Watcher.start` makes it).

    (A record, so a Struct: made once per request, in C.)

    Attributes:
        parts: What the watcher acts on (the writer, the reply, the ASGI ``receive``,
            the request's cancel scope, cancelled when the client leaves) until the
            request ends: then None, so that a request's objects are freed with it, not
            when its ring comes due (holding them ``NUDGE_DELAY`` longer cost ~2 µs a
            request, in ``python -m bench.asgi_profile``).
        started: When its body began to arrive, then when its answer began.
        due: When it rings next (first: `NUDGE_DELAY` after it started; most bodies
            are whole by then).
        arrived: Its body is whole.
        late_body: It was cancelled because its body was not whole in time.
        nudged: Its answer's nudge was called.
        done: It is over.
        task: The long request's own watcher (`Watcher` starts one `WATCH_DELAY` in).
    """

    parts: Parts | None
    started: float
    due: float
    arrived: bool = False
    late_body: bool = False
    nudged: bool = False
    done: bool = False
    task: AnyCancelScope | None = None

    def end(self) -> None:
        """The request is over: forget it (and stop its own watcher if it has one)."""
        self.done = True
        self.parts = None
        if self.task is not None:
            self.task.cancel()


class Watcher:
    """The app's one watcher task (see the module docstring).

    Args:
        group: Where long requests' watchers run.
        limits: The app's limits.
    """

    def __init__(self, group: AnyTaskGroup, limits: HttpLimits) -> None:
        self._group = group
        self._limits = limits
        self._first: deque[tuple[float, Watch]] = deque()  # (first rings: in due order)
        self._heap: list[tuple[float, int, Watch]] = []  # (moved rings)
        self._order = itertools.count()
        self._alarm: AnyCancelScope | None = None

    def start(
        self,
        writer: AsgiWriter,
        reply: Reply,
        receive: Receive,
        scope: Interruptible,
        started: float,
        *,
        arrived: bool = False,
    ) -> Watch:
        """Start watching a request that began at ``started``; its `Watch`.

        Its first ring is `NUDGE_DELAY` after it began. Requests are started in the
        order they began, on the app's clock. ``scope`` is cancelled when the client
        leaves; ``arrived``: its body is whole already.
        """
        due = started + NUDGE_DELAY
        watch = Watch((writer, reply, receive, scope), started, due, arrived)
        first = self._first
        first.append((due, watch))
        if len(first) == 1:  # (else the alarm rings for an earlier one first)
            self._lower_alarm(due)
        return watch

    def answering(self, watch: Watch, now: float) -> None:
        """The request's body is whole: its answer begins (the nudge is due after it).

        A body that came late had its next ring moved to its body deadline: it is
        brought back to the nudge.
        """
        watch.arrived = True
        watch.started = now
        if watch.due > now + NUDGE_DELAY:
            watch.due = now + NUDGE_DELAY
            self.watch(watch)

    def watch(self, watch: Watch) -> None:
        """Ring a request at its new `Watch.due` (its earlier ring will be ignored)."""
        heapq.heappush(self._heap, (watch.due, next(self._order), watch))
        self._lower_alarm(watch.due)

    def _lower_alarm(self, due: float) -> None:
        alarm = self._alarm
        if alarm is not None and due < alarm.deadline:
            alarm.deadline = due

    async def run(self) -> None:
        """Ring each request's deadlines, until cancelled."""
        first, heap = self._first, self._heap
        now = primitives.current_time()
        while True:
            # (Requests answered in time leave their rings queued: woken for the
            # earliest each time, the watcher would wake once per request under load.)
            due = min(first[0][0] if first else math.inf, heap[0][0] if heap else math.inf)
            with primitives.CancelScope(deadline=max(due, now + WATCH_GRANULARITY)) as alarm:
                self._alarm = alarm
                await primitives.sleep(math.inf)
            self._alarm = None
            now = primitives.current_time()
            while first and first[0][0] <= now:
                due, watch = first.popleft()
                if not watch.done and due == watch.due:  # (else its ring was moved)
                    self._ring(watch, now)
            while heap and heap[0][0] <= now:
                due, _, watch = heapq.heappop(heap)
                if not watch.done and due == watch.due:
                    self._ring(watch, now)

    def _ring(self, watch: Watch, now: float) -> None:
        parts = watch.parts
        if parts is None:
            return  # (over)
        writer, _, _, scope = parts
        if not watch.arrived:
            deadline = watch.started + self._limits.body_timeout
            if now < deadline:
                watch.due = deadline
                self.watch(watch)
            else:
                watch.late_body = True  # "408 Request Timeout"
                scope.cancel()
        elif now < watch.started + NUDGE_DELAY:
            watch.due = watch.started + NUDGE_DELAY  # (its answer began after the first ring)
            self.watch(watch)
        elif not watch.nudged:
            watch.nudged = True
            nudge, writer.nudge = writer.nudge, None
            if nudge is not None:
                nudge()
            watch.due = watch.started + WATCH_DELAY
            self.watch(watch)
        else:
            self._group.start_soon(self._watch_long, watch, parts)

    async def _watch_long(self, watch: Watch, parts: Parts) -> None:
        """A long request's watcher: hang-ups, keep-alive comments, stuck writes."""
        writer, _, receive, scope = parts
        interval = self._limits.sse_keepalive_interval
        last_tick = primitives.current_time()
        with primitives.CancelScope() as task:
            watch.task = task
            if watch.done:
                return
            while True:
                quiet_since = max(writer.last_write, last_tick)
                with primitives.CancelScope(deadline=quiet_since + interval) as tick:
                    message = await receive()
                    if message.get("type") == "http.disconnect":
                        scope.cancel()  # "closing the response stream IS the cancellation"
                        return
                if tick.cancelled_caught:
                    last_tick = primitives.current_time()
                    if not await self._tick(parts, last_tick):
                        return

    async def _tick(self, parts: Parts, now: float) -> bool:
        """A quiet long request: keep its stream alive, or give up on a dead client."""
        writer, reply, _, scope = parts
        writing_since = writer.writing_since
        if writing_since is not None and now - writing_since > self._limits.write_timeout:
            scope.cancel()  # a client that reads nothing for this long is gone
            return False
        if now - writer.last_write >= self._limits.sse_keepalive_interval:
            try:
                await reply.keepalive()
            except primitives.GONE:
                scope.cancel()
                return False
            writer.last_write = primitives.current_time()
        return True
