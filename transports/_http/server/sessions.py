"""Server-side sessions of the legacy eras: a `Connection` per client, and its requests.

Both legacy HTTP transports keep a session per client: Streamable HTTP
(2025-03-26 … 2025-11-25, ``Mcp-Session-Id``) and HTTP+SSE (2024-11-05, the GET
stream's ``sessionId``). Each session owns one `mcpcore.Connection`; the messages of
every POST go through it. What a session does with them is the same in both:

* a request runs in a worker of the server-wide `WorkerPool`, at most
  `HttpLimits.max_session_handlers` at once per session (further POSTs wait); when
  the POST's own response carries the answers (Streamable HTTP, not 2024-11-05's
  separate stream), one that never waits (`Server.never_waits`: a synchronous tool
  without a `Context`) runs in the POST's task instead, once it has its slot;
* ``notifications/cancelled`` cancels that worker's scope; a request still waiting
  for a slot (or for its worker) then never starts, nor does one whose POST's
  connection closed or whose session ended while it waited: its stream ends without
  an answer ("receivers SHOULD NOT send a response for a cancelled request",
  2025-11-25 basic/utilities/cancellation), and the `Connection` forgets it;
* the client's answer to one of our requests (sampling, elicitation, roots) wakes the
  handler that asked;
* other notifications go to `Server.handle_notification`.

`SessionTable` holds the sessions of one kind: it mints their ids ("visible ASCII
0x21-0x7E and SHOULD be cryptographically secure", 2025-03-26 basic/transports), caps
their number (as the Python SDK's ``max_sessions``), expires unused ones, and answers
a lookup by another principal as if the session did not exist (2025-11-25 security:
session ids are not credentials).

Its policy is that no client can lock others out by opening sessions and leaving them:

* a session is *busy* while a request of it runs or waits, or an HTTP response of it
  is open (a stream); a busy session never expires and is never evicted;
* a session is *established* once its client comes back with its id (its
  ``notifications/initialized``, or any request): one that is not expires
  ``handshake_timeout`` after it opened (`HttpLimits.session_handshake_timeout`,
  tens of seconds), an established one after ``idle_timeout`` unused
  (`HttpLimits.session_idle_timeout`, half an hour);
* at the cap, a new session evicts an idle one: one not established first, the
  least recently used first among equals; only when every session is busy is the new
  one refused (503). An expired or evicted session's id gets 404, on which its client
  starts a new session ("(C) MUST start a new session on 404", 2025-03-26).

The 2024-11-05 HTTP+SSE table has another shape: each of its sessions lives exactly as
long as its GET stream, so it is always busy, and the table can't hold more sessions
than the server holds connections (`HttpLimits.max_connections`): there is nothing to
expire or evict, and its cap answers 503.
"""

from __future__ import annotations

import math
import secrets
from collections.abc import Awaitable, Callable, Iterator
from types import TracebackType
from typing import ClassVar, Final, Generic, Protocol, TypeVar

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
from transports._runtime import primitives
from transports._runtime.requestlog import answer
from transports._runtime.workers import WorkerPool

