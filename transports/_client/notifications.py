"""Server notifications, delivered outside the reader task through bounded queues.

Two destinations, both fed synchronously by the reader and drained by someone else:

* `NotificationDispatcher`: the client's ``on_notification`` callback (log messages,
  list changes, legacy ``resources/updated``), run one at a time by a task of its own;
* `Subscription`: one 2026-07-28 ``subscriptions/listen`` stream, drained by whoever
  iterates it.

Both hold at most a fixed number of notifications. When the consumer falls behind the
*oldest* waiting notification is dropped and counted (``dropped``): notifications say
that something changed, so the newest say the most, and the reader must never wait on
a consumer (it also carries the answers to every call). A consumer that finds
``dropped`` grown should re-read what it tracks (list the tools again, say).
"""

from __future__ import annotations

import inspect
from collections import deque
from collections.abc import Awaitable, Callable
from typing import Final, TypeAlias

import trio

from mcpcore import ErrorReceived, InvalidResponse, NotificationReceived, ResponseReceived
from mcpcore.client import (
    CallbackErrorHook,
    FilterComparison,
    InvalidServerResponseError,
    McpError,
    compare_acknowledgement,
)
from mcpcore.types import RequestId, SubscriptionFilter

__all__ = [
    "MAX_LISTEN_BACKLOG",
    "MAX_QUEUED_NOTIFICATIONS",
    "NotificationCallback",
    "NotificationDispatcher",
    "Subscription",
]

#: Notifications waiting for the ``on_notification`` callback before the oldest is
#: dropped. A burst of log lines from one tool fits; a callback that stalls for good
#: costs this many notifications of memory, no more.
MAX_QUEUED_NOTIFICATIONS: Final = 256
#: Notifications waiting on one listen stream before the oldest is dropped (same
#: reasoning: a listen stream carries change signals, a few at a time).
MAX_LISTEN_BACKLOG: Final = 256

#: Told about each notification that is not on a listen stream; sync or async.
NotificationCallback: TypeAlias = Callable[[NotificationReceived], Awaitable[None] | None]

_LISTEN: Final = "subscriptions/listen"


class _Backlog:
    """A bounded FIFO that drops its oldest item when full, with a wake-up for a reader."""

    __slots__ = ("_items", "_wake", "dropped")

    def __init__(self, capacity: int) -> None:
        self._items: deque[NotificationReceived] = deque(maxlen=capacity)
        self._wake = trio.Event()
        self.dropped = 0

    def put(self, item: NotificationReceived) -> None:
        if len(self._items) == self._items.maxlen:
            self.dropped += 1  # the deque drops the oldest itself
        self._items.append(item)
        self._wake.set()

    def take(self) -> NotificationReceived | None:
        return self._items.popleft() if self._items else None

    def wake(self) -> None:
        self._wake.set()

    async def wait(self) -> None:
        if not self._items:
            self._wake = trio.Event()
            await self._wake.wait()


class NotificationDispatcher:
    """Runs the ``on_notification`` callback, one notification at a time, in its own task.

    Args:
        callback: The user's callback.
        on_error: Told about an exception the callback raised; without it, the
            exception propagates and ends the client (an unknown error is not hidden).
        capacity: See `MAX_QUEUED_NOTIFICATIONS`.
    """

    def __init__(
        self,
        callback: NotificationCallback,
        *,
        on_error: CallbackErrorHook | None = None,
        capacity: int = MAX_QUEUED_NOTIFICATIONS,
    ) -> None:
        self._callback = callback
        self._on_error = on_error
        self._backlog = _Backlog(capacity)

    @property
    def dropped(self) -> int:
        """How many notifications were dropped because the callback fell behind."""
        return self._backlog.dropped

    def put(self, event: NotificationReceived) -> None:
        """Queue a notification (the reader's side: never waits)."""
        self._backlog.put(event)

    async def run(self) -> None:
        """Deliver notifications until cancelled."""
        backlog = self._backlog
        while True:
            await backlog.wait()
            event = backlog.take()
            if event is None:
                continue
            try:
                returned = self._callback(event)
                if inspect.isawaitable(returned):
                    await returned
            except Exception as exc:
                if self._on_error is None:
                    raise
                self._on_error(event.method, exc)


