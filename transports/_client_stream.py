"""The client's driver over a message stream: one reader, one writer, callbacks in tasks.

`StreamDriver` is the `ClientTransport` of every transport that carries whole JSON-RPC
messages both ways on one connection (stdio; WebSocket would be another). The reader
feeds what the server sends to the session's `Connection` and routes each event, and
never awaits user code (shared/DESIGN.md §5):

* the answer to a call, or its progress → the call's `PendingCall` (the caller runs
  the progress callback itself);
* a legacy server's request (sampling, elicitation, roots, ping) → a task of its own
  under its own cancel scope, cancelled if the server cancels the request; its reply
  goes through the writer;
* a notification → the session (cache invalidation), then its listen stream's
  `Subscription`, or the ``on_notification`` dispatcher: both bounded queues;
* garbage → the error reply the core decided.

Giving up on a call (timeout, trio cancellation, a failing progress callback) cancels
it on the wire: ``Connection.cancel`` and the ``notifications/cancelled`` it returns,
written whole or not at all ("(C) MUST send notifications/cancelled to cancel" on stdio,
2026-07-28 basic/utilities/cancellation). When the connection is lost, `fail` ends
every pending call and listen stream at once with the reason.
"""

from __future__ import annotations

import contextlib
from collections.abc import AsyncIterator, Callable
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
from mcpcore.client import ClientSession, Outcome
from mcpcore.framing import OversizedMessage
from mcpcore.types import RequestId
from transports._client_calls import DEFAULT_TIMEOUT, PendingCall, current_call_options
from transports._client_errors import ConnectionClosedError
from transports._client_notifications import NotificationDispatcher, Subscription
from transports._deadlines import Deadlines
from transports._writer import MessageWriter

__all__ = ["CANCEL_SEND_TIMEOUT", "FLUSH_TIMEOUT", "MAX_SERVER_REQUESTS", "StreamDriver"]

#: Legacy server-to-client requests (sampling, elicitation, roots) answered at once.
#: Each runs a user callback in a task; past the limit the server's request is refused
#: with -32603 at once. The reader never waits for a slot: a callback may itself be
#: waiting for an answer only the reader can deliver.
MAX_SERVER_REQUESTS: Final = 64
#: Seconds a ``notifications/cancelled`` may wait for room in the write queue. It is
#: written shielded (a cancelled caller still sends it), so it needs its own bound.
CANCEL_SEND_TIMEOUT: Final = 5.0
#: Seconds given to write what is already queued when the client closes.
FLUSH_TIMEOUT: Final = 2.0

_LISTEN_ACKNOWLEDGED: Final = "notifications/subscriptions/acknowledged"
_TERMINAL: Final = (ResponseReceived, ErrorReceived, InvalidResponse)


