"""Serving one connection: a reader that never runs user code, one task per request.

`ServerDriver.serve` reads whole messages (the transport frames them), feeds each to
the connection's `mcpcore.Connection`, and acts on the events:

* a request runs in a worker task (one request at a time per worker, see
  `transports._runtime.workers`), under a cancel scope of its own, through
  `Server.handle_request`; its answer goes to the connection's `MessageWriter`;
* ``notifications/cancelled`` cancels that scope ("receivers SHOULD stop work",
  2025-11-25 basic/utilities/cancellation), and the core drops any late answer;
* the client's answers to our own (legacy) requests wake the handler awaiting them;
* garbage gets the error reply the core decided.

At most ``max_handlers`` handlers run at once. A request read while all are busy
waits for a slot in the connection's `transports._runtime.admission.AdmissionQueue`, and the
reader reads on until that queue is full: a request the client cancels while it waits
never starts. Past that the reader stops reading until a slot frees: the peer's writes
then block, which is the backpressure (shared/DESIGN.md §5). A handler waiting for the
client to answer a server-to-client request gives its slot back while it waits, so that
the reader can always read that answer: a full house of handlers waiting on the client
cannot deadlock the connection.

A request that will never be answered (cancelled while it waited or ran, or still
waiting when the connection ends) is forgotten by the connection's `mcpcore.Connection`
(`mcpcore.Connection.abandon`), so that its id does not stay in flight.

The same driver serves under trio (``serve_stdio``, ``serve_websocket``) and under
asyncio (``serve_stdio_asyncio``): its task group, semaphore, events and cancel scopes
are the running library's (`transports._runtime.primitives`: trio's own under trio).
"""

from __future__ import annotations

import secrets
import time
from collections.abc import AsyncIterator, Callable
from typing import Final

from mcpcore import (
    CancelRequested,
    Connection,
    ErrorReceived,
    InvalidMessage,
    InvalidResponse,
    NotificationReceived,
    RequestReceived,
    ResponseReceived,
    jsonrpc,
)
from mcpcore.framing import OversizedMessage
from mcpcore.server import Server
from mcpcore.types import RequestId
from transports._runtime import primitives
from transports._runtime.admission import (
    MAX_WAITING_BYTES,
    MAX_WAITING_REQUESTS,
    AdmissionQueue,
)
from transports._runtime.requestlog import answer, log_protocol_error
from transports._runtime.workers import WorkerPool
from transports._runtime.writer import MessageWriter

__all__ = ["MAX_CONCURRENT_HANDLERS", "SECRET_SIZE", "SHUTDOWN_GRACE", "ServerDriver"]

#: Requests handled at once on one connection. Far more than a client keeps in flight in
#: practice (the official SDKs default to tens), few enough that a flood costs bounded
#: memory: past it the reader stops reading.
MAX_CONCURRENT_HANDLERS: Final = 1024
#: Seconds the handlers still running when the client hangs up get to finish before
#: they are cancelled ("(S) SHOULD exit promptly on stdin EOF", 2026-07-28 lifecycle).
SHUTDOWN_GRACE: Final = 2.0

#: Bytes of the random key a server gets when its embedder gave none (HMAC-SHA256's
#: block-size-independent strength tops out at 32).
SECRET_SIZE: Final = 32

_Answer = ResponseReceived | ErrorReceived | InvalidResponse


def _request_id(job: _Request) -> RequestId:
    return job.event.request_id


