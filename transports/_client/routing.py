"""Where each event of the client's `Connection` goes: the part every client transport shares.

Whatever carries the server's messages (one stdio pipe, one WebSocket, the many
responses and streams of Streamable HTTP), the client's `Connection` turns them into
the same events, and `EventRouter` sends each where it belongs, never running user
code itself (shared/DESIGN.md §5):

* the answer to a call, or its progress → the call's `PendingCall` (the caller runs
  the progress callback itself);
* a legacy server's request (sampling, elicitation, roots, ping) → a task of its own
  under its own cancel scope, cancelled if the server cancels the request;
* a notification → the session (cache invalidation), then its listen stream's
  `Subscription`, or the ``on_notification`` dispatcher: both bounded queues;
* garbage → the error reply the core decided.

A transport subclasses it and says how a message of ours reaches the server
(`EventRouter._deliver`).
"""

from __future__ import annotations

import contextlib
from typing import Final

import trio

from mcpcore import (
    CancelRequested,
    ErrorReceived,
    Event,
    InvalidMessage,
    InvalidResponse,
    LocalProtocolError,
    NotificationReceived,
    ProgressReceived,
    RequestReceived,
    ResponseReceived,
    SubscriptionEnded,
    jsonrpc,
)
from mcpcore.client import ClientSession
from mcpcore.types import RequestId
from transports._client.calls import PendingCall
from transports._client.errors import ConnectionClosedError
from transports._client.notifications import NotificationDispatcher, Subscription

__all__ = ["MAX_SERVER_REQUESTS", "EventRouter"]

#: Legacy server-to-client requests (sampling, elicitation, roots) answered at once.
#: Each runs a user callback in a task; past the limit the server's request is refused
#: with -32603 at once. The reader never waits for a slot: a callback may itself be
#: waiting for an answer only the reader can deliver.
MAX_SERVER_REQUESTS: Final = 64

_LISTEN_ACKNOWLEDGED: Final = "notifications/subscriptions/acknowledged"
_TERMINAL: Final = (ResponseReceived, ErrorReceived, InvalidResponse)


