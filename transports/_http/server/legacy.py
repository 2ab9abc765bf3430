"""Legacy Streamable HTTP (2025-03-26 … 2025-11-25): sessions, answer streams, resumption.

* ``POST`` with ``initialize`` and no ``Mcp-Session-Id`` opens a session (at
  `HttpLimits.max_sessions`, an idle one is evicted for it; 503 only when all are
  busy: see `transports._http.server.sessions` for the whole policy); every other
  request needs the header ("(S) that requires it SHOULD return 400 when it is
  missing") and gets 404 for a session that does not exist, or no longer does ("after
  which it MUST return 404"): closed, expired (unused for
  `HttpLimits.session_idle_timeout`, or never used after ``initialize`` for
  `HttpLimits.session_handshake_timeout`), or evicted.
* A POST of requests is answered as an event stream (`transports._http.server.streams`)
  that carries, in order, what the handlers send about those requests: notifications,
  and the server's own requests to the client ("on the triggering POST's SSE stream",
  trap 10.2-2), then the answers. A session speaking 2025-11-25 primes each stream with
  an event that has an id and no data, and a ``retry`` (SSE polling; primed whatever
  ``MCP-Protocol-Version`` the POST carries, trap 10.1-7). A POST of only
  notifications and responses (the client's answers to our requests) gets 202.
  With ``replies="json"`` a POST whose requests are answered before anything else is
  sent about them gets the answer as a JSON body instead (status 200, no priming,
  nothing stored: the stream starts undecided, `transports._http.server.streams`); the
  first notification or request to the client makes it the primed stream above.
  A POST of one request that never waits is answered in the POST's own task when its
  session has a handler slot free, with what that stream would have carried: it can
  send nothing but its answer (`LegacyEndpoint._answer_at_once`).
* ``GET`` opens the session's standalone stream (one at a time: 409 for a second), for
  messages not tied to a request (list_changed, resources/updated); with
  ``Last-Event-ID`` it resumes a stream of the session instead, replaying what the
  client missed and continuing live.
* ``DELETE`` ends the session (200; its id gets 404 from then on).
* A missing ``MCP-Protocol-Version`` is 2025-03-26 (routing did that), and within a
  session any supported version is accepted (trap 10.2-4).
"""

from __future__ import annotations

import itertools
import secrets
from collections import OrderedDict
from typing import Final

import msgspec
from msgspec import UNSET, UnsetType

from mcpcore import RequestReceived, jsonrpc
from mcpcore.framing import encode_event
from mcpcore.http import accepts, accepts_json_and_sse, is_json, peek_message
from mcpcore.server import Server
from mcpcore.types import RequestId
from mcpcore.versions import is_at_least
from transports._http.server.event_store import EventStore, MemoryEventStore
from transports._http.server.sessions import Answer, Call, Session, SessionTable
from transports._http.server.streams import EventStream, Sink, pump
from transports._net.limits import HttpLimits
from transports._net.reply import Header, Reply, ReplyMode
from transports._net.request import HttpRequest
from transports._runtime.requestlog import log_protocol_error
from transports._runtime.workers import WorkerPool

__all__ = ["MAX_STREAMS_PER_SESSION", "LegacyEndpoint", "LegacySession"]

#: Finished streams a session keeps resumable (the oldest are forgotten past it): a
#: client resumes the stream it was reading, not one from a hundred calls ago.
MAX_STREAMS_PER_SESSION: Final = 128
#: Random bytes of the prefix of this server's stream ids (hex, so never a ``-``, which
#: event ids use): stream ids must be unique across the servers sharing an event store.
#: The rest is a counter: ids need not be secret (a resumption is only served to the
#: session that owns the stream), and a random id per call cost a system call.
_STREAM_ID_BYTES: Final = 8
#: The first revision whose streams are primed (SEP-1699, SSE polling).
_PRIMING_SINCE: Final = "2025-11-25"
_SESSION_HEADER: Final = b"mcp-session-id"