class Subscription:
    """One 2026-07-28 ``subscriptions/listen`` stream: an async iterator of notifications.

    Yielded by `Client.listen`; iterate it for the notifications the server sends on
    the stream (``notifications/tools/list_changed``, ``notifications/resources/updated``
    ...). Iteration ends when the server ends the stream (its closing result, or its
    ``notifications/cancelled``); it raises `McpError` when the server refused the
    stream, and the connection's error when the connection is lost.

    Attributes:
        subscription_id: The id of the listen request (every notification of the
            stream carries it as ``_meta["io.modelcontextprotocol/subscriptionId"]``).
        requested: The filter asked for.
    """

    def __init__(
        self,
        subscription_id: RequestId,
        requested: SubscriptionFilter,
        *,
        capacity: int = MAX_LISTEN_BACKLOG,
    ) -> None:
        self.subscription_id = subscription_id
        self.requested = requested
        self._backlog = _Backlog(capacity)
        self._acknowledged: SubscriptionFilter | None = None
        self._settled = trio.Event()  # acknowledged, or ended
        self._ended = False
        self._error: BaseException | None = None

    # -- what the user sees ---------------------------------------------------

    @property
    def is_acknowledged(self) -> bool:
        """Whether the server's acknowledgement arrived."""
        return self._acknowledged is not None

    @property
    def acknowledged(self) -> SubscriptionFilter:
        """What the server agreed to send ("the honoured subset of the filter")."""
        if self._acknowledged is None:
            raise RuntimeError("the subscription is not acknowledged yet")
        return self._acknowledged

    @property
    def comparison(self) -> FilterComparison:
        """What the server dropped from the request, and what it added (an error).

        "(C) SHOULD compare the acknowledged filter with its request" (2026-07-28
        basic/patterns/subscriptions).
        """
        return compare_acknowledgement(self.requested, self.acknowledged)

    @property
    def ended(self) -> bool:
        """Whether the stream is over (nothing more will be queued)."""
        return self._ended

    @property
    def dropped(self) -> int:
        """How many notifications were dropped because the iteration fell behind."""
        return self._backlog.dropped

    def __aiter__(self) -> Subscription:
        return self

    async def __anext__(self) -> NotificationReceived:
        while True:
            event = self._backlog.take()
            if event is not None:
                return event
            if self._ended:
                if self._error is not None:
                    raise self._error
                raise StopAsyncIteration
            await self._backlog.wait()

    # -- the driver's side ----------------------------------------------------

    async def wait_acknowledged(self) -> SubscriptionFilter:
        """Wait for the acknowledgement ("no notification may precede it").

        Raises:
            McpError: The server answered the listen request with an error.
            InvalidServerResponseError: The stream ended before it was acknowledged.
        """
        await self._settled.wait()
        if self._acknowledged is not None:
            return self._acknowledged
        if self._error is not None:
            raise self._error
        raise InvalidServerResponseError(_LISTEN, "the stream ended before its acknowledgement")

    def acknowledge(self, honoured: SubscriptionFilter) -> None:
        """The server's ``notifications/subscriptions/acknowledged`` arrived."""
        self._acknowledged = honoured
        self._settled.set()

    def deliver(self, event: NotificationReceived) -> None:
        """A notification of the stream arrived (the core checked it against the filter)."""
        if not self._ended:
            self._backlog.put(event)

    def finish(self, outcome: ResponseReceived | ErrorReceived | InvalidResponse | None) -> None:
        """The server ended the stream: its result (or error), or None for its cancel."""
        if isinstance(outcome, ErrorReceived):
            self.fail(McpError.from_error(outcome.error, _LISTEN))
        elif isinstance(outcome, InvalidResponse):
            self.fail(InvalidServerResponseError(_LISTEN, outcome.message))
        else:
            self._end()

    def fail(self, error: BaseException) -> None:
        """The stream ends with ``error`` (raised once the backlog is consumed)."""
        if not self._ended:
            self._error = error
            self._end()

    def _end(self) -> None:
        self._ended = True
        self._settled.set()
        self._backlog.wake()
