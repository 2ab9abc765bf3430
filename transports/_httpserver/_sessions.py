"""Server-side sessions of the legacy eras: a `Connection` per client, and its requests.

Both legacy HTTP transports keep a session per client: Streamable HTTP
(2025-03-26 … 2025-11-25, ``Mcp-Session-Id``) and HTTP+SSE (2024-11-05, the GET
stream's ``sessionId``). Each session owns one `mcpcore.Connection`; the messages of
every POST go through it. What a session does with them is the same in both:

* a request runs in a worker of the server-wide `WorkerPool`, at most
  `HttpLimits.max_session_handlers` at once per session (further POSTs wait);
* ``notifications/cancelled`` cancels that worker's scope;
* the client's answer to one of our requests (sampling, elicitation, roots) wakes the
  handler that asked;
* other notifications go to `Server.handle_notification`.

`SessionTable` holds the sessions of one kind: it mints their ids ("visible ASCII
0x21-0x7E and SHOULD be cryptographically secure", 2025-03-26 basic/transports), caps
their number (503 past it, as the Python SDK's ``max_sessions``), expires idle ones,
and answers a lookup by another principal as if the session did not exist (2025-11-25
security: session ids are not credentials).
"""

from __future__ import annotations

import secrets
from collections.abc import Awaitable, Callable, Iterator
from typing import Final, Generic, Protocol, TypeVar

import trio

from mcpcore import (
    CancelRequested,
    Connection,
    ErrorReceived,
    Event,
    InvalidMessage,
    InvalidResponse,
    NotificationReceived,
    RequestReceived,
    ResponseReceived,
)
from mcpcore.server import Server
from mcpcore.types import RequestId
from transports._requestlog import answer
from transports._workers import WorkerPool

__all__ = ["SESSION_ID_BYTES", "Answer", "Call", "CallOutbound", "Session", "SessionTable"]

#: Random bytes in a session id: 192 bits, far beyond guessing. ``token_urlsafe`` writes
#: them as 32 characters of ``A-Z a-z 0-9 - _``, all visible ASCII.
SESSION_ID_BYTES: Final = 24

Answer = ResponseReceived | ErrorReceived | InvalidResponse


class CallOutbound(Protocol):
    """Where one request's messages go (an `mcpcore.server.Outbound`), and its answer.

    Attributes:
        finish_waits: Whether `finish` may wait (pass through the scheduler); one that
            never does can't be cancelled half-way, and needs no shield (`run_call`).
    """

    finish_waits: bool

    async def send(self, data: bytes) -> None:
        """Write a notification of the request."""

    async def request(self, request_id: RequestId, data: bytes) -> Answer:
        """Ask the client, on the request's own stream (legacy)."""

    async def finish(self, request_id: RequestId, reply: bytes | None) -> None:
        """Deliver the answer (None: there is none, the request was cancelled)."""


class Call:
    """One request of a session, for a worker to run."""

    __slots__ = ("event", "outbound", "session")

    def __init__(self, session: Session, event: RequestReceived, outbound: CallOutbound) -> None:
        self.session = session
        self.event = event
        self.outbound = outbound


def call_key(call: Call) -> tuple[Session, RequestId]:
    """`Call.key` as a function, for `WorkerPool`."""
    return call.session, call.event.request_id


class _Waiter:
    """Where the client's answer to one of our requests is left for the handler asking."""

    __slots__ = ("_answer", "_error", "_event")

    def __init__(self) -> None:
        self._event = trio.Event()
        self._answer: Answer | None = None
        self._error: Exception | None = None

    def set(self, answer: Answer) -> None:
        self._answer = answer
        self._event.set()

    def fail(self, error: Exception) -> None:
        self._error = error
        self._event.set()

    async def wait(self) -> Answer:
        await self._event.wait()
        if self._error is not None:
            raise self._error
        assert self._answer is not None
        return self._answer


