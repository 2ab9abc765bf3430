"""The client's driver over a message stream: one reader, one writer, callbacks in tasks.

`StreamDriver` is the `ClientTransport` of every transport that carries whole JSON-RPC
messages both ways on one connection (stdio, WebSocket). What differs between those
transports is their `StreamLink`: how messages are framed and read, which tasks the
connection needs (a subprocess's exit, a WebSocket's pings), how it ends. The driver
feeds what the link reads to the session's `Connection`, and `EventRouter` routes each
event (`transports._client.routing`), never awaiting user code (shared/DESIGN.md §5);
the server's requests are answered in tasks of their own, their replies through the
link's writer.

Giving up on a call (timeout, trio cancellation, a failing progress callback) cancels
it on the wire: ``Connection.cancel`` and the ``notifications/cancelled`` it returns,
written whole or not at all ("(C) MUST send notifications/cancelled to cancel" on stdio,
2026-07-28 basic/utilities/cancellation). When the connection is lost, `fail` ends
every pending call and listen stream at once with the reason.
"""

from __future__ import annotations

import contextlib
from collections.abc import AsyncIterator
from typing import Any, Final, Generic, Protocol, TypeVar

import trio

from mcpcore import Phase, RemoteProtocolError, ResponseReceived
from mcpcore.client import ClientSession, Outcome
from mcpcore.framing import OversizedMessage
from mcpcore.types import RequestId
from transports._client.calls import DEFAULT_TIMEOUT, PendingCall, options_of
from transports._client.deadlines import Deadlines
from transports._client.errors import ConnectionClosedError
from transports._client.notifications import NotificationDispatcher, Subscription
from transports._client.routing import MAX_SERVER_REQUESTS, EventRouter
from transports._runtime.writer import MessageWriter

__all__ = ["CANCEL_SEND_TIMEOUT", "StreamDriver", "StreamLink"]

#: Seconds a ``notifications/cancelled`` may wait for room in the write queue. It is
#: written shielded (a cancelled caller still sends it), so it needs its own bound.
CANCEL_SEND_TIMEOUT: Final = 5.0


class StreamLink(Protocol):
    """What carries a `StreamDriver`'s messages: the part of a transport that differs.

    Attributes:
        writer: Where every message to the server goes (the link runs its task).
    """

    writer: MessageWriter

    def frame(self, message: bytes) -> bytes:
        """One message as the bytes the transport writes (a line, a text frame)."""
        ...

    def start(self, nursery: trio.Nursery, driver: StreamDriver[Any]) -> None:
        """Start the connection's tasks in ``nursery``.

        The writer's, a reader that feeds `StreamDriver.read` and then calls
        `StreamDriver.fail` with why the messages ended, and whatever else the
        transport needs.
        """
        ...

    async def close(self) -> None:
        """End the connection once the driver has failed what was pending.

        Flush the writer, say goodbye the transport's way, wait (bounded) for the
        peer to go. Called shielded, once.
        """
        ...


_Link = TypeVar("_Link", bound=StreamLink)