class _MethodOnly(msgspec.Struct, gc=False):
    method: str | UnsetType = UNSET


_METHOD_DECODER: Final = msgspec.json.Decoder(_MethodOnly)


def _is_initialize(body: bytes) -> bool:
    try:
        return _METHOD_DECODER.decode(body).method == "initialize"
    except jsonrpc.DECODE_ERRORS:
        return False


def _is_batch(body: bytes) -> bool:
    return body.lstrip()[:1] == b"["


class LegacySession(Session):
    """A Streamable HTTP session: a `Session` with its resumable streams."""

    answers_in_post = True  # (each POST's answers go on its own response's stream)

    def __init__(
        self,
        session_id: str,
        server: Server,
        pool: WorkerPool[Call],
        *,
        principal: str | None,
        max_handlers: int,
    ) -> None:
        super().__init__(session_id, server, pool, principal=principal, max_handlers=max_handlers)
        self.streams: OrderedDict[str, EventStream] = OrderedDict()
        self.standalone: EventStream | None = None

    @property
    def primes(self) -> bool:
        """Whether its streams start with a priming event (2025-11-25 and later)."""
        version = self.connection.protocol_version
        return version is not None and is_at_least(version, _PRIMING_SINCE)

    def header(self) -> Header:
        """The ``Mcp-Session-Id`` response header."""
        return (_SESSION_HEADER, self.id.encode())


class _StreamOutbound:
    """One request's messages: on the stream of the POST that carried it.

    ``finish_waits`` (`CallOutbound`): storing the answer waits only in an event store
    other than the in-memory one (whose methods never pass through the scheduler);
    putting it in the response's queue never does.
    """

    __slots__ = ("_session", "_stream", "finish_waits")

    def __init__(self, session: LegacySession, stream: EventStream, finish_waits: bool) -> None:
        self._session = session
        self._stream = stream
        self.finish_waits = finish_waits

    async def send(self, data: bytes) -> None:
        if self._session.closed:
            raise ConnectionError("the session is closed")
        await self._stream.emit(data)

    async def request(self, request_id: RequestId, data: bytes) -> Answer:
        return await self._session.ask(request_id, data, self._stream.emit)

    async def finish(self, request_id: RequestId, reply: bytes | None) -> None:
        if not self._session.closed:
            await self._stream.answered(request_id, reply)

    async def close_stream(self) -> bool:
        """End the POST's response now (`mcpcore.server.Context.close_stream`).

        Only for a primed stream: its client holds an event id to resume from.
        """
        if not self._stream.primed:
            return False
        self._stream.detach()
        return True


class _SessionOutbound:
    """The session's own messages (list_changed...): on its standalone stream, if open.

    Without one they are dropped: "(S) MUST send each message on exactly one stream",
    and a message not tied to a request has only that one.
    """

    __slots__ = ("_session",)

    def __init__(self, session: LegacySession) -> None:
        self._session = session

    async def send(self, data: bytes) -> None:
        session = self._session
        if session.closed:
            raise ConnectionError("the session is closed")
        if session.standalone is not None:
            await session.standalone.emit(data)

    async def request(self, request_id: RequestId, data: bytes) -> Answer:
        session = self._session
        standalone = session.standalone
        if standalone is None:
            raise ConnectionError("no stream to ask on")
        return await session.ask(request_id, data, standalone.emit)


class _Nowhere:
    """The outbound of a request answered without a stream: it never sends (`never_waits`)."""

    __slots__ = ()
    finish_waits = False

    async def send(self, data: bytes) -> None:
        raise ConnectionError("a request answered at once sends nothing")

    async def request(self, request_id: RequestId, data: bytes) -> Answer:
        raise ConnectionError("a request answered at once asks nothing")

    async def finish(self, request_id: RequestId, reply: bytes | None) -> None:
        """Nothing to deliver: its answer is the caller's to send."""


