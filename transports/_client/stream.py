"""The client's driver over a message stream: one reader, one writer, callbacks in tasks.

`StreamDriver` is the `ClientTransport` of every transport that carries whole JSON-RPC
messages both ways on one connection (stdio, WebSocket). Its reader feeds what the
server sends to the session's `Connection`, and `EventRouter` routes each event
(`transports._client.routing`), never awaiting user code (shared/DESIGN.md §5); the
server's requests are answered in tasks of their own, their replies through the writer.

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

from mcpcore import Phase, RemoteProtocolError, ResponseReceived
from mcpcore.client import Outcome
from mcpcore.framing import OversizedMessage
from mcpcore.types import RequestId
from transports._client.calls import DEFAULT_TIMEOUT, PendingCall, current_call_options
from transports._client.deadlines import Deadlines
from transports._client.errors import ConnectionClosedError
from transports._client.notifications import NotificationDispatcher, Subscription
from transports._client.routing import MAX_SERVER_REQUESTS, EventRouter
from transports._runtime.writer import MessageWriter

__all__ = ["CANCEL_SEND_TIMEOUT", "FLUSH_TIMEOUT", "DrivenTransport", "StreamDriver"]

#: Seconds a ``notifications/cancelled`` may wait for room in the write queue. It is
#: written shielded (a cancelled caller still sends it), so it needs its own bound.
CANCEL_SEND_TIMEOUT: Final = 5.0
#: Seconds given to write what is already queued when the client closes.
FLUSH_TIMEOUT: Final = 2.0


class StreamDriver(EventRouter):
    """Drives one `ClientSession` over a message stream and a `MessageWriter`.

    The reader feeds the server's messages to the `Connection`; `EventRouter` sends
    each event on. Build it, build the session with it as the requester, `bind` the
    session; run `read` (and the writer, and the dispatcher, if any) in ``nursery``.

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
        super().__init__(
            nursery, notifications=notifications, max_server_requests=max_server_requests
        )
        self._writer = writer
        self._frame = frame
        self._timeout = timeout
        # The calls' timeouts, kept by one task rather than a cancel scope per call.
        self._deadlines = Deadlines()
        nursery.start_soon(self._deadlines.run)
        #: Lines dropped unread for being longer than the framer's limit. Their ids are
        #: unknown, so the calls they answered end by their timeouts.
        self.oversized_messages = 0

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
        pending = PendingCall()
        self.calls[request_id] = pending
        try:
            # `reply` inlined, and try/except rather than contextlib.suppress: a context
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


class DrivenTransport:
    """The `ClientTransport` methods of a transport whose `StreamDriver` does the work.

    A transport (stdio, WebSocket) sets ``driver`` and adds its own start and close.
    """

    driver: StreamDriver

    @property
    def failure(self) -> ConnectionClosedError | None:
        """Why the connection is gone, once it is."""
        return self.driver.failure

    async def request(
        self, request_id: RequestId, data: bytes, *, timeout: float | None = None
    ) -> Outcome:
        """See `StreamDriver.request`."""
        return await self.driver.request(request_id, data, timeout=timeout)

    async def send(self, data: bytes) -> None:
        """See `StreamDriver.send`."""
        await self.driver.send(data)

    async def open_listen(
        self, subscription: Subscription, request_id: RequestId, data: bytes
    ) -> None:
        """See `StreamDriver.open_listen`."""
        await self.driver.open_listen(subscription, request_id, data)

    async def close_listen(self, request_id: RequestId) -> None:
        """See `StreamDriver.close_listen`."""
        await self.driver.close_listen(request_id)
