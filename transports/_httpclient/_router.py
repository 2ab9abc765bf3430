"""Where each message the server sends goes, whichever response or stream carried it.

Over HTTP the server's messages arrive on many streams at once: the JSON body or the
event stream answering each POST, a legacy session's GET stream, a stream resumed with
``Last-Event-ID``, the 2024-11-05 transport's one GET stream. They all feed the one
client `Connection` through `Router.receive`, which routes each event as the stdio
driver does, and never runs user code itself (shared/DESIGN.md §5):

* the answer to a call, or its progress → the call's `PendingCall`;
* a legacy server's request (sampling, elicitation, roots, ping) → a task of its own,
  whose reply is POSTed (`Router` is given the function that POSTs);
* a notification → the session (cache invalidation), then its listen stream's
  `Subscription`, or the ``on_notification`` dispatcher;
* garbage → the error reply the core decided, POSTed too (legacy only: "(C) MUST NOT
  POST responses" to a 2026-07-28 server, and it sends no requests to answer).
"""

from __future__ import annotations

import contextlib
from collections.abc import Awaitable, Callable
from typing import Final

import trio

from mcpcore import (
    CancelRequested,
    ErrorReceived,
    Event,
    InvalidMessage,
    InvalidResponse,
    NotificationReceived,
    Phase,
    ProgressReceived,
    RemoteProtocolError,
    RequestReceived,
    ResponseReceived,
    SubscriptionEnded,
    jsonrpc,
)
from mcpcore.client import ClientSession
from mcpcore.types import RequestId
from transports._client_calls import PendingCall
from transports._client_errors import ConnectionClosedError
from transports._client_notifications import NotificationDispatcher, Subscription
from transports._client_stream import MAX_SERVER_REQUESTS

__all__ = ["Router"]

_LISTEN_ACKNOWLEDGED: Final = "notifications/subscriptions/acknowledged"
_TERMINAL: Final = (ResponseReceived, ErrorReceived, InvalidResponse)


class Router:
    """Routes what the server sends to the calls, streams and callbacks waiting for it.

    Args:
        nursery: Where the server's requests are answered.
        post: POSTs one message of ours (a reply to the server's request).
        notifications: Where notifications outside listen streams go, if anywhere.
        max_server_requests: See `MAX_SERVER_REQUESTS`.
    """

    def __init__(
        self,
        nursery: trio.Nursery,
        post: Callable[[bytes], Awaitable[None]],
        *,
        notifications: NotificationDispatcher | None = None,
        max_server_requests: int = MAX_SERVER_REQUESTS,
    ) -> None:
        self._nursery = nursery
        self._post = post
        self._notifications = notifications
        self._max_server_requests = max_server_requests
        self._session: ClientSession | None = None
        #: Our calls waiting for an answer (bounded by the Connection's own limit on
        #: requests in flight).
        self.calls: dict[RequestId, PendingCall] = {}
        #: Open listen streams (bounded the same way).
        self.streams: dict[RequestId, Subscription] = {}
        # Bounded by max_server_requests.
        self._answering: dict[RequestId, trio.CancelScope] = {}
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

    async def receive(self, message: bytes) -> None:
        """Feed one message from the server to the Connection and route its events."""
        try:
            events = self.session.connection.receive(message)
        except RemoteProtocolError as exc:
            self.fail(ConnectionClosedError(f"the server broke the protocol: {exc}"))
            return
        for event in events:
            await self._route(event)

    async def _route(self, event: Event) -> None:
        if isinstance(event, _TERMINAL):
            request_id = event.request_id
            if request_id is None:
                return  # an error about a message the server could not read: no owner
            pending = self.calls.get(request_id)
            if pending is not None:
                pending.resolve(event)
            elif request_id in self.streams:
                self.streams[request_id].finish(event)  # the graceful end of a stream
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
            subscription = self.streams.get(event.subscription_id)
            if subscription is not None:
                subscription.finish(None)
        elif (
            isinstance(event, InvalidMessage)
            and event.reply is not None
            and self.session.connection.phase is not Phase.MODERN
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
                reply = await self.session.handle_server_request(event)
                if reply is not None:
                    await self._reply(reply)
            if scope.cancelled_caught and connection.is_cancelled(event.request_id):
                # Close it in the core; nothing is sent for a cancelled request.
                connection.send_error(event.request_id, jsonrpc.INTERNAL_ERROR, "Cancelled")
        finally:
            del self._answering[event.request_id]

    async def _reply(self, data: bytes) -> None:
        # A reply that can't be delivered leaves the server's request to its own
        # timeout; the failure of the connection, if that is what it is, shows elsewhere.
        with contextlib.suppress(ConnectionError):
            await self._post(data)

    def fail(self, error: ConnectionClosedError) -> None:
        """The conversation is over: end every pending call and stream with ``error``.

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