class ServerDriver:
    """Runs one connection of a `Server` over a message stream and a `MessageWriter`.

    Args:
        server: The server; the driver gives it the connection's key and clock if it
            has none (see `Server.configure`).
        connection: This connection's `Connection` (from ``server.connection()``).
        writer: Where every message to the client goes.
        frame: Turns one message into the bytes the transport writes (a newline
            appended, on stdio).
        max_handlers: See `MAX_CONCURRENT_HANDLERS`.
        principal: Who the client is, when the transport authenticated it.
        max_waiting: Requests read ahead while every slot is taken
            (`transports._runtime.admission.MAX_WAITING_REQUESTS`).
        max_waiting_bytes: Their bytes (`transports._runtime.admission.MAX_WAITING_BYTES`).
    """

    def __init__(
        self,
        server: Server,
        connection: Connection,
        writer: MessageWriter,
        *,
        frame: Callable[[bytes], bytes],
        max_handlers: int = MAX_CONCURRENT_HANDLERS,
        principal: str | None = None,
        max_waiting: int = MAX_WAITING_REQUESTS,
        max_waiting_bytes: int = MAX_WAITING_BYTES,
    ) -> None:
        # A key and a clock for cursors and 2026-07-28 requestState, unless the embedder
        # gave its own (one key shared by every worker lets any worker answer a retry).
        server.configure(secret=secrets.token_bytes(SECRET_SIZE), clock=time.time)
        self._server = server
        self._connection = connection
        self._writer = writer
        self._frame = frame
        self._principal = principal
        self._slots = primitives.Semaphore(max_handlers)
        self._max_waiting = (max_waiting, max_waiting_bytes)
        # (Both live in serve's nursery.)
        self._handlers: WorkerPool[_Request] | None = None
        self._queue: AdmissionQueue[_Request] | None = None
        self._asked: dict[RequestId, _Waiter] = {}
        self._closed = False
        self._drained = primitives.Event()  # set once closed and the last handler is done
        self._notifications = _ConnectionOutbound(self)

    # ----------------------------------------------------------------- the reader

    async def serve(
        self, messages: AsyncIterator[bytes | OversizedMessage], *, grace: float = SHUTDOWN_GRACE
    ) -> None:
        """Serve until ``messages`` ends (the client hung up), then wind down.

        Handlers still running get ``grace`` seconds to finish, then are cancelled; our
        requests the client can no longer answer fail with `ConnectionError`.
        """
        server, connection = self._server, self._connection
        server.attach(connection, self._notifications)
        try:
            async with primitives.open_task_group() as nursery:
                handlers = self._handlers = WorkerPool(
                    nursery, self._handle, _request_id, abandon=self._abandon
                )
                max_waiting, max_bytes = self._max_waiting
                queue = self._queue = AdmissionQueue(
                    nursery,
                    self._slots,
                    handlers.submit,
                    max_waiting=max_waiting,
                    max_bytes=max_bytes,
                )
                async for message in messages:
                    if isinstance(message, OversizedMessage):
                        await self._refuse_oversized(message)
                        continue
                    for event in connection.receive(message):
                        if isinstance(event, RequestReceived):
                            queue.admit(event.request_id, _Request(self, event), len(message))
                        else:
                            await self._route(event)
                    if queue.full:
                        await queue.wait_for_room()  # backpressure: stop reading
                self._closed = True
                self._fail_waiters()
                if handlers.running or len(queue):
                    with primitives.CancelScope(deadline=primitives.current_time() + grace):
                        await self._drained.wait()
                nursery.cancel_scope.cancel()
        finally:
            self._closed = True
            self._fail_waiters()
            if self._queue is not None:
                for job in self._queue.clear():  # (never started: the client is gone)
                    connection.abandon(job.event.request_id)
            server.detach(connection)

    async def _route(self, event: object) -> None:
        if isinstance(event, CancelRequested):
            request_id = event.request_id
            if self._queue is not None and self._queue.drop(request_id) is not None:
                self._connection.abandon(request_id)  # it never starts
            elif self._handlers is not None:
                self._handlers.cancel(request_id)
            self._server.request_cancelled(self._connection, request_id)
        elif isinstance(event, ResponseReceived | ErrorReceived | InvalidResponse):
            waiter = None if event.request_id is None else self._asked.pop(event.request_id, None)
            if waiter is not None:
                waiter.set(event)
        elif isinstance(event, InvalidMessage):
            if event.reply is not None:
                log_protocol_error(event.reply)
                await self._write(event.reply)
        elif isinstance(event, NotificationReceived):
            await self._server.handle_notification(self._connection, event)
        # Progress on our requests (legacy, bidirectional) has no use here: dropped.

    async def _refuse_oversized(self, message: OversizedMessage) -> None:
        # The line was dropped unread, so its id is unknown: the reply carries none.
        reply = jsonrpc.encode_error_response(
            None, jsonrpc.INVALID_REQUEST, f"Message too large (limit {message.limit} bytes)"
        )
        log_protocol_error(reply)
        await self._write(reply)

    # ----------------------------------------------------------------- handlers

    async def _handle(self, job: _Request) -> None:
        """Answer one request (in a worker task, under a scope that is its alone)."""
        answered = False
        try:
            reply = await answer(
                self._server, self._connection, job.event, job, principal=self._principal
            )
            answered = True
            if reply is not None:
                await self._writer.send(self._frame(reply))  # (`_write`, one call less)
        except ConnectionError:
            pass  # the client is gone: nobody to answer
        finally:
            if not answered:  # cancelled (or the client left): never answered
                self._connection.abandon(job.event.request_id)
            job.release()
            self._check_drained(1)  # (this one is still counted until it returns)

    async def _abandon(self, job: _Request) -> None:
        """A request cancelled after it got a slot, before its worker ran: it never starts."""
        self._connection.abandon(job.event.request_id)
        job.release()
        self._check_drained(0)

    def _check_drained(self, counted: int) -> None:
        """Once closed, note when no handler runs (but ``counted``) and none waits."""
        handlers, queue = self._handlers, self._queue
        waiting = 0 if queue is None else len(queue)
        if self._closed and handlers is not None and handlers.running <= counted and not waiting:
            self._drained.set()

    async def _write(self, data: bytes) -> None:
        await self._writer.send(self._frame(data))

    # ------------------------------------------------- our requests to the client

    async def ask(self, request_id: RequestId, data: bytes, slot: _Request | None) -> _Answer:
        """Send a server-to-client request (legacy era) and wait for its answer.

        If the waiting handler is cancelled (the client cancelled its request, or the
        connection is closing), the request is cancelled on the wire too.
        """
        if self._closed:
            raise ConnectionError("the client is gone")
        waiter = _Waiter()
        self._asked[request_id] = waiter
        try:
            await self._write(data)
            if slot is not None:
                slot.release()  # see the module docstring: waiting on the client is free
            answer = await waiter.wait()
        except BaseException:
            self._asked.pop(request_id, None)
            if request_id in self._connection.pending_requests:
                cancel = self._connection.cancel(request_id, "The request was cancelled")
                if cancel is not None:
                    self._writer.send_nowait(self._frame(cancel))
            raise
        if slot is not None:
            await slot.reacquire()
        return answer

    def _fail_waiters(self) -> None:
        waiters, self._asked = self._asked, {}
        for waiter in waiters.values():
            waiter.fail(ConnectionError("the client is gone"))