_NOWHERE: Final = _Nowhere()


class LegacyEndpoint:
    """Serves the legacy Streamable HTTP eras (see the module docstring)."""

    def __init__(
        self,
        server: Server,
        pool: WorkerPool[Call],
        store: EventStore,
        limits: HttpLimits,
        replies: ReplyMode = "auto",
        *,
        id_prefix: str = "",
    ) -> None:
        self._server = server
        self._json = replies == "json"
        self._pool = pool
        self._store = store
        # (Exactly the in-memory store: a subclass may wait in its methods.)
        self._store_waits = type(store) is not MemoryEventStore
        self._limits = limits
        self._stream_prefix = secrets.token_hex(_STREAM_ID_BYTES)
        self._streams_made = itertools.count()
        self.sessions: SessionTable[LegacySession] = SessionTable(
            limit=limits.max_sessions,
            idle_timeout=limits.session_idle_timeout,
            handshake_timeout=limits.session_handshake_timeout,
            on_close=self._forget,
            id_prefix=id_prefix,
        )

    # ------------------------------------------------------------------ POST

    async def post(self, request: HttpRequest, reply: Reply, principal: str | None) -> None:
        """Take the messages of one POST."""
        headers = request.headers
        if not accepts_json_and_sse(headers.get("accept")):
            await reply.refuse(406, "Not Acceptable: accept application/json and text/event-stream")
            return
        if not is_json(headers.get("content-type")):
            await reply.refuse(415, "Unsupported Media Type: the body must be application/json")
            return
        body = request.body
        session = await self._session_for(headers.get("mcp-session-id"), body, reply, principal)
        if session is None:
            return
        session.touch()
        requests, replies = await session.route(session.connection.receive(body))
        for refused in replies:
            log_protocol_error(refused)
        batch = _is_batch(body)
        if not requests:
            await self._acknowledge(reply, session, replies, batch=batch)
            return
        alone = not batch and not replies and len(requests) == 1
        if alone and await self._answer_at_once(reply, session, requests[0]):
            return
        await self._answer_on_stream(reply, session, requests, replies, batch=batch)

    async def _session_for(
        self, session_id: str | None, body: bytes, reply: Reply, principal: str | None
    ) -> LegacySession | None:
        """The POST's session, opened for an ``initialize``; None: refused, and answered."""
        if session_id is not None:
            found = self.sessions.get(session_id, principal)
            if found is None:
                await reply.refuse(404, "Not Found: no such session")
            return found
        if not _is_initialize(body):
            await reply.refuse(400, "Bad Request: Mcp-Session-Id header is required")
            return None
        session = await self._open(principal)
        if session is None:
            await reply.refuse(503, "Service Unavailable: too many sessions")
        return session

    async def _answer_on_stream(
        self,
        reply: Reply,
        session: LegacySession,
        requests: list[RequestReceived],
        replies: list[bytes],
        *,
        batch: bool,
    ) -> None:
        """Run a POST's requests, their messages and answers on a stream of its own."""
        undecided = self._json
        retry_ms = self._limits.sse_retry_ms
        stream = self._new_stream(
            session,
            requests=[event.request_id for event in requests],
            batch=batch,
            extra=replies,
            undecided=undecided,
            prime_retry_ms=retry_ms if session.primes else None,
        )
        sink = Sink(self._limits.max_stream_backlog)
        stream.attach(sink)
        first = b""
        if undecided:
            # Nothing is written before the first message; a quiet one becomes a
            # stream when the keep-alive is due (CHECKLIST G5), with the session's id.
            reply.may_stream = True
            reply.stream_headers = [session.header()]
        elif session.primes:
            first = await stream.prime(retry_ms)
        await session.start_all(requests, _StreamOutbound(session, stream, self._store_waits))
        await self._pump(reply, session, stream, sink, first, gather=True, undecided=undecided)

    async def _answer_at_once(
        self, reply: Reply, session: LegacySession, event: RequestReceived
    ) -> bool:
        """Answer a POST's one request in the POST's task, if it never waits and may start now.

        Such a request (`Server.never_waits`) sends nothing but its answer, so the
        stream `_answer_on_stream` gives it, the sink and the hand-offs between them
        carry only that. With a handler slot of its session free (`Session.start_now`)
        it runs here, and what `pump` would write is written at once: with
        ``replies="json"`` the answer as a JSON body, and no stream is made (an
        undecided stream stores nothing); otherwise the stream, made, primed when the
        session primes and stored as `_answer_on_stream` would, so that its client may
        resume it. False: nothing was done, and the request takes the usual way.

        (The stream's way cost a 2025-11-25 call ~20% of its time with JSON replies, 55
        µs against 44 in ``python -m bench.asgi_profile``, and 6% to 11% with the
        default ones, 73 against 68.5 and 63 against 56 in two sets of runs. Under
        uvicorn and wrk, with JSON replies: 3% to 10% of its requests per second at 8
        connections, 5% to 29% at 64; with the default ones, -1% to +12% at 8, +6% to
        +25% at 64.)
        """
        if not self._server.never_waits(event) or not session.start_now(event):
            return False
        answered = await session.run_started(event, _NOWHERE)
        headers = [session.header()]
        if self._json:
            with session.responding():
                if answered is None:  # (as `pump` ends a stream that got no answer)
                    await reply.send_events(b"", headers, end=True)
                else:
                    await reply.answer(answered, headers, status=200)
            return True
        stream = self._new_stream(session, requests=[event.request_id])
        events = b""
        if session.primes:
            events = await stream.prime(self._limits.sse_retry_ms)
        if answered is not None:
            events += encode_event(answered, id=await stream.record(answered))
        stream.end()
        with session.responding():
            await reply.send_events(events, headers, end=True)
        return True

    async def _open(self, principal: str | None) -> LegacySession | None:
        sessions = self.sessions
        if not await sessions.make_room():
            return None  # every session is busy
        session = LegacySession(
            sessions.new_id(),
            self._server,
            self._pool,
            principal=principal,
            max_handlers=self._limits.max_session_handlers,
        )
        sessions.add(session)
        self._server.attach(session.connection, _SessionOutbound(session))
        return session

    async def _acknowledge(
        self, reply: Reply, session: LegacySession, replies: list[bytes], *, batch: bool
    ) -> None:
        """Answer a POST that held no request: 202, or the errors about what it held."""
        headers = [session.header()]
        if not replies:
            await reply.respond(202, headers)
            return
        # (A batch is answered with a batch, even of one: JSON-RPC 2.0 §6.)
        body = b"[" + b",".join(replies) + b"]" if batch else replies[0]
        # Garbage without a readable id is a 400; an answered request keeps its 200
        # (a legacy 404 would tell the client its session is gone).
        code = peek_message(replies[0]).error_code
        status = 400 if code in (jsonrpc.PARSE_ERROR, jsonrpc.INVALID_REQUEST) else 200
        await reply.respond_json(status, body, headers)

    def _new_stream(
        self,
        session: LegacySession,
        *,
        requests: list[RequestId] | None,
        batch: bool = False,
        extra: list[bytes] | None = None,
        undecided: bool = False,
        prime_retry_ms: int | None = None,
    ) -> EventStream:
        stream = EventStream(
            f"{self._stream_prefix}{next(self._streams_made):x}",
            self._store,
            requests=requests,
            batch=batch,
            extra_answers=extra if batch else None,
            undecided=undecided,
            prime_retry_ms=prime_retry_ms,
        )
        streams = session.streams
        streams[stream.id] = stream
        excess = len(streams) - MAX_STREAMS_PER_SESSION
        if excess > 0:
            # The oldest first; streams still running (or read) are kept. Usually the
            # first one is done, so this looks at one or two.
            finished = []
            for stream_id, old in streams.items():
                if old.done and old.sink is None:
                    finished.append(stream_id)
                    if len(finished) == excess:
                        break
            for stream_id in finished:
                del streams[stream_id]
        return stream

    async def _pump(
        self,
        reply: Reply,
        session: LegacySession,
        stream: EventStream,
        sink: Sink,
        first: bytes,
        *,
        gather: bool = False,
        undecided: bool = False,
    ) -> None:
        try:
            with session.responding():
                await pump(
                    reply, sink, [session.header()], first, gather=gather, undecided=undecided
                )
        finally:
            if stream.sink is sink:
                stream.detach()  # the client went away: events wait in the store
            sink.release()

    # ------------------------------------------------------------------ GET

    async def get(self, request: HttpRequest, reply: Reply, principal: str | None) -> None:
        """Open the standalone stream, or resume one after ``Last-Event-ID``."""
        headers = request.headers
        if not accepts(headers.get("accept"), "text/event-stream"):
            await reply.refuse(406, "Not Acceptable: accept text/event-stream")
            return
        session = await self._session_of(request, reply, principal)
        if session is None:
            return
        session.touch()
        last_event_id = headers.get("last-event-id")
        if last_event_id is not None:
            await self._resume(reply, session, last_event_id.strip())
            return
        standalone = session.standalone
        if standalone is not None and standalone.sink is not None:
            await reply.refuse(409, "Conflict: the session's stream is open already")
            return
        if standalone is None:
            standalone = session.standalone = self._new_stream(session, requests=None)
        sink = Sink(self._limits.max_stream_backlog)
        standalone.attach(sink)
        first = b""
        if session.primes:
            first = await standalone.prime(self._limits.sse_retry_ms)
        await self._pump(reply, session, standalone, sink, first)

    async def _resume(self, reply: Reply, session: LegacySession, last_event_id: str) -> None:
        store = self._store
        found = await store.events_after(last_event_id)
        stream = None if found is None else session.streams.get(found[0])
        if stream is None:
            # Unknown, forgotten, or another session's: nothing of it may be replayed.
            # (Not 404: that would tell the client its session is gone.)
            await reply.refuse(400, "Bad Request: unknown Last-Event-ID")
            return
        sink = Sink(self._limits.max_stream_backlog)
        stream.attach(sink)
        # Read again once attached: events stored in between are in the replay, and
        # the live copies the sink also got are skipped by id.
        again = await store.events_after(last_event_id)
        missed = [] if again is None else again[1]
        sink.replayed.update(event.event_id for event in missed)
        first = b"".join(
            encode_event(event.message, id=event.event_id)
            for event in missed
            if event.message is not None
        )
        await self._pump(reply, session, stream, sink, first)

    # ------------------------------------------------------------------ DELETE

    async def delete(self, request: HttpRequest, reply: Reply, principal: str | None) -> None:
        """End a session ("(C) SHOULD DELETE the endpoint with the session id when done")."""
        session = await self._session_of(request, reply, principal)
        if session is None:
            return
        await self.sessions.close(session)
        await reply.respond(200)

    # ------------------------------------------------------------------ helpers

    async def _session_of(
        self, request: HttpRequest, reply: Reply, principal: str | None
    ) -> LegacySession | None:
        session_id = request.headers.get("mcp-session-id")
        if session_id is None:
            await reply.refuse(400, "Bad Request: Mcp-Session-Id header is required")
            return None
        session = self.sessions.get(session_id, principal)
        if session is None:
            await reply.refuse(404, "Not Found: no such session")
        return session

    async def _forget(self, session: LegacySession) -> None:
        """A session ended: end its streams' responses and drop their events."""
        streams = list(session.streams.values())
        session.streams.clear()
        session.standalone = None
        for stream in streams:
            stream.end()
        for stream in streams:
            await self._store.forget_stream(stream.id)