class StreamDriver:
    """Drives one `ClientSession` over a message stream and a `MessageWriter`.

    Build it, build the session with it as the requester, `bind` the session; run
    `read` (and the writer, and the dispatcher, if any) in ``nursery``.

    Args:
        nursery: Where the server's requests are answered.
        writer: Where every message to the server goes.
        frame: Turns one message into the bytes the transport writes.
        timeout: Seconds a request waits when the session passes no timeout.
        notifications: Where notifications outside listen streams go, if anywhere.
        max_server_requests: See `MAX_SERVER_REQUESTS`.
    """

    def __init__(
        self,
        nursery: trio.Nursery,
        writer: MessageWriter,
        *,
        frame: Callable[[bytes], bytes],
        timeout: float = DEFAULT_TIMEOUT,
        notifications: NotificationDispatcher | None = None,
        max_server_requests: int = MAX_SERVER_REQUESTS,
    ) -> None:
        self._nursery = nursery
        self._writer = writer
        self._frame = frame
        self._timeout = timeout
        self._notifications = notifications
        self._max_server_requests = max_server_requests
        self._session: ClientSession | None = None
        # Bounded by the Connection, which refuses a request past MAX_REQUESTS_IN_FLIGHT.
        self._calls: dict[RequestId, PendingCall] = {}
        # Bounded the same way: each is a request in flight in the Connection.
        self._streams: dict[RequestId, Subscription] = {}
        # Bounded by max_server_requests.
        self._answering: dict[RequestId, trio.CancelScope] = {}
        self._failure: ConnectionClosedError | None = None
        # The calls' timeouts, kept by one task rather than a cancel scope per call.
        self._deadlines = Deadlines()
        nursery.start_soon(self._deadlines.run)
        #: Lines dropped unread for being longer than the framer's limit. Their ids are
        #: unknown, so the calls they answered end by their timeouts.
        self.oversized_messages = 0

    def bind(self, session: ClientSession) -> None:
        """Attach the session this driver carries (built with this driver as requester)."""
        self._session = session

    @property
    def session(self) -> ClientSession:
        """The session this driver carries."""
        if self._session is None:
            raise RuntimeError("bind() a session first")
        return self._session

    @property
    def failure(self) -> ConnectionClosedError | None:
        """Why the connection is gone, once it is."""
        return self._failure

    # -------------------------------------------------------------- our calls

    async def request(
        self, request_id: RequestId, data: bytes, *, timeout: float | None = None
    ) -> Outcome:
        """Write a request; wait for its answer, reporting progress (see `PendingCall`)."""
        if self._failure is not None:
            raise self._failure
        # "The client MUST NOT attempt to cancel its initialize request" (2024-11-05
        # basic/lifecycle): when we stop waiting for it, the connection is useless.
        uncancellable = self.session.connection.phase is Phase.INITIALIZING
        pending = PendingCall()
        self._calls[request_id] = pending
        try:
            # `_write` inlined, and try/except rather than contextlib.suppress: a context
            # manager object per call costs more than the handler that is never taken.
            try:  # noqa: SIM105
                await self._writer.send(self._frame(data))
            except ConnectionError:
                pass  # the writer broke: `fail` will say why, or the timeout ends the wait
            return await pending.wait(
                self._timeout if timeout is None else timeout,
                current_call_options(),
                deadlines=self._deadlines,
            )
        except BaseException as exc:
            if not pending.done and self._failure is None:
                if uncancellable:
                    self.fail(ConnectionClosedError("initialize was abandoned: " + _why(exc)))
                else:
                    await self._give_up(request_id, _why(exc))
            raise
        finally:
            del self._calls[request_id]

    async def send(self, data: bytes) -> None:
        """Write a notification."""
        if self._failure is not None:
            raise self._failure
        try:
            await self._writer.send(self._frame(data))
        except ConnectionError as exc:
            raise self._failure or ConnectionClosedError(str(exc)) from exc

    async def _give_up(self, request_id: RequestId, reason: str) -> None:
        """Cancel one of our requests on the wire; the core drops its late answer."""
        connection = self.session.connection
        if request_id not in connection.pending_requests:
            return  # answered in the same read, its event not routed yet: nothing to cancel
        cancel = connection.cancel(request_id, reason)
        if cancel is not None:
            await self._send_shielded(cancel)

    async def _send_shielded(self, data: bytes) -> None:
        """Write a message even from a cancelled task: whole, or (bounded) not at all."""
        framed = self._frame(data)
        if self._writer.send_nowait(framed):
            return
        with (
            trio.CancelScope(shield=True),
            trio.move_on_after(CANCEL_SEND_TIMEOUT),
            contextlib.suppress(ConnectionError),  # gone: nothing left to cancel
        ):
            await self._writer.send(framed)

    # ---------------------------------------------------------- listen streams

    async def open_listen(
        self, subscription: Subscription, request_id: RequestId, data: bytes
    ) -> None:
        """Write a ``subscriptions/listen`` request and route its stream."""
        if self._failure is not None:
            raise self._failure
        self._streams[request_id] = subscription
        await self._write(data)  # as in `request`: a failure, or the caller's timeout, follows

    async def close_listen(self, request_id: RequestId) -> None:
        """Stop routing a listen stream, and cancel it on the wire if still open.

        "Client ends a subscription: send notifications/cancelled {requestId: <listen
        id>}" on stdio (2026-07-28 basic/patterns/subscriptions).
        """
        subscription = self._streams.pop(request_id, None)
        if subscription is None or subscription.ended or self._failure is not None:
            return  # the server ended it, or the connection did: the core forgot it
        subscription.finish(None)
        await self._give_up(request_id, "the client stopped listening")

    # ---------------------------------------------------------------- the reader

    async def read(self, messages: AsyncIterator[bytes | OversizedMessage]) -> None:
        """Feed the server's messages to the session until they end (or the connection fails).

        Returns at the end of the stream; the transport then calls `fail` with the
        reason it knows best (an exit status, say).
        """
        connection = self.session.connection
        async for message in messages:
            if self._failure is not None:
                return
            if isinstance(message, OversizedMessage):
                self.oversized_messages += 1
                continue
            try:
                events = connection.receive(message)
            except RemoteProtocolError as exc:
                self.fail(ConnectionClosedError(f"the server broke the protocol: {exc}"))
                return
            for event in events:
                if type(event) is ResponseReceived:
                    # The common case, routed here rather than by `_route`: the answer
                    # to a call, or the graceful end of a listen stream.
                    self._finish(event)
                else:
                    await self._route(event)

    def _finish(self, event: ResponseReceived | ErrorReceived | InvalidResponse) -> None:
        request_id = event.request_id
        if request_id is None:
            return  # an error about a message the server could not read: no owner
        pending = self._calls.get(request_id)
        if pending is not None:
            pending.resolve(event)
        elif request_id in self._streams:
            self._streams[request_id].finish(event)  # the graceful end of a stream

    async def _route(self, event: Event) -> None:
        if isinstance(event, _TERMINAL):
            self._finish(event)
        elif isinstance(event, ProgressReceived):
            pending = self._calls.get(event.request_id)
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
            subscription = self._streams.get(event.subscription_id)
            if subscription is not None:
                subscription.finish(None)
        elif isinstance(event, InvalidMessage) and event.reply is not None:
            await self._write(event.reply)

    def _notification(self, event: NotificationReceived) -> None:
        self.session.handle_notification(event)  # cache invalidation: core code, no IO
        if event.subscription_id is None:
            if self._notifications is not None:
                self._notifications.put(event)
            return
        subscription = self._streams.get(event.subscription_id)
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
                await self._write(reply)
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
                    await self._write(reply)
            if scope.cancelled_caught and connection.is_cancelled(event.request_id):
                # Close the request in the core; it returns None: "receivers SHOULD NOT
                # send a response for a cancelled request" (2025-11-25 cancellation).
                connection.send_error(event.request_id, jsonrpc.INTERNAL_ERROR, "Cancelled")
        finally:
            del self._answering[event.request_id]

    async def _write(self, data: bytes) -> None:
        # A broken writer means the connection is going: `fail` tells whoever waits.
        with contextlib.suppress(ConnectionError):
            await self._writer.send(self._frame(data))

    # ---------------------------------------------------------------- the end

    def fail(self, error: ConnectionClosedError) -> None:
        """The connection is gone: end every pending call and listen stream with ``error``.

        The first reason wins; later calls change nothing.
        """
        if self._failure is not None:
            return
        self._failure = error
        if self._session is not None:
            self._session.connection.close()
        for pending in self._calls.values():
            pending.fail(error)
        for subscription in self._streams.values():
            subscription.fail(error)
        for scope in self._answering.values():
            scope.cancel()

    async def aclose(self) -> None:
        """Fail what is pending ("the client closed the connection"), flush the writer."""
        self.fail(ConnectionClosedError("the client closed the connection"))
        with trio.CancelScope(shield=True):
            await self._writer.aclose(flush_timeout=FLUSH_TIMEOUT)


def _why(exc: BaseException) -> str:
    if isinstance(exc, TimeoutError):
        return "timed out"
    if isinstance(exc, trio.Cancelled):
        return "cancelled by the client"
    return f"the client gave up ({type(exc).__name__})"