class _Waiter:
    """Where the client's answer to one of our requests is left for the asking handler."""

    __slots__ = ("_answer", "_error", "_event")

    def __init__(self) -> None:
        self._event = primitives.Event()
        self._answer: _Answer | None = None
        self._error: Exception | None = None

    def set(self, answer: _Answer) -> None:
        self._answer = answer
        self._event.set()

    def fail(self, error: Exception) -> None:
        self._error = error
        self._event.set()

    async def wait(self) -> _Answer:
        await self._event.wait()
        if self._error is not None:
            raise self._error
        assert self._answer is not None
        return self._answer


class _Request:
    """One request to handle: its event, its share of the concurrency cap, its `Outbound`.

    (One object for the three, rather than one each, as they live and die together:
    this is the job a worker runs, and the `mcpcore.server.Outbound` of the request.)
    The slot is released exactly once per acquire.
    """

    __slots__ = ("_driver", "_held", "event")

    def __init__(self, driver: ServerDriver, event: RequestReceived) -> None:
        self._driver = driver
        self._held = True
        self.event = event

    def release(self) -> None:
        """Give the request's slot back (when it ends, or while it waits on the client)."""
        if self._held:
            self._held = False
            self._driver._slots.release()

    async def reacquire(self) -> None:
        """Take a slot again (after waiting on the client)."""
        await self._driver._slots.acquire()
        self._held = True

    async def send(self, data: bytes) -> None:
        """Write a notification of this request (progress, a log message...).

        Queued for the writer task (`MessageWriter.post`), not written at once: a
        handler reporting progress in a loop then costs one write per batch instead of
        one per notification; its answer, written after, still goes behind them.
        """
        driver = self._driver
        await driver._writer.post(driver._frame(data))

    async def request(self, request_id: RequestId, data: bytes) -> _Answer:
        """Ask the client (legacy era); see `ServerDriver.ask`."""
        return await self._driver.ask(request_id, data, self)


class _ConnectionOutbound:
    """The connection's own `Outbound`: change notifications not tied to a request."""

    __slots__ = ("_driver",)

    def __init__(self, driver: ServerDriver) -> None:
        self._driver = driver

    async def send(self, data: bytes) -> None:
        """Write a change notification."""
        await self._driver._write(data)

    async def request(self, request_id: RequestId, data: bytes) -> _Answer:
        """Ask the client (legacy era); see `ServerDriver.ask`."""
        return await self._driver.ask(request_id, data, None)