class StreamDriver(EventRouter, Generic[_Link]):
    """Drives one `ClientSession` over a `StreamLink` (the stdio and WebSocket transport).

    It is the `ClientTransport` of both. Build it, build the session with it as the
    requester, then `bind` the session (which starts the link's tasks in ``nursery``).
    `aclose` ends it all.

    Args:
        nursery: Where the link's tasks run and the server's requests are answered;
            cancelled by `aclose`.
        link: The transport's side of the connection.
        timeout: Seconds a request waits when the session passes no timeout.
        notifications: Where notifications outside listen streams go, if anywhere.
        max_server_requests: See `MAX_SERVER_REQUESTS`.
    """

    def __init__(
        self,
        nursery: trio.Nursery,
        link: _Link,
        *,
        timeout: float = DEFAULT_TIMEOUT,
        notifications: NotificationDispatcher | None = None,
        max_server_requests: int = MAX_SERVER_REQUESTS,
    ) -> None:
        super().__init__(
            nursery, notifications=notifications, max_server_requests=max_server_requests
        )
        #: The transport's side of the connection.
        self.link = link
        self._writer = link.writer
        self._frame = link.frame
        self._timeout = timeout
        # The calls' timeouts, kept by one task rather than a cancel scope per call
        # (see `transports._client.deadlines` for what that buys).
        self._deadlines = Deadlines()
        self._closing = False
        self._closed = trio.Event()
        #: Lines dropped unread for being longer than the framer's limit. Their ids are
        #: unknown, so the calls they answered end by their timeouts.
        self.oversized_messages = 0

    def bind(self, session: ClientSession) -> None:
        """Attach the session whose `Connection` the messages feed; start the link."""
        super().bind(session)
        self._nursery.start_soon(self._deadlines.run)
        self.link.start(self._nursery, self)

    async def _deliver(self, data: bytes) -> None:
        """Write one message of ours (see `EventRouter._deliver`)."""
        await self._writer.send(self._frame(data))

    # -------------------------------------------------------------- our calls

    async def request(
        self, request_id: RequestId, data: bytes, *, timeout: float | None = None
    ) -> Outcome:
        """Write a request; wait for its answer, reporting progress (see `PendingCall`)."""
        if self.failure is not None:
            raise self.failure
        # "The client MUST NOT attempt to cancel its initialize request" (2024-11-05
        # basic/lifecycle): when we stop waiting for it, the connection is useless.
        uncancellable = self.session.connection.phase is Phase.INITIALIZING
        pending = PendingCall(options_of(timeout))
        self.calls[request_id] = pending
        try:
            # `reply` inlined, and try/except rather than contextlib.suppress: a context
            # manager object per call costs more than the handler that is never taken.
            try:  # noqa: SIM105
                await self._writer.send(self._frame(data))
            except ConnectionError:
                pass  # the writer broke: `fail` will say why, or the timeout ends the wait
            wait = self._timeout if timeout is None else timeout
            return await pending.wait(wait, deadlines=self._deadlines)
        except BaseException as exc:
            if not pending.done and self.failure is None:
                if uncancellable:
                    self.fail(ConnectionClosedError("initialize was abandoned: " + _why(exc)))
                else:
                    await self._give_up(request_id, _why(exc))
            raise
        finally:
            del self.calls[request_id]

    async def send(self, data: bytes) -> None:
        """Write a notification."""
        if self.failure is not None:
            raise self.failure
        try:
            await self._writer.send(self._frame(data))
        except ConnectionError as exc:
            raise self.failure or ConnectionClosedError(str(exc)) from exc

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
        if self.failure is not None:
            raise self.failure
        self.streams[request_id] = subscription
        await self._reply(data)  # as in `request`: a failure, or the caller's timeout, follows

    async def close_listen(self, request_id: RequestId) -> None:
        """Stop routing a listen stream, and cancel it on the wire if still open.

        "Client ends a subscription: send notifications/cancelled {requestId: <listen
        id>}" on stdio (2026-07-28 basic/patterns/subscriptions).
        """
        subscription = self.streams.pop(request_id, None)
        if subscription is None or subscription.ended or self.failure is not None:
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
            if self.failure is not None:
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
                    self.finish(event)
                else:
                    await self.route(event)

    # ---------------------------------------------------------------- the end

    async def aclose(self) -> None:
        """Fail pending calls, end the connection (`StreamLink.close`), stop its tasks.

        Always closes, even when cancelled; closing twice waits for the first close.
        """
        with trio.CancelScope(shield=True):
            if self._closing:
                await self._closed.wait()
                return
            self._closing = True
            try:
                self.fail(ConnectionClosedError("the client closed the connection"))
                await self.link.close()
            finally:
                self._nursery.cancel_scope.cancel()
                self._closed.set()


def _why(exc: BaseException) -> str:
    if isinstance(exc, TimeoutError):
        return "timed out"
    if isinstance(exc, trio.Cancelled):
        return "cancelled by the client"
    return f"the client gave up ({type(exc).__name__})"