__all__ = [
    "SESSION_ID_BYTES",
    "Answer",
    "Call",
    "CallOutbound",
    "Session",
    "SessionTable",
    "abandon_call",
    "call_key",
    "run_call",
]

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
        self._event = primitives.Event()
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
        opened: `primitives.current_time` when it opened.
        last_used: `primitives.current_time` of the last request.
        established: Its client came back with its id (see the module docstring).
        closed: Ended (DELETE, expiry, eviction, or its stream closed).
    """

    #: Whether a POST's own response carries the answers to its requests (Streamable
    #: HTTP; 2024-11-05's go on the session's stream): the POST waits for them anyway,
    #: so a request that never waits runs in its task (`start`).
    answers_in_post: ClassVar[bool] = False

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
        self.opened = self.last_used = primitives.current_time()
        self.established = False
        self.closed = False
        self._pool = pool
        self._slots = primitives.Semaphore(max_handlers)
        self._running: set[RequestId] = set()
        self._queued: dict[RequestId, primitives.AnyCancelScope] = {}  # waiting for a slot
        self._asked: dict[RequestId, _Waiter] = {}
        self.attached = 0  # HTTP responses open on the session's streams

    @property
    def busy(self) -> bool:
        """Whether requests run or wait, or a stream is open (an idle session can expire)."""
        return bool(self._running) or bool(self._queued) or self.attached > 0

    def touch(self) -> None:
        """Record a use (for idle expiry)."""
        self.last_used = primitives.current_time()

    def responding(self) -> _Responding:
        """A context manager: while an HTTP response of the session is open, it is busy.

        Used when the response ends.
        """
        return _Responding(self)

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
                waiting = self._queued.get(event.request_id)
                if waiting is not None:
                    waiting.cancel()  # it never starts (`start`)
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
        """Run a request in a worker (waiting for a free slot of this session).

        In a session whose POSTs carry their answers (`answers_in_post`), a request
        that never waits (`Server.never_waits`) is answered in the caller's task,
        before this returns.

        A request cancelled before it gets its slot (by the client, by the end of the
        session, or by its POST's connection closing, which cancels the caller) never
        starts: its answer is delivered as None (there is none) and it is forgotten.
        """
        if not self.start_now(event) and not await self._start_when_free(event, outbound):
            return
        call = Call(self, event, outbound)
        if self.answers_in_post and self.server.never_waits(event):
            # (It ends in one step, so no cancellation can come between; a worker's
            # hand-off cost a 2025-11-25 call of such a tool ~27% of its time in
            # `python -m bench.asgi_profile`.)
            await run_call(call)
        else:
            self._pool.submit(call)

    def start_now(self, event: RequestReceived) -> bool:
        """Start a request, if it may start at once; False: nothing was done (`start` it).

        True: it has its slot and counts as running; run it with `run_started` (in the
        caller's task, or a worker's). False: every slot is taken, the request was
        cancelled (by the batch that carried it), or the session closed.
        """
        if not self._may_start(event.request_id):
            return False
        try:
            self._slots.acquire_nowait()
        except primitives.WOULD_BLOCK:
            return False
        self._running.add(event.request_id)
        return True

    def _may_start(self, request_id: RequestId) -> bool:
        """Whether a request may still start: not cancelled, its session open."""
        return not self.closed and not self.connection.is_cancelled(request_id)

    async def _start_when_free(self, event: RequestReceived, outbound: CallOutbound) -> bool:
        """Start a request `start_now` could not; False: it never starts (``outbound`` knows).

        It waits for a slot unless it was cancelled or the session closed already.
        """
        request_id = event.request_id
        if not self._may_start(request_id):
            await self.never_started(request_id, outbound)
            return False
        try:
            got_slot = await self._wait_for_slot(request_id)
        except BaseException:  # (the POST's connection closed)
            with primitives.CancelScope(shield=True):
                await self.never_started(request_id, outbound)
            raise
        if not got_slot or not self._may_start(request_id):
            # Cancelled while it waited, or just as it got its slot.
            if got_slot:
                self._slots.release()
            await self.never_started(request_id, outbound)
            return False
        self._running.add(request_id)
        return True

    async def run_started(self, event: RequestReceived, outbound: CallOutbound) -> bytes | None:
        """Run a started request's handler; its answer (None: it has none).

        None when it was cancelled (then this raises), when its client is gone (the
        outbound raised `ConnectionError`), or when the handler answers nothing: the
        `Connection` forgets it unanswered. Its slot is free again when this returns.
        """
        request_id = event.request_id
        reply: bytes | None = None
        answered = False
        try:
            reply = await answer(
                self.server, self.connection, event, outbound, principal=self.principal
            )
            answered = True
        except ConnectionError:
            pass  # the client is gone: nobody to answer
        finally:
            if not answered:  # cancelled: never answered, so forgotten
                self.connection.abandon(request_id)
            self.finished(request_id)
        return reply

    async def start_all(self, events: list[RequestReceived], outbound: CallOutbound) -> None:
        """`start` each request of one POST, in order.

        If the POST's connection closes while one waits, the rest never start either.
        """
        for index, event in enumerate(events):
            try:
                await self.start(event, outbound)
            except BaseException:
                with primitives.CancelScope(shield=True):
                    for rest in events[index + 1 :]:
                        await self.never_started(rest.request_id, outbound)
                raise

    async def _wait_for_slot(self, request_id: RequestId) -> bool:
        """Wait for a slot (backpressure: the POST waits); False if cancelled meanwhile."""
        with primitives.CancelScope() as waiting:
            self._queued[request_id] = waiting
            try:
                await self._slots.acquire()
            finally:
                del self._queued[request_id]
        return not waiting.cancelled_caught

    async def never_started(self, request_id: RequestId, outbound: CallOutbound) -> None:
        """A request that will not run: forget it, and tell its stream it has no answer."""
        self.connection.abandon(request_id)
        await outbound.finish(request_id, None)

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
                    with primitives.CancelScope(shield=True):
                        await emit(cancel)
            raise

    def close(self) -> None:
        """End the session: cancel its requests, fail its questions, forget it in the hub."""
        if self.closed:
            return
        self.closed = True
        for waiting in self._queued.values():
            waiting.cancel()
        for request_id in list(self._running):
            self._pool.cancel((self, request_id))
        waiters, self._asked = self._asked, {}
        for waiter in waiters.values():
            waiter.fail(ConnectionError("the session is closed"))
        self.server.detach(self.connection)


class _Responding:
    """`Session.responding` (a class: ~1 µs a POST less than a generator's context)."""

    __slots__ = ("_session",)

    def __init__(self, session: Session) -> None:
        self._session = session

    def __enter__(self) -> None:
        self._session.attached += 1

    def __exit__(
        self, kind: type[BaseException] | None, exc: BaseException | None, tb: TracebackType | None
    ) -> None:
        session = self._session
        session.attached -= 1
        session.touch()


async def run_call(call: Call) -> None:
    """What a worker does with a `Call`: answer it, then deliver the answer."""
    event, outbound = call.event, call.outbound
    reply: bytes | None = None
    try:
        reply = await call.session.run_started(event, outbound)
    finally:
        if outbound.finish_waits:
            with primitives.CancelScope(shield=True):  # (delivered even to a cancelled request)
                await outbound.finish(event.request_id, reply)
        else:
            # Never waits, so a cancellation can't interrupt it: a shield's scope would
            # cost as much as a tenth of the rest of the call.
            await outbound.finish(event.request_id, reply)


async def abandon_call(call: Call) -> None:
    """What a worker does with a `Call` cancelled before it ran: it never starts."""
    session, request_id = call.session, call.event.request_id
    session.finished(request_id)
    with primitives.CancelScope(shield=call.outbound.finish_waits):
        await session.never_started(request_id, call.outbound)


_S = TypeVar("_S", bound=Session)


def _eviction_order(session: Session) -> tuple[bool, float]:
    """Which idle session gives way first: one not established, then the least recently used."""
    return session.established, session.last_used


class SessionTable(Generic[_S]):
    """The sessions of one kind, by id (see the module docstring for the policy).

    Args:
        limit: Sessions held at once.
        idle_timeout: Seconds an unused established session lives.
        handshake_timeout: Seconds a session lives unless its client comes back.
        on_close: Awaited for each session that ends (to free its streams).
        id_prefix: Starts every id minted (a shared deployment's owner name,
            `transports._http.server.sharing`).
    """

    def __init__(
        self,
        *,
        limit: int,
        idle_timeout: float,
        handshake_timeout: float = math.inf,
        on_close: Callable[[_S], Awaitable[None]] | None = None,
        id_prefix: str = "",
    ) -> None:
        self._sessions: dict[str, _S] = {}
        self._id_prefix = id_prefix
        self._limit = limit
        self._idle_timeout = idle_timeout
        self._handshake_timeout = handshake_timeout
        self._on_close = on_close

    def __len__(self) -> int:
        return len(self._sessions)

    def __iter__(self) -> Iterator[_S]:
        return iter(list(self._sessions.values()))

    def new_id(self) -> str:
        """A fresh, unguessable session id (after the table's prefix)."""
        return self._id_prefix + secrets.token_urlsafe(SESSION_ID_BYTES)

    def has_room(self) -> bool:
        """Whether another session may open without making room (`make_room`)."""
        return len(self._sessions) < self._limit

    async def make_room(self) -> bool:
        """Make room for a new session; False if every session is busy.

        Expired sessions go first; at the cap, an idle one is evicted (see the module
        docstring).
        """
        if self.has_room():
            return True
        await self.sweep()
        while not self.has_room():  # (again after each wait: others may have opened one)
            idle = [session for session in self._sessions.values() if not session.busy]
            if not idle:
                return False
            # Half-handshaken sessions first, then the least recently used.
            await self.close(min(idle, key=_eviction_order))
        return True

    def add(self, session: _S) -> None:
        """Hold a new session (make room first: `make_room`)."""
        self._sessions[session.id] = session

    def get(self, session_id: str, principal: str | None) -> _S | None:
        """The live session with this id opened by ``principal``; None otherwise.

        Finding it establishes it: its client came back with its id.
        """
        session = self._sessions.get(session_id)
        if session is None or session.closed or session.principal != principal:
            return None
        if self._expired(session, primitives.current_time()):
            return None  # (the sweeper will close it)
        session.established = True
        return session

    async def close(self, session: _S) -> None:
        """End a session and forget it."""
        self._sessions.pop(session.id, None)
        session.close()
        if self._on_close is not None:
            with primitives.CancelScope(shield=True):
                await self._on_close(session)

    async def sweep(self) -> None:
        """Close the sessions that expired."""
        now = primitives.current_time()
        for session in list(self._sessions.values()):
            if self._expired(session, now):
                await self.close(session)

    async def expire_forever(self) -> None:
        """Sweep periodically (run in the server's nursery)."""
        interval = min(self._idle_timeout / 2, self._handshake_timeout / 2, 60.0)
        while True:
            await primitives.sleep(interval)
            await self.sweep()

    def _expired(self, session: Session, now: float) -> bool:
        if session.busy:
            return False
        if not session.established and now - session.opened > self._handshake_timeout:
            return True
        return now - session.last_used > self._idle_timeout