class EventRouter:
    """Routes what the server sends to the calls, streams and callbacks waiting for it.

    Args:
        nursery: Where the server's requests are answered.
        notifications: Where notifications outside listen streams go, if anywhere.
        max_server_requests: See `MAX_SERVER_REQUESTS`.
    """

    def __init__(
        self,
        nursery: trio.Nursery,
        *,
        notifications: NotificationDispatcher | None = None,
        max_server_requests: int = MAX_SERVER_REQUESTS,
    ) -> None:
        self._nursery = nursery
        self._notifications = notifications
        self._max_server_requests = max_server_requests
        self._session: ClientSession | None = None
        #: Our calls waiting for an answer (bounded by the Connection's own limit on
        #: requests in flight).
        self.calls: dict[RequestId, PendingCall] = {}
        #: Open listen streams (bounded the same way: each is a request in flight).
        self.streams: dict[RequestId, Subscription] = {}
        # Bounded by max_server_requests.
        self._answering: dict[RequestId, trio.CancelScope] = {}
        #: Why the connection is gone, once it is.
        self.failure: ConnectionClosedError | None = None

    def bind(self, session: ClientSession) -> None:
        """Attach the session whose `Connection` the messages feed."""
        self._session = session

    @property
    def session(self) -> ClientSession:
        """The session messages are routed for."""
        if self._session is None:
            raise RuntimeError("bind() a session first")
        return self._session

    async def _deliver(self, data: bytes) -> None:
        """Send one message of ours to the server (a reply). Transports override it.

        Raises:
            ConnectionError: It could not be sent.
        """
        raise NotImplementedError

    def _answers_garbage(self) -> bool:
        """Whether the core's error reply to an unreadable message is sent (yes, here)."""
        return True

    # -------------------------------------------------------------- the events

    def finish(self, event: ResponseReceived | ErrorReceived | InvalidResponse) -> None:
        """End the call, or the listen stream, that ``event`` answers."""
        request_id = event.request_id
        if request_id is None:
            return  # an error about a message the server could not read: no owner
        pending = self.calls.get(request_id)
        if pending is not None:
            pending.resolve(event)
        elif request_id in self.streams:
            self.streams[request_id].finish(event)  # the graceful end of a stream

    async def route(self, event: Event) -> None:
        """Send ``event`` where it belongs (see the module docstring)."""
        if isinstance(event, _TERMINAL):
            self.finish(event)
        elif isinstance(event, ProgressReceived):
            pending = self.calls.get(event.request_id)
            if pending is not None:
                pending.progress(event)
        elif isinstance(event, NotificationReceived):
            self._notification(event)
        elif isinstance(event, RequestReceived):
            await self._take_server_request(event)
        elif isinstance(event, CancelRequested):
            scope = self._answering.get(event.request_id)
            if scope is not None:
                scope.cancel()
        elif isinstance(event, SubscriptionEnded):
            # The server's notifications/cancelled for a listen stream (CHECKLIST G6).
            subscription = self.streams.get(event.subscription_id)
            if subscription is not None:
                subscription.finish(None)
        elif (
            isinstance(event, InvalidMessage)
            and event.reply is not None
            and self._answers_garbage()
        ):
            await self._reply(event.reply)

    def _notification(self, event: NotificationReceived) -> None:
        self.session.handle_notification(event)  # cache invalidation: core code, no IO
        if event.subscription_id is None:
            if self._notifications is not None:
                self._notifications.put(event)
            return
        subscription = self.streams.get(event.subscription_id)
        if subscription is None:
            return  # a stream we stopped listening to
        if event.method == _LISTEN_ACKNOWLEDGED:
            subscription.acknowledge(event.params.notifications)
        else:
            subscription.deliver(event)

    # ------------------------------------------------- the server's requests

    async def _take_server_request(self, event: RequestReceived) -> None:
        if len(self._answering) >= self._max_server_requests:
            reply = self.session.connection.send_error(
                event.request_id,
                jsonrpc.INTERNAL_ERROR,
                f"Too many requests in progress (limit {self._max_server_requests})",
            )
            if reply is not None:
                await self._reply(reply)
            return
        scope = trio.CancelScope()
        self._answering[event.request_id] = scope
        self._nursery.start_soon(self._answer, event, scope)

    async def _answer(self, event: RequestReceived, scope: trio.CancelScope) -> None:
        connection = self.session.connection
        try:
            with scope:
                try:
                    reply = await self.session.handle_server_request(event)
                except LocalProtocolError:
                    if self.failure is None:
                        raise
                    # The connection closed while we answered (`fail` forgot every
                    # request, this one too): there is nobody to answer. A handler
                    # that reaches no checkpoint after the close does not see its
                    # scope cancelled (one that had not started yet, or a callback
                    # that returned meanwhile).
                    return
                if reply is not None:
                    await self._reply(reply)
            if scope.cancelled_caught and connection.is_cancelled(event.request_id):
                # Close the request in the core; it returns None: "receivers SHOULD NOT
                # send a response for a cancelled request" (2025-11-25 cancellation).
                connection.send_error(event.request_id, jsonrpc.INTERNAL_ERROR, "Cancelled")
        finally:
            # (Unless the id is another request's now: our answer freed it in the core,
            # and a server may send a request under it again while we deliver ours.)
            if self._answering.get(event.request_id) is scope:
                del self._answering[event.request_id]

    async def _reply(self, data: bytes) -> None:
        # A reply that can't be delivered leaves the server's request to its own
        # timeout; the connection's failure, if that is what it is, shows in `fail`.
        with contextlib.suppress(ConnectionError):
            await self._deliver(data)

    # ---------------------------------------------------------------- the end

    def fail(self, error: ConnectionClosedError) -> None:
        """The connection is gone: end every pending call and listen stream with ``error``.

        The first reason wins; later calls change nothing.
        """
        if self.failure is not None:
            return
        self.failure = error
        if self._session is not None:
            self._session.connection.close()
        for pending in self.calls.values():
            pending.fail(error)
        for subscription in self.streams.values():
            subscription.fail(error)
        for scope in self._answering.values():
            scope.cancel()