class Session:
    """One client's legacy session: its `Connection`, requests and questions.

    Attributes:
        id: The session id.
        server: The server.
        connection: The session's protocol state.
        principal: Who opened it (None without authentication); only they may use it.
        last_used: `trio.current_time` of the last request.
        closed: Ended (DELETE, expiry, or its stream closed).
    """

    def __init__(
        self,
        session_id: str,
        server: Server,
        pool: WorkerPool[Call],
        *,
        principal: str | None,
        max_handlers: int,
    ) -> None:
        self.id = session_id
        self.server = server
        self.connection: Connection = server.connection()
        self.principal = principal
        self.last_used = trio.current_time()
        self.closed = False
        self._pool = pool
        self._slots = trio.Semaphore(max_handlers)
        self._running: set[RequestId] = set()
        self._asked: dict[RequestId, _Waiter] = {}
        self.attached = 0  # HTTP responses open on the session's streams

    @property
    def busy(self) -> bool:
        """Whether requests run or a stream is open (an idle session can expire)."""
        return bool(self._running) or self.attached > 0

    def touch(self) -> None:
        """Record a use (for idle expiry)."""
        self.last_used = trio.current_time()

    async def route(self, events: list[Event]) -> tuple[list[RequestReceived], list[bytes]]:
        """Act on everything but requests; return the requests and the error replies.

        The requests are for `start`; the replies (to garbage the core answered) go back
        to the client as the POST's answer.
        """
        requests: list[RequestReceived] = []
        replies: list[bytes] = []
        for event in events:
            if isinstance(event, RequestReceived):
                requests.append(event)
            elif isinstance(event, ResponseReceived | ErrorReceived | InvalidResponse):
                request_id = event.request_id
                waiter = None if request_id is None else self._asked.pop(request_id, None)
                if waiter is not None:
                    waiter.set(event)
            elif isinstance(event, CancelRequested):
                self._pool.cancel((self, event.request_id))
                self.server.request_cancelled(self.connection, event.request_id)
            elif isinstance(event, InvalidMessage):
                if event.reply is not None:
                    replies.append(event.reply)
            elif isinstance(event, NotificationReceived):
                await self.server.handle_notification(self.connection, event)
            # Progress on our own requests (legacy, bidirectional) has no use here.
        return requests, replies

    async def start(self, event: RequestReceived, outbound: CallOutbound) -> None:
        """Run a request in a worker (waiting for a free slot of this session)."""
        try:
            self._slots.acquire_nowait()
        except trio.WouldBlock:
            await self._slots.acquire()  # backpressure: this POST waits
        self._running.add(event.request_id)
        self._pool.submit(Call(self, event, outbound))

    def finished(self, request_id: RequestId) -> None:
        """A request's worker is done with it."""
        if request_id in self._running:
            self._running.discard(request_id)
            self._slots.release()

    async def ask(
        self, request_id: RequestId, data: bytes, emit: Callable[[bytes], Awaitable[object]]
    ) -> Answer:
        """Send a server-to-client request with ``emit`` and wait for the client's answer.

        If the asking handler is cancelled, the request is cancelled on the wire too
        ("notifications/cancelled", 2025-11-25 basic/utilities/cancellation).
        """
        if self.closed:
            raise ConnectionError("the session is closed")
        waiter = _Waiter()
        self._asked[request_id] = waiter
        try:
            await emit(data)
            return await waiter.wait()
        except BaseException:
            self._asked.pop(request_id, None)
            if request_id in self.connection.pending_requests:
                cancel = self.connection.cancel(request_id, "The request was cancelled")
                if cancel is not None and not self.closed:
                    with trio.CancelScope(shield=True):
                        await emit(cancel)
            raise

    def close(self) -> None:
        """End the session: cancel its requests, fail its questions, forget it in the hub."""
        if self.closed:
            return
        self.closed = True
        for request_id in list(self._running):
            self._pool.cancel((self, request_id))
        waiters, self._asked = self._asked, {}
        for waiter in waiters.values():
            waiter.fail(ConnectionError("the session is closed"))
        self.server.detach(self.connection)


async def run_call(call: Call) -> None:
    """What a worker does with a `Call`: answer it, then deliver the answer."""
    session, event, outbound = call.session, call.event, call.outbound
    reply: bytes | None = None
    try:
        reply = await answer(
            session.server, session.connection, event, outbound, principal=session.principal
        )
    except ConnectionError:
        pass  # the client is gone: nobody to answer
    finally:
        session.finished(event.request_id)
        if outbound.finish_waits:
            with trio.CancelScope(shield=True):  # (delivered even to a cancelled request)
                await outbound.finish(event.request_id, reply)
        else:
            # Never waits, so a cancellation can't interrupt it: a shield's scope would
            # cost as much as a tenth of the rest of the call.
            await outbound.finish(event.request_id, reply)


_S = TypeVar("_S", bound=Session)


class SessionTable(Generic[_S]):
    """The sessions of one kind, by id (see the module docstring).

    Args:
        limit: Sessions held at once.
        idle_timeout: Seconds an unused session lives.
        on_close: Awaited for each session that ends (to free its streams).
    """

    def __init__(
        self,
        *,
        limit: int,
        idle_timeout: float,
        on_close: Callable[[_S], Awaitable[None]] | None = None,
    ) -> None:
        self._sessions: dict[str, _S] = {}
        self._limit = limit
        self._idle_timeout = idle_timeout
        self._on_close = on_close

    def __len__(self) -> int:
        return len(self._sessions)

    def __iter__(self) -> Iterator[_S]:
        return iter(list(self._sessions.values()))

    @staticmethod
    def new_id() -> str:
        """A fresh, unguessable session id."""
        return secrets.token_urlsafe(SESSION_ID_BYTES)

    def has_room(self) -> bool:
        """Whether another session may open."""
        return len(self._sessions) < self._limit

    def add(self, session: _S) -> None:
        """Hold a new session (check `has_room` first)."""
        self._sessions[session.id] = session

    def get(self, session_id: str, principal: str | None) -> _S | None:
        """The live session with this id opened by ``principal``; None otherwise."""
        session = self._sessions.get(session_id)
        if session is None or session.closed or session.principal != principal:
            return None
        if self._expired(session, trio.current_time()):
            return None  # (the sweeper will close it)
        return session

    async def close(self, session: _S) -> None:
        """End a session and forget it."""
        self._sessions.pop(session.id, None)
        session.close()
        if self._on_close is not None:
            with trio.CancelScope(shield=True):
                await self._on_close(session)

    async def sweep(self) -> None:
        """Close the sessions idle for longer than the timeout."""
        now = trio.current_time()
        for session in list(self._sessions.values()):
            if self._expired(session, now):
                await self.close(session)

    async def expire_forever(self) -> None:
        """Sweep periodically (run in the server's nursery)."""
        interval = min(self._idle_timeout / 2, 60.0)
        while True:
            await trio.sleep(interval)
            await self.sweep()

    def _expired(self, session: Session, now: float) -> bool:
        return not session.busy and now - session.last_used > self._idle_timeout
